import Foundation
import HeraldCore

extension HeraldDataDirectory {
    /// The CA certificate a client of the local gateway trusts: `explicit` (which must be readable), else this data
    /// directory's development CA when it exists, else `nil` (the system's roots).
    ///
    /// - Parameter explicit: What `--cacert` gave.
    /// - Throws: ``CommandFailure`` when `explicit` cannot be read.
    func trustedCA(explicit: String?) throws -> String? {
        if let explicit {
            guard FileManager.default.isReadableFile(atPath: explicit) else {
                throw CommandFailure("Cannot read --cacert \(explicit).")
            }
            return explicit
        }
        let local = tlsDirectory.appendingPathComponent("ca.pem").path
        return FileManager.default.isReadableFile(atPath: local) ? local : nil
    }
}
