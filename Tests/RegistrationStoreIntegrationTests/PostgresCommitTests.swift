import Foundation
import PostgresNIO
import PostgresRegistrationStore
import RegistrationStore
import TestSupport
import Testing

/// A change the store reports done is committed (issue 35: a registration answered 201 was lost in a failover).
/// PostgreSQL answers an autocommit statement's rows and CommandComplete at Execute, and commits only at the
/// Sync that follows, before ReadyForQuery; a server lost in between loses the change. A proxy cuts the
/// connection exactly there: after the change's CommandComplete, before its ReadyForQuery. The store must
/// throw then, and what it threw for must not be in the database.
@Suite struct PostgresCommitTests {
    static let token = String(repeating: "cd", count: 32)
    let type = "pass.example.commit"

    @Test(.timeLimit(.minutes(1))) func aRegistrationCutBeforeItsCommitFailsAndIsNotStored() async throws {
        let (url, proxy, store) = try await Self.storeBehindProxy()
        defer { proxy.stop() }
        proxy.arm()
        let error = try await #require(throws: PostgresStoreError.self) {
            _ = try await store.register(
                device: "dev-cut", pushToken: Self.token, passTypeIdentifier: type, serialNumber: "S-1")
        }
        #expect(error.isUnavailable, "\(error)")
        #expect(proxy.cuts == 1)
        #expect(try await Self.serials(url, device: "dev-cut").isEmpty)

        // The store goes on: the same registration, not cut, is stored.
        let change = try await store.register(
            device: "dev-cut", pushToken: Self.token, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(change.outcome == .created)
        #expect(try await Self.serials(url, device: "dev-cut") == ["S-1"])
        await store.shutdown()
    }

    @Test(.timeLimit(.minutes(1))) func anUnregistrationCutBeforeItsCommitFailsAndKeepsTheRegistration()
        async throws
    {
        let (url, proxy, store) = try await Self.storeBehindProxy()
        defer { proxy.stop() }
        _ = try await store.register(
            device: "dev-keep", pushToken: Self.token, passTypeIdentifier: type, serialNumber: "S-2")
        proxy.arm()
        _ = try await #require(throws: PostgresStoreError.self) {
            _ = try await store.unregister(device: "dev-keep", passTypeIdentifier: type, serialNumber: "S-2")
        }
        #expect(proxy.cuts == 1)
        #expect(try await Self.serials(url, device: "dev-keep") == ["S-2"])
        await store.shutdown()
    }

    /// A fresh database, a cutting proxy in front of its server, and a store connected through it.
    static func storeBehindProxy() async throws -> (String, TCPProxy, PostgresRegistrationStore) {
        let url = try await PostgresTestServer.freshDatabase()
        let port = try PostgresRegistrationStoreTests.port(of: url)
        let proxy = try TCPProxy.cuttingBeforeReadyForQuery(to: port, afterRowsWithColumn: "change_outcome")
        // The proxy reads the answers as protocol messages: no TLS.
        let proxied = PostgresTestEnvironment.url(
            url.replacingOccurrences(of: "127.0.0.1:\(port)/", with: "127.0.0.1:\(proxy.port)/"),
            query: "sslmode=disable")
        do {
            return (url, proxy, try await PostgresRegistrationStore.connect(url: proxied))
        } catch {
            proxy.stop()
            throw error
        }
    }

    /// The device's serial numbers as the server has them (a connection of its own, not through the proxy).
    static func serials(_ url: String, device: String) async throws -> [String] {
        try await PostgresTestServer.withAdmin(url) { connection in
            try await connection.query(
                """
                SELECT r.serial_number FROM registrations r JOIN devices d ON d.id = r.device_id
                WHERE d.library_identifier = \(device) ORDER BY 1
                """, logger: PostgresTestServer.logger
            ).column(String.self)
        }
    }
}
