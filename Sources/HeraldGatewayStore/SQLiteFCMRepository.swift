import Foundation
import GRDB
import HeraldStorage

/// `FCMStore` on SQLite.
public struct SQLiteFCMRepository: FCMStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    // MARK: Projects

    public func createFCMProject(_ project: FCMProjectRecord) async throws -> Bool {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO fcm_project
                        (id, client_email, client_id, private_key_id, public_key_pem, provider_key_id, bundle_ids, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    project.projectID, project.clientEmail, project.clientID, project.privateKeyID, project.publicKeyPEM,
                    project.providerKeyID, project.bundleIDs.joined(separator: " "), project.createdAt.timeIntervalSince1970,
                ])
            return db.changesCount > 0
        }
    }

    public func fcmProject(id: String) async throws -> FCMProjectRecord? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.fcmProjectColumns) FROM fcm_project WHERE id = ?", arguments: [id])
                .map(Self.fcmProject)
        }
    }

    public func fcmProjects() async throws -> [FCMProjectRecord] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.fcmProjectColumns) FROM fcm_project ORDER BY id").map(Self.fcmProject)
        }
    }

    public func addFCMProjectApps(_ bundleIDs: [String], projectID: String) async throws -> FCMProjectRecord? {
        try await groupCommit.write { db in
            guard
                var project = try Row.fetchOne(
                    db, sql: "SELECT \(Self.fcmProjectColumns) FROM fcm_project WHERE id = ?", arguments: [projectID]
                ).map(Self.fcmProject)
            else { return nil }
            project.bundleIDs = FCMProjectRecord.adding(bundleIDs, to: project.bundleIDs)
            try db.execute(
                sql: "UPDATE fcm_project SET bundle_ids = ? WHERE id = ?",
                arguments: [project.bundleIDs.joined(separator: " "), projectID])
            return project
        }
    }

    private static let fcmProjectColumns =
        "id, client_email, client_id, private_key_id, public_key_pem, provider_key_id, bundle_ids, created_at"

    private static func fcmProject(_ row: Row) -> FCMProjectRecord {
        FCMProjectRecord(
            projectID: row[0], clientEmail: row[1], clientID: row[2], privateKeyID: row[3], publicKeyPEM: row[4],
            providerKeyID: row[5], bundleIDs: (row[6] as String).split(separator: " ").map(String.init),
            createdAt: Date(timeIntervalSince1970: row[7]))
    }

    // MARK: Access tokens

    public func addFCMAccessToken(_ token: FCMAccessTokenRecord, pruningBefore: Date) async throws {
        try await groupCommit.write { db in
            try db.execute(
                sql: "DELETE FROM fcm_access_token WHERE expires_at < ?", arguments: [pruningBefore.timeIntervalSince1970])
            try db.execute(
                sql: "INSERT OR REPLACE INTO fcm_access_token (hash, project_id, expires_at) VALUES (?, ?, ?)",
                arguments: [token.hash, token.projectID, token.expiresAt.timeIntervalSince1970])
        }
    }

    public func fcmAccessToken(hash: String) async throws -> FCMAccessTokenRecord? {
        try await writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT hash, project_id, expires_at FROM fcm_access_token WHERE hash = ?", arguments: [hash]
            ).map { row in
                FCMAccessTokenRecord(hash: row[0], projectID: row[1], expiresAt: Date(timeIntervalSince1970: row[2]))
            }
        }
    }

    // MARK: Registrations

    public func fcmRegistration(issuing candidate: FCMRegistrationRecord) async throws -> FCMRegistrationRecord {
        try await groupCommit.write { db in
            if let row = try Row.fetchOne(
                db,
                sql: "SELECT \(Self.fcmRegistrationColumns) FROM fcm_registration WHERE apns_token = ? AND project_id = ?",
                arguments: [candidate.apnsToken, candidate.projectID])
            {
                return Self.fcmRegistration(row)
            }
            try db.execute(
                sql: """
                    INSERT INTO fcm_registration (token, installation_id, project_id, apns_token, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    candidate.token, candidate.installationID, candidate.projectID, candidate.apnsToken,
                    candidate.createdAt.timeIntervalSince1970,
                ])
            return candidate
        }
    }

    public func fcmRegistration(token: String) async throws -> FCMRegistrationRecord? {
        try await writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.fcmRegistrationColumns) FROM fcm_registration WHERE token = ?", arguments: [token]
            ).map(Self.fcmRegistration)
        }
    }

    public func fcmRegistration(installationID: String, projectID: String) async throws -> FCMRegistrationRecord? {
        try await writer.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.fcmRegistrationColumns) FROM fcm_registration
                    WHERE installation_id = ? AND project_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1
                    """,
                arguments: [installationID, projectID]
            ).map(Self.fcmRegistration)
        }
    }

    public func fcmRegistrations(projectID: String) async throws -> [FCMRegistrationRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(Self.fcmRegistrationColumns) FROM fcm_registration WHERE project_id = ? ORDER BY rowid",
                arguments: [projectID]
            ).map(Self.fcmRegistration)
        }
    }

    private static let fcmRegistrationColumns = "token, installation_id, project_id, apns_token, created_at"

    private static func fcmRegistration(_ row: Row) -> FCMRegistrationRecord {
        FCMRegistrationRecord(
            token: row[0], installationID: row[1], projectID: row[2], apnsToken: row[3],
            createdAt: Date(timeIntervalSince1970: row[4]))
    }

    // MARK: Topics

    @discardableResult
    public func subscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        try await groupCommit.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO fcm_topic_subscription (project_id, topic, token) VALUES (?, ?, ?)")
            var added = 0
            for token in tokens {
                try statement.execute(arguments: [projectID, topic, token])
                added += db.changesCount
            }
            return added
        }
    }

    @discardableResult
    public func unsubscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        try await groupCommit.write { db in
            let statement = try db.cachedStatement(
                sql: "DELETE FROM fcm_topic_subscription WHERE project_id = ? AND topic = ? AND token = ?")
            var removed = 0
            for token in tokens {
                try statement.execute(arguments: [projectID, topic, token])
                removed += db.changesCount
            }
            return removed
        }
    }

    public func fcmTopicSubscribers(projectID: String, topics: [String]) async throws -> [String: Set<String>] {
        guard !topics.isEmpty else { return [:] }
        return try await writer.read { db in
            let placeholders = Array(repeating: "?", count: topics.count).joined(separator: ", ")
            var subscribers: [String: Set<String>] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT token, topic FROM fcm_topic_subscription WHERE project_id = ? AND topic IN (\(placeholders))",
                arguments: StatementArguments([projectID] + topics))
            while let row = try rows.next() { subscribers[row[0], default: []].insert(row[1]) }
            return subscribers
        }
    }
}
