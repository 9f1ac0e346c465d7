import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationSoundName`: the file name of a sound in `Library/Sounds` or the app bundle.
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
}

/// Apple's `UNNotificationSound`: the sound played when a notification is delivered.
public final class UNNotificationSound: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationSoundRecord

    package init(record: NotificationSoundRecord) {
        self.record = record
    }

    /// The default alert sound.
    public class var `default`: UNNotificationSound { UNNotificationSound(record: .init(kind: .default)) }

    /// The default sound for critical alerts (bypasses mute and Do Not Disturb on Apple's devices).
    public class var defaultCritical: UNNotificationSound { UNNotificationSound(record: .init(kind: .defaultCritical)) }

    /// The default ringtone sound.
    public class var defaultRingtone: UNNotificationSound { UNNotificationSound(record: .init(kind: .defaultRingtone)) }

    /// A sound file of the app's, by name.
    public convenience init(named name: UNNotificationSoundName) {
        self.init(record: .init(kind: .named, name: name.rawValue))
    }

    /// The default critical sound at a volume from 0.0 to 1.0 (clamped).
    public class func defaultCriticalSound(withAudioVolume volume: Float) -> Self {
        Self(record: .init(kind: .defaultCritical, volume: min(max(volume, 0), 1)))
    }

    /// A critical-alert sound from the app's files.
    public class func criticalSoundNamed(_ name: UNNotificationSoundName) -> Self {
        Self(record: .init(kind: .critical, name: name.rawValue))
    }

    /// A critical-alert sound from the app's files at a volume from 0.0 to 1.0 (clamped).
    public class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> Self {
        Self(record: .init(kind: .critical, name: name.rawValue, volume: min(max(volume, 0), 1)))
    }

    /// A ringtone sound from the app's files.
    public class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> Self {
        Self(record: .init(kind: .ringtone, name: name.rawValue))
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationSoundRecord.self) else { return nil }
        self.record = record
    }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationSound)?.record == record
    }

    public override var hash: Int { record.hashValue }

    public override var description: String {
        "<UNNotificationSound: \(record.kind.rawValue)\(record.name.map { " \($0)" } ?? "")>"
    }
}
