import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldGatewayStore
import Logging
import NIOCore
import NIOHTTP1
import PostgresTesting
import ServiceLifecycle
import Testing

extension ConsoleServerTests {
    /// A push logged as received for `token`.
    static func logged(_ uniqueID: String, token: String) -> DeliveryEvent {
        DeliveryEvent(
            uniqueID: uniqueID, at: Date(), kind: .received, detail: DeliveryEvent.receivedDetail,
            subject: DeliverySubject(
                apnsID: "id-\(uniqueID)", recipient: token, topic: "com.example.app",
                sentAs: DeliverySentAs(
                    door: .apns, pushType: "alert", priority: 10, collapseID: nil, expiration: nil, payload: #"{"aps":{}}"#,
                    fcmMessage: nil)))
    }

    @Test(
        "Issue 64 on several nodes (PostgreSQL): a wait on one node's API answers for a push another node logged, woken by that node's announcement rather than at its timeout; the listing sees every node's deliveries"
    )
    func waitAcrossNodes() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            let token = OperatorToken.make()
            // The console's store on the same database, over node 1's pool.
            let consoleStore = PostgresConsoleStore(sharingPoolOf: stores[1])
            try await consoleStore.addOperatorToken(OperatorTokenRecord(hash: OperatorToken.hash(token), createdAt: Date()))
            var logger = Logger(label: "test.console")
            logger.logLevel = .warning
            let console = ConsoleServer(port: 0, gateway: stores[1], store: consoleStore, logger: logger)
            try await withRunning([console], logger: logger) {
                let port = try #require(await console.port())
                let http = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/deliveries?token=far&wait=30")
                    request.headers.add(name: "Authorization", value: "Bearer \(token)")
                    let opened = ContinuousClock.now
                    async let answer = http.execute(request, timeout: .seconds(60))
                    // The wait is open on node 1 (it read the log and found nothing) before node 0 logs anything.
                    try await eventually("the wait open", timeout: .seconds(30)) {
                        stores[1].deliveryLogChanges.waiting > 0
                    }
                    // Node 0 logs pushes, one every 200 ms, until node 1's wait answers: an announcement made before
                    // node 1's listener began is lost (NOTIFY is a wake-up, not a queue).
                    let logging = Task {
                        for index in 0..<100 {
                            try await stores[0].appendEvents([Self.logged("far-\(index)", token: "far")])
                            try await Task.sleep(for: .milliseconds(200))
                        }
                    }
                    defer { logging.cancel() }
                    let response = try await answer
                    let body = try await response.body.collect(upTo: 1 << 20)
                    let waited = ContinuousClock.now - opened
                    let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                    #expect(response.status == .ok && json?["complete"] as? Bool == true, "\(String(buffer: body))")
                    let first = (json?["deliveries"] as? [[String: Any]])?.first?["uniqueID"] as? String
                    #expect(first == "far-0", "node 1 lists what node 0 logged: \(String(buffer: body))")
                    // At its timeout (30 s) it would have answered too; an announcement wakes it well before.
                    #expect(waited < .seconds(20), "answered after \(waited)")
                }
                try await http.shutdown()
            }
        }
    }
}
