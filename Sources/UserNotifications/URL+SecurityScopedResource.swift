import Foundation
import HeraldNotificationEngine

#if !canImport(Darwin)
extension URL {
    /// Apple's security-scoped access to an attachment's file (N-41). Linux has no sandbox: access is always granted.
    public func startAccessingSecurityScopedResource() -> Bool { true }

    /// Ends access started with ``startAccessingSecurityScopedResource()``; nothing to do on Linux.
    public func stopAccessingSecurityScopedResource() {}
}
#endif
