import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldFCM
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Testing

/// firebase-admin (Python, from PyPI, unmodified) sends through a real gateway's FCM port with only environment
/// variables set — `HTTPS_PROXY`, `REQUESTS_CA_BUNDLE`, `GOOGLE_APPLICATION_CREDENTIALS` — and each documented call
/// does what it does against Google: sends reach the device as FCM maps them, errors are the SDK's own exceptions.
@Suite(.heavy, .timeLimit(.minutes(5))) struct FCMFirebaseAdminTests {
    /// How many pushes one token may take per hour here, so that the SDK meets `QUOTA_EXCEEDED`.
    static let quota = 25

    /// Makes a project bound to `keyID` with its key file in `directory`; returns the file's path.
    static func project(
        _ id: String, keyID: String, in harness: GatewayHarness
    ) async throws -> String {
        let (account, keyFile) = try FCMServiceAccount.create(projectID: id)
        #expect(
            try await harness.store.createFCMProject(
                FCMProjectRecord(
                    account: account, providerKeyID: keyID, bundleIDs: [GatewayHarness.bundleID], createdAt: Date())))
        let file = harness.directory.appendingPathComponent("\(id).json")
        try keyFile.write(to: file)
        return file.path
    }

    @Test(
        "firebase-admin's messaging calls through the proxy: send, dry run, send_each, topics both APIs, background, Live Activity, and its error classes"
    )
    func firebaseAdmin() async throws {
        try await withGateway(configure: {
            $0.fcmPort = 0
            $0.perTokenRateLimit = .init(count: Self.quota, per: .seconds(3_600))
        }) { harness, _ in
            let credentials = try await Self.project("herald-demo", keyID: GatewayHarness.keyID, in: harness)
            let otherCredentials = try await Self.project("other-project", keyID: "NOSUCHKEY0", in: harness)
            let device = try await harness.connectDevice()
            let apnsToken = try await device.register(bundleID: GatewayHarness.bundleID)
            let activityToken = try await device.register(
                bundleID: GatewayHarness.bundleID, purpose: .liveActivity(activityID: "match-1"))
            let token = try await harness.store.fcmRegistration(
                forAPNsToken: apnsToken, projectID: "herald-demo", at: Date()
            ).token
            let foreignToken = try await harness.store.fcmRegistration(
                forAPNsToken: apnsToken, projectID: "other-project", at: Date()
            ).token
            let quotaToken = try await harness.store.fcmRegistration(
                forAPNsToken: try await harness.offlineToken().token, projectID: "herald-demo", at: Date()
            ).token

            let receiver = Task { () -> [DevicePush] in
                var pushes: [DevicePush] = []
                while pushes.count < 7, let push = try await nextPush(device, seconds: 120) {
                    try await device.acknowledge(push)
                    pushes.append(push)
                }
                // Anything more would be a push the dry run or a refusal should not have made.
                if let extra = try await nextPush(device, seconds: 1) { pushes.append(extra) }
                return pushes
            }
            var environment = ProcessInfo.processInfo.environment
            environment["HTTPS_PROXY"] = "http://127.0.0.1:\(harness.ports.fcm!)"
            environment["NO_PROXY"] = ""
            environment["no_proxy"] = ""
            environment["REQUESTS_CA_BUNDLE"] = harness.caPath
            environment["GOOGLE_APPLICATION_CREDENTIALS"] = credentials
            let result = try await ChildProcess.run(
                "python3",
                [
                    try ClientInteropTests.clientFile("firebase_admin_client.py"), token, activityToken, foreignToken,
                    otherCredentials, foreignToken, quotaToken, String(Self.quota),
                ],
                environment: environment, timeout: .seconds(180))
            #expect(result.status == 0, "\(result.error)")
            var steps: [String: [String: Any]] = [:]
            for line in result.output.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let step = object["step"] as? String
                else { continue }
                steps[step] = object
            }
            func name(_ step: String) -> String? { steps[step]?["result"] as? String }
            func error(_ step: String) -> String? { steps[step]?["error"] as? String }

            #expect(name("send")?.hasPrefix("projects/herald-demo/messages/") == true, "\(steps["send"] ?? [:])")
            #expect(name("dry_run") == "projects/herald-demo/messages/fake_message_id", "\(steps["dry_run"] ?? [:])")
            let each = steps["send_each"]?["result"] as? [String: Any]
            #expect(each?["success"] as? Int == 2, "\(steps["send_each"] ?? [:])")
            let subscribe = steps["subscribe"]?["result"] as? [Any]
            #expect(
                subscribe?.count == 3 && subscribe?[0] as? Int == 1 && subscribe?[1] as? Int == 1, "\(steps["subscribe"] ?? [:])")
            #expect(name("topic") != nil, "\(steps["topic"] ?? [:])")
            #expect(name("condition") != nil, "\(steps["condition"] ?? [:])")
            #expect(steps["unsubscribe"]?["result"] as? Int == 1, "\(steps["unsubscribe"] ?? [:])")
            let legacy = steps["legacy"]?["result"] as? [Any]
            #expect(legacy?.first as? Int == 1, "\(steps["legacy"] ?? [:])")
            #expect((legacy?.last as? [String]) == ["INVALID_ARGUMENT"], "\(steps["legacy"] ?? [:])")
            #expect(name("background") != nil, "\(steps["background"] ?? [:])")
            #expect(name("live_activity") != nil, "\(steps["live_activity"] ?? [:])")
            #expect(error("unregistered") == "UnregisteredError", "\(steps["unregistered"] ?? [:])")
            #expect(error("invalid_argument") == "InvalidArgumentError", "\(steps["invalid_argument"] ?? [:])")
            #expect(error("sender_id_mismatch") == "SenderIdMismatchError", "\(steps["sender_id_mismatch"] ?? [:])")
            #expect(error("third_party_auth") == "ThirdPartyAuthError", "\(steps["third_party_auth"] ?? [:])")
            #expect(error("quota_exceeded") == "QuotaExceededError", "\(steps["quota_exceeded"] ?? [:])")

            let pushes = try await receiver.value
            func title(_ push: DevicePush) -> String? {
                let payload = try? JSONSerialization.jsonObject(with: Data(push.payload.utf8)) as? [String: Any]
                return ((payload?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String
            }
            #expect(
                pushes.prefix(5).map(title) == [
                    "admin-send", "admin-each-1", "admin-each-2", "admin-topic", "admin-condition",
                ]
                    || pushes.prefix(5).map(title) == [
                        "admin-send", "admin-each-2", "admin-each-1", "admin-topic", "admin-condition",
                    ], "\(pushes.map(title))")
            let background = pushes.dropFirst(5).first
            #expect(background?.pushType == "background")
            #expect(background?.priority == 5)
            #expect(background?.payload.contains(#""sync":"now""#) == true)
            let activity = pushes.dropFirst(6).first
            #expect(activity?.pushType == "liveactivity")
            #expect(activity?.token == activityToken)
            #expect(activity?.topic == GatewayHarness.bundleID + ".push-type.liveactivity")
            #expect(pushes.count == 7, "nothing else: the dry run sent nothing")
            await device.close()
        }
    }
}
