import Foundation
import HeraldTestSupport

extension ChildProcess {
    /// The value after `label` on the first line of the output so far that has it: one of `herald up`'s banner lines
    /// (`  fcm proxy:       http://127.0.0.1:2201`).
    ///
    /// - Parameter label: The line's label, with its colon.
    func bannerValue(_ label: String) -> String? {
        output.split(separator: "\n").first { $0.contains(label) }?.components(separatedBy: label).last?
            .trimmingCharacters(in: .whitespaces)
    }
}
