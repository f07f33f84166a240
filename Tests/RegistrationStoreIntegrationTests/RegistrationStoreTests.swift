import Foundation
import PostgresRegistrationStore
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport
import Testing

/// The implementations the contract below runs against: every test runs on both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    /// A database of its own per test folder on the server of PASSFORGE_TEST_POSTGRES_URL
    /// (scripts/with-postgres.sh); without it the case fails, unless PASSFORGE_SKIP_POSTGRES=1.
    case postgres

    var testDescription: String { rawValue }

    /// A store on the folder's database; a second call for the same folder opens the same database.
    func make(in folder: TemporaryDirectory, logLimit: Int = SQLiteRegistrationStore.defaultLogLimit) async throws
        -> any RegistrationDatabase
    {
        switch self {
        case .sqlite:
            return try SQLiteRegistrationStore(path: folder.file("state/registrations.sqlite"), logLimit: logLimit)
        case .postgres:
            return try await PostgresRegistrationStore.connect(
                url: try await PostgresTestServer.database(for: folder),
                options: .init(logLimit: logLimit))
        }
    }
}

/// The semantics every RegistrationStore keeps, on a real database.
@Suite struct RegistrationStoreContractTests {
    let folder = TemporaryDirectory("passforge-store")
    let type = "pass.com.example.test"
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "cd", count: 32)

    /// The registrations of one pass, with their devices' push tokens.
    func holders(of serialNumber: String, in store: any RegistrationExport) async throws -> [ExportedRegistration] {
        try await store.exportRegistrations(after: nil, limit: 1_000).filter {
            $0.passTypeIdentifier == type && $0.serialNumber == serialNumber
        }
    }

    @Test(arguments: StoreKind.allCases) func registerCreatesThenReportsAlreadyRegistered(kind: StoreKind) async throws
    {
        let store = try await kind.make(in: folder)
        let first = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(first.outcome == .created)
        #expect(first.index == DeviceIndex(device: "dev1", passTypeIdentifier: type, serialNumbers: ["S-1"]))
        let again = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(again.outcome == .unchanged)
        #expect(again.revision == first.revision)  // answered from a read: nothing committed
        let stats = try await store.statistics()
        #expect(stats == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test(arguments: StoreKind.allCases) func reRegisteringWithANewPushTokenReplacesIt(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        let replaced = try await store.register(
            device: "dev1", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(replaced.outcome == .pushTokenReplaced)
        // The token belongs to the device: every pass it holds is now pushed to the new one.
        #expect(
            try await holders(of: "S-2", in: store) == [
                ExportedRegistration(
                    device: "dev1", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-2")
            ])
        #expect(try await store.pushTokens(passTypeIdentifier: type, serialNumbers: ["S-1", "S-2"]) == [Self.tokenB])
    }

    @Test(arguments: StoreKind.allCases) func unregisterDeletesTheDeviceWithItsLastRegistration(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
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

    @Test(arguments: StoreKind.allCases) func serialNumbersAreSortedPerTypeAndEmptyForUnknownDevices(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        for serial in ["S-3", "S-1", "S-2"] {
            _ = try await store.register(
                device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: serial)
        }
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: "pass.com.example.other", serialNumber: "X-1")
        #expect(try await store.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1", "S-2", "S-3"])
        #expect(try await store.serialNumbers(device: "dev1", passTypeIdentifier: "pass.com.example.other") == ["X-1"])
        #expect(try await store.serialNumbers(device: "nobody", passTypeIdentifier: type) == [])
        #expect(try await store.index(device: "dev1", passTypeIdentifier: type).serialNumbers == ["S-1", "S-2", "S-3"])
    }

    @Test(arguments: StoreKind.allCases) func indicesHoldingChangedPassesAreFullIndices(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        _ = try await store.register(
            device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-3")
        let indices = try await store.indices(holding: type, serialNumbers: ["S-1", "S-9"])
        #expect(indices == [DeviceIndex(device: "dev1", passTypeIdentifier: type, serialNumbers: ["S-1", "S-2"])])
        #expect(try await store.indices(holding: type, serialNumbers: []) == [])
        // Read back by (device, type), in the order asked, unknown ones empty.
        #expect(
            try await store.indices(of: [
                (device: "dev2", passTypeIdentifier: type), (device: "nobody", passTypeIdentifier: type),
                (device: "dev1", passTypeIdentifier: type), (device: "dev1", passTypeIdentifier: "pass.other"),
            ]) == [
                DeviceIndex(device: "dev2", passTypeIdentifier: type, serialNumbers: ["S-3"]),
                DeviceIndex(device: "nobody", passTypeIdentifier: type, serialNumbers: []),
                DeviceIndex(device: "dev1", passTypeIdentifier: type, serialNumbers: ["S-1", "S-2"]),
                DeviceIndex(device: "dev1", passTypeIdentifier: "pass.other", serialNumbers: []),
            ])
    }

    @Test(arguments: StoreKind.allCases) func aHundredConcurrentDuplicateRegistrationsMakeOneRow(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        let type = self.type
        let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await store.register(
                        device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1"
                    ).outcome
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .created }.count == 1)
        #expect(outcomes.filter { $0 == .unchanged }.count == 99)
        #expect(try await store.statistics() == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test(arguments: StoreKind.allCases) func concurrentRegistrationsOfManyPassesAllLand(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        let type = self.type
        let changes = try await withThrowingTaskGroup(of: RegistrationChange.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await store.register(
                        device: "dev\(index % 10)", pushToken: Self.tokenA, passTypeIdentifier: type,
                        serialNumber: "S-\(index)")
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

    @Test(arguments: StoreKind.allCases) func deletingByPushTokenRemovesTheDevicesAndNamesTheirIndices(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: "pass.com.example.other", serialNumber: "X-1")
        _ = try await store.register(
            device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-1")
        let removed = try await store.deleteDevices(pushToken: Self.tokenA, invalidSince: nil)
        #expect(
            removed.map { "\($0.index.device) \($0.index.passTypeIdentifier)" } == [
                "dev1 pass.com.example.other", "dev1 \(type)",
            ])
        #expect(removed.allSatisfy { $0.index.serialNumbers.isEmpty })
        #expect(
            try await holders(of: "S-1", in: store) == [
                ExportedRegistration(
                    device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-1")
            ])
        #expect(try await store.statistics() == RegistrationStatistics(devices: 1, registrations: 1, logEntries: 0))
    }

    @Test(arguments: StoreKind.allCases) func aTokenSetAfterThe410TimestampIsKept(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        let before = Date().timeIntervalSince1970 - 60
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        // APNs says the token went invalid a minute ago; the device set it since: keep it.
        #expect(try await store.deleteDevices(pushToken: Self.tokenA, invalidSince: before).isEmpty)
        #expect(try await store.statistics().devices == 1)
        let removed = try await store.deleteDevices(
            pushToken: Self.tokenA, invalidSince: Date().timeIntervalSince1970 + 60)
        #expect(removed.map(\.index.device) == ["dev1"])
        #expect(try await store.statistics().devices == 0)
    }

    @Test(arguments: StoreKind.allCases) func queuedPushesMergePerTokenAndTypeAndSurviveUntilCompleted(kind: StoreKind)
        async throws
    {
        let store = try await kind.make(in: folder)
        let other = "pass.com.example.other"
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-2")
        _ = try await store.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: other, serialNumber: "X-1")
        _ = try await store.register(
            device: "dev2", pushToken: Self.tokenB, passTypeIdentifier: type, serialNumber: "S-3")
        #expect(try await store.pushCursor() == nil)

        let changed = [
            PassReference(passTypeIdentifier: type, serialNumber: "S-1"),
            PassReference(passTypeIdentifier: type, serialNumber: "S-2"),
            PassReference(passTypeIdentifier: other, serialNumber: "X-1"),
            PassReference(passTypeIdentifier: type, serialNumber: "NOBODY"),
        ]
        #expect(try await store.queuePushes(for: changed, advancingCursorTo: 100) == 2)
        #expect(try await store.pushCursor() == 100)
        // A later change of a pass the same token already waits for adds nothing.
        #expect(
            try await store.queuePushes(
                for: [
                    PassReference(passTypeIdentifier: type, serialNumber: "S-2"),
                    PassReference(passTypeIdentifier: type, serialNumber: "S-3"),
                ], advancingCursorTo: 200) == 3)
        // The cursor never moves back.
        #expect(try await store.queuePushes(for: [], advancingCursorTo: 150) == 3)
        #expect(try await store.pushCursor() == 200)

        let pending = try await store.pendingPushes(limit: 10)
        #expect(
            Set(pending.map { "\($0.pushToken.prefix(2)) \($0.passTypeIdentifier)" }) == [
                "ab \(type)", "ab \(other)", "cd \(type)",
            ])
        #expect(try await store.pendingPushes(limit: 1).count == 1)
        // What /metrics reports: the depth, and when the oldest was queued.
        let statistics = try await store.pushQueueStatistics()
        #expect(statistics.pending == 3)
        #expect(statistics.oldestQueuedAt == pending.map(\.queuedAt).min())
        try await store.completePushes(pending.filter { $0.pushToken == Self.tokenA })
        #expect(try await store.pendingPushes(limit: 10).map(\.pushToken) == [Self.tokenB])
        try await store.completePushes(try await store.pendingPushes(limit: 10))
        #expect(try await store.pushQueueStatistics() == PushQueueStatistics(pending: 0, oldestQueuedAt: nil))
    }

    @Test(arguments: StoreKind.allCases) func onlyOnePushRunHoldsTheLock(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        let second = try await kind.make(in: folder)
        let inner: Result<Int, any Error> = try await store.withPushLock {
            do { return .success(try await second.withPushLock { 1 }) } catch { return .failure(error) }
        }
        guard case .failure(let error) = inner else {
            Issue.record("a second push run got the lock while the first held it")
            return
        }
        #expect((error as? RegistrationStoreError)?.code == .pushLockBusy)
        // Released: the next run gets it.
        #expect(try await second.withPushLock { 2 } == 2)
    }

    @Test(arguments: StoreKind.allCases) func exportPagesThroughEveryRegistrationInOrder(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder)
        for device in ["dev2", "dev1"] {
            for serial in ["S-2", "S-1"] {
                _ = try await store.register(
                    device: device, pushToken: device == "dev1" ? Self.tokenA : Self.tokenB, passTypeIdentifier: type,
                    serialNumber: serial)
            }
        }
        let first = try await store.exportRegistrations(after: nil, limit: 3)
        #expect(first.map { "\($0.device) \($0.serialNumber)" } == ["dev1 S-1", "dev1 S-2", "dev2 S-1"])
        #expect(first[0].pushToken == Self.tokenA && first[2].pushToken == Self.tokenB)
        let rest = try await store.exportRegistrations(after: first.last, limit: 3)
        #expect(rest.map { "\($0.device) \($0.serialNumber)" } == ["dev2 S-2"])
        #expect(try await store.exportRegistrations(after: rest.last, limit: 3).isEmpty)
    }

    @Test(arguments: StoreKind.allCases) func logTableKeepsOnlyTheNewestEntries(kind: StoreKind) async throws {
        let store = try await kind.make(in: folder, logLimit: 5)
        try await store.appendLog((1...4).map { "message \($0)" }, receivedAt: 1)
        try await store.appendLog((5...8).map { "message \($0)" }, receivedAt: 2)
        let logs = try await store.recentLogs(limit: 100)
        #expect(logs.map(\.message) == ["message 8", "message 7", "message 6", "message 5", "message 4"])
        #expect(logs.first?.receivedAt == 2)
    }

    @Test(arguments: StoreKind.allCases) func reopeningKeepsEverythingAndMigratesOnce(kind: StoreKind) async throws {
        do {
            let store = try await kind.make(in: folder)
            _ = try await store.register(
                device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
            try await store.appendLog(["hello"], receivedAt: 3)
        }
        let reopened = try await kind.make(in: folder)
        #expect(try await reopened.serialNumbers(device: "dev1", passTypeIdentifier: type) == ["S-1"])
        #expect(try await reopened.recentLogs(limit: 1).map(\.message) == ["hello"])
        let again = try await reopened.register(
            device: "dev1", pushToken: Self.tokenA, passTypeIdentifier: type, serialNumber: "S-1")
        #expect(again.outcome == .unchanged)
    }
}

