import Foundation
import HeraldAppRuntime
import HeraldCore
import Logging
import Synchronization

/// The process's PushKit: the registries that want VoIP pushes, their token requests to the device daemon (in order),
/// and the daemon's VoIP pushes handed to them.
final class PushKitCenter: Sendable {
    static let shared = PushKitCenter()

    /// How long the delegates have to call a push's completion (Apple ends an app that does not report a call soon).
    static let completionBudget: Duration = .seconds(30)

    private struct Entry {
        weak var registry: PKPushRegistry?
    }

    private let registries = Mutex<[ObjectIdentifier: UncheckedSendableBox<Entry>]>([:])
    private let queue = SerialWorkQueue()
    private let logger = Logger(label: "herald.pushkit")

    private init() {
        AppRuntime.handlers.set(.voipPush) { [self] payload in await handle(payload) }
        // An app may start before the device daemon: its registries ask again once the runtime links to one.
        AppRuntime.handlers.onDeviceLink { [self] in
            let waiting = registries.withLock {
                $0.values.compactMap { $0.value.registry }.filter { $0.wantsVoIP && $0.pushToken(for: .voIP) == nil }
            }
            for registry in waiting { start(registry) }
        }
    }

    /// A registry wants VoIP pushes: it gets the app's token, and the pushes from then on.
    func start(_ registry: PKPushRegistry) {
        registries.withLock { $0[ObjectIdentifier(registry)] = UncheckedSendableBox(Entry(registry: registry)) }
        let box = UncheckedSendableBox(registry)
        let runtime = AppRuntime.current()
        queue.enqueue { [logger] in
            do {
                let token = try await runtime.withDeviceLink { link -> String? in
                    guard let link else { return nil }
                    return try await link.registerVoIP()
                }
                guard let token else {
                    logger.info(
                        "VoIP pushes wait for the device daemon (herald up or herald device): the token comes once the app links to one"
                    )
                    return
                }
                guard let data = DeviceToken(hex: token).map({ Data($0.bytes) }), box.value.wantsVoIP else { return }
                box.value.tokenIssued(data, for: .voIP)
            } catch {
                logger.warning("No VoIP token", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A registry no longer wants VoIP pushes: when no other registry of the process does, the token is revoked.
    func stop(_ registry: PKPushRegistry) {
        let others = registries.withLock { registries -> Bool in
            registries[ObjectIdentifier(registry)] = nil
            return registries.values.contains { $0.value.registry?.wantsVoIP == true }
        }
        let box = UncheckedSendableBox(registry)
        let runtime = AppRuntime.current()
        queue.enqueue { [logger] in
            if !others {
                do {
                    try await runtime.withDeviceLink { link in try await link?.unregisterVoIP() }
                } catch {
                    logger.warning("Could not revoke the VoIP token", metadata: ["error": "\(error)"])
                }
            }
            box.value.tokenInvalidated(for: .voIP)
        }
    }

    /// Hands a VoIP push to every registry that wants VoIP pushes, one after another, and waits for each delegate's
    /// completion (30 s at most each).
    private func handle(_ payload: String) async -> Bool {
        let targets = registries.withLock { $0.values.compactMap { $0.value.registry }.filter(\.wantsVoIP) }.map(
            UncheckedSendableBox.init)
        guard !targets.isEmpty else { return false }
        // As JSONSerialization gives it on an iPhone: NSNull, exact integers, NSNumber booleans.
        let payloadBox = UncheckedSendableBox((try? JSONValue(parsing: Data(payload.utf8)))?.foundationDictionary ?? [:])
        var handled = false
        for target in targets {
            // Each registry in turn, as Apple calls each registry's delegate.
            if await target.value.deliver(payloadBox.value, of: .voIP, within: Self.completionBudget) { handled = true }
        }
        return handled
    }
}
