import ArgumentParser

/// The outside programs a benchmark measures against: h2load drives the load, nginx is the ceiling.
struct ReferenceTools: ParsableArguments {
    @Option(help: "The h2load executable.") var h2load = "/usr/bin/h2load"
    @Option(help: "The nginx executable.") var nginx = "/usr/sbin/nginx"

    func validate() throws {
        try requireExecutable(h2load, option: "h2load", package: "nghttp2-client")
        try requireExecutable(nginx, option: "nginx", package: "nginx")
    }
}