/// What only the SQLite file has.
@Suite struct SQLiteRegistrationStoreTests {
    let folder = TemporaryDirectory("passforge-store")

    func makeStore() throws -> SQLiteRegistrationStore {
        try SQLiteRegistrationStore(path: folder.file("state/registrations.sqlite"))
    }

    @Test func theFileIsDurableWALWithForeignKeys() async throws {
        let store = try makeStore()
        #expect(try store.writerPragma("journal_mode") == "wal")
        #expect(try store.writerPragma("synchronous") == "2")  // FULL
        #expect(try store.writerPragma("foreign_keys") == "1")
    }

    @Test func theDatabaseRejectsDuplicateRowsItself() throws {
        // The unique constraints, not the code, make duplicates impossible:
        // a second writer (another process) gets a constraint error.
        _ = try makeStore()
        let path = folder.file("state/registrations.sqlite")
        let result = try runProcess(
            "sqlite3",
            [
                path,
                """
                PRAGMA foreign_keys = ON;
                INSERT INTO devices (library_identifier, push_token, created_at, updated_at) VALUES ('d', 't', 0, 0);
                INSERT INTO registrations VALUES (1, 'p', 's', 0);
                INSERT INTO registrations VALUES (1, 'p', 's', 0);
                """,
            ])
        #expect(result.stderr.contains("UNIQUE constraint failed"))
        let orphan = try runProcess(
            "sqlite3", [path, "PRAGMA foreign_keys = ON; INSERT INTO registrations VALUES (99, 'p', 's', 0);"])
        #expect(orphan.stderr.contains("FOREIGN KEY constraint failed"))
        let cascade = try runProcess(
            "sqlite3", [path, "PRAGMA foreign_keys = ON; DELETE FROM devices; SELECT COUNT(*) FROM registrations;"])
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
        #expect(
            try StoreLocation("postgres://u:secret@db/passforge") == .postgres(url: "postgres://u:secret@db/passforge"))
        #expect(throws: RegistrationStoreError.self) { try StoreLocation("sqlite:") }
        #expect(throws: RegistrationStoreError.self) { try StoreLocation("mysql://db/x") }
    }

    @Test func neverPrintsAPassword() throws {
        let location = try StoreLocation("postgresql://user:hunter2@db.example.com:5432/passforge")
        #expect(!location.description.contains("hunter2"))
        #expect(location.description.contains("db.example.com:5432/passforge"))
    }
}
