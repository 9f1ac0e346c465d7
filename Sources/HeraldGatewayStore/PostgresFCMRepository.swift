import Foundation
import Logging
import PostgresNIO

/// `FCMStore` on PostgreSQL.
public struct PostgresFCMRepository: FCMStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    // MARK: Projects

    public func createFCMProject(_ project: FCMProjectRecord) async throws -> Bool {
        try await perform { client in
            try await !client.query(
                """
                INSERT INTO fcm_project
                    (id, client_email, client_id, private_key_id, public_key_pem, provider_key_id, bundle_ids, created_at)
                VALUES (\(project.projectID), \(project.clientEmail), \(project.clientID), \(project.privateKeyID),
                        \(project.publicKeyPEM), \(project.providerKeyID), \(project.bundleIDs.joined(separator: " ")),
                        \(project.createdAt.timeIntervalSince1970))
                ON CONFLICT DO NOTHING RETURNING 1
                """
            ).collect().isEmpty
        }
    }

    public func fcmProject(id: String) async throws -> FCMProjectRecord? {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.fcmProjectColumns) FROM fcm_project WHERE id = \(id)")
                .collect().first.map(Self.fcmProject)
        }
    }

    public func fcmProjects() async throws -> [FCMProjectRecord] {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.fcmProjectColumns) FROM fcm_project ORDER BY id")
                .collect().map(Self.fcmProject)
        }
    }

    public func addFCMProjectApps(_ bundleIDs: [String], projectID: String) async throws -> FCMProjectRecord? {
        try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    guard
                        var project = try await connection.query(
                            "SELECT \(unescaped: Self.fcmProjectColumns) FROM fcm_project WHERE id = \(projectID) FOR UPDATE",
                            logger: logger
                        ).collect().first.map(Self.fcmProject)
                    else { return nil }
                    project.bundleIDs = FCMProjectRecord.adding(bundleIDs, to: project.bundleIDs)
                    try await connection.query(
                        "UPDATE fcm_project SET bundle_ids = \(project.bundleIDs.joined(separator: " ")) WHERE id = \(projectID)",
                        logger: logger)
                    return project
                }
            }
        }
    }

    private static let fcmProjectColumns =
        "id, client_email, client_id, private_key_id, public_key_pem, provider_key_id, bundle_ids, created_at"

    private static func fcmProject(_ row: PostgresRow) throws -> FCMProjectRecord {
        let (id, email, clientID, keyID, pem, providerKeyID, bundleIDs, createdAt) = try row.decode(
            (String, String, String, String, String, String, String, Double).self)
        return FCMProjectRecord(
            projectID: id, clientEmail: email, clientID: clientID, privateKeyID: keyID, publicKeyPEM: pem,
            providerKeyID: providerKeyID, bundleIDs: bundleIDs.split(separator: " ").map(String.init),
            createdAt: Date(timeIntervalSince1970: createdAt))
    }

    // MARK: Access tokens

    public func addFCMAccessToken(_ token: FCMAccessTokenRecord, pruningBefore: Date) async throws {
        try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        "DELETE FROM fcm_access_token WHERE expires_at < \(pruningBefore.timeIntervalSince1970)",
                        logger: logger)
                    try await connection.query(
                        """
                        INSERT INTO fcm_access_token (hash, project_id, expires_at)
                        VALUES (\(token.hash), \(token.projectID), \(token.expiresAt.timeIntervalSince1970))
                        ON CONFLICT (hash) DO UPDATE SET project_id = excluded.project_id, expires_at = excluded.expires_at
                        """, logger: logger)
                }
            }
        }
    }

    public func fcmAccessToken(hash: String) async throws -> FCMAccessTokenRecord? {
        try await perform { client in
            try await client.query("SELECT hash, project_id, expires_at FROM fcm_access_token WHERE hash = \(hash)")
                .collect().first.map { row in
                    let (hash, projectID, expiresAt) = try row.decode((String, String, Double).self)
                    return FCMAccessTokenRecord(
                        hash: hash, projectID: projectID, expiresAt: Date(timeIntervalSince1970: expiresAt))
                }
        }
    }

    // MARK: Registrations

    public func fcmRegistration(issuing candidate: FCMRegistrationRecord) async throws -> FCMRegistrationRecord {
        try await perform { client in
            // Two nodes issuing at once: the unique index keeps one, and both return it.
            try await client.query(
                """
                INSERT INTO fcm_registration (token, installation_id, project_id, apns_token, created_at)
                VALUES (\(candidate.token), \(candidate.installationID), \(candidate.projectID), \(candidate.apnsToken),
                        \(candidate.createdAt.timeIntervalSince1970))
                ON CONFLICT DO NOTHING
                """)
            guard
                let kept = try await client.query(
                    """
                    SELECT \(unescaped: Self.fcmRegistrationColumns) FROM fcm_registration
                    WHERE apns_token = \(candidate.apnsToken) AND project_id = \(candidate.projectID)
                    """
                ).collect().first.map(Self.fcmRegistration)
            else { throw GatewayStoreError.unavailable("the registration just issued was not found") }
            return kept
        }
    }

    public func fcmRegistration(token: String) async throws -> FCMRegistrationRecord? {
        try await perform { client in
            try await client.query(
                "SELECT \(unescaped: Self.fcmRegistrationColumns) FROM fcm_registration WHERE token = \(token)"
            ).collect().first.map(Self.fcmRegistration)
        }
    }

    public func fcmRegistration(installationID: String, projectID: String) async throws -> FCMRegistrationRecord? {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.fcmRegistrationColumns) FROM fcm_registration
                WHERE installation_id = \(installationID) AND project_id = \(projectID) ORDER BY seq DESC LIMIT 1
                """
            ).collect().first.map(Self.fcmRegistration)
        }
    }

    public func fcmRegistrations(projectID: String) async throws -> [FCMRegistrationRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.fcmRegistrationColumns) FROM fcm_registration
                WHERE project_id = \(projectID) ORDER BY seq
                """
            ).collect().map(Self.fcmRegistration)
        }
    }

    private static let fcmRegistrationColumns = "token, installation_id, project_id, apns_token, created_at"

    private static func fcmRegistration(_ row: PostgresRow) throws -> FCMRegistrationRecord {
        let (token, installationID, projectID, apnsToken, createdAt) = try row.decode(
            (String, String, String, String, Double).self)
        return FCMRegistrationRecord(
            token: token, installationID: installationID, projectID: projectID, apnsToken: apnsToken,
            createdAt: Date(timeIntervalSince1970: createdAt))
    }

    // MARK: Topics

    @discardableResult
    public func subscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await perform { client in
            try await client.query(
                """
                INSERT INTO fcm_topic_subscription (project_id, topic, token)
                SELECT \(projectID), \(topic), unnest(\(tokens)::text[]) ON CONFLICT DO NOTHING RETURNING 1
                """
            ).collect().count
        }
    }

    @discardableResult
    public func unsubscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await perform { client in
            try await client.query(
                """
                DELETE FROM fcm_topic_subscription
                WHERE project_id = \(projectID) AND topic = \(topic) AND token = ANY(\(tokens)::text[]) RETURNING 1
                """
            ).collect().count
        }
    }

    public func fcmTopicSubscribers(projectID: String, topics: [String]) async throws -> [String: Set<String>] {
        guard !topics.isEmpty else { return [:] }
        return try await perform { client in
            var subscribers: [String: Set<String>] = [:]
            for try await (token, topic) in try await client.query(
                """
                SELECT token, topic FROM fcm_topic_subscription
                WHERE project_id = \(projectID) AND topic = ANY(\(topics)::text[])
                """
            ).decode((String, String).self) {
                subscribers[token, default: []].insert(topic)
            }
            return subscribers
        }
    }
}
