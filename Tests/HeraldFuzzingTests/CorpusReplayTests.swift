import Foundation
import HeraldFuzzing
import Testing

/// Every fuzz target's corpus and every input a fuzzer ever broke it with (Fuzz/corpus, Fuzz/regressions) go
/// through it again on each test run: what was fixed stays fixed.
@Suite struct CorpusReplayTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// The files in `folder`, in name order; none when it does not exist.
    static func inputs(in folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.map { folder.appendingPathComponent($0) }
    }

    @Test("A fuzz target's corpus and regression inputs keep its invariants", arguments: FuzzTarget.all.map(\.name))
    func replay(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let corpus = Self.inputs(in: Self.fuzz.appendingPathComponent("corpus/\(name)"))
        let regressions = Self.inputs(in: Self.fuzz.appendingPathComponent("regressions/\(name)"))
        #expect(!corpus.isEmpty, "Fuzz/corpus/\(name) is empty: run scripts/fuzz \(name) --seed")
        for file in corpus + regressions {
            let input = [UInt8](try Data(contentsOf: file))
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try target.run(input) }
        }
    }

    @Test("Every target's seeds keep its invariants, and the target names are unique")
    func seeds() {
        #expect(Set(FuzzTarget.all.map(\.name)).count == FuzzTarget.all.count)
        for target in FuzzTarget.all {
            let seeds = target.seeds()
            #expect(!seeds.isEmpty, "\(target.name)")
            for seed in seeds { #expect(throws: Never.self, "\(target.name)") { try target.run(seed) } }
        }
    }
}
