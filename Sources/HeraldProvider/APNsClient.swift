import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHPACK

/// Sends notifications to APNs or a Herald gateway over HTTP/2 (APNs §1).
///
/// One client holds one authentication: APNs binds a connection to the team of its first token (A-06), so make
/// one client per (server, key or certificate). Requests share connections (many concurrent streams on each, up
/// to the server's `SETTINGS_MAX_CONCURRENT_STREAMS`), taking the client's connections in turn. Call ``shutdown()``
/// when done.
public final class APNsClient: Sendable {
    /// Where notifications go.
    public let server: APNsServer
    /// When to send again.
    public let retryPolicy: APNsRetryPolicy
    /// HTTP/2 on SwiftNIO: the connections, each on an event loop of its own.
    private let transport: APNsTransport
    private let clock: any HeraldClock
    private let logger: Logger
    private let onInvalidToken: (@Sendable (APNsResult) -> Void)?

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - server: ``APNsServer/production``, ``APNsServer/development`` or a gateway's address.
    ///   - authentication: A token signer or a client certificate.
    ///   - retryPolicy: Retries for 429, 500 and 503 answers and failed connections.
    ///   - clock: The time source for retry waits (a virtual clock in tests).
    ///   - logger: Where each answer is logged at debug level and failures at warning.
    ///   - onInvalidToken: Called with every answer that says to forget the token (410, `BadDeviceToken`), so the
    ///     caller can prune it.
    ///   - connections: How many HTTP/2 connections to spread requests over, each on its own event loop (Apple
    ///     suggests spreading bursts over several, H-10). One connection carries up to the server's stream limit;
    ///     more use more cores. All carry the same authentication.
    public init(
        server: APNsServer, authentication: APNsAuthentication, retryPolicy: APNsRetryPolicy = .default,
        clock: any HeraldClock = SystemClock(), logger: Logger = Logger(label: "herald.provider"),
        onInvalidToken: (@Sendable (APNsResult) -> Void)? = nil, connections: Int = 1
    ) throws {
        self.server = server
        self.retryPolicy = retryPolicy
        self.clock = clock
        self.logger = logger
        self.onInvalidToken = onInvalidToken
        transport = try APNsTransport(server: server, authentication: authentication, connections: connections)
    }

    /// Sends one notification to one device, retrying where Apple's table says to.
    ///
    /// - Parameters:
    ///   - notification: The notification; checked with ``APNsNotification/validate()`` first.
    ///   - deviceToken: The device token, hex.
    /// - Returns: The last answer. APNs' refusals are results, not errors.
    /// - Throws: The `APNsReason` (HeraldCore) APNs would answer when the notification or token is invalid; nothing is sent.
    public func send(_ notification: APNsNotification, to deviceToken: String) async throws -> APNsResult {
        try notification.validate()
        guard DeviceToken(hex: deviceToken) != nil else { throw APNsReason.badDeviceToken }
        return await deliver(notification, to: deviceToken)
    }

    /// Sends one notification to many devices, at most `concurrency` at a time.
    ///
    /// - Parameters:
    ///   - notification: The notification; checked once before anything is sent.
    ///   - deviceTokens: The device tokens, hex; a malformed one gets a 400 `BadDeviceToken` result unsent.
    ///   - concurrency: How many requests are in flight at once.
    ///   - progress: Called after each answer with (answered, total).
    ///   - answered: Called with each result as its answer comes (in the order answers come), before the next is sent.
    ///   - stopped: Asked before each send: once it says `true`, nothing more is sent; those in flight are answered.
    /// - Returns: The results in the tokens' order: one per token, or, once `stopped`, one per token sent.
    public func send(
        _ notification: APNsNotification, to deviceTokens: [String], concurrency: Int = 100,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil,
        answered: (@Sendable (APNsResult) -> Void)? = nil, stopped: (@Sendable () -> Bool)? = nil
    ) async throws -> [APNsResult] {
        try notification.validate()
        var results = [APNsResult?](repeating: nil, count: deviceTokens.count)
        await withTaskGroup(of: (Int, APNsResult).self) { group in
            var next = 0
            var done = 0
            func startNext() {
                let index = next
                next += 1
                let token = deviceTokens[index]
                group.addTask {
                    guard DeviceToken(hex: token) != nil else {
                        return (index, APNsResult(deviceToken: token, status: 400, reasonText: "BadDeviceToken", attempts: 0))
                    }
                    return (index, await self.deliver(notification, to: token))
                }
            }
            func mayStart() -> Bool { next < deviceTokens.count && stopped?() != true }
            while next < max(1, concurrency) && mayStart() { startNext() }
            for await (index, result) in group {
                results[index] = result
                done += 1
                answered?(result)
                progress?(done, deviceTokens.count)
                if mayStart() { startNext() }
            }
        }
        return results.compactMap { $0 }
    }

