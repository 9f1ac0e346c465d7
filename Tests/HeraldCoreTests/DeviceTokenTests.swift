import HeraldCore
import Testing

/// The device token in `/3/device/<token>`, read on every push without making its bytes.
@Suite struct DeviceTokenTests {
    @Test("S-02: canonicalHex accepts exactly what init(hex:) accepts, lowercase, and a lowercase token as it is")
    func canonicalHex() {
        let cases = [
            "", "a", "ab", "AB", "aB", "0g", "ab cd", String(repeating: "ab", count: 32), String(repeating: "AB", count: 32),
            String(repeating: "ab", count: 100), String(repeating: "ab", count: 101), "éé", "abc", "-1",
        ]
        for text in cases {
            #expect(DeviceToken.canonicalHex(text) == DeviceToken(hex: text)?.hex, "\(text.debugDescription)")
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFxg ")
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement()! })
            #expect(DeviceToken.canonicalHex(text) == DeviceToken(hex: text)?.hex, "\(text.debugDescription)")
        }
        #expect(DeviceToken.canonicalHex(Substring("00ff")) == "00ff")
    }
}
