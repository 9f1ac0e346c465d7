import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird
import NIOCore
import NIOPosix

extension ConsoleServer {
    /// `GET /devices`: every device with an active token — connected to this node or not, its apps' tokens, how many
    /// notifications are kept for it; `GET /devices?id=<device>`: what is kept for one device.
    func deviceRoutes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/devices") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            let id = request.uri.queryParameters.get("id")?.trimmingCharacters(in: .whitespaces) ?? ""
            return try await devicesPage(session: session, deviceID: id)
        }
        router.get("/devices/attachment") { [self] request, context in
            guard await signedIn(context) != nil else { return Response(status: .unauthorized) }
            return await attachment(
                app: request.uri.queryParameters.get("app") ?? "", identifier: request.uri.queryParameters.get("id") ?? "",
                index: request.uri.queryParameters.get("index").flatMap { Int($0) } ?? -1)
        }
    }

    /// How many of each app's delivered notifications the devices page draws.
    static let drawnPerApp = 20

    /// An image attachment of a notification delivered on the device beside the console, for its drawing; 404 for
    /// anything else (a file that is not an image a browser shows is never served).
    private func attachment(app: String, identifier: String, index: Int) async -> Response {
        guard let device,
            let notification = try? await device.notifications(of: app, in: .delivered).first(where: {
                $0.identifier == identifier
            }),
            notification.attachments.indices.contains(index), index < notification.attachmentFiles.count,
            let contentType = NotificationDrawing.imageTypes[notification.attachments[index].type]
        else { return Response(status: .notFound) }
        let file = notification.attachmentFiles[index]
        guard let data = try? await NIOThreadPool.singleton.runIfActive({ try Data(contentsOf: file) }) else {
            return Response(status: .notFound)
        }
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "private, max-age=300"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A push's drawing for its delivery log: as the device beside the console shows it when it has it (a service
    /// extension may have changed it), else as its payload reads; `nil` for a push that shows no alert.
    func drawing(uniqueID: String, subject: DeliverySubject, receivedAt: Date) async -> [String: Any]? {
        let categories = (try? await device?.categories(of: subject.topic)) ?? []
        let now = clock.now
        if let shown = try? await device?.notifications(of: subject.topic, in: .delivered).first(where: {
            $0.uniqueID == uniqueID
        }) {
            var values = NotificationDrawing(shown, categories: categories).values(now: now)
            values["onDevice"] = true
            return values
        }
        guard let payload = subject.sentAs?.payload,
            let drawing = NotificationDrawing(payload: payload, topic: subject.topic, date: receivedAt, categories: categories)
        else { return nil }
        return drawing.values(now: now)
    }

    /// The devices page's drawings of what the device beside the console delivered, app by app.
    private func drawnApps(of device: any TestBedDevice) async -> [[String: Any]] {
        let now = clock.now
        var apps: [[String: Any]] = []
        for bundleID in (try? await device.apps()) ?? [] {
            let delivered = (try? await device.notifications(of: bundleID, in: .delivered)) ?? []
            let categories = (try? await device.categories(of: bundleID)) ?? []
            apps.append([
                "bundleID": bundleID,
                "notifications": delivered.prefix(Self.drawnPerApp).map {
                    NotificationDrawing($0, categories: categories).values(now: now)
                },
            ])
        }
        return apps
    }

    /// How many devices the devices page lists.
    static let devicesShown = 500

    private func devicesPage(session: ConsoleSession, deviceID: String) async throws -> Response {
        let formatter = Self.timeFormatter
        let online = onlineDevices?() ?? []
        let connected = Dictionary(online.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = try await gateway.storedNotificationCounts()
        let tokens = try await gateway.tokens(includingRevoked: false)
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
            let kept = try await gateway.storedNotifications(deviceID: deviceID)
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
        if let device {
            values["onDevice"] = true
            values["apps"] = await drawnApps(of: device)
            values["perApp"] = Self.drawnPerApp
            values["limitedApps"] = true
        }
        return Self.page("devices", values)
    }
}
