import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird

extension ConsoleServer {
    /// `GET /devices`: every device with an active token — connected to this node or not, its apps' tokens, how many
    /// notifications are kept for it; `GET /devices?id=<device>`: what is kept for one device.
    func deviceRoutes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/devices") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            let id = request.uri.queryParameters.get("id")?.trimmingCharacters(in: .whitespaces) ?? ""
            return try await devicesPage(session: session, deviceID: id)
        }
    }

    /// How many devices the devices page lists.
    static let devicesShown = 500

    private func devicesPage(session: ConsoleSession, deviceID: String) async throws -> Response {
        let formatter = Self.timeFormatter
        let online = onlineDevices?() ?? []
        let connected = Dictionary(online.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = try await store.storedNotificationCounts()
        let tokens = try await store.tokens(includingRevoked: false)
        let byDevice = Dictionary(grouping: tokens, by: \.deviceID)
        let all = Set(byDevice.keys).union(connected.keys).union(stored.keys).sorted()
        // A page a person reads: the first devices by ID (a search by token in the delivery log finds any other).
        let ids = all.prefix(Self.devicesShown)
        var values: [String: Any] = [
            "title": "Devices", "csrf": session.csrf, "signedIn": true, "knowsConnections": onlineDevices != nil,
            "online": online.count, "hasDevices": !ids.isEmpty, "total": all.count, "limited": all.count > ids.count,
            "shownCount": ids.count,
            "devices": ids.map { id -> [String: Any] in
                var row: [String: Any] = [
                    "id": id, "stored": stored[id] ?? 0, "hasStored": (stored[id] ?? 0) > 0,
                    "tokens": (byDevice[id] ?? []).map { token -> [String: Any] in
                        var entry: [String: Any] = [
                            "token": token.token, "app": token.bundleID, "environment": token.environment.rawValue,
                        ]
                        // Only when not the app's own (an empty string would still open a Mustache section).
                        if token.purpose != .app { entry["purpose"] = token.purpose.rawValue }
                        return entry
                    },
                ]
                if let device = connected[id] {
                    row["connectedAt"] = formatter.string(from: device.connectedAt)
                    row["channels"] = device.channels
                }
                return row
            },
        ]
        if !deviceID.isEmpty {
            let kept = try await store.storedNotifications(deviceID: deviceID)
            values["shown"] = deviceID
            values["hasKept"] = !kept.isEmpty
            values["kept"] = kept.map { notification -> [String: Any] in
                [
                    "topic": notification.topic, "pushType": notification.pushType.rawValue,
                    "uniqueID": notification.uniqueID, "apnsID": notification.apnsID,
                    "received": formatter.string(from: notification.receivedAt),
                    "expires": formatter.string(from: notification.expiresAt),
                    "payload": String(decoding: notification.payload, as: UTF8.self),
                ]
            }
        }
        return Self.page("devices", values)
    }
}
