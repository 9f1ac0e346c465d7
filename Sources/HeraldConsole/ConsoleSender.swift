import Foundation
import HeraldCore
import HeraldFCM
import HeraldProvider
import NIOPosix

/// How the console's send form reaches the gateway: its provider API, as any provider does, with a `.p8` key kept in
/// the data directory as `AuthKey_<key ID>.p8` (`herald up` keeps its key there; copy a key made with
/// `herald keys create --out` there to send with it).
public struct ConsoleSender: Sendable {
    /// The gateway's TLS provider API for an environment, once it listens (`nil` if it never does, or the gateway has
    /// none for that environment).
    let providerURL: @Sendable (APNsEnvironment) async -> URL?
    /// The CA the provider API's certificate chains to.
    let certificateAuthorityFile: String?
    /// Where the `.p8` keys are; FCM projects' service-account key files are in its `fcm` folder.
    let keyDirectory: URL
    /// The gateway's FCM port (plain HTTP), once it listens; `nil` if the gateway serves no FCM.
    let fcmURL: @Sendable () async -> URL?
    /// The gateway's web push service (its device port, `https://localhost:2199`), once it listens; `nil` for none.
    let webPushURL: @Sendable () async -> URL?

    /// A sender for the gateway whose provider API `providerURL` gives.
    ///
    /// - Parameters:
    ///   - providerURL: The provider API's base URL for an environment (`https://localhost:2197`), once the gateway
    ///     listens; `nil` for an environment it does not serve.
    ///   - certificateAuthorityFile: The gateway's CA file (`tls/ca.pem`), or `nil` for the system's roots.
    ///   - keyDirectory: The folder that holds `AuthKey_<key ID>.p8` files, and FCM projects' key files as
    ///     `fcm/<project>.json` (where `herald fcm project create` and `herald up` write them).
    ///   - fcmURL: The gateway's FCM port as a base URL (`http://127.0.0.1:2201`), once it listens; `nil` when the
    ///     gateway serves no FCM (the send form then has no FCM part).
    ///   - webPushURL: The gateway's web push service as a base URL (`https://localhost:2199`), once it listens; `nil`
    ///     for none (the send form then has no web push part). Its VAPID keys are PEM files in the key directory's
    ///     `webpush` folder (where `herald up` keeps its demo web app's).
    public init(
        providerURL: @escaping @Sendable (APNsEnvironment) async -> URL?, certificateAuthorityFile: String?,
        keyDirectory: URL, fcmURL: @escaping @Sendable () async -> URL? = { nil },
        webPushURL: @escaping @Sendable () async -> URL? = { nil }
    ) {
        self.providerURL = providerURL
        self.certificateAuthorityFile = certificateAuthorityFile
        self.keyDirectory = keyDirectory
        self.fcmURL = fcmURL
        self.webPushURL = webPushURL
    }

    /// The VAPID keys (PEM files) in the key directory's `webpush` folder, by file name, sorted (read off the
    /// cooperative pool).
    func vapidKeyNames() async -> [String] {
        let directory = keyDirectory.appendingPathComponent("webpush")
        return
            ((try? await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.contentsOfDirectory(atPath: directory.path)
            }) ?? []).filter { $0.hasSuffix(".pem") && Self.isPlainFileName($0) }.sorted()
    }

    /// A file in the key directory's `webpush` folder (read off the cooperative pool); `nil` when there is none.
    func webPushFile(_ name: String) async -> Data? {
        guard Self.isPlainFileName(name) else { return nil }
        let file = keyDirectory.appendingPathComponent("webpush").appendingPathComponent(name)
        return try? await NIOThreadPool.singleton.runIfActive { try Data(contentsOf: file) }
    }

    /// Whether `name` names a file in a folder, not a path out of it.
    private static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && name.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
    }

    /// The key IDs of the `.p8` files in the key directory, sorted (read off the cooperative pool).
    func keyIDs() async -> [String] {
        let directory = keyDirectory
        return
            ((try? await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.contentsOfDirectory(atPath: directory.path)
            }) ?? []).compactMap { name -> String? in
                guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
                return String(name.dropFirst(8).dropLast(3))
            }.sorted()
    }

    /// The `.p8` key's PEM (read off the cooperative pool); `nil` when there is no such file.
    func key(_ keyID: String) async -> String? {
        guard keyID.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        let file = keyDirectory.appendingPathComponent("AuthKey_\(keyID).p8")
        return try? await NIOThreadPool.singleton.runIfActive { try String(contentsOf: file, encoding: .utf8) }
    }

    /// The FCM projects with a key file in the key directory's `fcm` folder, sorted (read off the cooperative pool).
    func fcmProjectIDs() async -> [String] {
        let directory = keyDirectory.appendingPathComponent("fcm")
        return
            ((try? await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.contentsOfDirectory(atPath: directory.path)
            }) ?? []).compactMap { name -> String? in
                guard name.hasSuffix(".json") else { return nil }
                let projectID = String(name.dropLast(5))
                return FCMServiceAccount.isValidProjectID(projectID) ? projectID : nil
            }.sorted()
    }

    /// An FCM project's service-account key file (read off the cooperative pool); `nil` when there is none.
    func fcmKeyFile(_ projectID: String) async -> Data? {
        guard FCMServiceAccount.isValidProjectID(projectID) else { return nil }
        let file = keyDirectory.appendingPathComponent("fcm").appendingPathComponent("\(projectID).json")
        return try? await NIOThreadPool.singleton.runIfActive { try Data(contentsOf: file) }
    }
}
