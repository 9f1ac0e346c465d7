import Foundation
import NIOPosix

/// A file a command reads: a path, `-` for standard input, or anything that reads as a file does — `/dev/stdin`, a
/// FIFO, a shell's `<(…)` (a key fed from a secret manager). Read whole, on NIO's thread pool, off the cooperative one.
enum InputFile {
    /// The most a command reads from one file: more is not a payload, key or token list Herald takes.
    static let largest = 64 << 20

    /// The bytes of `path` (`-`: standard input).
    ///
    /// - Parameters:
    ///   - path: The path, or `-`.
    ///   - option: How the command line named it (`--p8`, `--tokens-file`), for the message when it cannot be read.
    /// - Throws: ``CommandFailure`` naming the file and why, in one line.
    static func data(_ path: String, option: String) async throws -> Data {
        let read = try await NIOThreadPool.singleton.runIfActive { () -> Result<Data, CommandFailure> in
            do {
                let handle =
                    path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                defer { if path != "-" { try? handle.close() } }
                var data = Data()
                while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty {
                    data.append(chunk)
                    if data.count > largest {
                        return .failure(CommandFailure("Cannot read \(option) \(path): it is larger than 64 MB."))
                    }
                }
                return .success(data)
            } catch {
                return .failure(CommandFailure("Cannot read \(option) \(path): \(reason(error))."))
            }
        }
        return try read.get()
    }

    /// The UTF-8 text of `path` (`-`: standard input).
    ///
    /// - Parameters:
    ///   - path: The path, or `-`.
    ///   - option: How the command line named it, for the message when it cannot be read.
    static func text(_ path: String, option: String) async throws -> String {
        let data = try await data(path, option: option)
        guard let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure("Cannot read \(option) \(path): it is not UTF-8 text.")
        }
        return text
    }

    /// Why a file could not be read, in words (no framework error dump).
    private static func reason(_ error: any Error) -> String {
        let code = (error as? CocoaError)?.code
        switch code {
        case .fileNoSuchFile?, .fileReadNoSuchFile?: return "no such file"
        case .fileReadNoPermission?: return "permission denied"
        default: break
        }
        if let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            switch Int32(posix.code) {
            case ENOENT: return "no such file"
            case EACCES, EPERM: return "permission denied"
            case EISDIR: return "it is a folder"
            default: break
            }
        }
        return "it cannot be read"
    }
}
