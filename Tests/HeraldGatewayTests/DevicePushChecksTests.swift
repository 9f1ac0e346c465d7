import Foundation
import HeraldCore
import HeraldGatewayStore
import NIOCore
import Testing

@testable import HeraldGateway

/// A device push's checks as one sequence, without I/O: APNs' order, a stop where something must be waited for, and a
/// resumption that runs no check twice — what the event loop's path and the task's both run.
@Suite struct DevicePushChecksTests {
    static let token = String(repeating: "ab", count: 32)

    static func request(
        fields: [(String, String)] = [("apns-topic", "com.example.app"), ("apns-push-type", "alert")],
        body: String = #"{"aps":{"alert":"hi"}}"#
    ) throws -> (ProviderRequest, ProviderAPIResponder.DevicePushRequest) {
        var request = ProviderRequest(
            method: "POST", path: "/3/device/\(token)", fields: fields.map { (name: $0.0, value: $0.1) })
        request.appendPayload(ByteBuffer(string: body))
        let headers = try APNsRequestHeaders.parse(request.fields).get()
        return (request, .init(deviceToken: token, headers: headers, apnsID: "id", now: Date(timeIntervalSince1970: 1_000)))
    }

    static func record(bundleID: String = "com.example.app", revokedAt: Date? = nil) -> DeviceTokenRecord {
        DeviceTokenRecord(
            token: token, deviceID: "phone", bundleID: bundleID, environment: .development,
            createdAt: Date(timeIntervalSince1970: 0), revokedAt: revokedAt)
    }

    /// How many times a token was checked.
    final class Count {
        var value = 0
    }

    /// A token check as the responder's: the record's app must be the push's (counted, to see it run once).
    static func checking(_ count: Count, bundleID: String) -> (DeviceTokenRecord?) throws -> DeviceTokenRecord {
        { record in
            count.value += 1
            guard let record else { throw APNsRefusal(.badDeviceToken) }
            if let revokedAt = record.revokedAt { throw APNsRefusal(.unregistered, timestamp: revokedAt) }
            guard record.bundleID == bundleID else { throw APNsRefusal(.deviceTokenNotForTopic) }
            return record
        }
    }

    @Test("APNs' order (§3 before S-11): authority first, then payload and addressing, then the token; then passed")
    func order() throws {
        let (request, read) = try Self.request()
        var checks = DevicePushChecks(read)
        guard case .needsAuthorization = try checks.next(request) else { Issue.record("authority first"); return }
        // Asked again before it is given: still the authority, nothing else run.
        guard case .needsAuthorization = try checks.next(request) else { Issue.record("still authority"); return }
        checks.authorized(.token(topics: []))
        #expect(checks.authenticated)
        guard case .needsDeviceToken(let payload, let addressing) = try checks.next(request) else {
            Issue.record("then the token")
            return
        }
        #expect(payload.pushType == .alert && addressing.topic == "com.example.app" && addressing.bundleID == "com.example.app")
        let checked = Count()
        try checks.found(Self.record(), checked: true, check: Self.checking(checked, bundleID: addressing.bundleID))
        guard case .passed(let passed) = try checks.next(request) else { Issue.record("passed"); return }
        #expect(passed.token.token == Self.token && passed.tokenChecked && passed.payload.pushType == .alert)
        // A sequence handed on (to a task) goes on from where it stopped: passed again, the token not checked again.
        var resumed = checks
        guard case .passed = try resumed.next(request) else { Issue.record("resumed: passed"); return }
        #expect(checked.value == 1)
    }

    @Test("A refusal is the first failed check's: an empty payload after the authority; a token of another app after both")
    func refusals() throws {
        let (empty, emptyRead) = try Self.request(body: "")
        var checks = DevicePushChecks(emptyRead)
        guard case .needsAuthorization = try checks.next(empty) else { Issue.record("authority first, even so"); return }
        checks.authorized(.certificate(topics: ["com.example.app"]))
        #expect(!checks.authenticated, "a certificate is no provider token")
        #expect(throws: APNsRefusal(.payloadEmpty)) { try checks.next(empty) }

        let (request, read) = try Self.request()
        var other = DevicePushChecks(read)
        other.authorized(.token(topics: ["com.example.other"]))
        #expect(throws: APNsRefusal(.topicDisallowed)) { try other.next(request) }

        var wrongApp = DevicePushChecks(read)
        wrongApp.authorized(.token(topics: []))
        _ = try wrongApp.next(request)
        let count = Count()
        #expect(throws: APNsRefusal(.deviceTokenNotForTopic)) {
            try wrongApp.found(
                Self.record(bundleID: "com.example.other"), checked: true,
                check: Self.checking(count, bundleID: "com.example.app"))
        }
        #expect(count.value == 1)
        guard case .needsDeviceToken = try wrongApp.next(request) else { Issue.record("a refused token is no token"); return }
    }
}
