import Crypto
import Foundation
import MockDeviceCheck
import PassBuild
import TestSupport
import Testing
import WalletTree

/// Schemathesis against the real `passforge serve` on a tree built by the real
/// `passforge build`, on both stores (scripts/fuzz-api.py: every Schemathesis
/// check, stateful register → serials → unregister, no rejected request
/// changing the store or the device indices, healthy afterwards). A bounded,
/// seeded run; `make fuzz` runs a long one.
@Suite(.serialized) struct FuzzAPITests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test(arguments: Backend.allCases) func schemathesisFindsNothing(backend: Backend) async throws {
        let venv = try await runProcessWithoutBlocking("\(Self.repository)/scripts/test-venv.sh", [])
        guard venv.status == 0 else { throw HarnessError("scripts/test-venv.sh failed: \(venv.output)") }
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // The offer claim call too, with the mock of Apple's DeviceCheck behind the server.
        try await DeviceCheckRig.with { rig in
            // The order calls too, on an order of the build.
            let built = try await BuiltProject.make(passCount: 2, orders: ["O-1001"])
            let files = built.project.directory
            files.write(
                "passforge.yml",
                (try String(contentsOfFile: files.file("passforge.yml"), encoding: .utf8)) + """

                    deviceCheck: { teamIdentifier: \(DeviceCheckRig.team), keyIdentifier: \(DeviceCheckRig.keyIdentifier), baseURL: "\(rig.server.baseURL)" }
                    offers:
                      welcome: { bit: 0 }

                    """)
            files.write(
                "content/cards.yml",
                "offer: welcome\n" + (try String(contentsOfFile: files.file("content/cards.yml"), encoding: .utf8)))
            files.write("AuthKey.p8", rig.key.pemRepresentation)
            built.environment["PASSFORGE_DEVICECHECK_KEY"] = files.file("AuthKey.p8")
            built.environment["PASSFORGE_DEVICECHECK_CA_CERTIFICATE"] = TestPKI.shared.root
            try await built.build()
            try backend.configure(built)
            let server = try await ServerProcess(built, arguments: ["--registration-limit", "0"])
            let record = try built.record("C-0000")
            let database = built.environment["PASSFORGE_DATABASE_URL"] ?? built.databasePath
            let result = try await runProcessWithoutBlocking(
                python,
                [
                    "\(Self.repository)/scripts/fuzz-api.py", "--url", server.base, "--token",
                    try await built.token("C-0000"),
                    "--type", built.type, "--serial", "C-0000", "--download", record.downloadPath, "--offer", "welcome",
                    "--order-type", built.orderType, "--order", "O-1001", "--order-token",
                    try await built.orderToken("O-1001"),
                    "--output", built.output, "--database", database, "--examples", "5", "--seed", "14",
                ])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.stdout.contains("failures 0"), "\(result.output)")
            #expect(result.stdout.contains("healthy afterwards yes"))
            #expect(
                rig.server.requests.contains { $0.path == "/v1/query_two_bits" },
                "the claim call was fuzzed with Apple behind it")
            #expect(
                (server.stdout.get() + server.stderr.get()).contains("GET /v1/orders/\(built.orderType)/O-1001 200"),
                "the order GET was fuzzed past its 401")
            #expect(await server.stop() == 0)
            #expect(
                !server.stderr.get().contains(" error passforge"),
                "the fuzz run made the server log an error: \(server.stderr.get())")
        }
    }
}
