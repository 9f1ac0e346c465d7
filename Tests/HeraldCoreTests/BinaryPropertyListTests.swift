import Foundation
import HeraldCore
import Testing

/// The look at binary property lists before Foundation reads them (Foundation on Linux crashes on some; fuzzing found
/// a set that does not bridge).
@Suite struct BinaryPropertyListTests {
    static var dictionary: [String: Any] {
        ["aps": ["alert": "Hi", "badge": 1], "ids": [1, 2], "ok": true, "when": Date(timeIntervalSince1970: 0)]
    }

    @Test("A dictionary of plain values Foundation wrote, in binary or XML, is plain; text that is no list passes to Foundation")
    func plainLists() throws {
        for format in [PropertyListSerialization.PropertyListFormat.binary, .xml] {
            let data = try PropertyListSerialization.data(fromPropertyList: Self.dictionary, format: format, options: 0)
            #expect(BinaryPropertyList.isPlain(data), "\(format)")
        }
        #expect(BinaryPropertyList.isPlain(Data(#""key" = "value";"#.utf8)))
    }

    @Test("A set, a UID, a damaged trailer or an offset outside the table is refused before Foundation reads it")
    func refused() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["a": [1]], format: .binary, options: 0)
        var bytes = [UInt8](data)
        // The one-element array's marker (0xA1) made a one-element set (0xC1), or a UID (0x80).
        let array = try #require(bytes.firstIndex(of: 0xA1))
        for marker: UInt8 in [0xC1, 0x80] {
            bytes[array] = marker
            #expect(!BinaryPropertyList.isPlain(Data(bytes)), "marker \(marker)")
        }
        let intact = [UInt8](data)
        #expect(!BinaryPropertyList.isPlain(Data(intact.prefix(intact.count - 1))), "cut short")
        var pointing = intact
        pointing[pointing.count - 1] = 0xFF  // the offset table's offset, past the end
        #expect(!BinaryPropertyList.isPlain(Data(pointing)))
        #expect(!BinaryPropertyList.isPlain(Data("bplist00".utf8)))
    }
}
