import Foundation
import Logging
import PostgresNIO
import RegistrationStore

/// The store's schema: migrations applied once, in order, under an advisory lock.
extension PostgresRegistrationStore {
    // MARK: Schema

    /// Version name, statements. The names match the SQLite store's migrations.
    static let migrations: [(String, [String])] = [
        (
            "v1: devices, registrations, logs",
            [
                // COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
                """
                CREATE TABLE devices (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    library_identifier TEXT COLLATE "C" NOT NULL UNIQUE,
                    push_token TEXT COLLATE "C" NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    -- The revision of the device's last change: what a read-only answer reports.
                    revision BIGINT NOT NULL DEFAULT 0
                )
                """,
                "CREATE INDEX devices_by_push_token ON devices (push_token)",
                """
                CREATE TABLE registrations (
                    device_id BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
                    pass_type_identifier TEXT COLLATE "C" NOT NULL,
                    serial_number TEXT COLLATE "C" NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (device_id, pass_type_identifier, serial_number)
                )
                """,
                "CREATE INDEX registrations_by_pass ON registrations (pass_type_identifier, serial_number)",
                """
                CREATE TABLE device_logs (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    received_at DOUBLE PRECISION NOT NULL,
                    message TEXT NOT NULL
                )
                """,
                // Revisions: a sequence, drawn under the device's lock, so no row is contended.
                "CREATE SEQUENCE store_revision AS BIGINT",
            ]
        ),
        (
            "v2: push queue",
            [
                """
                CREATE TABLE push_queue (
                    push_token TEXT COLLATE "C" NOT NULL,
                    pass_type_identifier TEXT COLLATE "C" NOT NULL,
                    queued_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (push_token, pass_type_identifier)
                )
                """,
                "CREATE INDEX push_queue_by_age ON push_queue (queued_at)",
                """
                CREATE TABLE push_cursor (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    update_tag BIGINT NOT NULL
                )
                """,
            ]
        ),
        // A registration in one call instead of six statements (lock, read, two
        // inserts, the index): the same steps, run by the server. The store calls
        // it between BEGIN and COMMIT (see `transaction`: an autocommit call
        // answers before it commits), so the device's advisory lock is held
        // until it commits; in a function every statement takes a fresh
        // snapshot, so the steps after the lock see what the previous holder
        // committed.
        (
            "v3: register and unregister in one call",
            [
                """
                CREATE FUNCTION passforge_register(p_device text, p_token text, p_type text, p_serial text, p_now float8)
                RETURNS TABLE (change_outcome text, change_revision bigint, change_serials text[])
                LANGUAGE plpgsql AS $$
                DECLARE
                    v_id bigint;
                    v_token text;
                    v_revision bigint;
                BEGIN
                    -- Registered again with the same token (a restore, a reinstall): a read, no lock, no write.
                    SELECT d.id, d.revision INTO v_id, v_revision FROM devices d
                    WHERE d.library_identifier = p_device AND d.push_token = p_token
                      AND EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = d.id
                                  AND r.pass_type_identifier = p_type AND r.serial_number = p_serial);
                    IF FOUND THEN
                        change_outcome := 'unchanged';
                    ELSE
                        PERFORM pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(p_device));
                        SELECT d.id, d.push_token, d.revision INTO v_id, v_token, v_revision FROM devices d
                        WHERE d.library_identifier = p_device;
                        IF FOUND THEN
                            INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
                            VALUES (v_id, p_type, p_serial, p_now) ON CONFLICT DO NOTHING;
                            IF FOUND THEN
                                change_outcome := 'created';
                            ELSIF v_token <> p_token THEN
                                change_outcome := 'pushTokenReplaced';
                            ELSE
                                -- A concurrent twin registered it first: the index is the one of its revision.
                                change_outcome := 'unchanged';
                            END IF;
                            IF change_outcome <> 'unchanged' THEN
                                UPDATE devices d SET revision = nextval('store_revision'),
                                    updated_at = CASE WHEN d.push_token = p_token THEN d.updated_at ELSE p_now END,
                                    push_token = p_token
                                WHERE d.id = v_id RETURNING d.revision INTO v_revision;
                            END IF;
                        ELSE
                            INSERT INTO devices (library_identifier, push_token, created_at, updated_at, revision)
                            VALUES (p_device, p_token, p_now, p_now, nextval('store_revision'))
                            RETURNING devices.id, devices.revision INTO v_id, v_revision;
                            INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
                            VALUES (v_id, p_type, p_serial, p_now);
                            change_outcome := 'created';
                        END IF;
                    END IF;
                    change_revision := v_revision;
                    change_serials := ARRAY(SELECT r.serial_number FROM registrations r
                                            WHERE r.device_id = v_id AND r.pass_type_identifier = p_type ORDER BY r.serial_number);
                    RETURN NEXT;
                END
                $$
                """,
                """
                CREATE FUNCTION passforge_unregister(p_device text, p_type text, p_serial text)
                RETURNS TABLE (change_outcome text, change_revision bigint, change_serials text[])
                LANGUAGE plpgsql AS $$
                DECLARE
                    v_id bigint;
                BEGIN
                    PERFORM pg_advisory_xact_lock(\(LockKey.deviceClass), hashtext(p_device));
                    change_outcome := 'notRegistered';
                    change_serials := '{}';
                    SELECT d.id INTO v_id FROM devices d WHERE d.library_identifier = p_device;
                    IF FOUND THEN
                        DELETE FROM registrations r
                        WHERE r.device_id = v_id AND r.pass_type_identifier = p_type AND r.serial_number = p_serial;
                        IF FOUND THEN change_outcome := 'removed'; END IF;
                        -- Apple: delete the device entry when it has no more registrations.
                        DELETE FROM devices d WHERE d.id = v_id AND NOT EXISTS (SELECT 1 FROM registrations r WHERE r.device_id = v_id);
                        change_revision := nextval('store_revision');
                        UPDATE devices d SET revision = change_revision WHERE d.id = v_id;
                        change_serials := ARRAY(SELECT r.serial_number FROM registrations r
                                                WHERE r.device_id = v_id AND r.pass_type_identifier = p_type ORDER BY r.serial_number);
                    ELSE
                        change_revision := nextval('store_revision');
                    END IF;
                    RETURN NEXT;
                END
                $$
                """,
            ]
        ),
        offerMigration,
        spentTokenMigration,
    ]

