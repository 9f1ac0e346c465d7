import Foundation
import HeraldCore
import Synchronization

/// One connected device: sends it pushes and matches its acknowledgements.
///
/// Pushes go out in the order ``deliver(_:timeout:)`` is called; each call returns once the device acknowledged
/// that push, or `false` when the device did not within the timeout or went away.
final class DeviceSession: Sendable {
    /// The device's ID.
    let deviceID: String
    private let send: @Sendable (String) async throws -> Void
    private let clock: any HeraldClock
    private let state = Mutex(State())
    private let sendLock = SendQueue()

    private enum Slot {
        /// Sent (or being sent); nobody waits yet.
        case pending
        /// The caller waits here.
        case waiting(CheckedContinuation<Bool, Never>)
        /// Answered before the caller started waiting.
        case done(Bool)
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var closed = false
    }

    /// Creates a session that writes text frames with `send`.
    init(deviceID: String, clock: any HeraldClock, send: @escaping @Sendable (String) async throws -> Void) {
        self.deviceID = deviceID
        self.clock = clock
        self.send = send
    }

    /// Sends `push` and waits for its acknowledgement.
    ///
    /// - Returns: Whether the device acknowledged it within `timeout`.
    func deliver(_ push: DevicePush, timeout: Duration) async -> Bool {
        let id = push.deliveryID
        let open = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.slots[id] = .pending
            return true
        }
        guard open else { return false }
        do {
            try await sendLock.run { try await self.send(DeviceChannelMessage.push(push).jsonText()) }
        } catch {
            resolve(id, acknowledged: false)
        }
        let deadline = clock.now.addingTimeInterval(timeout.timeInterval)
        let timer = Task {
            try? await self.clock.sleep(until: deadline)
            self.resolve(id, acknowledged: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                switch state.slots[id] {
                case .done(let answer):
                    state.slots[id] = nil
                    return answer
                case .pending:
                    state.slots[id] = .waiting(continuation)
                    return nil
                case .waiting, nil:
                    return false
                }
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Records the device's acknowledgement of a delivery.
    func acknowledge(_ deliveryID: String) {
        resolve(deliveryID, acknowledged: true)
    }

    /// Fails every delivery still waiting; later ones fail at once.
    func close() {
        let waiting = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            var waiting: [CheckedContinuation<Bool, Never>] = []
            for (id, slot) in state.slots {
                switch slot {
                case .waiting(let continuation):
                    waiting.append(continuation)
                    state.slots[id] = nil
                case .pending: state.slots[id] = .done(false)
                case .done: break
                }
            }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Sends a message that needs no acknowledgement.
    func sendMessage(_ message: DeviceChannelMessage) async throws {
        try await sendLock.run { try await self.send(message.jsonText()) }
    }

    /// Answers the delivery `id`; the first answer wins, unknown and late ones are ignored.
    private func resolve(_ id: String, acknowledged: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            switch state.slots[id] {
            case .pending:
                state.slots[id] = .done(acknowledged)
                return nil
            case .waiting(let continuation):
                state.slots[id] = nil
                return continuation
            case .done, nil:
                return nil
            }
        }
        continuation?.resume(returning: acknowledged)
    }
}

/// Runs async operations one at a time, in the order they were submitted.
final class SendQueue: Sendable {
    private let state = Mutex<(busy: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Runs `body` once every earlier operation has finished.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runNow = state.withLock { state -> Bool in
                if state.busy {
                    state.waiters.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if runNow { continuation.resume() }
        }
        defer {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if state.waiters.isEmpty {
                    state.busy = false
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
