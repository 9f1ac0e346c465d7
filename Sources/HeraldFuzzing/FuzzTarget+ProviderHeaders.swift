import HeraldCore

extension FuzzTarget {
    /// The provider API's header rules (S-03…S-10): one `name: value` per line, as an HTTP/2 request carries them.
    static let providerHeaders = FuzzTarget(
        name: "provider-headers",
        summary: "the provider API's header rules (apns-topic, -push-type, -priority, -expiration, -id, -collapse-id)",
        seeds: {
            [
                "apns-topic: com.example.app\napns-push-type: alert\napns-priority: 10",
                "apns-topic: com.example.app.voip\napns-push-type: voip\napns-expiration: 0\napns-id: eabeae54-14a8-11e5-b60b-1697f925ec7b",
                "apns-topic: com.example.app\napns-push-type: background\napns-priority: 5\napns-collapse-id: score",
                "apns-topic: com.example.app.push-type.liveactivity\napns-push-type: liveactivity\napns-expiration: 1735689600",
                "apns-topic: a\napns-topic: b",
                "apns-priority: 7\napns-id: nope",
            ].map { Array($0.utf8) }
        },
        run: { input in
            let fields = input.text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1].drop { $0 == " " }) : "")
            }
            switch APNsRequestHeaders.parse(fields) {
            case .success(let headers):
                if let id = headers.apnsID {
                    try require(APNsRequestHeaders.isCanonicalUUID(id) && id == id.lowercased(), "accepted apns-id \(id)")
                }
                if let topic = headers.topic {
                    try require(APNsRequestHeaders.isValidTopic(topic), "accepted apns-topic \(topic)")
                }
                if let collapseID = headers.collapseID {
                    try require(collapseID.utf8.count <= 64, "accepted a collapse id of \(collapseID.utf8.count) bytes")
                }
                let pushType = headers.effectivePushType(payload: nil)
                _ = headers.effectivePriority(for: pushType)
            case .failure(let refusal):
                try require((400..<500).contains(refusal.reason.status), "refused with status \(refusal.reason.status)")
                try require(!refusal.body.isEmpty, "a refusal without a body")
            }
        })
}