    /// Closes the connections once requests in flight are answered.
    public func shutdown() async throws {
        await transport.shutdown()
    }

    /// Sends until an answer is final. Every attempt carries the same `apns-id` (the caller's, else one made here for
    /// this notification and device), so a server that already took an attempt whose answer was lost recognises the
    /// retry and does not show it twice.
    private func deliver(_ notification: APNsNotification, to deviceToken: String) async -> APNsResult {
        var headers = notification.headers
        if notification.apnsID == nil { headers.append((name: "apns-id", value: RandomUUID.lowercasedString())) }
        return await sendRetrying(
            path: "/3/device/" + deviceToken, headers: headers, body: notification.payload, deviceToken: deviceToken)
    }

    /// Sends one request until its answer is final, as ``retryPolicy`` says; every attempt is the same request.
    func sendRetrying(
        path: String, headers: [(name: String, value: String)], body: Data, deviceToken: String
    ) async -> APNsResult {
        var attempt = 1
        var renewed = false
        while true {
            var (result, providerToken) = await attemptOnce(
                path: path, headers: headers, body: body, deviceToken: deviceToken)
            result.attempts = attempt
            // A-04: a token APNs calls expired is signed anew and the push resent at once, on a new connection — once.
            if result.status == 403, result.reasonText == "ExpiredProviderToken", !renewed, let providerToken {
                renewed = true
                transport.renewToken(replacing: providerToken)
                logger.info("Provider token refused as expired: signed a new one, resending on a new connection")
                attempt += 1
                continue
            }
            let retryable = result.status == 0 || APNsRetryPolicy.isRetryable(status: result.status, reason: result.reasonText)
            // The wait before the next attempt; none when this answer is final.
            guard retryable, attempt < retryPolicy.maximumAttempts,
                let delay = retryPolicy.delay(beforeAttempt: attempt + 1, retryAfter: result.retryAfter)
            else {
                if result.invalidatesToken { onInvalidToken?(result) }
                if !result.isSuccess {
                    logger.warning(
                        "Notification refused",
                        metadata: [
                            "apns.status": "\(result.status)", "apns.reason": "\(result.reasonText ?? result.failure ?? "")",
                            "apns.device_token": "\(deviceToken)", "apns.attempts": "\(attempt)",
                        ])
                }
                return result
            }
            attempt += 1
            logger.debug(
                "Retrying notification",
                metadata: [
                    "apns.status": "\(result.status)", "apns.reason": "\(result.reasonText ?? result.failure ?? "")",
                    "retry.delay": "\(delay)",
                ])
            do {
                try await clock.sleep(until: clock.now.addingTimeInterval(delay.timeInterval))
            } catch {
                return result  // cancelled
            }
        }
    }

    /// One attempt: its result, and the provider token it carried.
    private func attemptOnce(
        path: String, headers: [(name: String, value: String)], body: Data, deviceToken: String
    ) async -> (APNsResult, providerToken: String?) {
        do {
            let response = try await transport.execute(
                .init(method: "POST", path: path, fields: headers, body: ByteBuffer(bytes: body)))
            var result = APNsResult(
                deviceToken: deviceToken, status: response.status, apnsID: response.headers.first(name: "apns-id"),
                uniqueID: response.headers.first(name: "apns-unique-id"), attempts: 1)
            result.requestID = response.headers.first(name: "apns-request-id")
            result.retryAfter = response.headers.first(name: "retry-after").flatMap {
                APNsRetryPolicy.retryAfter($0, now: clock.now)
            }
            if result.status != 200, response.body.readableBytes > 0,
                let object = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            {
                result.reasonText = object["reason"] as? String
                if let milliseconds = (object["timestamp"] as? NSNumber)?.doubleValue {
                    result.timestamp = Date(timeIntervalSince1970: milliseconds / 1000)
                }
            }
            logger.debug(
                "Notification answered",
                metadata: [
                    "apns.status": "\(result.status)", "apns.id": "\(result.apnsID ?? "")", "apns.device_token": "\(deviceToken)",
                ])
            return (result, response.providerToken)
        } catch {
            return (APNsResult(deviceToken: deviceToken, status: 0, attempts: 1, failure: "\(error)"), nil)
        }
    }
}