    /// Advisory lock keys. Single bigint keys and pairs of integers are separate key spaces.
    enum LockKey {
        static let migrations: Int64 = 0x7066_6f72_6765_0001  // "pforge" 1
        static let push: Int64 = 0x7066_6f72_6765_0002
        /// Pairs (this, hash of offer/claim identifier): one claim identifier claims at a time.
        static let offerClaim: Int32 = 0x7066_0002
        /// First key of a device's lock; the second is hashtext(library identifier).
        static let deviceClass: Int32 = 0x7066_0001
    }

    /// Applies the missing migrations in one transaction, holding an advisory
    /// lock: a second server starting at the same moment waits, then finds
    /// them applied.
    static func migrate(_ connection: PostgresConnection, location: PostgresLocation) async throws {
        try await inTransaction(connection) { connection in
            try await connection.perform("SELECT pg_advisory_xact_lock(\(LockKey.migrations))")
            try await connection.perform(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version TEXT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """)
            let applied = Set(
                try await collect(
                    connection.checkedQuery("SELECT version FROM schema_migrations", logger: logger), as: String.self))
            for (version, statements) in migrations where !applied.contains(version) {
                for statement in statements {
                    try await connection.perform(PostgresQuery(unsafeSQL: statement))
                }
                try await connection.perform("INSERT INTO schema_migrations (version) VALUES (\(version))")
            }
        }
    }

    /// The applied migrations, oldest first (tests).
    package func appliedMigrations() async throws -> [String] {
        try await leased { connection in
            try await Self.collect(
                connection.checkedQuery(
                    "SELECT version FROM schema_migrations ORDER BY applied_at, version", logger: Self.logger),
                as: String.self)
        }
    }
}
