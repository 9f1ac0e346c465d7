import ArgumentParser
import HeraldCore

/// `--purpose`: `app`, or a purpose's stored form (`voip`, `widgets`, `control:<kind>`, `liveactivity:<activity ID>`,
/// `pushtostart:<attributes type>`, `location`, `complication`, `fileprovider`, `pushtotalk`, `mdm`). A web push
/// subscription is made by subscribing, not here.
extension TokenPurpose: ExpressibleByArgument {
    public init?(argument: String) {
        if argument == "app" {
            self = .app
            return
        }
        guard !argument.isEmpty, let purpose = TokenPurpose(rawValue: argument), !purpose.isWebPush else { return nil }
        self = purpose
    }
}
