import FirebaseCore
import Foundation
import HeraldCore
import Logging
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Firebase Cloud Messaging on the app's side, as Firebase's iOS SDK declares it: the app's registration token,
/// exchanged for its APNs token, and its topic subscriptions.
///
/// ```swift
/// FirebaseApp.configure()
/// Messaging.messaging().delegate = self          // messaging(_:didReceiveRegistrationToken:)
/// // in application(_:didRegisterForRemoteNotificationsWithDeviceToken:):
/// Messaging.messaging().apnsToken = deviceToken
/// ```
///
/// Messages come as pushes, through `UNUserNotificationCenter`'s delegate and the app delegate, as on iOS. On Herald
/// the registration service is the gateway's FCM port: `HERALD_FCM_URL` (default `http://127.0.0.1:2201`, where
/// `herald up` serves it). Firebase's method swizzling does not exist here: set ``apnsToken`` from the app delegate,
/// as Firebase's documentation says to when swizzling is off.
open class Messaging: NSObject {
    private struct State {
        var apnsToken: Data?
        var fcmToken: String?
        var fetching = false
        var waiting: [UncheckedSendableBox<(String?, (any Error)?) -> Void>] = []
        var pendingTopics: [(topic: String, subscribe: Bool, done: UncheckedSendableBox<((any Error)?) -> Void>?)] = []
        var seenMessages: Set<String> = []
        var autoInit = true
    }

    private static let shared = Mutex<UncheckedSendableBox<Messaging>?>(nil)

    /// Gets the registration token when it is issued or changes.
    weak open var delegate: (any MessagingDelegate)?

    private let state = Mutex(State())
    private let options: FirebaseOptions
    private let endpoint: URL
    private let logger = Logger(label: "herald.firebase-messaging")

    /// The process's messaging instance, for the default Firebase app.
    open class func messaging() -> Messaging {
        shared.withLock { shared in
            if let instance = shared { return instance }
            if FirebaseApp.app() == nil { FirebaseApp.configure() }
            let options = FirebaseApp.app()?.options ?? FirebaseOptions(googleAppID: "1:0:ios:herald", gcmSenderID: "0")
            let endpoint =
                ProcessInfo.processInfo.environment["HERALD_FCM_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
                ?? URL(string: "http://127.0.0.1:2201")!
            let instance = UncheckedSendableBox(Messaging(options: options, endpoint: endpoint))
            shared = instance
            return instance
        }.value
    }

    /// A messaging instance for `options`, registering at `endpoint` (the gateway's FCM port).
    package init(options: FirebaseOptions, endpoint: URL) {
        self.options = options
        self.endpoint = endpoint
        super.init()
    }

    /// Whether the token is fetched as soon as the APNs token is set (`FirebaseMessagingAutoInitEnabled`).
    open var isAutoInitEnabled: Bool {
        get { state.withLock { $0.autoInit } }
        set { state.withLock { $0.autoInit = newValue } }
    }

    /// The app's APNs device token; setting it fetches the registration token tied to it.
    open var apnsToken: Data? {
        get { state.withLock { $0.apnsToken } }
        set {
            let fetch = state.withLock { state -> Bool in
                let changed = state.apnsToken != newValue
                state.apnsToken = newValue
                if changed { state.fcmToken = nil }
                return changed && newValue != nil && state.autoInit && !state.fetching
            }
            if fetch { startFetching() }
        }
    }

    /// Sets the APNs token (its environment is the device's on Herald).
    ///
    /// - Parameters:
    ///   - apnsToken: The token.
    ///   - type: Its environment.
    open func setAPNSToken(_ apnsToken: Data, type: MessagingAPNSTokenType) {
        self.apnsToken = apnsToken
    }

    /// The registration token, once fetched.
    open var fcmToken: String? { state.withLock { $0.fcmToken } }

