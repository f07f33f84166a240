import AtomicFiles
import Foundation
import PassContent
import PassModel
import PassPackage
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// The pieces that make a full build fast: per-template caches, the state
/// encoded on every core, and the parallel application of a journal.
@Suite struct BuildPipelineTests {
    static let secret = "pipeline-token-secret-0123456789"

    func settings(_ project: ProjectFixture, jobs: Int = 2) throws -> BuildSettings {
        try project.buildSettings(secret: Self.secret, jobs: jobs)
    }

    /// The files of the pass at `path` in the output tree, by name.
    func entries(_ project: ProjectFixture, _ path: String) throws -> [String: [UInt8]] {
        let bytes = try #require(project.directory.read("output/\(path)"))
        return Dictionary(uniqueKeysWithValues: try ZipArchive.read(bytes).map { ($0.name, $0.bytes) })
    }

    /// More types than a worker keeps staged folders open for (four a type with public download links):
    /// every pass lands under each of its names, the first build moving whole folders, the next one files.
    @Test func manyTypesAreStagedAndCommitted() throws {
        let project = ProjectFixture(passCount: 0)
        let types = (0..<(ParallelPackager.Worker.openTreeFolders / 4 + 2)).map { "pass.com.example.t\($0)" }
        var yaml = "template: card\ndefaults: { download: public, data: { name: x, points: 0 } }\npasses:\n"
        for (index, type) in types.enumerated() {
            for serial in ["A", "B"] {
                yaml += "  - { serialNumber: \(serial)\(index), pass: { passTypeIdentifier: \(type) } }\n"
            }
        }
        project.directory.write("content/many.yml", yaml)
        // The development chain, which has a certificate for every type.
        let settings = try BuildSettings(
            projectFolder: project.root, environment: ["PASSFORGE_TOKEN_SECRET": Self.secret], jobs: 1)
        for round in 0..<2 {
            if round == 1 {
                project.directory.write(
                    "content/many.yml", yaml.replacingOccurrences(of: "points: 0", with: "points: 1"))
            }
            let report = try PassBuilder(settings: settings).build()
            #expect(report.built.count == types.count * 2, "round \(round)")
            let state = try BuildState.load(from: project.output)
            for record in state.passes.values {
                let bytes = try #require(project.directory.read("output/\(record.path)"), "\(record.key)")
                for name in record.files {
                    #expect(project.directory.read("output/\(name)") == bytes, "round \(round): \(name)")
                }
                #expect(record.publicDownloadPath != nil && record.tokenPath != nil)
            }
        }
        #expect(!AtomicFileSystem.exists("\(project.output)/.passforge/staging"))
    }

    /// On tmpfs a worker makes each file in place in the staged tree (`OpenFolder.isInMemory`) instead of
    /// in its own folder: the build's tree is the same, first build and rebuild.
    @Test(.enabled(if: fileSystemType(of: "/dev/shm") == "tmpfs", "/dev/shm is not a tmpfs here"))
    func aBuildOnTmpfsMakesFilesInPlace() throws {
        let project = ProjectFixture(passCount: 0, under: "/dev/shm")
        #expect(try OpenFolder(project.root).isInMemory)
        project.writeList(count: 40)
        for round in 0..<2 {
            if round == 1 { project.writeList(count: 40, points: { $0 + 1 }) }
            let report = try PassBuilder(settings: try settings(project)).build()
            #expect(report.built.count == 40, "round \(round)")
            for record in try BuildState.load(from: project.output).passes.values {
                let bytes = try #require(project.directory.read("output/\(record.path)"))
                for name in record.files {
                    #expect(project.directory.read("output/\(name)") == bytes, "round \(round): \(name)")
                }
            }
        }
        #expect(!AtomicFileSystem.exists("\(project.output)/.passforge/staging"))
    }

