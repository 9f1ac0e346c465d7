import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Testing

@testable import UserNotifications

/// The store's JSON of a request, written without `Codable` (`storedJSON()`): the same document `JSONEncoder` makes,
/// so `JSONDecoder` reads every row — written before or after — back to the same request.
@Suite struct StoredRequestJSONTests {
    @Test("Random requests of every kind: storedJSON() is JSONEncoder's document, member for member, and decodes to the request")
    func sameDocumentAsJSONEncoder() throws {
        var generator = SplitMix64(seed: 0x5354_4F52_4544)
        for index in 0..<2_000 {
            let record = Self.randomRecord(&generator)
            let stored = try record.storedJSON()
            #expect(try JSONDecoder().decode(NotificationRequestRecord.self, from: stored) == record, "record \(index)")
            let reference = try JSONEncoder().encode(record)
            #expect(
                Self.normalized(try JSONValue(parsing: stored)) == Self.normalized(try JSONValue(parsing: reference)),
                "record \(index): \(String(decoding: stored, as: UTF8.self)) vs \(String(decoding: reference, as: UTF8.self))")
        }
    }

    @Test("Every stored property of the request's records is written (a property added later must be added to storedJSON())")
    func everyPropertyWritten() throws {
        let record = Self.fullRecord()
        guard case .object(let members) = try JSONValue(parsing: record.storedJSON()) else {
            Issue.record("not an object")
            return
        }
        let keys = Set(members.map(\.key))
        #expect(Self.labels(of: record).subtracting(["legacy"]).isSubset(of: keys))
        guard case .object(let content)? = members.first(where: { $0.key == "content" })?.value else {
            Issue.record("no content")
            return
        }
        let contentKeys = Set(content.map(\.key))
        #expect(Self.labels(of: record.content) == contentKeys)
        let nested: [(Any, String)] = [
            (record.content.sound!, "sound"), (record.content.attachments[0], "attachments"),
        ]
        for (value, key) in nested {
            var written = content.first { $0.key == key }!.value
            if case .array(let items) = written { written = items[0] }
            guard case .object(let fields) = written else {
                Issue.record("\(key) is not an object")
                continue
            }
            #expect(Self.labels(of: value) == Set(fields.map(\.key)), "\(key)")
        }
        let region = NotificationRegionRecord(
            identifier: "r", latitude: 1, longitude: 2, radius: 3, notifyOnEntry: true, notifyOnExit: false)
        let located = NotificationRequestRecord(
            identifier: "l", content: record.content, trigger: .location(region, repeats: true))
        let document = try JSONValue(parsing: located.storedJSON())
        guard case .object(let fields)? = document["trigger"]?["location"]?["_0"] else {
            Issue.record("no region")
            return
        }
        #expect(Self.labels(of: region) == Set(fields.map(\.key)))
    }

    @Test("A number JSON cannot hold is refused, as JSONEncoder refuses it")
    func nonFiniteRefused() {
        var content = NotificationContentRecord()
        content.title = "t"
        content.relevanceScore = .nan
        let record = NotificationRequestRecord(identifier: "n", content: content, trigger: .timeInterval(5, repeats: false))
        #expect(throws: EncodingError.self) { try record.storedJSON() }
        var sound = NotificationSoundRecord(kind: .critical)
        sound.volume = .infinity
        content.relevanceScore = 0
        content.sound = sound
        let loud = NotificationRequestRecord(identifier: "s", content: content, trigger: nil)
        #expect(throws: EncodingError.self) { try loud.storedJSON() }
    }

    @Test(
        "The app channel's willPresent and presented, written directly: JSONDecoder reads them to the same message, and JSONEncoder's lines are read directly, except the kinds left to Codable"
    )
    func appChannelDirectJSON() throws {
        var generator = SplitMix64(seed: 0x4150_5043_4841)
        var direct = 0
        for index in 0..<2_000 {
            let record = Self.randomRecord(&generator)
            let date = Date(timeIntervalSinceReferenceDate: Self.double(&generator))
            let id = Int(truncatingIfNeeded: generator.next() >> 1)
            let message = AppChannelMessage.willPresent(id: id, notification: DeliveredNotification(request: record, date: date))
            let encoded = message.encoded()
            #expect(try JSONDecoder().decode(AppChannelMessage.self, from: encoded) == message, "message \(index)")
            #expect(try AppChannelMessage(line: encoded) == message, "message \(index)")
            let reference = try JSONEncoder().encode(message)
            #expect(try AppChannelMessage(line: reference) == message, "message \(index)")
            // The direct writer leaves calendar triggers and iOS 8 requests to Codable; the reader a sound's volume too.
            let writtenByCodable: Bool
            if case .calendar? = record.trigger { writtenByCodable = true } else { writtenByCodable = record.legacy != nil }
            let readByCodable = writtenByCodable || record.content.sound?.volume != nil
            #expect((message.directJSONValue() == nil) == writtenByCodable, "message \(index)")
            #expect((AppChannelMessage(directJSON: reference) == nil) == readByCodable, "message \(index)")
            #expect((AppChannelMessage(directJSON: encoded) == nil) == readByCodable, "message \(index)")
            if !readByCodable { direct += 1 }
        }
        #expect(direct > 1_000)
        for options in [nil, 0, 7, UInt(Int64.max)] as [UInt?] {
            let presented = AppChannelMessage.presented(id: 42, options: options)
            #expect(AppChannelMessage(directJSON: presented.encoded()) == presented)
            #expect(try JSONDecoder().decode(AppChannelMessage.self, from: presented.encoded()) == presented)
            #expect(AppChannelMessage(directJSON: try JSONEncoder().encode(presented)) == presented)
        }
    }

    @Test("A willPresent or presented line Codable refuses is refused, not read directly into something else")
    func appChannelDirectJSONRefusals() throws {
        var record = Self.fullRecord()
        record.content.sound?.volume = nil  // read directly
        let message = AppChannelMessage.willPresent(
            id: 1, notification: DeliveredNotification(request: record, date: Date(timeIntervalSinceReferenceDate: 5)))
        let text = String(decoding: message.encoded(), as: UTF8.self)
        #expect(AppChannelMessage(directJSON: Data(text.utf8)) == message)
        let broken = [
            text.replacingOccurrences(of: #""interruptionLevel":2"#, with: #""interruptionLevel":9"#),
            text.replacingOccurrences(of: #""title":"title""#, with: #""title":7"#),
            text.replacingOccurrences(of: #""identifier":"full""#, with: #""identifier":null"#),
            text.replacingOccurrences(of: #"{"willPresent":{"id":1"#, with: #"{"willPresent":{"id":"1""#),
            #"{"presented":{"id":1,"options":-1}}"#,
            #"{"presented":{"id":1,"options":"all"}}"#,
            #"{"presented":{"id":1},"welcome":{}}"#,
        ]
        for line in broken {
            #expect(line != text)
            #expect(throws: DecodingError.self, "\(line)") { try AppChannelMessage(line: Data(line.utf8)) }
        }
    }

    // MARK: Records

    private static func labels(of value: Any) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label))
    }

    /// Integers and doubles as one kind of number: the two encoders may write `60` or `60.0`.
    private static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .integer(let number): .number(Double(number))
        case .array(let items): .array(items.map(normalized))
        case .object(let members): .object(members.map { .init($0.key, normalized($0.value)) })
        default: value
        }
    }

    private static func fullRecord() -> NotificationRequestRecord {
        var content = NotificationContentRecord()
        content.title = "title"
        content.subtitle = "subtitle"
        content.body = "body"
        content.badge = 3
        content.sound = NotificationSoundRecord(kind: .critical, name: "alarm.caf", volume: 0.3)
        content.launchImageName = "launch"
        content.userInfo = Data([1, 2, 3])
        var attachment = NotificationAttachmentRecord(identifier: "a", path: "/tmp/a.png", type: "public.png")
        attachment.thumbnailClippingRect = ["x": 0, "y": 0, "width": 0.5, "height": 0.5]
        attachment.thumbnailTime = 1.5
        content.attachments = [attachment]
        content.categoryIdentifier = "category"
        content.threadIdentifier = "thread"
        content.targetContentIdentifier = "target"
        content.summaryArgument = "summary"
        content.summaryArgumentCount = 2
        content.interruptionLevel = .timeSensitive
        content.relevanceScore = 0.5
        content.filterCriteria = "work"
        var record = NotificationRequestRecord(identifier: "full", content: content, trigger: .timeInterval(60, repeats: true))
        record.pushDeliveryID = "a2c6b6c2-2d4c-4d6b-9b53-1f3f4a5b6c7d"
        return record
    }

    private static let strings = [
        "", "plain", "quote \" and backslash \\", "slash / and tab \t", "new\nline\r", "\u{0}\u{1}\u{1F}\u{7F}",
        "émoji 🚀 and 漢字", "\u{2028}\u{2029}", "\u{10FFFF}", String(repeating: "x", count: 300),
    ]

    private static func string(_ generator: inout SplitMix64) -> String {
        strings[Int(generator.next() % UInt64(strings.count))]
    }

    private static func maybe<T>(_ generator: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> T? {
        generator.next() % 2 == 0 ? make(&generator) : nil
    }

    private static func double(_ generator: inout SplitMix64) -> Double {
        switch generator.next() % 8 {
        case 0: 0
        case 1: -0.0
        case 2: Double(generator.next() % 100_000)
        case 3: Double(generator.next() % 1_000_000) / 1_000
        case 4: Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF)  // any finite positive double
        case 5: 1e-300 * Double(generator.next() % 10 + 1)
        case 6: -Double(generator.next() % 1_000) / 7
        default: 1e300
        }
    }

    private static func randomRecord(_ generator: inout SplitMix64) -> NotificationRequestRecord {
        var content = NotificationContentRecord()
        content.title = string(&generator)
        content.subtitle = string(&generator)
        content.body = string(&generator)
        content.badge = maybe(&generator) { Int(truncatingIfNeeded: $0.next()) }
        content.sound = maybe(&generator) { generator in
            let kinds: [NotificationSoundRecord.Kind] = [
                .default, .named, .defaultCritical, .critical, .defaultRingtone, .ringtone,
            ]
            return NotificationSoundRecord(
                kind: kinds[Int(generator.next() % 6)], name: maybe(&generator) { string(&$0) },
                volume: maybe(&generator) { Float(bitPattern: UInt32(truncatingIfNeeded: $0.next()) & 0x7F7F_FFFF) })
        }
        content.launchImageName = string(&generator)
        content.userInfo = maybe(&generator) { generator in
            Data((0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        content.attachments = (0..<Int(generator.next() % 3)).map { _ in
            var attachment = NotificationAttachmentRecord(
                identifier: string(&generator), path: string(&generator), type: string(&generator))
            attachment.thumbnailHidden = generator.next() % 2 == 0
            attachment.thumbnailClippingRect = maybe(&generator) { generator in
                Dictionary(
                    uniqueKeysWithValues: ["x", "y", "width", "height", string(&generator) + "k"].map { ($0, double(&generator)) }
                )
            }
            attachment.thumbnailTime = maybe(&generator) { double(&$0) }
            return attachment
        }
        content.categoryIdentifier = string(&generator)
        content.threadIdentifier = string(&generator)
        content.targetContentIdentifier = maybe(&generator) { string(&$0) }
        content.summaryArgument = string(&generator)
        content.summaryArgumentCount = Int(generator.next() % 100)
        content.interruptionLevel = UNNotificationInterruptionLevel(rawValue: UInt(generator.next() % 4))!
        content.relevanceScore = double(&generator)
        content.filterCriteria = maybe(&generator) { string(&$0) }
        let trigger: NotificationTriggerRecord?
        switch generator.next() % 6 {
        case 0: trigger = nil
        case 1: trigger = .push
        case 2:
            var components = DateComponents()
            components.hour = Int(generator.next() % 24)
            components.minute = Int(generator.next() % 60)
            trigger = .calendar(components, repeats: generator.next() % 2 == 0)
        case 3:
            trigger = .location(
                NotificationRegionRecord(
                    identifier: string(&generator), latitude: double(&generator), longitude: double(&generator),
                    radius: double(&generator), notifyOnEntry: generator.next() % 2 == 0, notifyOnExit: generator.next() % 2 == 0),
                repeats: generator.next() % 2 == 0)
        default: trigger = .timeInterval(double(&generator), repeats: generator.next() % 2 == 0)
        }
        var record = NotificationRequestRecord(identifier: string(&generator), content: content, trigger: trigger)
        record.pushDeliveryID = maybe(&generator) { string(&$0) }
        if generator.next() % 10 == 0 {
            var legacy = LegacyNotificationRecord()
            legacy.alertAction = maybe(&generator) { string(&$0) }
            legacy.repeatInterval = UInt(generator.next() % 64)
            record.legacy = legacy
        }
        return record
    }
}
