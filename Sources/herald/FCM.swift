import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldFCM
import HeraldGateway

extension HeraldCommand {
    /// Firebase Cloud Messaging's API in front of the gateway: projects and registration tokens.
    struct FCM: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fcm",
            abstract: "Firebase Cloud Messaging projects and registration tokens (firebase-admin code sends through Herald).",
            subcommands: [Project.self, Token.self])

        struct Project: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make and list Firebase projects and add apps to them.",
                subcommands: [Create.self, AddApp.self, List.self])

            struct Create: AsyncParsableCommand {
                static let configuration = CommandConfiguration(
                    abstract: "Make a Firebase project and write its service-account key file (Google's JSON format).",
                    discussion:
                        "The project sends with an APNs provider key the gateway knows (as FCM sends with the .p8 key uploaded to a project) to its iOS apps: name them with --bundle-id, now or later with `herald fcm project add-app` (a project can have none, as a new Firebase project has none). Prints `project: <id>` and `credentials: <path>`; the key file is written once, readable by you only, and Herald keeps only its public half."
                )
                @OptionGroup var store: GatewayStoreOptions
                @Argument(help: "The project ID: 6 to 30 lowercase letters, digits and hyphens, starting with a letter.")
                var projectID: String
                @Option(help: "The APNs provider key's ID (default: the gateway's only key).") var key: String?
                @Option(name: .customLong("bundle-id"), help: "An iOS app of the project (repeatable).")
                var bundleIDs: [String] = []
                @Option(help: "Where to write the service-account key file (default: <data-dir>/fcm/<project>.json).")
                var credentials: String?

                func run() async throws {
                    guard FCMServiceAccount.isValidProjectID(projectID) else {
                        throw ValidationError(
                            "\(projectID) is not a project ID: use 6 to 30 lowercase letters, digits and hyphens, starting with a letter (for example my-app-1234)."
                        )
                    }
                    for bundleID in bundleIDs { try requireBundleID(bundleID, option: "--bundle-id") }
                    let file =
                        credentials.map { URL(fileURLWithPath: $0) }
                        ?? store.directory.url.appendingPathComponent("fcm").appendingPathComponent("\(projectID).json")
                    guard !FileManager.default.fileExists(atPath: file.path) else {
                        throw ValidationError("\(file.path) exists; choose another --credentials or remove it first.")
                    }
                    let (account, keyFile) = try FCMServiceAccount.create(projectID: projectID)
                    try await store.withStore { (store: any FCMStore & ProviderKeyStore) in
                        let keyID = try await Self.providerKeyID(key, in: store)
                        let created = try await store.createFCMProject(
                            FCMProjectRecord(account: account, providerKeyID: keyID, bundleIDs: bundleIDs, createdAt: Date()))
                        guard created else {
                            throw ValidationError("A project \(projectID) exists already; `herald fcm project list` shows it.")
                        }
                    }
                    try FCMServiceAccount.write(keyFile: keyFile, to: file)
                    print("project: \(projectID)")
                    print("credentials: \(file.path)")
                }

                /// `key`, checked to be the gateway's; else its only key.
                static func providerKeyID(_ key: String?, in store: any ProviderKeyStore) async throws -> String {
                    if let key {
                        guard try await store.providerKey(id: key) != nil else {
                            throw ValidationError("The gateway has no provider key \(key); `herald keys list` shows its keys.")
                        }
                        return key
                    }
                    let keys = try await store.providerKeys()
                    guard keys.count == 1, let only = keys.first else {
                        throw ValidationError(
                            keys.isEmpty
                                ? "The gateway has no provider key: make one with `herald keys create`, then pass --key."
                                : "The gateway has \(keys.count) provider keys: pass --key with one of \(keys.map(\.keyID).joined(separator: ", "))."
                        )
                    }
                    return only.keyID
                }
            }

            struct AddApp: AsyncParsableCommand {
                static let configuration = CommandConfiguration(
                    commandName: "add-app",
                    abstract: "Add iOS apps to a Firebase project (as Firebase's console adds an app to a project).",
                    discussion:
                        "A running gateway sees the new apps at once. Prints `project: <id>` and `apps: <bundle IDs>`.")
                @OptionGroup var store: GatewayStoreOptions
                @Argument(help: "The project ID.") var projectID: String
                @Option(name: .customLong("bundle-id"), help: "An iOS app to add (repeatable; at least one).")
                var bundleIDs: [String] = []

                func run() async throws {
                    guard !bundleIDs.isEmpty else {
                        throw ValidationError("Name the apps to add with --bundle-id com.example.app (repeatable).")
                    }
                    for bundleID in bundleIDs { try requireBundleID(bundleID, option: "--bundle-id") }
                    let project = try await store.withStore { (store: any FCMStore) in
                        try await store.addFCMProjectApps(bundleIDs, projectID: projectID)
                    }
                    guard let project else {
                        throw CommandFailure("No Firebase project \(projectID); `herald fcm project list` shows the projects.")
                    }
                    print("project: \(project.projectID)")
                    print("apps: \(project.bundleIDs.joined(separator: " "))")
                }
            }

            struct List: AsyncParsableCommand {
                static let configuration = CommandConfiguration(abstract: "List the Firebase projects.")
                @OptionGroup var store: GatewayStoreOptions
                @OptionGroup var output: JSONOutputOptions

                func run() async throws {
                    let projects = try await store.withExistingStore { (store: any FCMStore) in try await store.fcmProjects() }
                    if output.json {
                        let listed = projects.map { project in
                            JSONValue.members([
                                "projectID": .string(project.projectID), "clientEmail": .string(project.clientEmail),
                                "providerKeyID": .string(project.providerKeyID),
                                "bundleIDs": .array(project.bundleIDs.map(JSONValue.string)),
                                "createdAt": .time(project.createdAt),
                            ])
                        }
                        output.print(.members(["projects": .array(listed)]))
                        return
                    }
                    guard !projects.isEmpty else {
                        print("No Firebase projects. `herald fcm project create ID --bundle-id com.example.app` makes one.")
                        return
                    }
                    for project in projects {
                        print(
                            "\(project.projectID)  \(project.clientEmail)  key \(project.providerKeyID)  apps \(project.bundleIDs.isEmpty ? "(none)" : project.bundleIDs.joined(separator: ", "))"
                        )
                    }
                }
            }
        }

        struct Token: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print an app's FCM registration token, issuing it on first use.",
                discussion:
                    "The token is tied to the app's APNs device token on the device: revoked with it, and new when the app reinstalls. The app must have registered for remote notifications (herald up's demo app has)."
            )
            @OptionGroup var store: GatewayStoreOptions
            @Argument(help: "The app's bundle ID.") var bundleID: String
            @Option(help: "The device (default: the only one with an active token for the app).") var device: String?
            @Option(help: "The Firebase project (default: the only one the app is in).") var project: String?

            func run() async throws {
                try requireBundleID(bundleID, option: "bundle ID")
                let registration = try await store.withStore { (store: any FCMStore & DeviceTokenStore) in
                    let projects = try await store.fcmProjects().filter {
                        $0.bundleIDs.contains(bundleID) && (project == nil || $0.projectID == project)
                    }
                    guard projects.count == 1, let chosen = projects.first else {
                        throw ValidationError(
                            projects.isEmpty
                                ? "No Firebase project has \(bundleID)\(project.map { " under the name \($0)" } ?? ""): `herald fcm project create ID --bundle-id \(bundleID)` makes one."
                                : "\(bundleID) is in several projects (\(projects.map(\.projectID).joined(separator: ", "))): pass --project."
                        )
                    }
                    let tokens = try await store.tokens(includingRevoked: false).filter {
                        $0.bundleID == bundleID && $0.purpose == .app && (device == nil || $0.deviceID == device)
                    }
                    guard tokens.count == 1, let apnsToken = tokens.first else {
                        throw ValidationError(
                            tokens.isEmpty
                                ? "\(bundleID) has no APNs token\(device.map { " on \($0)" } ?? ""): the app registers for remote notifications first (herald up's demo app does)."
                                : "\(bundleID) has tokens on several devices (\(tokens.map(\.deviceID).joined(separator: ", "))): pass --device."
                        )
                    }
                    return try await store.fcmRegistration(
                        forAPNsToken: apnsToken.token, projectID: chosen.projectID, at: Date())
                }
                print(registration.token)
            }
        }
    }
}