    /// The registration token: at once when it is known, once fetched otherwise; an error when no APNs token was set.
    ///
    /// - Parameter completion: Called on the main queue with the token or an error.
    open func token(completion: @escaping (String?, (any Error)?) -> Void) {
        let box = UncheckedSendableBox(completion)
        enum Next { case known(String), missingAPNsToken, wait(fetch: Bool) }
        let next = state.withLock { state -> Next in
            if let token = state.fcmToken { return .known(token) }
            guard state.apnsToken != nil else { return .missingAPNsToken }
            state.waiting.append(box)
            defer { state.fetching = true }
            return .wait(fetch: !state.fetching)
        }
        switch next {
        case .known(let token):
            DelegateQueue.run { box.value(token, nil) }
        case .missingAPNsToken:
            DelegateQueue.run {
                box.value(nil, MessagingError(.invalidRequest, "No APNS token specified before fetching FCM Token"))
            }
        case .wait(let fetch):
            if fetch { fetchToken() }
        }
    }

    /// The registration token.
    ///
    /// - Throws: ``MessagingError`` when no APNs token was set or the registration failed.
    open func token() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            token { token, error in
                if let token {
                    continuation.resume(returning: token)
                } else {
                    continuation.resume(throwing: error ?? MessagingError(.unknown, "No token"))
                }
            }
        }
    }

    /// Subscribes the app to a topic (`/topics/` in front allowed), once it has its token.
    ///
    /// - Parameter topic: The topic.
    open func subscribe(toTopic topic: String) {
        subscribe(toTopic: topic, completion: nil)
    }

    /// Subscribes the app to a topic, once it has its token.
    ///
    /// - Parameters:
    ///   - topic: The topic.
    ///   - completion: Called on the main queue when done.
    open func subscribe(toTopic topic: String, completion: (((any Error)?) -> Void)?) {
        manage(topic: topic, subscribe: true, completion: completion)
    }

    /// Subscribes the app to a topic.
    ///
    /// - Parameter topic: The topic.
    open func subscribe(toTopic topic: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            manage(topic: topic, subscribe: true) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Unsubscribes the app from a topic.
    ///
    /// - Parameter topic: The topic.
    open func unsubscribe(fromTopic topic: String) {
        unsubscribe(fromTopic: topic, completion: nil)
    }

    /// Unsubscribes the app from a topic.
    ///
    /// - Parameters:
    ///   - topic: The topic.
    ///   - completion: Called on the main queue when done.
    open func unsubscribe(fromTopic topic: String, completion: (((any Error)?) -> Void)?) {
        manage(topic: topic, subscribe: false, completion: completion)
    }

    /// Unsubscribes the app from a topic.
    ///
    /// - Parameter topic: The topic.
    open func unsubscribe(fromTopic topic: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            manage(topic: topic, subscribe: false) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Tells Firebase a message arrived (for analytics, on iOS); says whether it is new, by its `gcm.message_id`.
    ///
    /// - Parameter message: The notification's `userInfo`.
    @discardableResult
    open func appDidReceiveMessage(_ message: [AnyHashable: Any]) -> MessagingMessageInfo {
        guard let id = message["gcm.message_id"] as? String else { return MessagingMessageInfo(status: .unknown) }
        let new = state.withLock { $0.seenMessages.insert(id).inserted }
        return MessagingMessageInfo(status: new ? .new : .unknown)
    }

    // MARK: Registration

    private func startFetching() {
        let start = state.withLock { state -> Bool in
            guard !state.fetching else { return false }
            state.fetching = true
            return true
        }
        if start { fetchToken() }
    }

    /// Fetches the token for the current APNs token (``State/fetching`` already set), then tells whoever waits.
    private func fetchToken() {
        let messaging = UncheckedSendableBox(self)
        Task {
            await messaging.value.fetch()
        }
    }

    private func fetch() async {
        guard let apnsToken = state.withLock({ $0.apnsToken }) else { return }
        let hex = apnsToken.lowercaseHex
        let result: Result<String, MessagingError>
        do {
            let answer = try await post(
                "herald/v1/projects/\(projectID)/registrations",
                json: ["apns_token": hex, "bundle_id": options.bundleID])
            if let token = answer["token"] as? String {
                result = .success(token)
            } else {
                result = .failure(MessagingError(.invalidRequest, "The registration service answered no token"))
            }
        } catch let error as MessagingError {
            result = .failure(error)
        } catch {
            result = .failure(MessagingError(.network, "\(error)"))
        }
        let (waiting, changed, topics, again) = state.withLock { state in
            defer {
                state.waiting = []
                state.fetching = false
            }
            // The APNs token changed while this one was being exchanged: exchange the new one.
            let again = state.apnsToken != nil && state.apnsToken != apnsToken && state.autoInit
            var changed = false
            var topics: [(topic: String, subscribe: Bool, done: UncheckedSendableBox<((any Error)?) -> Void>?)] = []
            // Kept only if the APNs token is still the one it was fetched for.
            if case .success(let token) = result, state.apnsToken == apnsToken {
                changed = state.fcmToken != token
                state.fcmToken = token
                topics = state.pendingTopics
                state.pendingTopics = []
            }
            return (state.waiting, changed, topics, again)
        }
        let token = try? result.get()
        let error = result.failure
        if let error {
            logger.error("Could not get the FCM registration token", metadata: ["error": "\(error)"])
        }
        for completion in waiting {
            DelegateQueue.run { completion.value(token, error) }
        }
        if changed, let token {
            let messaging = UncheckedSendableBox(self)
            DelegateQueue.run {
                messaging.value.delegate?.messaging(messaging.value, didReceiveRegistrationToken: token)
            }
        }
        for topic in topics { manage(topic: topic.topic, subscribe: topic.subscribe, completion: topic.done?.value) }
        if again { startFetching() }
    }

    private var projectID: String { options.projectID ?? "herald-demo" }

    // MARK: Topics

    private func manage(topic: String, subscribe: Bool, completion: (((any Error)?) -> Void)?) {
        let done = completion.map(UncheckedSendableBox.init)
        let name = topic.hasPrefix("/topics/") ? String(topic.dropFirst("/topics/".count)) : topic
        guard !name.isEmpty, name.utf8.count <= 900,
            name.unicodeScalars.allSatisfy({ CharacterSet(charactersIn: "-_.~%").contains($0) || $0.isASCIIAlphanumeric })
        else {
            if let done { DelegateQueue.run { done.value(MessagingError(.invalidTopicName, "Invalid topic name: \(topic)")) } }
            return
        }
        let token = state.withLock { state -> String? in
            if let token = state.fcmToken { return token }
            state.pendingTopics.append((name, subscribe, done))
            return nil
        }
        guard let token else { return }
        let messaging = UncheckedSendableBox(self)
        Task {
            await messaging.value.changeTopic(name, of: token, subscribe: subscribe, done: done)
        }
    }

    /// Subscribes or unsubscribes the registration `token` to topic `name` at the registration service, then tells
    /// `done`.
    private func changeTopic(
        _ name: String, of token: String, subscribe: Bool, done: UncheckedSendableBox<((any Error)?) -> Void>?
    ) async {
        let path = "herald/v1/projects/\(projectID)/registrations/\(Self.escaped(token))/topics/\(Self.escaped(name))"
        let failure = await outcome { _ = try await self.post(path, method: subscribe ? "POST" : "DELETE", json: nil) }
        if let done { DelegateQueue.run { done.value(failure) } }
    }

    /// The error `body` throws, if any.
    private func outcome(_ body: () async throws -> Void) async -> (any Error)? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? text
    }

    // MARK: HTTP

    /// One request to the registration service; its JSON answer, or a ``MessagingError`` with FCM's message.
    private func post(_ path: String, method: String = "POST", json: [String: String]?) async throws -> [String: Any] {
        // `path` is escaped already (a registration token's `:`): joined as text, not re-escaped as a path component.
        let base = endpoint.absoluteString.hasSuffix("/") ? endpoint.absoluteString : endpoint.absoluteString + "/"
        guard let url = URL(string: base + path) else { throw MessagingError(.invalidRequest, "Not a URL: \(base + path)") }
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = method
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "content-type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, status) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Data, Int), any Error>) in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: MessagingError(.network, error.localizedDescription))
                } else {
                    continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard status == 200 else {
            let message = ((object["error"] as? [String: Any])?["message"] as? String) ?? "HTTP \(status)"
            let code: MessagingError.Code =
                switch status {
                case 401: .authentication
                case 403, 404: .noAccess
                case 400: .invalidRequest
                default: .unknown
                }
            throw MessagingError(code, message)
        }
        return object
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIIAlphanumeric: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self) || ("0"..."9").contains(self)
    }
}
