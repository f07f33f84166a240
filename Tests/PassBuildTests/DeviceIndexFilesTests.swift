import Foundation
import PassBuild
import PassContent
import RegistrationStore
import SQLiteRegistrationStore
import TestSupport
import Testing
import WalletTree

/// The index files of the output tree, over a real build and a real SQLite file.
@Suite struct DeviceIndexFilesTests {
    @Test func aRefreshAfterARebuildFollowsTheNewTags() async throws {
        let built = try IndexedProject(passCount: 3)
        let store = try SQLiteRegistrationStore(path: built.databasePath)
        let files = OutputFolder(directory: built.output).indexFiles
        let type = built.type
        for (device, serials) in [("devA", ["C-0000", "C-0001"]), ("devB", ["C-0002"])] {
            for serial in serials {
                let change = try await store.register(
                    device: device, pushToken: String(repeating: "aa", count: 32), passTypeIdentifier: type,
                    serialNumber: serial)
                try await files.applyAll([(change, try built.buildState())])
            }
        }
        let path = DeviceIndexFiles.relativePath(device: "devA", passTypeIdentifier: type)
        let tagBefore = max(try built.record("C-0000").updateTag, try built.record("C-0001").updateTag)
        #expect(
            built.fileBytes(path).map { String(decoding: $0, as: UTF8.self) }
                == #"{"serialNumbers":["C-0000","C-0001"],"lastUpdated":"\#(tagBefore)"}"#)

        // C-0001 changes, C-0002 is removed from the content.
        built.project.writeList(count: 2, points: { $0 == 1 ? 77 : $0 })
        try built.build()
        let after = try built.buildState()
        let written = try await files.refresh(
            passes: ["\(type)/C-0001", "\(type)/C-0002"], store: store, snapshot: after)
        #expect(written == 2)
        let tagAfter = try built.record("C-0001").updateTag
        #expect(tagAfter > tagBefore)
        #expect(
            built.fileBytes(path).map { String(decoding: $0, as: UTF8.self) }
                == #"{"serialNumbers":["C-0000","C-0001"],"lastUpdated":"\#(tagAfter)"}"#)
        // devB holds only a removed pass: nothing to list, no file.
        #expect(built.fileBytes(DeviceIndexFiles.relativePath(device: "devB", passTypeIdentifier: type)) == nil)
        #expect(
            !FileManager.default.fileExists(
                atPath: "\(built.output)/" + TreeLayout.deviceIndexPath(device: "devB", type: type)))
    }

    /// A tree of the layout before the per-type folders moves to `v1/devices/<type>/<device>`: each index
    /// once, an index written since wins over the old one, a stopped write's temporary file goes, and the
    /// devices' own folders go with their last index. Run again (or after being stopped half-way), it
    /// finishes what is left and changes nothing else.
    @Test func theLegacyLayoutMigratesOnceAndKeepsNewerIndices() async throws {
        let output = TemporaryDirectory("passforge-index-migration")
        let legacy = { (device: String, type: String) in "v1/devices/\(device)/registrations/\(type)" }
        _ = output.write(legacy("d1", "pass.a.b"), "d1-a")
        _ = output.write(legacy("d1", "pass.c.d"), "d1-c")
        _ = output.write(legacy("d2", "pass.a.b"), "d2-old")
        _ = output.write(legacy("d2", "pass.a.b.tmp-12-3"), "half-written")
        _ = output.write(TreeLayout.deviceIndexPath(device: "d2", type: "pass.a.b"), "d2-new")
        // Stopped half-way before: d3's index already moved, its folders still there.
        _ = output.write(TreeLayout.deviceIndexPath(device: "d3", type: "pass.a.b"), "d3-a")
        try FileManager.default.createDirectory(
            atPath: output.file("v1/devices/d3/registrations"), withIntermediateDirectories: true)

        let files = OutputFolder(directory: output.path).indexFiles
        #expect(try await files.migrateLegacyLayout() == 2)
        func text(_ device: String, _ type: String) -> String? {
            output.read(TreeLayout.deviceIndexPath(device: device, type: type)).map {
                String(decoding: $0, as: UTF8.self)
            }
        }
        #expect(text("d1", "pass.a.b") == "d1-a")
        #expect(text("d1", "pass.c.d") == "d1-c")
        #expect(text("d2", "pass.a.b") == "d2-new", "an index written since the old layout wins")
        #expect(text("d3", "pass.a.b") == "d3-a")
        let left = try FileManager.default.contentsOfDirectory(atPath: output.file("v1/devices")).sorted()
        #expect(left == ["pass.a.b", "pass.c.d"], "the devices' own folders are gone: \(left)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output.file("v1/devices/pass.a.b")).sorted() == [
                "d1", "d2", "d3",
            ])
        #expect(try await files.migrateLegacyLayout() == 0)
        #expect(text("d1", "pass.a.b") == "d1-a")
    }

    @Test func anOlderRevisionNeverOverwritesANewerOne() async throws {
        let output = TemporaryDirectory("passforge-index")
        let files = OutputFolder(directory: output.path).indexFiles
        // ItemRecord has no public initializer: a state as the build writes it.
        func record(_ serial: String, _ tag: Int) -> String {
            #""pass.a.b/\#(serial)":{"passTypeIdentifier":"pass.a.b","serialNumber":"\#(serial)","teamIdentifier":"T","updateTag":\#(tag),"etag":"\"x\"","size":1,"fingerprint":"","definitionHash":"","templateName":"t","imagePaths":[],"sourceFile":"","downloadPath":""}"#
        }
        let json =
            #"{"version":1,"lastUpdateTag":20,"builtAt":"","contentFiles":{},"passes":{\#(record("S-1", 10)),\#(record("S-2", 20))}}"#
        let state = try BuildStateDecoding.decode(Array(json.utf8), jobs: 1).state
        let snapshot = state
        let newer = RegistrationChange(
            outcome: .created,
            index: DeviceIndex(device: "d", passTypeIdentifier: "pass.a.b", serialNumbers: ["S-1", "S-2"]), revision: 8)
        let older = RegistrationChange(
            outcome: .created, index: DeviceIndex(device: "d", passTypeIdentifier: "pass.a.b", serialNumbers: ["S-1"]),
            revision: 7)
        try await files.applyAll([(newer, snapshot)])
        try await files.applyAll([(older, snapshot)])
        #expect(
            output.read(TreeLayout.deviceIndexPath(device: "d", type: "pass.a.b")).map {
                String(decoding: $0, as: UTF8.self)
            }
                == #"{"serialNumbers":["S-1","S-2"],"lastUpdated":"20"}"#)

        // A batch: the newest change of each index wins, older than written ones are skipped,
        // an empty index removes the file and the device's folders.
        func change(_ device: String, _ serials: [String], _ revision: Int64) -> (
            change: RegistrationChange, snapshot: BuildState
        ) {
            (
                RegistrationChange(
                    outcome: .created,
                    index: DeviceIndex(device: device, passTypeIdentifier: "pass.a.b", serialNumbers: serials),
                    revision: revision), snapshot
            )
        }
        try await files.applyAll([
            change("e", ["S-1"], 9), change("e", ["S-1", "S-2"], 11), change("e", ["S-2"], 10),
            change("d", ["S-1"], 6), change("f", ["S-1"], 12),
        ])
        #expect(
            output.read(TreeLayout.deviceIndexPath(device: "e", type: "pass.a.b")).map {
                String(decoding: $0, as: UTF8.self)
            }
                == #"{"serialNumbers":["S-1","S-2"],"lastUpdated":"20"}"#)
        #expect(
            output.read(TreeLayout.deviceIndexPath(device: "d", type: "pass.a.b")).map {
                String(decoding: $0, as: UTF8.self)
            }
                == #"{"serialNumbers":["S-1","S-2"],"lastUpdated":"20"}"#)
        try await files.applyAll([change("f", [], 13), change("e", ["S-9"], 14)])
        #expect(
            !FileManager.default.fileExists(
                atPath: output.file(TreeLayout.deviceIndexPath(device: "f", type: "pass.a.b"))))
        #expect(
            !FileManager.default.fileExists(
                atPath: output.file(TreeLayout.deviceIndexPath(device: "e", type: "pass.a.b"))),
            "S-9 is not a built pass: nothing to list")
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: output.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }
}

