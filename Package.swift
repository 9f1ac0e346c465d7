// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "CoreLocation", targets: ["CoreLocation"]),
        .library(name: "UserNotifications", targets: ["UserNotifications"]),
        .library(name: "UserNotificationsUI", targets: ["UserNotificationsUI"]),
        .library(name: "UIKit", targets: ["UIKit"]),
        .library(name: "ActivityKit", targets: ["ActivityKit"]),
        .library(name: "PushKit", targets: ["PushKit"]),
        .library(name: "WidgetKit", targets: ["WidgetKit"]),
        .library(name: "FirebaseCore", targets: ["FirebaseCore"]),
        .library(name: "FirebaseMessaging", targets: ["FirebaseMessaging"]),
        .library(name: "HeraldTesting", targets: ["HeraldTesting"]),
        .library(name: "HeraldGatewayStore", targets: ["HeraldGatewayStore"]),
        .library(name: "HeraldGateway", targets: ["HeraldGateway"]),
        .library(name: "HeraldDeviceChannel", targets: ["HeraldDeviceChannel"]),
        .library(name: "HeraldDevice", targets: ["HeraldDevice"]),
        .library(name: "HeraldProvider", targets: ["HeraldProvider"]),
        .library(name: "HeraldConsole", targets: ["HeraldConsole"]),
        .executable(name: "herald", targets: ["herald"]),
        .executable(name: "herald-example-app", targets: ["herald-example-app"]),
        .executable(name: "herald-example-fcm", targets: ["herald-example-fcm"]),
        .executable(name: "herald-example-legacy", targets: ["herald-example-legacy"]),
        .executable(name: "herald-example-service", targets: ["herald-example-service"]),
        .executable(name: "herald-example-content", targets: ["herald-example-content"]),
        .executable(name: "herald-example-activity", targets: ["herald-example-activity"]),
        .executable(name: "herald-example-voip", targets: ["herald-example-voip"]),
        .executable(name: "herald-example-widget", targets: ["herald-example-widget"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `scripts/docs` builds the DocC catalogs with it (`swift package generate-documentation`); no target uses it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "HeraldCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldStorage",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldFCM",
            dependencies: ["HeraldCore", .product(name: "CryptoExtras", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(name: "HeraldFaults", dependencies: ["HeraldCore"], swiftSettings: swiftSettings),
        .target(
            name: "HeraldGatewayStore",
            dependencies: [
                "HeraldCore",
                "HeraldStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldGateway",
            dependencies: [
                "HeraldCore",
                "HeraldFCM",
                "HeraldWebPush",
                "HeraldGatewayStore",
                "HeraldFaults",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldDeviceChannel",
            dependencies: [
                "HeraldCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldWebPush",
            dependencies: ["HeraldCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "WidgetKit",
            dependencies: [
                "HeraldCore", "HeraldAppRuntime", "HeraldDeviceProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ActivityKit",
            dependencies: [
                "HeraldCore", "HeraldAppRuntime", "HeraldDeviceProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldConsole",
            dependencies: [
                "HeraldCore", "HeraldGatewayStore", "HeraldStorage", "HeraldProvider", "HeraldFCM", "HeraldWebPush",
                "HeraldFaults",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PushKit",
            dependencies: [
                "HeraldCore", "HeraldAppRuntime", "HeraldDeviceProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FirebaseCore",
            dependencies: ["HeraldAppRuntime"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FirebaseMessaging",
            dependencies: ["FirebaseCore", "HeraldCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldDevice",
            dependencies: [
                "HeraldCore", "HeraldStorage", "HeraldNotificationEngine", "HeraldDeviceProtocol", "HeraldDeviceChannel",
                "HeraldAppChannel", "HeraldWebPush",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldProvider",
            dependencies: [
                "HeraldCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldAppChannel",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoreLocation",
            dependencies: ["HeraldCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // What travels between an app, its extensions and the device daemon: the app channel's messages, the records
        // they carry, the device model (delivery budgets, power, Focus) and Apple's plain value types (options,
        // settings, `UNError`, re-exported one by one by `UserNotifications`). No storage.
        .target(
            name: "HeraldDeviceProtocol",
            dependencies: ["HeraldCore", "CoreLocation"],
            swiftSettings: swiftSettings
        ),
        // The device's notification engine: its store, the scheduler, `NotificationChange` and the presentation rules.
        .target(
            name: "HeraldNotificationEngine",
            dependencies: [
                "HeraldCore",
                "HeraldDeviceProtocol",
                "HeraldStorage",
                "CoreLocation",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // An app process's side: the link to the device daemon and the handlers the app's frameworks install.
        .target(
            name: "HeraldAppRuntime",
            dependencies: [
                "HeraldCore", "HeraldNotificationEngine", "HeraldDeviceProtocol", "HeraldAppChannel",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "UserNotifications",
            dependencies: [
                "HeraldCore",
                "HeraldNotificationEngine", "HeraldDeviceProtocol",
                "HeraldAppRuntime",
                "CoreLocation",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "UserNotificationsUI", dependencies: ["HeraldDeviceProtocol", "UserNotifications", "UIKit", "HeraldCore"],
            swiftSettings: swiftSettings),
        .target(
            name: "UIKit",
            dependencies: [
                "HeraldDeviceProtocol",
                "UserNotifications", "HeraldAppRuntime", "HeraldCore", "_Testing_UIKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Empty: Swift Testing's cross-import overlay for UIKit, which Linux's toolchain names but does not ship.
        .target(name: "_Testing_UIKit", swiftSettings: swiftSettings),
        .target(
            name: "HeraldTesting",
            dependencies: ["HeraldDeviceProtocol", "HeraldCore", "UserNotifications"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore", "HeraldConsole",
                "HeraldDevice", "HeraldAppRuntime", "HeraldNotificationEngine", "HeraldDeviceProtocol",
                "UserNotifications",
                "HeraldGateway",
                "HeraldFaults",
                "HeraldFCM",
                "HeraldWebPush",
                "HeraldProvider",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-example-app",
            dependencies: ["UIKit", "UserNotifications"]
        ),
        .executableTarget(
            name: "herald-example-fcm",
            dependencies: ["UIKit", "UserNotifications", "FirebaseCore", "FirebaseMessaging"]
        ),
        .executableTarget(
            name: "herald-example-activity",
            dependencies: ["ActivityKit"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-example-widget",
            dependencies: ["WidgetKit"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-example-voip",
            dependencies: ["PushKit"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-example-legacy",
            dependencies: ["UIKit", "UserNotifications"]
        ),
        // Seed code as the seeds wrote it (completion handlers captured freely): Swift 5 language mode.
        .executableTarget(
            name: "herald-example-service", dependencies: ["UserNotifications"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "herald-example-content", dependencies: ["UIKit", "UserNotificationsUI"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The fuzz targets (scripts/fuzz): parsers of outside input with their invariants; `herald-fuzz` drives them
        // under libFuzzer or replays inputs, HeraldFuzzingTests replays the corpora in Fuzz/.
        .target(
            name: "HeraldFuzzing",
            dependencies: [
                "HeraldDeviceProtocol",
                "HeraldCore", "UserNotifications", "UIKit", "CoreLocation", "HeraldDevice", "HeraldGateway", "HeraldFCM",
                "HeraldWebPush", "HeraldProvider", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-fuzz",
            dependencies: ["HeraldFuzzing"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldDeviceProtocol",
                "HeraldConsole",
                "HeraldCore",
                "HeraldFCM",
                "PostgresTesting",
                "UserNotifications",
                "HeraldTesting",
                "HeraldTestSupport",
                "HeraldGateway",
                "HeraldDeviceChannel",
                "HeraldDevice",
                "HeraldProvider",
                "HeraldWebPush",
                "HeraldFaults",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        // The app process's link to the device daemon, against a daemon's end of the app channel.
        .testTarget(
            name: "HeraldAppRuntimeTests",
            dependencies: [
                "HeraldAppRuntime", "HeraldAppChannel", "HeraldNotificationEngine", "HeraldDeviceProtocol", "HeraldTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // WidgetKit's configuration types, as the device receives them, without a daemon.
        .testTarget(
            name: "WidgetKitTests", dependencies: ["WidgetKit", "HeraldNotificationEngine", "HeraldDeviceProtocol"],
            swiftSettings: swiftSettings),
        // FirebaseOptions read from GoogleService-Info.plist.
        .testTarget(name: "FirebaseCoreTests", dependencies: ["FirebaseCore", "HeraldTesting"], swiftSettings: swiftSettings),
        // The engine's own parts, without the app-facing API: the delivery model, the scheduler's pieces, the store.
        .testTarget(
            name: "HeraldNotificationEngineTests",
            dependencies: [
                "HeraldNotificationEngine", "HeraldDeviceProtocol", "HeraldCore", "HeraldTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "UserNotificationsTests",
            dependencies: [
                "UserNotifications", "UserNotificationsUI", "HeraldTesting", "CoreLocation", "HeraldCore",
                "HeraldNotificationEngine", "HeraldDeviceProtocol",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        // A throwaway PostgreSQL server (Debian's package, a cluster in a folder of its own) for the tests and
        // the benchmarks that need a real database.
        .target(
            name: "PostgresTesting",
            dependencies: [
                "HeraldGatewayStore", "HeraldTesting", "HeraldTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PostgresTesting",
            swiftSettings: swiftSettings
        ),
        // What the tests and the benchmarks share and no product ships: the budget that runs heavy tests a few at a
        // time, `ChildProcess` (programs run without blocking the cooperative pool, every wait bounded) and
        // `RawConnection` (a client that sends exactly the bytes it is given, and can stop reading).
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "HeraldCore", "HeraldTesting",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/HeraldTestSupport",
            swiftSettings: swiftSettings
        ),
        // A real gateway on loopback for the tests that need one (the gateway's, the device's): `withGateway`,
        // `GatewayHarness`, `eventually`, `withRunning`. Used by test targets only.
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "HeraldGateway", "HeraldProvider", "HeraldDeviceChannel", "HeraldCore", "HeraldTesting", "PostgresTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/GatewayTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldDeviceTests",
            dependencies: [
                "HeraldTestSupport",
                "GatewayTestSupport", "HeraldDevice", "HeraldAppChannel", "HeraldAppRuntime", "HeraldGateway", "HeraldProvider",
                "HeraldTesting", "HeraldCore", "UserNotifications", "UIKit", "HeraldNotificationEngine", "HeraldDeviceProtocol",
                "HeraldGatewayStore",
                "HeraldWebPush",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldAppChannelTests",
            dependencies: ["HeraldAppChannel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldDeviceChannelTests",
            dependencies: [
                "HeraldTestSupport",
                "GatewayTestSupport", "HeraldDeviceChannel", "HeraldProvider", "HeraldCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ActivityKitTests",
            dependencies: ["HeraldDeviceProtocol", "ActivityKit", "HeraldCore", "HeraldTesting", "UserNotifications"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldWebPushTests",
            dependencies: [
                "HeraldWebPush", "HeraldCore", "HeraldTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushKitTests",
            dependencies: ["PushKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreLocationTests",
            dependencies: ["CoreLocation"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "UserNotificationsUITests",
            dependencies: ["UserNotificationsUI", "UserNotifications", "UIKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldTestingTests",
            dependencies: ["HeraldTestSupport", "HeraldTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldFCMTests",
            dependencies: [
                "HeraldFCM", "HeraldCore", "HeraldTestSupport", "HeraldTesting",
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldFaultsTests", dependencies: ["HeraldFaults", "HeraldCore"], swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldGatewayStoreTests",
            dependencies: [
                "HeraldTestSupport", "GatewayTestSupport", "HeraldGatewayStore", "HeraldCore", "HeraldStorage", "HeraldTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldGatewayTests",
            dependencies: [
                "HeraldTestSupport",
                "GatewayTestSupport", "HeraldProvider", "HeraldGateway", "HeraldDeviceChannel", "HeraldCore", "HeraldStorage",
                "HeraldFCM", "HeraldWebPush", "HeraldFaults",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                "HeraldTesting",
            ],
            resources: [.copy("Clients")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FirebaseMessagingTests",
            dependencies: [
                "FirebaseMessaging", "FirebaseCore", "HeraldFCM", "HeraldGateway", "HeraldCore", "HeraldDeviceChannel",
                "HeraldTestSupport", "HeraldTesting", "GatewayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "UIKitTests",
            dependencies: [
                "HeraldNotificationEngine",
                "HeraldDeviceProtocol", "HeraldTestSupport", "UIKit", "UserNotifications", "HeraldTesting", "HeraldCore",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldFuzzingTests",
            dependencies: ["HeraldFuzzing"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldDeviceProtocolTests", dependencies: ["HeraldDeviceProtocol", "HeraldCore"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: [
                "HeraldCore", "HeraldTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldStorageTests",
            dependencies: [
                "HeraldStorage", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldConsoleTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldConsole", "HeraldCore", "GatewayTestSupport", "HeraldDeviceChannel", "HeraldGateway", "HeraldTesting",
                "HeraldFCM", "HeraldGatewayStore", "HeraldWebPush", "PostgresTesting", "HeraldFaults",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Browser")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldProviderTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldProvider", "HeraldCore", "GatewayTestSupport", "HeraldGateway", "HeraldDeviceChannel", "HeraldTesting",
                "HeraldFaults",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldCommandTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldTesting", "UserNotifications", "HeraldCore", "HeraldDeviceChannel", "HeraldProvider", "HeraldGateway",
                "GatewayTestSupport", "HeraldFCM",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
