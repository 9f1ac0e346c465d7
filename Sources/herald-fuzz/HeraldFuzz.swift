import Foundation
import HeraldFuzzing

// Two builds of one program. `scripts/fuzz` builds it with `-DHERALD_FUZZ`, libFuzzer's coverage instrumentation and
// AddressSanitizer: `herald_fuzz_main` (SwiftPM's name for this executable's entry point) hands control to libFuzzer's
// driver with the target named by HERALD_FUZZ_TARGET. The ordinary build is a tool around the same targets: it lists
// them, writes their seed inputs, and replays inputs through them.

#if HERALD_FUZZ
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target libFuzzer drives, chosen once before the driver starts.
nonisolated(unsafe) var selectedTarget: FuzzTarget?

@_cdecl("herald_fuzz_main")
func heraldFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    let name = ProcessInfo.processInfo.environment["HERALD_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        FileHandle.standardError.write(
            Data(
                "Set HERALD_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", ")) (or use scripts/fuzz).\n"
                    .utf8))
        return 2
    }
    selectedTarget = target
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv) { start, count in
        let input = count == 0 ? [] : [UInt8](UnsafeBufferPointer(start: start, count: count))
        do {
            try selectedTarget!.run(input)
        } catch {
            fatalError("\(selectedTarget!.name): \(error)")
        }
        return 0
    }
}
#else
@main
struct HeraldFuzz {
    static let usage = """
        usage: herald-fuzz --list                  the fuzz targets
               herald-fuzz seed TARGET FOLDER      write TARGET's seed inputs into FOLDER
               herald-fuzz replay TARGET PATH...   run files (or every file in folders) through TARGET
        Fuzzing itself: scripts/fuzz TARGET (a build with libFuzzer and AddressSanitizer).
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "--list":
            for target in FuzzTarget.all {
                print(target.name.padding(toLength: 18, withPad: " ", startingAt: 0) + target.summary)
            }
        case "seed" where arguments.count == 3:
            let target = named(arguments[1])
            let folder = URL(fileURLWithPath: arguments[2], isDirectory: true)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for (index, seed) in target.seeds().enumerated() {
                    try Data(seed).write(to: folder.appendingPathComponent(String(format: "seed-%03d", index)))
                }
            } catch {
                fail("cannot write seeds into \(folder.path): \(error)")
            }
        case "replay" where arguments.count >= 3:
            let target = named(arguments[1])
            var count = 0
            var broken = 0
            for file in files(Array(arguments.dropFirst(2))) {
                guard let data = FileManager.default.contents(atPath: file) else { fail("cannot read \(file)") }
                count += 1
                do {
                    try target.run([UInt8](data))
                } catch {
                    broken += 1
                    print("\(file): \(error)")
                }
            }
            print("\(target.name): \(count) inputs, \(broken) broke an invariant")
            if broken > 0 { exit(1) }
        default:
            fail(usage)
        }
    }

    static func named(_ name: String) -> FuzzTarget {
        guard let target = FuzzTarget.named(name) else {
            fail("no fuzz target \(name); the targets are \(FuzzTarget.all.map(\.name).joined(separator: ", ")).")
        }
        return target
    }

    /// Every regular file among `paths`, folders read one level deep, in name order.
    static func files(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [] }
            guard isFolder.boolValue else { return [path] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }
}
#endif
