import Foundation
import HeraldCore
import Testing

/// base64url (RFC 4648 §5) as JWTs and web push use it: no padding written, `-` and `_` for `+` and `/`.
struct Base64URLTests {
    @Test("Every length round-trips; the alphabet's last two are - and _; no padding is written")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let text = data.base64URLEncodedString()
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(
                text
                    == data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
            #expect(Data(base64URLEncoded: text) == data, "\(length) bytes")
        }
        #expect(Data([0xFB, 0xFF]).base64URLEncodedString() == "-_8")
        #expect(Data(base64URLEncoded: "-_8") == Data([0xFB, 0xFF]))
        #expect(Data(base64URLEncoded: "-_8=") == Data([0xFB, 0xFF]), "padding at the end is accepted")
    }

    @Test("Not base64url: padding before the end, a character outside the alphabet, a length no padding can make whole")
    func refusals() {
        for text in ["a=bc", "ab=c", "ab$c", "abcde", "é"] {
            #expect(Data(base64URLEncoded: text) == nil, "\(text)")
        }
    }
}
