import Foundation
import NIOHTTP1
import TestSupport
import Testing
import WalletTree

/// nginx and Caddy running the shipped configs in front of `passforge serve --device-lists store`, switched
/// by their one setting (nginx's `$passforge_device_lists store`, Caddy's `PASSFORGE_DEVICE_LISTS=store`):
/// the devices' lists come from passforge serve, never from a file in the tree.
@Suite(.serialized) struct StaticHostStoreListsTests {
    @Test(arguments: [StaticHost.Server.nginx, .caddy])
    func theListsComeFromServeInStoreMode(server: StaticHost.Server) async throws {
        let built = try await BuiltProject.make(passCount: 2)
        let serve = try await ServerProcess(built, arguments: ["--device-lists", "store"])
        defer { serve.terminate() }
        let host = try await StaticHost(server, root: built.output, upstreamPort: serve.port, deviceLists: "store")
        defer { host.terminate() }
        let client = Client(base: host.base)
        let (type, device) = (built.type, "storelistdevice1")
        let token = try await built.token("C-0000")
        let registered = try await client.register(device, type, "C-0000", token: token, pushToken: hexToken("ef"))
        #expect(registered.status == 201, "\(server): \(registered.text)")
        #expect(
            !FileManager.default.fileExists(atPath: "\(built.output)/\(TreeLayout.devicesFolder)"),
            "store mode wrote an index file")

        // A file left from files mode is not what answers: the store is.
        built.project.directory.write(
            "output/\(TreeLayout.deviceIndexPath(device: device, type: type))",
            #"{"serialNumbers":["STALE-FILE"],"lastUpdated":"1"}"#)
        let list = try await client.serials(device, type)
        #expect(list.status == 200, "\(server): \(list.text)")
        #expect(list.json?["serialNumbers"] as? [String] == ["C-0000"], "\(server): \(list.text)")
        // Filtered by passesUpdatedSince, which no file can do.
        let tag = try built.record("C-0000").updateTag
        let since = try await client.serials(device, type, since: String(tag - 1))
        #expect(since.json?["serialNumbers"] as? [String] == ["C-0000"], "\(server): \(since.text)")
        #expect(try await client.serials(device, type, since: String(tag)).status == 204, "\(server)")
        #expect(try await client.serials("unknownstoredevice", type).status == 204, "\(server)")
        let post = try await client.send(.POST, "/v1/devices/\(device)/registrations/\(type)", body: Array("x".utf8))
        #expect(post.status == 405, "\(server)")

        // The same config in files mode answers that file: the setting is what switches.
        let files = try await StaticHost(server, root: built.output, upstreamPort: serve.port)
        defer { files.terminate() }
        let fromFile = try await Client(base: files.base).serials(device, type)
        #expect(fromFile.json?["serialNumbers"] as? [String] == ["STALE-FILE"], "\(server): \(fromFile.text)")
    }
}
