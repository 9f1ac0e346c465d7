import Foundation
import HeraldCore
import Testing

/// The payload → content mapping against Apple's documented payloads (APNs §4, UserNotifications N- rows).
@Suite struct RemoteNotificationContentTests {
    static func content(_ json: String, strings: [String: String] = [:]) throws -> RemoteNotificationContent {
        try RemoteNotificationContent(payload: Data(json.utf8), strings: LocalizedStringTable(strings: strings))
    }

    @Test("Y-01 N-1…N-3 N-7 N-9: Apple's game-invitation payload: alert dictionary, category, custom key in userInfo")
    func alertDictionary() throws {
        let json =
            #"{"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}"#
        let content = try Self.content(json)
        #expect(content.title == "Game Request")
        #expect(content.subtitle == "Five Card Draw")
        #expect(content.body == "Bob wants to play poker")
        #expect(content.categoryIdentifier == "GAME_INVITATION")
        #expect(content.userInfo["gameID"] == .string("12345678"))
        #expect(content.userInfo["aps"]?["category"] == .string("GAME_INVITATION"), "the whole payload, aps included")
        #expect(content.isUserVisible && !content.contentAvailable && !content.mutableContent)
    }

    @Test("Y-01: an alert string is the body")
    func alertString() throws {
        let content = try Self.content(#"{"aps":{"alert":"Hello","sound":"default","badge":3}}"#)
        #expect(content.title == "" && content.body == "Hello")
        #expect(content.sound == .default && content.badge == 3)
    }

    @Test("loc-key with loc-args from the app's strings (Apple's GAME_PLAY_REQUEST_FORMAT); positional and missing keys")
    func localized() throws {
        let strings = [
            "GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly",
            "TITLE": "From %2$@ to %1$@",
            "SUB": "100%% sure",
        ]
        let json =
            #"{"aps":{"alert":{"title":"ignored","title-loc-key":"TITLE","title-loc-args":["Ann","Bo"],"subtitle-loc-key":"SUB","loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Shelly","Rick"]}}}"#
        let content = try Self.content(json, strings: strings)
        #expect(content.body == "Shelly and Rick have invited you to play Monopoly")
        #expect(content.title == "From Bo to Ann", "title-loc-key wins over title")
        #expect(content.subtitle == "100% sure")
        // A key the app's strings lack is its own format (Apple's fallback); too few arguments never crash.
        let fallback = try Self.content(#"{"aps":{"alert":{"loc-key":"Hi %@, %@ and %5$@ %d","loc-args":["Ann"]}}}"#)
        #expect(fallback.body == "Hi Ann,  and  ")
    }

    @Test("Untrusted formats: every specifier shape takes text, nothing reads past the arguments")
    func format() {
        #expect(
            NotificationTextFormat.format("%d items, %.2f%%, %-5s|%ld", arguments: ["3", "1.5", "x", "9"]) == "3 items, 1.5%, x|9"
        )
        #expect(NotificationTextFormat.format("%n %", arguments: ["a"]) == "%n %", "unknown conversions are copied")
        #expect(NotificationTextFormat.format("%99999999999$@", arguments: ["a"]) == "")
        #expect(NotificationTextFormat.format("no specifiers", arguments: ["a"]) == "no specifiers")
    }

    @Test("N-4 N-14 N-15 N-16 N-32: badge 0 clears, critical sound, levels, score clamped, thread, target, filter")
    func apsKeys() throws {
        let json =
            #"{"aps":{"badge":0,"sound":{"critical":1,"name":"my_sound.wav","volume":0.5},"thread-id":"chat-7","target-content-id":"w1","interruption-level":"time-sensitive","relevance-score":1.7,"filter-criteria":"work"}}"#
        let content = try Self.content(json)
        #expect(content.badge == 0)
        #expect(content.sound == .critical(name: "my_sound.wav", volume: 0.5))
        #expect(content.threadIdentifier == "chat-7" && content.targetContentIdentifier == "w1")
        #expect(content.interruptionLevel == "time-sensitive")
        #expect(content.relevanceScore == 1)
        #expect(content.filterCriteria == "work")
        let defaults = try Self.content(
            #"{"aps":{"sound":{"critical":1,"name":"default"},"interruption-level":"loud","badge":"x"}}"#)
        #expect(defaults.sound == .critical(name: nil, volume: 1))
        #expect(defaults.interruptionLevel == nil, "an unknown level is ignored")
        #expect(defaults.badge == nil, "a badge of the wrong type is ignored")
    }

    @Test("Y-10: a background push has nothing to show; mutable-content is read")
    func background() throws {
        let silent = try Self.content(#"{"aps":{"content-available":1},"sync":"inbox"}"#)
        #expect(silent.contentAvailable && !silent.isUserVisible)
        let mutable = try Self.content(
            #"{"aps":{"category":"SECRET","mutable-content":1,"alert":{"title":"Secret Message!","body":"(Encrypted)"}},"ENCRYPTED_DATA":"Salted__"}"#
        )
        #expect(mutable.mutableContent && mutable.title == "Secret Message!")
    }

    @Test("Y-01: a body that is not an object with aps is refused, never a crash")
    func refused() {
        for json in ["[]", "\"aps\"", "{\"aps\":1}", "{}", "{\"aps\":{", ""] {
            #expect(throws: RemoteNotificationContent.Failure.self) { try Self.content(json) }
        }
    }

    @Test("Strings files: language order with base language, Base.lproj, malformed files skipped; locale variables")
    func stringsFiles() throws {
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("strings-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: bundle) }
        func write(_ directory: String, _ text: String) throws {
            let folder = bundle.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folder.appendingPathComponent("Localizable.strings"))
        }
        try write("de.lproj", "/* German */\n\"HELLO\" = \"Hallo %@\";\n")
        try write("Base.lproj", "\"HELLO\" = \"Hello %@\";\n\"BYE\" = \"Bye\";\n")
        try write("fr.lproj", "this is not a strings file {")
        let german = LocalizedStringTable.load(bundlePath: bundle.path, languages: ["de-CH"])
        #expect(german.text(forKey: "HELLO", arguments: ["Ann"]) == "Hallo Ann")
        #expect(german.text(forKey: "BYE") == "Bye", "falls back to Base.lproj")
        #expect(german.text(forKey: "MISSING") == "MISSING")
        let french = LocalizedStringTable.load(bundlePath: bundle.path, languages: ["fr"])
        #expect(french.text(forKey: "HELLO") == "Hello %@")
        #expect(LocalizedStringTable.preferredLanguages(environment: ["LANG": "de_CH.UTF-8"]) == ["de-CH"])
        #expect(LocalizedStringTable.preferredLanguages(environment: ["LANGUAGE": "pt_BR:en", "LANG": "C"]) == ["pt-BR", "en"])
    }
}
