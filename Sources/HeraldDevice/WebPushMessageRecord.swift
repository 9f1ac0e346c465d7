import Foundation

/// A message pushed to one of the device's web push subscriptions, and what became of it: what the test-bed API lists
/// (`GET /api/v1/app-pushes`, kind `webpush`).
package struct WebPushMessageRecord: Sendable, Equatable {
    /// What became of a message.
    package enum State: String, Sendable, CaseIterable {
        /// Shown as a notification of its web app (a Declarative Web Push message).
        case shown
        /// Not shown (``WebPushMessageRecord/reason`` says why).
        case dropped
    }

    /// Why a message was not shown.
    package enum Reason: String, Sendable, CaseIterable {
        /// No subscription on the device holds its token (the web app unsubscribed).
        case noSubscription
        /// It has no data: a service worker's `push` event would run; there is none on this device.
        case noData
        /// It cannot be decrypted with its subscription's keys (RFC 8291).
        case undecryptable
        /// It is not a Declarative Web Push message: a service worker would handle it; there is none on this device.
        case notDeclarative
    }

    /// The web app's bundle ID on the device (``WebPushAgent/bundleID(for:)``).
    package var bundleIdentifier: String
    /// The push's `apns-unique-id`.
    package var uniqueID: String
    /// The web app's origin; `nil` when no subscription holds the message's token.
    package var origin: String?
    /// When the device received it.
    package var receivedAt: Date
    /// What became of it.
    package var state: State
    /// Why it was not shown.
    package var reason: Reason?
    /// The decrypted message (UTF-8 text), when it could be decrypted.
    package var data: String?
}
