import Foundation
import HeraldCore
import HeraldGatewayStore

/// A device push's checks as one sequence in APNs' order — authentication (§3), payload (S-11, I-04), addressing
/// (S-08, §1.3, P-02), the device token (D-11) — that stops where something must be waited for and resumes there.
///
/// The event loop's path and the task's run the same sequence (``ProviderAPIResponder``): the loop supplies what it
/// has at hand and hands the sequence, as far as it got, to a task where something must be waited for; the task
/// supplies the rest by waiting. A check passed is not run again: the token's check, which admits the push to the
/// token's rate limit, runs once.
struct DevicePushChecks {
    /// Where the sequence stands.
    enum Step {
        /// The request's authority is needed: the connection's certificate, or its provider token verified with its
        /// key (``authorized(_:)``).
        case needsAuthorization
        /// The device token's record is needed (``found(_:checked:check:)``); what the push is and where it goes are
        /// known by then.
        case needsDeviceToken(ProviderAPIResponder.Payload, ProviderAPIResponder.Addressing)
        /// Every check passed.
        case passed(Passed)
    }

    /// A push that passed every check.
    struct Passed {
        var authorization: ProviderAPIResponder.Authorization
        var payload: ProviderAPIResponder.Payload
        var addressing: ProviderAPIResponder.Addressing
        /// The token's record, and whether it was checked now (on several nodes a token found active lately is taken
        /// on trust, and the dispatcher checks it again before the answer).
        var token: DeviceTokenRecord
        var tokenChecked: Bool
    }

    /// The request as read as far as its authentication.
    let read: ProviderAPIResponder.DevicePushRequest
    private var authorization: ProviderAPIResponder.Authorization?
    private var payload: ProviderAPIResponder.Payload?
    private var addressing: ProviderAPIResponder.Addressing?
    private var token: (record: DeviceTokenRecord, checked: Bool)?

    /// The checks of `read`, none run yet.
    init(_ read: ProviderAPIResponder.DevicePushRequest) {
        self.read = read
    }

    /// Runs the checks that need nothing waited for, from where the sequence stopped, and says what it needs next.
    ///
    /// - Parameter request: The request, its body read.
    /// - Throws: The first failed check's ``APNsRefusal``.
    mutating func next(_ request: ProviderRequest) throws -> Step {
        guard let authorization else { return .needsAuthorization }
        let payload = try self.payload ?? ProviderAPIResponder.payload(of: request, headers: read.headers)
        self.payload = payload
        let addressing =
            try self.addressing
            ?? ProviderAPIResponder.addressing(read.headers, pushType: payload.pushType, authorization: authorization)
        self.addressing = addressing
        guard let token else { return .needsDeviceToken(payload, addressing) }
        return .passed(
            Passed(
                authorization: authorization, payload: payload, addressing: addressing, token: token.record,
                tokenChecked: token.checked))
    }

    /// The request's authority, decided.
    mutating func authorized(_ authorization: ProviderAPIResponder.Authorization) {
        self.authorization = authorization
    }

    /// The device token's record as found (`nil`: unknown), checked with `check` — known, of this environment, not
    /// revoked, for this app and push type, within the rate limit.
    ///
    /// - Parameters:
    ///   - record: The record, or `nil`.
    ///   - checked: Whether it is the store's own (else taken on trust from another node's news).
    ///   - check: The token's check for this push (``ProviderAPIResponder/check(_:bundleID:pushType:environment:now:)``).
    /// - Throws: The check's ``APNsRefusal``.
    mutating func found(
        _ record: DeviceTokenRecord?, checked: Bool, check: (DeviceTokenRecord?) throws -> DeviceTokenRecord
    ) throws {
        token = (try check(record), checked)
    }

    /// Whether the request authenticated with a provider token (its refusals then count against the token's key).
    var authenticated: Bool {
        if case .token? = authorization { true } else { false }
    }
}
