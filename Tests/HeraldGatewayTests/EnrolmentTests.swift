import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldTestSupport
import HeraldTesting
import NIOCore
import Testing

@testable import HeraldGateway

/// Issue 71 (2): who may enrol a new device — one on the gateway's machine, one elsewhere with its enrolment
/// credential — over the real device channel.
@Suite(.heavy, .timeLimit(.minutes(3))) struct EnrolmentTests {
    /// Connects `deviceID` to the harness's device port, presenting `credential` if any.
    static func connect(
        _ harness: GatewayHarness, _ deviceID: String, credential: String? = nil
    ) async throws -> DeviceChannelClient {
        try await DeviceChannelClient.connect(
            to: "wss://localhost:\(harness.ports.device)/device/v1", deviceID: deviceID, secret: "s3cret",
            tlsConfiguration: try harness.clientTLS(), enrolmentSecret: credential)
    }

    @Test(
        "Issue 71 (2): a gateway with an enrolment credential, its devices treated as another machine's, refuses a new device without it or with a wrong one, saying what it takes, enrols one with it, and lets an enrolled device back without it"
    )
    func credential() async throws {
        try await withGateway(configure: {
            $0.deviceEnrolment = DeviceEnrolment(secret: "enrol-me-please", trustsLoopback: false)
        }) { harness, _ in
            let refusal = DeviceChannelClient.Failure.refused(
                "Enrolling a new device on this gateway takes its enrolment credential (herald device --enrolment-secret-file).")
            await #expect(throws: refusal) { try await Self.connect(harness, "newcomer") }
            await #expect(throws: refusal) { try await Self.connect(harness, "newcomer", credential: "enrol-me-pleasx") }
            #expect(try await harness.store.deviceEnrollment(deviceID: "newcomer") == .unknown)
            let enrolled = try await Self.connect(harness, "newcomer", credential: "enrol-me-please")
            _ = try await enrolled.register(bundleID: GatewayHarness.bundleID)
            await enrolled.close()
            let back = try await Self.connect(harness, "newcomer")
            _ = try await back.register(bundleID: GatewayHarness.bundleID)
            await back.close()
        }
    }

    @Test(
        "Issue 71 (2): a gateway without a credential enrols no device from another machine, and says what to do; herald gateway's default is this machine only"
    )
    func loopbackOnly() async throws {
        #expect(GatewayConfiguration(deviceHost: "127.0.0.1", devicePort: 0).deviceEnrolment == DeviceEnrolment())
        try await withGateway(configure: { $0.deviceEnrolment = DeviceEnrolment(secret: nil, trustsLoopback: false) }) {
            harness, _ in
            await #expect(
                throws: DeviceChannelClient.Failure.refused(
                    "This gateway enrols new devices from its own machine only; ask its operator to start it with --enrolment-secret-file."
                )
            ) { try await Self.connect(harness, "stranger", credential: "anything") }
        }
    }

    @Test("Issue 71 (2): loopback addresses enrol without the credential; others only with it, compared whole")
    func rule() throws {
        let rule = DeviceEnrolment(secret: "c0ffee")
        #expect(rule.admits(from: try SocketAddress(ipAddress: "127.0.0.1", port: 9), presenting: nil))
        #expect(rule.admits(from: try SocketAddress(ipAddress: "::1", port: 9), presenting: nil))
        let remote = try SocketAddress(ipAddress: "203.0.113.7", port: 9)
        #expect(!rule.admits(from: remote, presenting: nil))
        #expect(!rule.admits(from: remote, presenting: "c0ffe"))
        #expect(!rule.admits(from: remote, presenting: "c0ffee "))
        #expect(rule.admits(from: remote, presenting: "c0ffee"))
        #expect(!DeviceEnrolment().admits(from: remote, presenting: "c0ffee"))
    }
}
