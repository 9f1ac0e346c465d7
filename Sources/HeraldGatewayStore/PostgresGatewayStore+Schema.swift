import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The tables several gateway nodes share, and how the schema is brought up to date.
extension PostgresGatewayStore {
    /// The schema versions this build knows, in order: each a list of statements.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE provider_key (
                key_id text PRIMARY KEY, team_id text NOT NULL, public_key text NOT NULL, environment text,
                topics text NOT NULL, created_at double precision NOT NULL)
            """,
            "CREATE TABLE device (id text PRIMARY KEY, secret_hash bytea, created_at double precision NOT NULL)",
            """
            CREATE TABLE device_token (
                token text PRIMARY KEY, device_id text NOT NULL REFERENCES device(id), bundle_id text NOT NULL,
                environment text NOT NULL, created_at double precision NOT NULL, revoked_at double precision)
            """,
            // One active token per device, app and environment, whichever node issues it.
            """
            CREATE UNIQUE INDEX device_token_active ON device_token(device_id, bundle_id, environment)
                WHERE revoked_at IS NULL
            """,
            """
            CREATE TABLE stored_notification (
                token text NOT NULL, topic text NOT NULL, device_id text NOT NULL, bundle_id text NOT NULL,
                apns_id text NOT NULL, unique_id text NOT NULL, push_type text NOT NULL, priority integer NOT NULL,
                collapse_id text, payload bytea NOT NULL, received_at double precision NOT NULL,
                expires_at double precision NOT NULL, seq bigserial NOT NULL,
                claimed_by text, claimed_until double precision,
                PRIMARY KEY (token, topic))
            """,
            "CREATE INDEX stored_by_device ON stored_notification(device_id, received_at, seq)",
            """
            CREATE TABLE delivery_event (
                id bigserial PRIMARY KEY, unique_id text NOT NULL, at double precision NOT NULL, kind text NOT NULL,
                detail text NOT NULL)
            """,
            "CREATE INDEX delivery_event_by_id ON delivery_event(unique_id)",
            """
            CREATE TABLE gateway_node (
                id text PRIMARY KEY, started_at double precision NOT NULL, heartbeat_at double precision NOT NULL)
            """,
            // Pushes one node accepted for a device connected to another: each kept until a session takes it.
            """
            CREATE TABLE relayed_push (
                seq bigserial PRIMARY KEY, token text NOT NULL, topic text NOT NULL, device_id text NOT NULL,
                bundle_id text NOT NULL, apns_id text NOT NULL, unique_id text NOT NULL, push_type text NOT NULL,
                priority integer NOT NULL, collapse_id text, payload bytea NOT NULL,
                received_at double precision NOT NULL, expires_at double precision NOT NULL,
                claimed_by text, claimed_until double precision)
            """,
            "CREATE INDEX relayed_by_device ON relayed_push(device_id, seq)",
            "CREATE INDEX relayed_by_unique_id ON relayed_push(unique_id)",
            // Which node each connected device is connected to (its latest session).
            """
            CREATE TABLE device_presence (
                device_id text PRIMARY KEY, node_id text NOT NULL, session text NOT NULL,
                connected_at double precision NOT NULL)
            """,
        ],
        // 2: broadcast channels.
        [
            """
            CREATE TABLE broadcast_channel (
                id text PRIMARY KEY, bundle_id text NOT NULL, environment text NOT NULL, storage_policy integer NOT NULL,
                push_type text NOT NULL, created_at double precision NOT NULL, seq bigserial NOT NULL)
            """,
            "CREATE INDEX broadcast_channel_by_app ON broadcast_channel(bundle_id, environment, seq)",
            """
            CREATE TABLE channel_message (
                channel_id text PRIMARY KEY, bundle_id text NOT NULL, unique_id text NOT NULL, request_id text NOT NULL,
                priority integer NOT NULL, payload bytea NOT NULL, received_at double precision NOT NULL,
                expires_at double precision NOT NULL)
            """,
        ],
        // 3: a token per purpose (the app's notifications '', VoIP, each Live Activity, push-to-start).
        [
            "ALTER TABLE device_token ADD COLUMN purpose text NOT NULL DEFAULT ''",
            "DROP INDEX device_token_active",
            """
            CREATE UNIQUE INDEX device_token_active ON device_token(device_id, bundle_id, environment, purpose)
                WHERE revoked_at IS NULL
            """,
        ],
        // 4: made the console's operator_token table until 2026-12; the console's own store (`PostgresConsoleStore`,
        // its versions in herald_console_schema) makes it now, and keeps the table a database made before then has.
        [],
        // 5: the delivery log searchable by apns-id, token and topic (on `received` events). It made the console's
        // console_send table too until 2026-12 (see 4).
        [
            "ALTER TABLE delivery_event ADD COLUMN apns_id text, ADD COLUMN recipient text, ADD COLUMN topic text"
        ],
        // 6: Firebase Cloud Messaging: projects, access tokens (their SHA-256), registrations, topic subscriptions.
        [
            """
            CREATE TABLE fcm_project (
                id text PRIMARY KEY, client_email text NOT NULL UNIQUE, client_id text NOT NULL,
                private_key_id text NOT NULL, public_key_pem text NOT NULL, provider_key_id text NOT NULL,
                bundle_ids text NOT NULL, created_at double precision NOT NULL)
            """,
            "CREATE TABLE fcm_access_token (hash text PRIMARY KEY, project_id text NOT NULL, expires_at double precision NOT NULL)",
            """
            CREATE TABLE fcm_registration (
                seq bigserial, token text PRIMARY KEY, installation_id text NOT NULL, project_id text NOT NULL,
                apns_token text NOT NULL, created_at double precision NOT NULL)
            """,
            "CREATE UNIQUE INDEX fcm_registration_by_apns_token ON fcm_registration(apns_token, project_id)",
            "CREATE INDEX fcm_registration_by_installation ON fcm_registration(installation_id, project_id)",
            """
            CREATE TABLE fcm_topic_subscription (
                project_id text NOT NULL, topic text NOT NULL, token text NOT NULL, PRIMARY KEY (project_id, topic, token))
            """,
        ],
        // 7: what each push was sent as (on `received` events), for the test-bed API's deliveries.
        [
            """
            ALTER TABLE delivery_event ADD COLUMN door text, ADD COLUMN push_type text, ADD COLUMN priority integer,
                ADD COLUMN collapse_id text, ADD COLUMN expiration bigint, ADD COLUMN payload text,
                ADD COLUMN fcm_message text
            """
        ],
    ]
}
