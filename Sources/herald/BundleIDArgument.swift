import ArgumentParser
import HeraldCore

/// Checks that an option's value is a bare bundle ID (a valid topic without a push-type suffix).
///
/// - Parameters:
///   - value: What was given.
///   - option: The option's name, for the message (`--topic`).
func requireBundleID(_ value: String, option: String) throws {
    guard APNsRequestHeaders.isValidTopic(value), APNsPushType.split(topic: value).suffixType == nil else {
        throw ValidationError("\(option) takes a bundle ID such as com.example.app, without a push-type suffix.")
    }
}
