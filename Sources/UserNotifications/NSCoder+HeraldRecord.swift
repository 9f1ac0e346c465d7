import Foundation

/// Archives the model classes through their `Codable` records.
///
/// Apple's archive keys are not public (research §4 gap 9), so Herald archives one key holding the record's JSON;
/// archives round-trip within Herald, which is what apps and test suites that archive notifications rely on.
extension NSCoder {
    static let heraldRecordKey = "HeraldRecord"

    func encodeHeraldRecord<Record: Encodable>(_ record: Record) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        encode(NSData(data: data), forKey: NSCoder.heraldRecordKey)
    }

    func decodeHeraldRecord<Record: Decodable>(_ type: Record.Type) -> Record? {
        guard let data = decodeObject(of: NSData.self, forKey: NSCoder.heraldRecordKey) else { return nil }
        return try? JSONDecoder().decode(type, from: data as Data)
    }
}
