import Foundation
import NIOPosix
import Testing

/// Issue 65: docs/architecture.md's map of who depends on whom is Package.swift's, every library has a test target and
/// a DocC overview, and the app frameworks reach the device without `UserNotifications`.
@Suite(.timeLimit(.minutes(1))) struct ArchitectureDocumentTests {
    /// A target of Package.swift: its kind, the modules of this package it depends on, and its folder when not the
    /// default one.
    struct Target: Equatable {
        var kind: String
        var dependencies: Set<String>
        var path: String?
    }

    /// The targets Package.swift declares, by name, read from its text (`.target`, `.executableTarget`, `.testTarget`;
    /// a dependency is a quoted name in `dependencies: […]` outside a `.product(…)`).
    static func targets(inManifest text: String) -> [String: Target] {
        let characters = Array(text)
        var targets: [String: Target] = [:]
        let opening = /\.(target|executableTarget|testTarget)\(/
        for match in text.matches(of: opening) {
            let start = text.distance(from: text.startIndex, to: match.range.upperBound)
            let body = String(characters[start..<(closing(characters, from: start) - 1)])
            guard let name = body.firstMatch(of: /name:\s*"([^"]+)"/)?.1 else { continue }
            var dependencies: Set<String> = []
            if let list = body.firstMatch(of: /dependencies:\s*\[/) {
                let bodyCharacters = Array(body)
                let from = body.distance(from: body.startIndex, to: list.range.upperBound)
                var inner = String(bodyCharacters[from..<(closing(bodyCharacters, from: from) - 1)])
                // `.product(name: …, package: …)` names another package's product, not a module of this one.
                while let product = inner.firstMatch(of: /\.product\([^)]*\)/) { inner.removeSubrange(product.range) }
                dependencies = Set(inner.matches(of: /"([^"]+)"/).map { String($0.1) })
            }
            let path = body.firstMatch(of: /path:\s*"([^"]+)"/).map { String($0.1) }
            targets[String(name)] = Target(kind: String(match.1), dependencies: dependencies, path: path)
        }
        return targets
    }

    /// The index just past the bracket that closes the one just before `start`.
    private static func closing(_ characters: [Character], from start: Int) -> Int {
        var depth = 1
        var index = start
        while depth > 0 && index < characters.count {
            switch characters[index] {
            case "(", "[": depth += 1
            case ")", "]": depth -= 1
            default: break
            }
            index += 1
        }
        return index
    }

    /// The dependencies block of docs/architecture.md: each target line (`  Name ──▶ A, B,` and its continuation
    /// lines), by name; layer titles are the lines that start without a space.
    static func documentedDependencies(in document: String) throws -> [String: Set<String>] {
        let begin = try #require(document.range(of: "<!-- dependencies: checked by ArchitectureDocumentTests -->"))
        let end = try #require(document.range(of: "<!-- end of dependencies -->"))
        var documented: [String: Set<String>] = [:]
        var current: String?
        for line in document[begin.upperBound..<end.lowerBound].split(separator: "\n") where !line.hasPrefix("```") {
            if let target = line.firstMatch(of: /^  ([A-Za-z_][\w-]*)\s*(?:──▶\s*(.*))?$/) {
                current = String(target.1)
                documented[String(target.1), default: []].formUnion(Self.names(target.2.map(String.init) ?? ""))
            } else if line.hasPrefix("   "), let current {
                documented[current, default: []].formUnion(Self.names(String(line)))
            } else {
                current = nil  // a layer's title
            }
        }
        return documented
    }

    static func names(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func read(_ paths: [String]) async throws -> [String: String] {
        try await NIOThreadPool.singleton.runIfActive {
            var texts: [String: String] = [:]
            for path in paths {
                let url = DocumentationTests.repository.appendingPathComponent(path)
                texts[path] = try? String(contentsOf: url, encoding: .utf8)
            }
            return texts
        }
    }

    static func manifestTargets() async throws -> [String: Target] {
        let manifest = try #require(try await read(["Package.swift"])["Package.swift"])
        let targets = targets(inManifest: manifest)
        #expect(targets.count > 40, "the manifest's targets were found: \(targets.keys.sorted())")
        return targets
    }

    @Test("docs/architecture.md's dependency map is Package.swift's: every target, every arrow, both ways")
    func mapMatchesManifest() async throws {
        let targets = try await Self.manifestTargets()
        let document = try #require(try await Self.read(["docs/architecture.md"])["docs/architecture.md"])
        let documented = try Self.documentedDependencies(in: document)
        let declared = targets.filter { $0.value.kind != "testTarget" }.mapValues(\.dependencies)
        #expect(
            Set(documented.keys) == Set(declared.keys),
            "targets only in the document: \(Set(documented.keys).subtracting(declared.keys).sorted()); only in Package.swift: \(Set(declared.keys).subtracting(documented.keys).sorted())"
        )
        for (name, dependencies) in declared.sorted(by: { $0.key < $1.key }) {
            guard let shown = documented[name] else { continue }
            #expect(
                shown == dependencies,
                "\(name): the document has arrows to \(shown.subtracting(dependencies).sorted()) that Package.swift does not, and lacks \(dependencies.subtracting(shown).sorted())"
            )
        }
    }

    @Test("The reader checks what it claims: an arrow added to the map, or one left out, is found")
    func mapCheckCanFail() throws {
        let document = """
            <!-- dependencies: checked by ArchitectureDocumentTests -->
            ```text
            foundation
              HeraldCore
              PushKit                    ──▶ HeraldCore, HeraldAppRuntime,
                                             HeraldNotificationEngine
            ```
            <!-- end of dependencies -->
            """
        let documented = try Self.documentedDependencies(in: document)
        #expect(documented == ["HeraldCore": [], "PushKit": ["HeraldCore", "HeraldAppRuntime", "HeraldNotificationEngine"]])
        let manifest = """
            .target(name: "PushKit", dependencies: ["HeraldCore", .product(name: "Logging", package: "swift-log"), "UserNotifications"]),
            .testTarget(name: "PushKitTests", dependencies: ["PushKit"], path: "Tests/PushKitTests"),
            """
        let targets = Self.targets(inManifest: manifest)
        #expect(targets["PushKit"]?.dependencies == ["HeraldCore", "UserNotifications"])
        #expect(targets["PushKitTests"] == Target(kind: "testTarget", dependencies: ["PushKit"], path: "Tests/PushKitTests"))
        #expect(documented["PushKit"] != targets["PushKit"]?.dependencies)
    }

    @Test(
        "Issue 65: ActivityKit, PushKit, WidgetKit and FirebaseMessaging do not depend on UserNotifications, even through another module"
    )
    func appFrameworksWithoutUserNotifications() async throws {
        let targets = try await Self.manifestTargets()
        for framework in ["ActivityKit", "PushKit", "WidgetKit", "FirebaseMessaging"] {
            var reached: Set<String> = []
            var next = [framework]
            while let module = next.popLast() {
                for dependency in targets[module]?.dependencies ?? [] where reached.insert(dependency).inserted {
                    next.append(dependency)
                }
            }
            #expect(reached.contains("HeraldAppRuntime"), "\(framework) reaches the device through the app runtime")
            #expect(!reached.contains("UserNotifications"), "\(framework) depends on UserNotifications: \(reached.sorted())")
        }
    }

    @Test("Issue 65: every library has a test target and a DocC overview that says what it is")
    func everyLibraryTestedAndDescribed() async throws {
        let targets = try await Self.manifestTargets()
        let libraries = targets.filter { $0.value.kind == "target" && $0.value.path == nil && $0.key != "_Testing_UIKit" }
            .keys.sorted()
        #expect(libraries.count > 20)
        let overviews = try await Self.read(libraries.map { "Sources/\($0)/\($0).docc/\($0).md" })
        for library in libraries {
            #expect(targets["\(library)Tests"]?.kind == "testTarget", "\(library) has no test target \(library)Tests")
            guard let overview = overviews["Sources/\(library)/\(library).docc/\(library).md"] ?? nil else {
                Issue.record("\(library) has no DocC overview at Sources/\(library)/\(library).docc/\(library).md")
                continue
            }
            let lines = overview.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first == "# ``\(library)``", "\(library)'s overview starts with its title")
            #expect(lines.count > 2 && !lines[2].isEmpty && !lines[2].hasPrefix("#"), "\(library)'s overview has a summary line")
            #expect(lines.contains("## Overview"), "\(library)'s overview has an Overview section")
        }
    }
}
