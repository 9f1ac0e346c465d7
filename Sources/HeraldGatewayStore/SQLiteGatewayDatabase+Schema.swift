import Foundation
import GRDB

/// The gateway's SQLite schema: its migrations, in order (a file is brought up to date when it opens).
extension SQLiteGatewayDatabase {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE provider_key (
                        key_id TEXT PRIMARY KEY,
                        team_id TEXT NOT NULL,
                        public_key TEXT NOT NULL,
                        environment TEXT,
                        topics TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE device (
                        id TEXT PRIMARY KEY,
                        secret_hash BLOB,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE device_token (
                        token TEXT PRIMARY KEY,
                        device_id TEXT NOT NULL REFERENCES device(id),
                        bundle_id TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        revoked_at REAL
                    );
                    CREATE INDEX device_token_by_app ON device_token(device_id, bundle_id, environment);
                    CREATE TABLE stored_notification (
                        token TEXT NOT NULL,
                        topic TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        bundle_id TEXT NOT NULL,
                        apns_id TEXT NOT NULL,
                        unique_id TEXT NOT NULL,
                        push_type TEXT NOT NULL,
                        priority INTEGER NOT NULL,
                        collapse_id TEXT,
                        payload BLOB NOT NULL,
                        received_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        PRIMARY KEY (token, topic)
                    );
                    CREATE INDEX stored_by_device ON stored_notification(device_id, received_at);
                    CREATE TABLE delivery_event (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        unique_id TEXT NOT NULL,
                        at REAL NOT NULL,
                        kind TEXT NOT NULL,
                        detail TEXT NOT NULL
                    );
                    CREATE INDEX delivery_event_by_id ON delivery_event(unique_id);
                    CREATE INDEX delivery_event_by_time ON delivery_event(at);
                    """)
        }
        migrator.registerMigration("v2: delivery log without AUTOINCREMENT or time index") { db in
            // Three b-tree writes less per event: no sqlite_sequence update, no index on `at`. Row ids still grow
            // with time (they are only reused once the whole log is pruned), so pruning goes by id.
            try db.execute(
                sql: """
                    CREATE TABLE delivery_event_v2 (
                        id INTEGER PRIMARY KEY,
                        unique_id TEXT NOT NULL,
                        at REAL NOT NULL,
                        kind TEXT NOT NULL,
                        detail TEXT NOT NULL
                    );
                    INSERT INTO delivery_event_v2 (id, unique_id, at, kind, detail)
                        SELECT id, unique_id, at, kind, detail FROM delivery_event ORDER BY id;
                    DROP TABLE delivery_event;
                    ALTER TABLE delivery_event_v2 RENAME TO delivery_event;
                    CREATE INDEX delivery_event_by_id ON delivery_event(unique_id);
                    """)
        }
        migrator.registerMigration("v3: broadcast channels") { db in
            try db.execute(
                sql: """
                    CREATE TABLE broadcast_channel (
                        id TEXT PRIMARY KEY,
                        bundle_id TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        storage_policy INTEGER NOT NULL,
                        push_type TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX broadcast_channel_by_app ON broadcast_channel(bundle_id, environment, created_at);
                    """)
        }
        migrator.registerMigration("v4: kept broadcasts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE channel_message (
                        channel_id TEXT PRIMARY KEY,
                        bundle_id TEXT NOT NULL,
                        unique_id TEXT NOT NULL,
                        request_id TEXT NOT NULL,
                        priority INTEGER NOT NULL,
                        payload BLOB NOT NULL,
                        received_at REAL NOT NULL,
                        expires_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v5: token purposes") { db in
            // A token per purpose: the app's notifications (''), VoIP, each Live Activity, push-to-start.
            try db.execute(
                sql: """
                    ALTER TABLE device_token ADD COLUMN purpose TEXT NOT NULL DEFAULT '';
                    DROP INDEX device_token_by_app;
                    CREATE INDEX device_token_by_app ON device_token(device_id, bundle_id, environment, purpose);
                    """)
        }
        migrator.registerMigration("v6: console operator tokens") { _ in
            // Made the console's operator_token table until 2026-12: the console keeps it in its own store now
            // (`SQLiteConsoleStore`, console.sqlite), which copies the rows of a file made before then.
        }
        migrator.registerMigration("v7: the delivery log searchable by apns-id, token and topic; the console's history") { db in
            // Set on `received` events only; searched newest first (by id, backwards), so no index to keep up.
            try db.execute(
                sql: """
                    ALTER TABLE delivery_event ADD COLUMN apns_id TEXT;
                    ALTER TABLE delivery_event ADD COLUMN recipient TEXT;
                    ALTER TABLE delivery_event ADD COLUMN topic TEXT;
                    """)
            // Made the console's console_send table too until 2026-12 (see v6).
        }
        migrator.registerMigration("v8: Firebase Cloud Messaging") { db in
            // Bundle IDs space-separated (they have no spaces); topic subscriptions looked up by project and topic.
            try db.execute(
                sql: """
                    CREATE TABLE fcm_project (
                        id TEXT PRIMARY KEY,
                        client_email TEXT NOT NULL UNIQUE,
                        client_id TEXT NOT NULL,
                        private_key_id TEXT NOT NULL,
                        public_key_pem TEXT NOT NULL,
                        provider_key_id TEXT NOT NULL,
                        bundle_ids TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE fcm_access_token (
                        hash TEXT PRIMARY KEY,
                        project_id TEXT NOT NULL,
                        expires_at REAL NOT NULL
                    );
                    CREATE TABLE fcm_registration (
                        token TEXT PRIMARY KEY,
                        installation_id TEXT NOT NULL,
                        project_id TEXT NOT NULL,
                        apns_token TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE UNIQUE INDEX fcm_registration_by_apns_token ON fcm_registration(apns_token, project_id);
                    CREATE INDEX fcm_registration_by_installation ON fcm_registration(installation_id, project_id);
                    CREATE TABLE fcm_topic_subscription (
                        project_id TEXT NOT NULL,
                        topic TEXT NOT NULL,
                        token TEXT NOT NULL,
                        PRIMARY KEY (project_id, topic, token)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v9: what each push was sent as, for the test-bed API's deliveries") { db in
            // Set on `received` events only, as the v7 columns are.
            try db.execute(
                sql: """
                    ALTER TABLE delivery_event ADD COLUMN door TEXT;
                    ALTER TABLE delivery_event ADD COLUMN push_type TEXT;
                    ALTER TABLE delivery_event ADD COLUMN priority INTEGER;
                    ALTER TABLE delivery_event ADD COLUMN collapse_id TEXT;
                    ALTER TABLE delivery_event ADD COLUMN expiration INTEGER;
                    ALTER TABLE delivery_event ADD COLUMN payload TEXT;
                    ALTER TABLE delivery_event ADD COLUMN fcm_message TEXT;
                    """)
        }
        return migrator
    }
}
