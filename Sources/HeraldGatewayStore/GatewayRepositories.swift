import Foundation
import HeraldCore

/// A gateway store made of one repository per aggregate over a connection they share: it answers each aggregate's
/// protocol by asking that aggregate's repository.
///
/// `SQLiteGatewayStore` and `PostgresGatewayStore` are both made this way (`SQLiteProviderKeyRepository`,
/// `PostgresDeviceTokenRepository`, …); a part of the gateway that needs one aggregate can be handed its repository
/// alone.
public protocol GatewayRepositories: GatewayStore {
    /// The provider keys' repository.
    associatedtype ProviderKeys: ProviderKeyStore
    /// The devices' and their tokens' repository.
    associatedtype DeviceTokens: DeviceTokenStore
    /// The broadcast channels' repository.
    associatedtype BroadcastChannels: BroadcastChannelStore
    /// The stored (store-and-forward) notifications' repository.
    associatedtype StoredPushes: StoredPushStore
    /// The delivery log's repository.
    associatedtype DeliveryLog: DeliveryLogStore
    /// Firebase Cloud Messaging's projects, access tokens, registrations and topics.
    associatedtype FCM: FCMStore

    /// Where the provider keys are.
    var providerKeyRepository: ProviderKeys { get }
    /// Where the devices and their tokens are.
    var deviceTokenRepository: DeviceTokens { get }
    /// Where the broadcast channels are.
    var broadcastChannelRepository: BroadcastChannels { get }
    /// Where the stored notifications are.
    var storedPushRepository: StoredPushes { get }
    /// Where the delivery log is.
    var deliveryLogRepository: DeliveryLog { get }
    /// Where Firebase Cloud Messaging's records are.
    var fcmRepository: FCM { get }
}

extension GatewayRepositories {
    public func providerKey(id: String) async throws -> ProviderKeyRecord? {
        try await providerKeyRepository.providerKey(id: id)
    }

    public func saveProviderKey(_ key: ProviderKeyRecord) async throws {
        try await providerKeyRepository.saveProviderKey(key)
    }

    public func providerKeys() async throws -> [ProviderKeyRecord] {
        try await providerKeyRepository.providerKeys()
    }
}

extension GatewayRepositories {
    public func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment {
        try await deviceTokenRepository.deviceEnrollment(deviceID: deviceID)
    }

    public func enrollDevice(id: String, secretHash: Data?, at: Date) async throws {
        try await deviceTokenRepository.enrollDevice(id: id, secretHash: secretHash, at: at)
    }

    public func token(_ token: String) async throws -> DeviceTokenRecord? {
        try await deviceTokenRepository.token(token)
    }

    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date, limit: Int?
    ) async throws -> DeviceTokenRecord {
        try await deviceTokenRepository.activeToken(
            deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: purpose, at: at, limit: limit)
    }

    public func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord] {
        try await deviceTokenRepository.tokens(includingRevoked: includingRevoked)
    }

    public func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord? {
        try await deviceTokenRepository.revokeToken(token, at: at)
    }
}

extension GatewayRepositories {
    public func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool {
        try await broadcastChannelRepository.createChannel(channel, limit: limit)
    }

    public func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord? {
        try await broadcastChannelRepository.channel(id: id, bundleID: bundleID, environment: environment)
    }

    public func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord] {
        try await broadcastChannelRepository.channels(bundleID: bundleID, environment: environment)
    }

    public func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool {
        try await broadcastChannelRepository.deleteChannel(id: id, bundleID: bundleID, environment: environment)
    }

    public func keepChannelMessage(_ message: ChannelMessage) async throws {
        try await broadcastChannelRepository.keepChannelMessage(message)
    }

    public func channelMessage(channelID: String) async throws -> ChannelMessage? {
        try await broadcastChannelRepository.channelMessage(channelID: channelID)
    }
}

extension GatewayRepositories {
    public func store(_ notification: StoredNotification) async throws -> String? {
        try await storedPushRepository.store(notification)
    }

    public func storedNotifications(deviceID: String) async throws -> [StoredNotification] {
        try await storedPushRepository.storedNotifications(deviceID: deviceID)
    }

    public func claimStoredNotifications(
        deviceID: String, claimant: String, until: Date, now: Date, limit: Int
    ) async throws -> [StoredNotification] {
        try await storedPushRepository.claimStoredNotifications(
            deviceID: deviceID, claimant: claimant, until: until, now: now, limit: limit)
    }

