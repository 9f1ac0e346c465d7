import Foundation
import HeraldCore

extension DeliveryLogStore {
    /// The notification with this `apns-unique-id`, with its timeline; `nil` when the log has none.
    ///
    /// - Parameter uniqueID: The `apns-unique-id`, in either case.
    public func delivery(uniqueID: String) async throws -> LoggedDelivery? {
        var filter = DeliveryFilter()
        filter.uniqueID = uniqueID.lowercased()
        return try await deliveries(filter, limit: 1).first
    }
}

extension DeliveryFilter {
    /// Narrows the filter to what `since` names: notifications received at or after an RFC 3339 time (fractional
    /// seconds optional), or received after the notification with this `apns-unique-id`.
    ///
    /// - Parameters:
    ///   - since: An RFC 3339 time or an `apns-unique-id`.
    ///   - store: The delivery log the `apns-unique-id` is looked up in.
    /// - Returns: Whether `since` was either; when it was neither the filter is unchanged.
    public mutating func narrow(since: String, in store: any DeliveryLogStore) async throws -> Bool {
        if let date = Date(rfc3339: since) {
            self.since = date
            return true
        }
        guard let earlier = try await store.delivery(uniqueID: since) else { return false }
        afterSequence = earlier.sequence
        return true
    }
}
