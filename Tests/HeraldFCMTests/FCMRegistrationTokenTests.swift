import Foundation
import HeraldCore
import HeraldFCM
import Testing

@Suite struct FCMRegistrationTokenTests {
    @Test("Issued tokens have FCM's shape: a Firebase installation ID starting c–f, ':', an opaque base64url part")
    func issued() throws {
        var seen = Set<String>()
        for _ in 0..<200 {
            let token = FCMRegistrationToken.random()
            #expect(token.installationID.count == 22)
            #expect("cdef".contains(token.installationID.first!))
            #expect(token.description.hasPrefix(token.installationID + ":APA91b"))
            #expect(FCMRegistrationToken(token.description) == token, "reads back")
            #expect(FCMRegistrationToken.isWellFormedInstallationID(token.installationID))
            seen.insert(token.description)
        }
        #expect(seen.count == 200)
    }

    @Test(
        "Not well formed: no colon, short or long parts, characters outside base64url",
        arguments: [
            "", "test-token", "cAbCdEfGhIjKlMnOpQrStU", ":APA91b" + String(repeating: "x", count: 40),
            "short:" + String(repeating: "x", count: 40), "cAbCdEfGhIjKlMnOpQrStU:tooShort",
            "cAbCdEfGhIjKlMnOpQrStU:" + String(repeating: "x", count: 1_025),
            "cAbCdEfGhIjKlMnOpQrStU:APA91b" + String(repeating: "+", count: 40),
            "cAbCdEf/hIjKlMnOpQrStU:APA91b" + String(repeating: "x", count: 40),
            "cAbCdEfGhIjKlMnOpQrStU:APA91b:" + String(repeating: "x", count: 40),
        ])
    func malformed(_ text: String) {
        #expect(FCMRegistrationToken(text) == nil)
    }

    @Test("APNs' refusals become FCM's errors as FCM reports them")
    func apnsReasons() {
        let cases: [(APNsReason, FCMError.Code)] = [
            (.unregistered, .unregistered), (.badDeviceToken, .unregistered), (.expiredToken, .unregistered),
            (.invalidProviderToken, .thirdPartyAuthError), (.expiredProviderToken, .thirdPartyAuthError),
            (.topicDisallowed, .thirdPartyAuthError), (.badEnvironmentKeyIdInToken, .thirdPartyAuthError),
            (.tooManyRequests, .quotaExceeded), (.serviceUnavailable, .unavailable), (.shutdown, .unavailable),
            (.internalServerError, .internal), (.payloadTooLarge, .invalidArgument), (.badPriority, .invalidArgument),
            (.deviceTokenNotForTopic, .invalidArgument),
        ]
        for (reason, code) in cases {
            let error = FCMError(apnsReason: reason)
            #expect(error.code == code, "\(reason)")
            #expect(error.message.contains(reason.reason), "APNs' reason in the message: \(error.message)")
        }
        #expect(FCMError(apnsReason: .invalidProviderToken).code.httpStatus == 401)
        #expect(FCMError(apnsReason: .unregistered).code.httpStatus == 404)
    }
}
