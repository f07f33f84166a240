import Foundation
import RegistrationStore
import TestSupport
import Testing

/// The SQLite store on a real file.
@Suite struct SQLiteRegistrationStoreTests {
    let folder = TemporaryDirectory("passforge-store")
    let type = "pass.com.example.test"
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "cd", count: 32)

    func makeStore(logLimit: Int = SQLiteRegistrationStore.defaultLogLimit) throws -> SQLiteRegistrationStore {
        try SQLiteRegistrationStore(path: folder.file("state/registrations.sqlite"), logLimit: logLimit)
    }

    @Test func registerCreatesThenReportsAlreadyRegistered() async throws {
        let store = try makeStore()
        let first = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(first.outcome == .created)
        #expect(first.index == DeviceIndex(device: "dev1", passTypeIdentifier: type, serialNumbers: ["S-1"]))
        let again = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(again.outcome == .unchanged)
        #expect(again.revision > first.revision)
        let stats = try await store.statistics()
        #expect(stats == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test func reRegisteringWithANewPushTokenReplacesIt() async throws {
        let store = try makeStore()
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        let replaced = try await store.register(device: "dev1", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(replaced.outcome == .pushTokenReplaced)
        // The token belongs to the device: every pass it holds is now pushed to the new one.
        #expect(try await store.devices(holding: type, serialNumber: "S-2") == [RegisteredDevice(device: "dev1", pushToken: Self.tokenB)])
        #expect(try await store.pushTokens(passTypeIdentifier: type, serialNumbers: ["S-1", "S-2"]) == [Self.tokenB])
    }

    @Test func unregisterDeletesTheDeviceWithItsLastRegistration() async throws {
        let store = try makeStore()
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        let first = try await store.unregister(device: "dev1", passTypeIdentifier: type, serialNumber: "S-1")
        #expect(first.outcome == .removed)
        #expect(first.index.serialNumbers == ["S-2"])
        #expect(try await store.statistics().devices == 1)
        let last = try await store.unregister(device: "dev1", passTypeIdentifier: type, serialNumber: "S-2")
        #expect(last.outcome == .removed)
        #expect(last.index.serialNumbers == [])
        #expect(try await store.statistics() == RegistrationStatistics(devices: 0, registrations: 0, logEntries: 0))
        let again = try await store.unregister(device: "dev1", passTypeIdentifier: type, serialNumber: "S-2")
        #expect(again.outcome == .notRegistered)
    }

    @Test func serialNumbersAreSortedPerTypeAndEmptyForUnknownDevices() async throws {
        let store = try makeStore()
        for serial in ["S-3", "S-1", "S-2"] {
            _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: serial)
        }
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: "pass.com.example.other", serialNumber: "X-1")
        #expect(try await store.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1", "S-2", "S-3"])
        #expect(try await store.serialNumbers(device: "dev1", passTypeIdentifier: "pass.com.example.other") == ["X-1"])
        #expect(try await store.serialNumbers(device: "nobody", passTypeIdentifier: type) == [])
        #expect(try await store.index(device: "dev1", passTypeIdentifier: type).serialNumbers == ["S-1", "S-2", "S-3"])
    }

    @Test func indicesHoldingChangedPassesAreFullIndices() async throws {
        let store = try makeStore()
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        _ = try await store.register(device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-3")
        let indices = try await store.indices(holding: type, serialNumbers: ["S-1", "S-9"])
        #expect(indices == [DeviceIndex(device: "dev1", passTypeIdentifier: type, serialNumbers: ["S-1", "S-2"])])
        #expect(try await store.indices(holding: type, serialNumbers: []) == [])
    }

    @Test func aHundredConcurrentDuplicateRegistrationsMakeOneRow() async throws {
        let store = try makeStore()
        let type = self.type
        let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
            for _ in 0..<100 {
                group.addTask { try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1").outcome }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .created }.count == 1)
        #expect(outcomes.filter { $0 == .unchanged }.count == 99)
        #expect(try await store.statistics() == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test func concurrentRegistrationsOfManyPassesAllLand() async throws {
        let store = try makeStore()
        let type = self.type
        let changes = try await withThrowingTaskGroup(of: RegistrationChange.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await store.register(device: "dev\(index % 10)", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-\(index)")
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(changes.allSatisfy { $0.outcome == .created })
        #expect(Set(changes.map(\.revision)).count == 200)
        #expect(try await store.statistics() == RegistrationStatistics(devices: 10, registrations: 200, logEntries: 0))
        // The index of the newest revision of each device is its full list.
        for device in 0..<10 {
            let newest = changes.filter { $0.index.device == "dev\(device)" }.max { $0.revision < $1.revision }!
            #expect(newest.index.serialNumbers.count == 20)
        }
    }

    @Test func deletingByPushTokenRemovesTheDevicesAndNamesTheirIndices() async throws {
        let store = try makeStore()
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: "pass.com.example.other", serialNumber: "X-1")
        _ = try await store.register(device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-1")
        let removed = try await store.deleteDevices(pushToken: Self.tokenA)
        #expect(removed.map { "\($0.index.device) \($0.index.passTypeIdentifier)" } == ["dev1 pass.com.example.other", "dev1 \(type)"])
        #expect(removed.allSatisfy { $0.index.serialNumbers.isEmpty })
        #expect(try await store.devices(holding: type, serialNumber: "S-1") == [RegisteredDevice(device: "dev2", pushToken: Self.tokenB)])
        #expect(try await store.statistics() == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test func logTableKeepsOnlyTheNewestEntries() async throws {
        let store = try makeStore(logLimit: 5)
        try await store.appendLog((1...4).map { "message \($0)" }, receivedAt: 1)
        try await store.appendLog((5...8).map { "message \($0)" }, receivedAt: 2)
        let logs = try await store.recentLogs(limit: 100)
        #expect(logs.map(\.message) == ["message 8", "message 7", "message 6", "message 5", "message 4"])
        #expect(logs.first?.receivedAt == 2)
    }

    @Test func theFileIsDurableWALWithForeignKeys() async throws {
        let store = try makeStore()
        #expect(try store.writerPragma("journal_mode") == "wal")
        #expect(try store.writerPragma("synchronous") == "2") // FULL
        #expect(try store.writerPragma("foreign_keys") == "1")
    }

    @Test func reopeningKeepsEverythingAndMigratesOnce() async throws {
        do {
            let store = try makeStore()
            _ = try await store.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
            try await store.appendLog(["hello"], receivedAt: 3)
        }
        let reopened = try makeStore()
        #expect(try await reopened.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1"])
        #expect(try await reopened.recentLogs(limit: 1).map(\.message) == ["hello"])
        let again = try await reopened.register(device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(again.outcome == .unchanged)
    }

    @Test func theDatabaseRejectsDuplicateRowsItself() throws {
        // The unique constraints, not the code, make duplicates impossible:
        // a second writer (another process) gets a constraint error.
        _ = try makeStore()
        let path = folder.file("state/registrations.sqlite")
        let result = try runProcess("sqlite3", [path, """
            PRAGMA foreign_keys = ON;
            INSERT INTO devices (library_identifier, push_token, created_at, updated_at) VALUES ('d', 't', 0, 0);
            INSERT INTO registrations VALUES (1, 'p', 's', 0);
            INSERT INTO registrations VALUES (1, 'p', 's', 0);
            """])
        #expect(result.stderr.contains("UNIQUE constraint failed"))
        let orphan = try runProcess("sqlite3", [path, "PRAGMA foreign_keys = ON; INSERT INTO registrations VALUES (99, 'p', 's', 0);"])
        #expect(orphan.stderr.contains("FOREIGN KEY constraint failed"))
        let cascade = try runProcess("sqlite3", [path, "PRAGMA foreign_keys = ON; DELETE FROM devices; SELECT COUNT(*) FROM registrations;"])
        #expect(cascade.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}

@Suite struct StoreLocationTests {
    @Test func parsesTheDatabaseURLForms() throws {
        #expect(try StoreLocation(nil) == .sqlite(path: "state/registrations.sqlite"))
        #expect(try StoreLocation("  ") == .sqlite(path: "state/registrations.sqlite"))
        #expect(try StoreLocation("sqlite:data/r.sqlite") == .sqlite(path: "data/r.sqlite"))
        #expect(try StoreLocation("sqlite:///var/lib/r.sqlite") == .sqlite(path: "/var/lib/r.sqlite"))
        #expect(try StoreLocation("/tmp/x.sqlite") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(try StoreLocation("postgres://u:secret@db/passforge") == .postgres(url: "postgres://u:secret@db/passforge"))
        #expect(throws: StoreLocation.InvalidLocation.self) { try StoreLocation("sqlite:") }
        #expect(throws: StoreLocation.InvalidLocation.self) { try StoreLocation("mysql://db/x") }
    }

    @Test func neverPrintsAPassword() throws {
        let location = try StoreLocation("postgresql://user:hunter2@db.example.com:5432/passforge")
        #expect(!location.description.contains("hunter2"))
        #expect(location.description.contains("db.example.com:5432/passforge"))
    }
}
