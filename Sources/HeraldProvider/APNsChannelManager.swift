import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHPACK

/// Makes, reads, lists and deletes an app's broadcast channels on Apple's channel management API (B-01…B-08), or a
/// Herald gateway's (`herald gateway --channels-port`, `herald up`'s `channels:` line).
///
/// ```swift
/// let channels = try APNsChannelManager(server: .managementDevelopment, authentication: .token(signer))
/// let id = try await channels.createChannel(bundleID: "com.example.app", storagePolicy: .mostRecentMessageStored)
/// try await client.broadcast(.liveActivity(bundleID: "com.example.app", event: "update", contentState: state,
///                                          timestamp: Date()), on: id)
/// ```
public final class APNsChannelManager: Sendable {
    /// What a channel keeps for devices that subscribe later.
    public enum StoragePolicy: Int, Sendable, Hashable {
        /// Nothing (`0`): broadcasts reach the devices subscribed now.
        case noMessageStored = 0
        /// The latest broadcast (`1`), until its `apns-expiration`, 8 hours at most.
        case mostRecentMessageStored = 1
    }

    /// A refusal: the status, Apple's reason and the request's `apns-request-id`.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var status: Int
        public var reason: String?
        public var requestID: String?
        /// Why no answer came, when none did (status 0).
        public var failure: String?

        public var description: String {
            status == 0 ? "no answer: \(failure ?? "")" : "\(status) \(reason ?? "")"
        }
    }

    /// Where channels are managed.
    public let server: APNsServer
    private let transport: APNsTransport
    private let logger: Logger

    /// Apple's management host for the development environment (`api-manage-broadcast.sandbox.push.apple.com:2195`).
    public static let managementDevelopment = APNsServer(
        url: URL(string: "https://api-manage-broadcast.sandbox.push.apple.com:2195")!)
    /// Apple's management host for production (`api-manage-broadcast.push.apple.com:2196`).
    public static let managementProduction = APNsServer(url: URL(string: "https://api-manage-broadcast.push.apple.com:2196")!)

    /// A manager for `server`, authenticated as `authentication` (a token signer or a client certificate).
    ///
    /// - Throws: When the certificate, its key or the server's CA file cannot be read.
    public init(server: APNsServer, authentication: APNsAuthentication, logger: Logger = Logger(label: "herald.provider")) throws
    {
        self.server = server
        self.logger = logger
        transport = try APNsTransport(server: server, authentication: authentication, connections: 1)
    }

    /// Makes a channel for the app; returns its ID (`apns-channel-id`).
    ///
    /// - Throws: ``Refusal`` (e.g. `CannotCreateChannelConfig` at 10,000 channels, `FeatureNotEnabled`).
    public func createChannel(bundleID: String, storagePolicy: StoragePolicy) async throws -> String {
        let body = #"{"message-storage-policy":\#(storagePolicy.rawValue),"push-type":"LiveActivity"}"#
        let answer = try await request("POST", "/1/apps/\(bundleID)/channels", channelID: nil, body: body, expecting: 201)
        guard let id = answer.headers.first(name: "apns-channel-id") else {
            throw Refusal(
                status: answer.status, reason: nil, requestID: answer.headers.first(name: "apns-request-id"),
                failure: "no apns-channel-id in the answer")
        }
        return id
    }

    /// The channel's storage policy (it exists for the app).
    ///
    /// - Throws: ``Refusal`` (`ChannelNotRegistered` for a channel the app does not have).
    public func storagePolicy(ofChannel channelID: String, bundleID: String) async throws -> StoragePolicy {
        let answer = try await request("GET", "/1/apps/\(bundleID)/channels", channelID: channelID, body: nil, expecting: 200)
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]
        guard let raw = (object?["message-storage-policy"] as? NSNumber)?.intValue, let policy = StoragePolicy(rawValue: raw)
        else {
            throw Refusal(
                status: answer.status, reason: nil, requestID: answer.headers.first(name: "apns-request-id"),
                failure: "unreadable answer: \(answer.body)")
        }
        return policy
    }

    /// Deletes the channel (for good: its ID is never made again).
    ///
    /// - Throws: ``Refusal``.
    public func deleteChannel(_ channelID: String, bundleID: String) async throws {
        _ = try await request("DELETE", "/1/apps/\(bundleID)/channels", channelID: channelID, body: nil, expecting: 204)
    }

    /// The app's channel IDs.
    ///
    /// - Throws: ``Refusal``.
    public func channels(bundleID: String) async throws -> [String] {
        let answer = try await request("GET", "/1/apps/\(bundleID)/all-channels", channelID: nil, body: nil, expecting: 200)
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]
        guard let ids = object?["channels"] as? [String] else {
            throw Refusal(
                status: answer.status, reason: nil, requestID: answer.headers.first(name: "apns-request-id"),
                failure: "unreadable answer: \(answer.body)")
        }
        return ids
    }

    /// Closes the connection.
    public func shutdown() async throws {
        await transport.shutdown()
    }

    private func request(
        _ method: String, _ path: String, channelID: String?, body: String?, expecting status: Int
    ) async throws -> (status: Int, headers: HPACKHeaders, body: String) {
        var fields: [(name: String, value: String)] = [("apns-request-id", UUID().uuidString.lowercased())]
        if let channelID { fields.append(("apns-channel-id", channelID)) }
        if body != nil { fields.append(("content-type", "application/json")) }
        let response: APNsTransport.Response
        do {
            response = try await transport.execute(
                .init(method: method, path: path, fields: fields, body: ByteBuffer(string: body ?? "")))
        } catch {
            throw Refusal(status: 0, reason: nil, requestID: nil, failure: "\(error)")
        }
        let text = String(buffer: response.body)
        logger.debug("Channel management answered", metadata: ["http.path": "\(path)", "apns.status": "\(response.status)"])
        guard response.status == status else {
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            throw Refusal(
                status: response.status, reason: object?["reason"] as? String,
                requestID: response.headers.first(name: "apns-request-id"))
        }
        return (response.status, response.headers, text)
    }
}