    public func releaseStoredNotifications(deviceID: String, claimant: String) async throws {
        try await storedPushRepository.releaseStoredNotifications(deviceID: deviceID, claimant: claimant)
    }

    public func removeStoredNotification(token: String, topic: String, uniqueID: String) async throws {
        try await storedPushRepository.removeStoredNotification(token: token, topic: topic, uniqueID: uniqueID)
    }

    public func storedNotificationCounts() async throws -> [String: Int] {
        try await storedPushRepository.storedNotificationCounts()
    }
}

extension GatewayRepositories where StoredPushes: LocalStoredPushStore {
    public func knownToken(_ token: String) -> DeviceTokenRecord? {
        storedPushRepository.knownToken(token)
    }

    public func keepIfTokenActive(
        _ notification: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void
    ) {
        storedPushRepository.keepIfTokenActive(notification, completion: completion)
    }
}

extension GatewayRepositories {
    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        try await deliveryLogRepository.appendEvents(events)
    }

    public func events(uniqueID: String) async throws -> [DeliveryEvent] {
        try await deliveryLogRepository.events(uniqueID: uniqueID)
    }

    public func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification] {
        try await deliveryLogRepository.loggedNotifications(matching: text, limit: limit)
    }

    public func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount] {
        try await deliveryLogRepository.eventCounts(since: date, bucket: bucket)
    }

    public func pruneEvents(before date: Date) async throws {
        try await deliveryLogRepository.pruneEvents(before: date)
    }

    public func deliveries(_ filter: DeliveryFilter, limit: Int) async throws -> [LoggedDelivery] {
        try await deliveryLogRepository.deliveries(filter, limit: limit)
    }

    public func deleteDeliveries(_ filter: DeliveryFilter) async throws -> Int {
        try await deliveryLogRepository.deleteDeliveries(filter)
    }

    public func loggedEvents(after sequence: Int64, limit: Int) async throws -> [LoggedEvent] {
        try await deliveryLogRepository.loggedEvents(after: sequence, limit: limit)
    }

    public func latestEventSequence() async throws -> Int64 {
        try await deliveryLogRepository.latestEventSequence()
    }

    public var deliveryLogChanges: ChangeSignal { deliveryLogRepository.deliveryLogChanges }
}

extension GatewayRepositories {
    public func createFCMProject(_ project: FCMProjectRecord) async throws -> Bool {
        try await fcmRepository.createFCMProject(project)
    }

    public func fcmProject(id: String) async throws -> FCMProjectRecord? {
        try await fcmRepository.fcmProject(id: id)
    }

    public func fcmProjects() async throws -> [FCMProjectRecord] {
        try await fcmRepository.fcmProjects()
    }

    public func addFCMProjectApps(_ bundleIDs: [String], projectID: String) async throws -> FCMProjectRecord? {
        try await fcmRepository.addFCMProjectApps(bundleIDs, projectID: projectID)
    }

    public func addFCMAccessToken(_ token: FCMAccessTokenRecord, pruningBefore: Date) async throws {
        try await fcmRepository.addFCMAccessToken(token, pruningBefore: pruningBefore)
    }

    public func fcmAccessToken(hash: String) async throws -> FCMAccessTokenRecord? {
        try await fcmRepository.fcmAccessToken(hash: hash)
    }

    public func fcmRegistration(issuing candidate: FCMRegistrationRecord) async throws -> FCMRegistrationRecord {
        try await fcmRepository.fcmRegistration(issuing: candidate)
    }

    public func fcmRegistration(token: String) async throws -> FCMRegistrationRecord? {
        try await fcmRepository.fcmRegistration(token: token)
    }

    public func fcmRegistration(installationID: String, projectID: String) async throws -> FCMRegistrationRecord? {
        try await fcmRepository.fcmRegistration(installationID: installationID, projectID: projectID)
    }

    public func fcmRegistrations(projectID: String) async throws -> [FCMRegistrationRecord] {
        try await fcmRepository.fcmRegistrations(projectID: projectID)
    }

    @discardableResult
    public func subscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        try await fcmRepository.subscribeFCMTopic(topic, projectID: projectID, tokens: tokens)
    }

    @discardableResult
    public func unsubscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        try await fcmRepository.unsubscribeFCMTopic(topic, projectID: projectID, tokens: tokens)
    }

    public func fcmTopicSubscribers(projectID: String, topics: [String]) async throws -> [String: Set<String>] {
        try await fcmRepository.fcmTopicSubscribers(projectID: projectID, topics: topics)
    }
}
