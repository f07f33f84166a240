import Foundation
import TestSupport
import Testing
import WalletTree

/// Where the devices' lists live: index files in per-type folders (migrated from the older
/// per-device folders by `serve` at start), or, with `--device-lists store`, the registration
/// store shared by several servers.
@Suite(.serialized) struct DeviceListsTests {
    /// A tree an older passforge wrote (`v1/devices/<device>/registrations/<type>`): `serve` moves its
    /// index to `v1/devices/<type>/<device>` at start, and the device's list still answers, from
    /// `serve` and from nginx and Caddy running the shipped configs.
    @Test func aTreeOfTheOlderLayoutKeepsAnsweringAfterServeStarts() async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let (type, device) = (built.type, "legacydevice01")
        let first = try await ServerProcess(built)
        let registered = try await Client(base: first.base).register(
            device, type, "C-0000", token: try await built.token("C-0000"),
            pushToken: hexToken("ab"))
        #expect(registered.status == 201)
        #expect(await first.stop() == 0)
        let index = TreeLayout.deviceIndexPath(device: device, type: type)
        let legacyFolder = "\(built.output)/v1/devices/\(device)/registrations"
        try FileManager.default.createDirectory(atPath: legacyFolder, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: "\(built.output)/\(index)", toPath: "\(legacyFolder)/\(type)")
        let expected = try #require(built.fileBytes("v1/devices/\(device)/registrations/\(type)"))

        let second = try await ServerProcess(built)
        #expect(built.fileBytes(index) == expected)
        #expect(!FileManager.default.fileExists(atPath: "\(built.output)/v1/devices/\(device)"))
        #expect((second.stdout.get() + second.stderr.get()).contains("moved 1 device index file to"))
        let nginx = try await StaticHost(.nginx, root: built.output, upstreamPort: second.port)
        let caddy = try await StaticHost(.caddy, root: built.output, upstreamPort: second.port)
        for base in [second.base, nginx.base, caddy.base] {
            let answer = try await Client(base: base).serials(device, type)
            #expect(answer.status == 200, "\(base)")
            #expect(answer.json?["serialNumbers"] as? [String] == ["C-0000"], "\(base): \(answer.text)")
            #expect(try await Client(base: base).serials("unknowndevice", type).status == 204, "\(base)")
        }
        await nginx.stop()
        await caddy.stop()
        // Started again: nothing left to move, the list unchanged.
        #expect(await second.stop() == 0)
        let third = try await ServerProcess(built)
        #expect(!(third.stdout.get() + third.stderr.get()).contains("moved"))
        #expect(built.fileBytes(index) == expected)
        #expect(await third.stop() == 0)
    }

    /// Two servers on one PostgreSQL with `--device-lists store` (the tree in a bucket): no index
    /// file is written, and a registration on either server is in the device's list on both at
    /// once: the other server's very next read lists it (no wait, no retry), so the 1 s goal holds by
    /// construction. Not timed here: the elapsed time under a loaded test run measures the machine.
    @Test func twoServersAnswerTheListsFromTheStore() async throws {
        let database = try PostgresTestEnvironment.freshDatabase(prefix: "lists")
        let built = try await BuiltProject.make(passCount: 2)
        built.environment["PASSFORGE_DATABASE_URL"] = database
        let servers = [
            try await ServerProcess(built, arguments: ["--device-lists", "store"]),
            try await ServerProcess(built, arguments: ["--device-lists", "store"]),
        ]
        let clients = servers.map { Client(base: $0.base) }
        let type = built.type
        for (number, serial) in ["C-0000", "C-0001"].enumerated() {
            let device = "storedevice\(number)"
            let (writer, reader) = (clients[number], clients[1 - number])
            #expect(
                try await writer.register(
                    device, type, serial, token: try await built.token(serial), pushToken: hexToken("cd")
                ).status == 201)
            let answer = try await reader.serials(device, type)
            #expect(answer.json?["serialNumbers"] as? [String] == [serial], "\(answer.status) \(answer.text)")
            #expect(try await writer.serials(device, type).json?["serialNumbers"] as? [String] == [serial])
        }
        #expect(
            !FileManager.default.fileExists(atPath: "\(built.output)/v1/devices"),
            "--device-lists store writes no index file")
        for server in servers { #expect(await server.stop() == 0) }
    }

    /// A name that is no source is refused before the server starts, naming the flag.
    @Test func anUnknownSourceIsRefused() async throws {
        let built = try await BuiltProject.make(passCount: 1)
        let result = try await runProcessWithoutBlocking(
            passforgeExecutable(), ["serve", "--device-lists", "bucket"],
            directory: built.project.root)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--device-lists is \"bucket\""), "\(result.stderr)")
    }
}
