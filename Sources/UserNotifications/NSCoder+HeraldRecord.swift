import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Archives the model classes through their `Codable` records.
///
/// Apple's archive keys are not public (research §4 gap 9), so Herald archives one key holding the record's JSON;
/// archives round-trip within Herald, which is what apps and test suites that archive notifications rely on.
extension NSCoder {
    package static let heraldRecordKey = "HeraldRecord"

    package func encodeHeraldRecord<Record: Encodable>(_ record: Record) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        encode(NSData(data: data), forKey: NSCoder.heraldRecordKey)
    }

    /// The record archived under Herald's key, or `nil` with the coder's error set (Apple's `init?(coder:)`
    /// contract) when the archive has no such record, holds something else there, or a damaged one.
    package func decodeHeraldRecord<Record: Decodable>(_ type: Record.Type) -> Record? {
        // Asking for a key that is not there, or for the wrong class, ends the process in Foundation on Linux:
        // check first, and read whatever is there before judging it.
        guard containsValue(forKey: NSCoder.heraldRecordKey) else {
            return fail(type, "the archive has no \(NSCoder.heraldRecordKey) (not written by Herald)")
        }
        guard let data = decodeObject(forKey: NSCoder.heraldRecordKey) as? Data else {
            return fail(type, "\(NSCoder.heraldRecordKey) does not hold data")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            return fail(type, "\(NSCoder.heraldRecordKey) is damaged: \(error)")
        }
    }

    /// Reports a record that cannot be decoded: the error goes to the coder when its policy is to keep errors;
    /// under `.raiseException`, Foundation on Linux cannot raise and would end the process, so the `nil` alone
    /// says it (the unarchiver then fails the whole decode, as it does for any `init?(coder:)` returning `nil`).
    private func fail<Record>(_ type: Record.Type, _ reason: String) -> Record? {
        guard decodingFailurePolicy == .setErrorAndReturn else { return nil }
        failWithError(
            CocoaError(.coderReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: "Cannot decode \(Record.self): \(reason)"]))
        return nil
    }
}
