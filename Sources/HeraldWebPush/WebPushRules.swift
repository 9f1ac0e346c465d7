/// Which rules a push service applies to a push's VAPID token (`herald gateway --web-push-rules`).
public enum WebPushRules: String, Sendable, CaseIterable {
    /// Apple's (web.push.apple.com, the default): a token is required, its `sub` must be an `https:` URL or a
    /// `mailto:` address, its `aud` the push service's origin, its `exp` at most a day ahead — else 403
    /// `BadJwtToken` (Apple, *Sending web push notifications in web apps and browsers*).
    case apple
    /// RFC 8292's: a token only for a subscription bound to a key; `sub` optional (any text); `aud` and `exp` as
    /// Apple's.
    case standard
}