/// A real project built in process, with a registration database beside it.
private struct IndexedProject {
    let project: ProjectFixture
    /// Where the registrations live: outside the project, so that it survives anything.
    let state = TemporaryDirectory("passforge-index-state")
    var databasePath: String { state.file("registrations.sqlite") }
    var output: String { project.output }
    var type: String { TestPKI.passType }

    init(passCount: Int) throws {
        project = ProjectFixture(passCount: passCount)
        try build()
    }

    func build() throws {
        var settings = BuildSettings(
            contentDirectory: project.directory.file("content"),
            templatesDirectory: project.directory.file("templates"),
            outputDirectory: project.output,
            configuration: try ProjectConfiguration.load(file: project.directory.file("passforge.yml")),
            projectStateDirectory: project.directory.file(".passforge"),
            environment: TestPKI.shared.environment(TestPKI.shared.leaf()))
        settings.jobs = 1
        _ = try PassBuilder(settings: settings).build()
    }

    func buildState() throws -> BuildState { try BuildState.load(from: output) }

    func record(_ serial: String) throws -> BuildState.ItemRecord {
        guard let record = try buildState().passes["\(type)/\(serial)"] else { throw MissingPass(serial: serial) }
        return record
    }

    func fileBytes(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: "\(output)/\(relative)").map { Array($0) }
    }

    struct MissingPass: Error { var serial: String }
}
