import Foundation
import HeraldCore
import Testing

/// The provider API's headers read without sets, dictionaries or lowercased copies: names in any ASCII case, repeats
/// found however many headers come, the bearer token and the `apns-id` as before.
@Suite struct APNsRequestHeadersTests {
    private static func parse(_ fields: [(String, String)]) -> Result<APNsRequestHeaders, APNsRefusal> {
        APNsRequestHeaders.parse(fields.map { (name: $0.0, value: $0.1) })
    }

    @Test("S-03…S-10: names are read in any case; an apns-id in capitals is answered lowercased")
    func namesInAnyCase() throws {
        let id = "0A1B2C3D-0000-4000-8000-00000000000F"
        let headers = try Self.parse([
            ("Apns-Topic", "com.example.app"), ("APNS-ID", id), ("apns-Priority", "5"), ("Authorization", "Bearer abc"),
            ("apns-push-type", "background"), ("apns-expiration", "0"), ("apns-collapse-id", "c"), ("x-other", "1"),
        ]).get()
        #expect(headers.topic == "com.example.app" && headers.apnsID == id.lowercased() && headers.priority == .throttled)
        #expect(headers.bearerToken == "abc" && headers.pushType == .background && headers.expiration == .immediately)
        #expect(headers.collapseID == "c")
        let lowercase = try Self.parse([("apns-id", id.lowercased())]).get()
        #expect(lowercase.apnsID == id.lowercased())
    }

    @Test("S-10: a header given twice, in the same or another case, among few or many headers, is DuplicateHeaders")
    func repeats() {
        func reason(_ fields: [(String, String)]) -> String? {
            guard case .failure(let refusal) = Self.parse(fields) else { return nil }
            return refusal.reason.reason
        }
        let padding = (0..<20).map { ("x-padding-\($0)", "1") }
        #expect(reason([("apns-topic", "a"), ("APNS-TOPIC", "a")]) == "DuplicateHeaders")
        #expect(reason([("x-custom", "1"), ("X-Custom", "2")]) == "DuplicateHeaders")
        #expect(reason(padding + [("apns-topic", "a"), ("Apns-Topic", "a")]) == "DuplicateHeaders")
        #expect(reason(padding + [("X-PADDING-3", "2")]) == "DuplicateHeaders")
        #expect(reason(padding + [("apns-topic", "a")]) == nil)
        #expect(reason([("apns-topic", "a"), ("apns-topics", "a"), ("apns-topi", "a")]) == nil)
    }

    @Test("A-02: the bearer token: the scheme in any case, one or more spaces, the token trimmed; anything else whole")
    func bearerTokens() {
        let cases: [(String, String?)] = [
            ("bearer abc", "abc"), ("Bearer  abc ", "abc"), ("  BEARER abc", "abc"), ("bearer \tabc\t", "abc"),
            ("bearer", nil), ("bearer   ", nil), ("  ", nil), ("", nil), ("bearer\tabc", "bearer\tabc"),
            ("basic abc", "basic abc"), ("abc", "abc"), ("\tbearer abc", "\tbearer abc"),
        ]
        for (authorization, token) in cases {
            #expect(
                APNsRequestHeaders.bearerToken(fromAuthorization: authorization) == token, "\(authorization.debugDescription)")
        }
    }

    @Test("S-05: a canonical UUID is 8-4-4-4-12 hex digits in either case")
    func canonicalUUIDs() {
        #expect(APNsRequestHeaders.isCanonicalUUID("0a1b2c3d-0000-4000-8000-00000000000f"))
        #expect(APNsRequestHeaders.isCanonicalUUID("0A1B2C3D-0000-4000-8000-00000000000F"))
        #expect(!APNsRequestHeaders.isCanonicalUUID("0a1b2c3d00004000800000000000000f"))
        #expect(!APNsRequestHeaders.isCanonicalUUID("0a1b2c3d-0000-4000-8000-00000000000g"))
        #expect(!APNsRequestHeaders.isCanonicalUUID("0a1b2c3d-0000-4000-8000-00000000000f0"))
        #expect(!APNsRequestHeaders.isCanonicalUUID("0a1b2c3d_0000-4000-8000-00000000000f"))
        #expect(!APNsRequestHeaders.isCanonicalUUID(""))
    }
}
