import Crypto
import Foundation
import HeraldCore
import Testing

/// What makes a provider's retry the same push (S-05): token, topic, apns-id and payload.
@Suite struct PushFingerprintTests {
    @Test(
        "The fingerprint is SHA-256 over token, topic and apns-id (lowercase, NUL-separated) and the payload, in lowercase hex; a device push has the gateway's"
    )
    func digest() {
        let fingerprint = PushFingerprint(
            token: "AA11", topic: "com.example.app", apnsID: "EABEAE54-14A8-11E5-B60B-1697F925EC7B", payload: Array("{}".utf8))
        let expected = SHA256.hash(data: Array("aa11\u{0}com.example.app\u{0}eabeae54-14a8-11e5-b60b-1697f925ec7b\u{0}{}".utf8))
            .map { String(format: "%02x", $0) }.joined()
        #expect(fingerprint.hex == expected)
        let push = DevicePush(
            deliveryID: "d", token: "aa11", topic: "com.example.app", bundleID: "com.example.app", pushType: "alert",
            priority: 10, apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b", collapseID: nil, payload: "{}", fromStorage: false)
        #expect(push.fingerprint == fingerprint)
        #expect(
            PushFingerprint(
                token: "aa11", topic: "com.example.app", apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b",
                payload: Array("{ }".utf8)) != fingerprint)
    }
}
