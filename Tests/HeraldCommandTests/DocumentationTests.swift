import Foundation
import NIOPosix
import Testing

/// The repository's documents, as a newcomer reads them from a clone.
@Suite(.timeLimit(.minutes(1))) struct DocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of every file under `folders` whose name ends with one of `extensions`, by path from the repository.
    static func texts(under folders: [String], extensions: [String]) async throws -> [String: String] {
        try await NIOThreadPool.singleton.runIfActive {
            var texts: [String: String] = [:]
            for folder in folders {
                let root = repository.appendingPathComponent(folder)
                guard let walker = FileManager.default.enumerator(atPath: root.path) else { continue }
                for case let path as String in walker where extensions.contains(where: { path.hasSuffix($0) }) {
                    texts["\(folder)/\(path)"] = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                }
            }
            return texts
        }
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test("Issue 43: every check ID the code cites (B-17, S-03, …) has its row in docs/spec.md")
    func everyCitedIDResolves() async throws {
        let spec = try #require(try await Self.texts(under: ["docs"], extensions: ["spec.md"])["docs/spec.md"])
        let rows = Set(Self.matches(of: #"(?m)^\| ([A-Z]{1,2}-\d{1,3}) \|"#, in: spec))
        #expect(rows.count > 150)
        var missing: [String: String] = [:]
        for (path, text) in try await Self.texts(under: ["Sources", "Tests"], extensions: [".swift"]) {
            for id in Self.matches(of: #"\b((?:[ABCDHINPRSTXY]|SC)-\d{1,3})\b"#, in: text) where !rows.contains(id) {
                missing[id] = path
            }
        }
        missing["P-256"] = nil  // the curve, not a check
        #expect(missing.isEmpty, "cited but not in docs/spec.md: \(missing.sorted { $0.key < $1.key })")
    }

    @Test("Issue 43: every spec section the code cites (APNs §1.2, UserNotifications §1.3) is a heading of docs/spec.md")
    func everyCitedSectionResolves() async throws {
        let spec = try #require(try await Self.texts(under: ["docs"], extensions: ["spec.md"])["docs/spec.md"])
        let headings = Set(Self.matches(of: #"(?m)^#+ ((?:APNs|UserNotifications) §\d+(?:\.\d+)?) "#, in: spec))
        var missing: [String: String] = [:]
        for (path, text) in try await Self.texts(under: ["Sources", "Tests", "docs"], extensions: [".swift", ".md"]) {
            for section in Self.matches(of: #"\b((?:APNs|UserNotifications) §\d+(?:\.\d+)?)"#, in: text)
            where !headings.contains(section) {
                missing[section] = path
            }
        }
        #expect(missing.isEmpty, "cited but no such section in docs/spec.md: \(missing)")
    }

    @Test("Issue 43: every link in README.md and docs/ resolves inside the repository")
    func linksStayInTheRepository() async throws {
        var documents = try await Self.texts(under: ["docs"], extensions: [".md"])
        documents["README.md"] = try await NIOThreadPool.singleton.runIfActive {
            try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        }
        var broken: [String] = []
        for (path, text) in documents {
            let folder = Self.repository.appendingPathComponent(path).deletingLastPathComponent()
            for target in Self.matches(of: #"\]\(([^)\s#]+)(?:#[^)]*)?\)"#, in: text) where !target.contains("://") {
                let resolved = folder.appendingPathComponent(target).standardizedFileURL
                let inside = resolved.path.hasPrefix(Self.repository.standardizedFileURL.path + "/")
                if !inside || !FileManager.default.fileExists(atPath: resolved.path) { broken.append("\(path) → \(target)") }
            }
        }
        #expect(broken.isEmpty, "\(broken)")
    }
}
