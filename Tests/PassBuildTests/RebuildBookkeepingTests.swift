import AtomicFiles
import Foundation
import PassModel
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// The shortcuts a 100,000-pass rebuild takes in its bookkeeping: each must
/// give what the plain way gives.
@Suite struct RebuildBookkeepingTests {
    @Test func keysInThePreviousOrderComeOutAsSortedKeys() {
        let previous = ["a/1", "a/3", "a/5", "b/2", "c/9"]
        func check(_ keys: [String], ordered: [String], added: [String]) {
            let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, 0) })
            #expect(BuildStateEncoding.sortedKeys(of: dictionary, ordered: ordered, added: added) == keys.sorted())
        }
        check(previous, ordered: previous, added: [])
        // New keys before, between and after the old ones; one given twice, one already there.
        check(previous + ["0/0", "a/4", "z/1"], ordered: previous, added: ["a/4", "z/1", "0/0", "a/4", "b/2"])
        // Removed keys, and a key added that is not in the dictionary.
        check(["a/3", "c/9"], ordered: previous, added: ["q/q"])
        // A new key the caller did not name, and an order that is not sorted: sorted all the same.
        check(previous + ["m/1"], ordered: previous, added: [])
        check(previous, ordered: previous.reversed(), added: [])
        check(previous, ordered: [], added: [])
        // Told which keys of the old order are gone, it looks none of the others up.
        let dictionary = Dictionary(uniqueKeysWithValues: (previous.filter { $0 != "a/3" } + ["b/5"]).map { ($0, 0) })
        #expect(
            BuildStateEncoding.sortedKeys(of: dictionary, ordered: previous, removed: ["a/3"], added: ["b/5"])
                == dictionary.keys.sorted())
        // Not told of a removed key: the count gives it away, when the new key is among those added or there is none.
        #expect(
            BuildStateEncoding.sortedKeys(of: dictionary, ordered: previous, removed: [], added: ["b/5"])
                == dictionary.keys.sorted())
        let fewer = Dictionary(uniqueKeysWithValues: previous.dropFirst().map { ($0, 0) })
        #expect(
            BuildStateEncoding.sortedKeys(of: fewer, ordered: previous, removed: [], added: []) == fewer.keys.sorted())
    }

    @Test func contentFileRecordsAreCompletedFromThePreviousOnes() {
        func record(_ hash: String, _ identity: String?) -> BuildState.ContentFileRecord {
            .init(hash: hash, passes: ["pass.t/\(hash)"], stamp: identity)
        }
        let previous = [
            "a.yml": record("a", "1"), "b.yml": record("b", "2"), "c.yml": record("c", "3"), "d.yml": record("d", "4"),
        ]
        // Every previous file still there: b's stamp settled anew, c parsed again, e new.
        var plan = BuildPlan()
        plan.reusedFiles = [("a.yml", "1"), ("b.yml", "9"), ("d.yml", nil)]
        plan.contentFiles = ["c.yml": record("c2", "5"), "e.yml": record("e", "6")]
        plan.completeContentFiles(from: previous)
        #expect(
            plan.contentFiles == [
                "a.yml": record("a", "1"), "b.yml": record("b", "9"), "c.yml": record("c2", "5"),
                "d.yml": record("d", nil), "e.yml": record("e", "6"),
            ])
        #expect(plan.reusedFiles.isEmpty)
        // A previous file gone: it is not carried over.
        plan = BuildPlan()
        plan.reusedFiles = [("a.yml", "1"), ("d.yml", "4")]
        plan.contentFiles = ["c.yml": record("c2", "5")]
        plan.completeContentFiles(from: previous)
        #expect(
            plan.contentFiles == ["a.yml": record("a", "1"), "c.yml": record("c2", "5"), "d.yml": record("d", "4")])
    }

    @Test func pathsSortedInPartsAreSortedPaths() {
        var generator = SystemRandomNumberGenerator()
        let paths = (0..<20_000).map { _ in
            "content/\(["a", "B", "é", "a/b", "a.b"].randomElement(using: &generator)!)\(UInt32.random(in: 0..<50_000, using: &generator)).yml"
        }
        for jobs in [1, 2, 3, 8] { #expect(BuildPlanner.sorted(paths, jobs: jobs) == paths.sorted()) }
        #expect(BuildPlanner.sorted([], jobs: 2) == [])
    }

    @Test func aFingerprintIsTheHashOfItsLabelledParts() {
        var hasher = FingerprintHasher()
        hasher.add("context", "abc")
        hasher.add("", [UInt8](repeating: 7, count: 300))
        hasher.add("images", "")
        var bytes: [UInt8] = []
        for (label, part) in [("context", Array("abc".utf8)), ("", [UInt8](repeating: 7, count: 300)), ("images", [])] {
            bytes += Array(label.utf8) + [0]
            withUnsafeBytes(of: UInt64(part.count).littleEndian) { bytes += $0 }
            bytes += part
        }
        #expect(hasher.finalize() == sha256Hex(bytes))
    }

    @Test func aStampIsSpelledAsItsNumbers() {
        for (size, inode, modified, changed) in [
            (Int64(0), UInt64(0), Int64(0), Int64(0)),
            (1234, 98_765, 1_700_000_000_123_456_789, 1_700_000_000_999_999_999),
            (.max, .max, .min, -1), (-5, 10, 9, 100),
        ] {
            var stamp = FileStamp(path: "/")!
            (stamp.size, stamp.inode, stamp.modified, stamp.changed) = (size, inode, modified, changed)
            #expect(stamp.description == "\(size):\(inode):\(modified):\(changed)")
            #expect(stamp.isSpelled(as: stamp.description))
            for other in [
                "\(size):\(inode):\(modified):\(changed) ", "\(size):\(inode):\(modified):\(changed)0",
                "\(size):\(inode):\(modified):",
                String("x\(size):\(inode):\(modified):\(changed)".dropLast()), "", String(repeating: "9", count: 200),
            ] {
                #expect(!stamp.isSpelled(as: other))
            }
        }
    }

    @Test func passFilesAreFoundInFoldersListedUpFrontAndInOthers() throws {
        let folder = TemporaryDirectory()
        folder.write("v1/passes/pass.a/s1", "x")
        folder.write("v1/passes/pass.a/s 2", "x")
        folder.write("v1/passes/pass.b/s1", "x")
        let presence = PassFilePresence(directory: folder.path, types: ["pass.a": .pass, "pass.missing": .pass])
        #expect(presence.contains(kind: .pass, type: "pass.a", identifier: "s1"))
        #expect(presence.contains(kind: .pass, type: "pass.a", identifier: "s 2"))
        #expect(!presence.contains(kind: .pass, type: "pass.a", identifier: "s3"))
        // Types not listed up front are listed when asked for.
        #expect(presence.contains(kind: .pass, type: "pass.b", identifier: "s1"))
        #expect(!presence.contains(kind: .pass, type: "pass.b", identifier: "s2"))
        #expect(!presence.contains(kind: .pass, type: "pass.missing", identifier: "s1"))
        // A file added after the listing is not seen: the listing is what the build planned with.
        folder.write("v1/passes/pass.a/late", "x")
        #expect(!presence.contains(kind: .pass, type: "pass.a", identifier: "late"))
    }

    @Test func fieldNamesWithEscapesAndStringsWithEscapedQuotesAreRead() throws {
        var state = BuildState()
        state.passes["pass.t/a\"b\\"] = .init(
            typeIdentifier: "pass.t", identifier: "a\"b\\", teamIdentifier: "T", updateTag: 3, etag: "\"e\"", size: 9,
            tokenHash: nil, fingerprint: "f\\\"", definitionHash: "d", templateName: "t", imagePaths: ["x\\"],
            sourceFile: "s",
            downloadPath: "download/q.pkpass", publicDownloadPath: nil)
        let bytes = try state.encoded()
        #expect(try BuildStateDecoding.decode(bytes, jobs: 1).state == state)
        // The same state with every field name of the pass spelled with an escape.
        var text = String(decoding: bytes, as: UTF8.self)
        for name in [
            "passTypeIdentifier", "serialNumber", "teamIdentifier", "updateTag", "etag", "size", "fingerprint",
            "definitionHash",
            "templateName", "imagePaths", "sourceFile", "downloadPath",
        ] {
            text = text.replacingOccurrences(
                of: "\"\(name)\":", with: "\"\\u00\(String(name.utf8.first!, radix: 16))\(name.dropFirst())\":")
        }
        #expect(text != String(decoding: bytes, as: UTF8.self))
        #expect(try BuildStateDecoding.decode(Array(text.utf8), jobs: 1).state == state)
    }

    @Test func aRecordChangedInMemoryIsWrittenFromMemoryAndTheOthersFromTheFile() throws {
        var state = BuildState()
        for serial in ["1", "2", "3"] {
            state.passes["pass.t/\(serial)"] = .init(
                typeIdentifier: "pass.t", identifier: serial, teamIdentifier: "T", updateTag: 1, etag: "\"e\"", size: 1,
                tokenHash: "h", fingerprint: "f", definitionHash: "d", templateName: "t", imagePaths: [],
                sourceFile: "s",
                downloadPath: "download/\(serial).pkpass", publicDownloadPath: nil)
        }
        let folder = TemporaryDirectory()
        try AtomicFileSystem.write(try state.encoded(), to: BuildState.path(in: folder.path))
        var (loaded, file) = try BuildState.loadWithRecordRanges(from: folder.path, jobs: 1)
        loaded.passes["pass.t/2"]!.tokenPath = "by-token/pass.t/2.x"
        loaded.passes["pass.t/4"] = loaded.passes["pass.t/1"]!
        loaded.passes["pass.t/4"]!.identifier = "4"
        var out: [UInt8] = []
        try BuildStateEncoding.write(loaded, rewritten: ["pass.t/2"], previous: file, jobs: 2) { out += $0 }
        #expect(out == (try loaded.encoded()))
        // Not named as rewritten, a changed record keeps the bytes it had: which is why the build names them.
        out = []
        try BuildStateEncoding.write(loaded, previous: file, jobs: 2) { out += $0 }
        #expect(out != (try loaded.encoded()))
    }
}
