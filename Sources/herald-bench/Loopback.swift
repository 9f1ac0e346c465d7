import ArgumentParser
import Foundation
import HeraldTestSupport
import HeraldTesting

/// Runs a benchmark client to completion (an hour at most) without blocking a thread of the cooperative pool.
func runProcess(_ executable: String, _ arguments: [String]) async throws -> ChildProcess.Result {
    let result = try await ChildProcess.run(executable, arguments, timeout: .seconds(3_600))
    if result.timedOut { throw ValidationError("\(executable) ran for more than an hour; stopped it.") }
    return result
}

/// A loopback port that was free a moment ago.
func freeLoopbackPort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw ValidationError("Cannot open a socket to find a free port.") }
    defer { close(socket) }
    var address = loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
        }
    }
    guard bound else { throw ValidationError("Cannot bind a loopback socket to find a free port.") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on a loopback port.
func loopbackPortAccepts(_ port: Int) -> Bool {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return false }
    defer { close(socket) }
    var address = loopbackAddress(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// `127.0.0.1:port` as a socket address.
private func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
}
