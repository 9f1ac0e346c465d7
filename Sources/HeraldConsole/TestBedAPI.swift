import Foundation
import HTTPTypes
import HeraldCore
import HeraldFaults
import HeraldGatewayStore
import Logging

/// The test-bed API (`/api/v1/…`): what the gateway did with each push and what the device did with it, as JSON for a
/// test suite in any language, with waits answered on the server side. An operator token as a bearer token; every
/// answer, errors too, is JSON. docs/test-bed-api.md is the guide, `GET /api/v1/openapi.json` the contract.
///
/// Two servers serve it: the console (``ConsoleServer``: the gateway's delivery log, and `herald up`'s device beside
/// it) and a device on a machine of its own (``DeviceAPIServer``: `herald device --api-port`, its device's routes only).
final class TestBedAPI: Sendable {
    /// Who may call the API.
    enum Callers: Sendable {
        /// Holders of an operator token the console's store admits (`herald console token`).
        case consoleStore(any ConsoleStore)
        /// Holders of one of these operator tokens, by SHA-256 (``OperatorToken/hash(_:)``): a device's own API, which
        /// has no gateway store.
        case tokenHashes(Set<String>)
    }

    /// The gateway's delivery log; `nil` where a device serves its routes alone.
    let store: (any DeliveryLogStore)?
    let callers: Callers
    /// The device the notifications, activities, widgets and app pushes are read from; `nil` when none runs here.
    let device: (any TestBedDevice)?
    /// The gateway's fault rules; `nil` where no gateway runs beside the API.
    let faults: FaultBook?
    let clock: any HeraldClock
    let logger: Logger
    /// What `GET /api/v1/status` says (`herald up`'s banner as JSON).
    let sandboxStatus: SandboxStatus
    /// The open waits: at most 1,000.
    let waits = WaitLimiter(limit: 1_000)
    /// The open event streams: at most 200, beside the waits.
    let streams = WaitLimiter(limit: 200)
    /// What the waits and streams run their routes and their reads of the store through: a few at once, each in a
    /// child task (issue 64's memory: a thousand waits woken at once do not hold a thousand deep call chains).
    let deepWork = ConcurrencyGate(limit: 8)

    /// The API over the delivery log `store`, `device` and the gateway's `faults`, for `callers`.
    init(
        store: (any DeliveryLogStore)?, callers: Callers, device: (any TestBedDevice)?, faults: FaultBook? = nil,
        clock: any HeraldClock, sandboxStatus: SandboxStatus, logger: Logger
    ) {
        self.store = store
        self.faults = faults
        self.callers = callers
        self.device = device
        self.clock = clock
        self.sandboxStatus = sandboxStatus
        self.logger = logger
    }

    /// The gateway's delivery log.
    ///
    /// - Throws: ``APIAnswer`` 404 on a device's own API, saying where the deliveries are.
    func deliveryLog() throws(APIAnswer) -> any DeliveryLogStore {
        guard let store else {
            throw .error(
                .notFound,
                "this is a device's API (herald device): the deliveries are the gateway's, at its console's /api/v1/deliveries"
            )
        }
        return store
    }
}