    @Test func aChangedTemplateImageReachesEveryPassAndItsManifest() throws {
        let project = ProjectFixture(passCount: 3)
        let settings = try settings(project)
        _ = try PassBuilder(settings: settings).build()
        let newIcon = PNGFactory.png(width: 29, height: 29, rgb: (10, 220, 90))
        _ = project.directory.write("templates/card/icon.png", bytes: newIcon)
        let report = try PassBuilder(settings: settings).build()
        #expect(report.built.count == 3)
        for record in try BuildState.load(from: project.output).passes.values {
            let files = try entries(project, record.path)
            #expect(files["icon.png"] == newIcon)
            let manifest = try Manifest(jsonBytes: files["manifest.json"]!)
            #expect(manifest.hashes["icon.png"] == Manifest.sha1Hex(newIcon))
            #expect(manifest.hashes["logo.png"] == Manifest.sha1Hex(files["logo.png"]!))
        }
    }

    @Test func everyNameOfABuiltPassIsOneFileDatedWithTheUpdateTag() throws {
        let project = ProjectFixture(passCount: 6)
        let report = try PassBuilder(settings: try settings(project)).build()
        let tag = try #require(report.updateTag)
        let state = try BuildState.load(from: project.output)
        #expect(state.passes.count == 6)
        for record in state.passes.values {
            let identities = record.files.map { FileStamp(path: "\(project.output)/\($0)")! }
            #expect(Set(identities.map(\.inode)).count == 1)
            for identity in identities {
                #expect(Int64(identity.modifiedSeconds) * 1000 + Int64(identity.modifiedNanoseconds / 1_000_000) == tag)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: "\(project.output)/.passforge/staging"))
    }

    @Test func theStateEncodedOnEveryCoreIsTheStateItself() throws {
        let project = ProjectFixture(passCount: 5)
        _ = try PassBuilder(settings: try settings(project)).build()
        var state = try BuildState.load(from: project.output)
        state.removedPasses["pass.t/gone"] = .init(
            typeIdentifier: "pass.t", identifier: "gone", tokenHash: "h", removedTag: 7,
            files: ["download/x.pkpass"])
        #expect(BuildStateEncoding.encode(state, jobs: 3) == (try state.encoded()))
        // Enough records for several batches encoded on every core, in key order.
        let some = state.passes.values.first!
        for number in 0..<(BuildStateEncoding.encodingBatch * 2 + 7) {
            var record = some
            record.identifier = "S-\(number)"
            record.size = number
            state.passes[record.key] = record
        }
        #expect(BuildStateEncoding.encode(state, jobs: 3) == (try state.encoded()))
        #expect(BuildStateEncoding.encode(BuildState(), jobs: 2) == (try BuildState().encoded()))
    }

    @Test func aJournalKilledBetweenItsLinksAndItsMovesIsFinished() throws {
        let folder = TemporaryDirectory()
        let tree = OutputTree(directory: folder.path)
        try tree.prepareStaging()
        let a = try tree.stage([1], name: "a")
        let b = try tree.stage([2], name: "b")
        let stagedState = try tree.stage(try BuildState().encoded(), name: "state.json")
        let journal = OutputTree.Journal(
            operations: [
                .init(kind: .link, path: "download/a.pkpass", source: a),
                .init(kind: .link, path: "download/b.pkpass", source: b),
                .init(kind: .move, path: "v1/passes/t/a", source: a),
                .init(kind: .move, path: "v1/passes/t/b", source: b),
            ],
            stagedState: stagedState, stagedDownloadsList: try tree.stage(Array("x\n".utf8), name: "downloads.csv"))
        // The links and one move were made before the process died.
        try AtomicFileSystem.hardLink("\(folder.path)/\(a)", as: "\(folder.path)/download/a.pkpass")
        try AtomicFileSystem.hardLink("\(folder.path)/\(b)", as: "\(folder.path)/download/b.pkpass")
        try AtomicFileSystem.createDirectory("\(folder.path)/v1/passes/t")
        try AtomicFileSystem.rename("\(folder.path)/\(a)", to: "\(folder.path)/v1/passes/t/a")
        try AtomicFileSystem.write(journal.json.serialized(), to: tree.journalPath)
        #expect(try tree.rollForward())
        #expect(folder.read("v1/passes/t/a") == [1])
        #expect(folder.read("v1/passes/t/b") == [2])
        #expect(folder.read("download/a.pkpass") == [1])
        #expect(folder.read("download/b.pkpass") == [2])
        #expect(
            FileStamp(path: "\(folder.path)/v1/passes/t/b")?.inode
                == FileStamp(path: "\(folder.path)/download/b.pkpass")?.inode)
    }
}
