import AtomicFiles
import Foundation
import PassContent
import PassModel
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// A build state's records kept small in memory (their fields in one shared
/// object, their hashes as bytes): each must read, change, compare and
/// encode as the plain fields it stands for.
@Suite struct CompactStateTests {
    static let hex = "5dc01fd954a633e11ffebf4af7faa2bb509d8d8d69d474fd14351f35223cb6bf"

    @Test func aDigestGivesBackItsTextWhateverTheText() {
        let texts = [
            Self.hex, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            String(repeating: "f", count: 64),
            "\"aa4110bb00abf38d2ec147a701a97bdf\"", "\"00000000000000000000000000000000\"",
            // Not packed: upper case, a digit too many or too few, quotes missing, not hex, empty, not ASCII.
            Self.hex.uppercased(), Self.hex + "0", String(Self.hex.dropLast()), "aa4110bb00abf38d2ec147a701a97bdf",
            "\"aa4110bb00abf38d2ec147a701a97bdg\"", "\"aa4110bb00abf38d2ec147a701a97bdf'", "", "\"e\"", "f\\\"",
            String(Self.hex.dropLast()) + "é", String(repeating: "g", count: 64),
            "\"" + String(repeating: "é", count: 16) + "\"",
        ]
        for text in texts {
            let digest = PackedDigest(text)
            #expect(digest.text == text)
            #expect(digest.withUTF8 { Array($0) } == Array(text.utf8))
            #expect(Array(text.utf8).withUnsafeBufferPointer { PackedDigest(utf8: $0) } == digest)
        }
        #expect(PackedDigest(Self.hex).isPacked)
        #expect(PackedDigest("\"aa4110bb00abf38d2ec147a701a97bdf\"").isPacked)
        #expect(!PackedDigest(Self.hex.uppercased()).isPacked)
        #expect(!PackedDigest("").isPacked)
        // Equal exactly when the texts are.
        for first in texts {
            for second in texts { #expect((PackedDigest(first) == PackedDigest(second)) == (first == second)) }
        }
    }

    func record(_ serial: String) -> BuildState.ItemRecord {
        .init(
            typeIdentifier: "pass.t", identifier: serial, teamIdentifier: "T", updateTag: 5,
            etag: "\"aa4110bb00abf38d2ec147a701a97bdf\"",
            size: 10, tokenHash: Self.hex, fingerprint: Self.hex, definitionHash: "d", templateName: "card",
            imagePaths: ["a.png"],
            sourceFile: "content/x.yml", downloadPath: "download/x.pkpass", publicDownloadPath: nil,
            tokenPath: "by-token/pass.t/\(serial).tok")
    }

    /// The state writer's own record encoder gives the bytes of the record's JSON, with and without
    /// each optional key, and with strings that need escaping.
    @Test func aRecordIsEncodedAsItsJSON() throws {
        var plain = BuildState.ItemRecord(
            typeIdentifier: "pass.x", identifier: "A-1", teamIdentifier: "ABCDE12345", updateTag: 1_700_000_000_123,
            etag: "\"\(Self.hex)\"",
            size: 12345, fingerprint: Self.hex, definitionHash: Self.hex, templateName: "card \"gold\"", imagePaths: [],
            sourceFile: "content/a\\b\n.yml", downloadPath: "download/CAP.pkpass")
        var full = plain
        full.imagePaths = ["images/a.png", "images/\u{7}b.png"]
        full.tokenHash = Self.hex
        full.publicDownloadPath = "download/pass.x/A-1.pkpass"
        full.tokenPath = "by-token/pass.x/A-1.0123456789abcdef"
        full.offer = "launch"
        full.kind = .order
        plain.size = 0
        for record in [plain, full] {
            // Foundation's Codable, the oracle, checks the encoding in WalletTreeTests; here, the record reads back.
            var state = BuildState()
            state.passes[record.key] = record
            #expect(
                try BuildStateDecoding.decode(BuildStateEncoding.encode(state, jobs: 1), jobs: 1).state == state,
                "\(String(decoding: record.encodedJSON(), as: UTF8.self))")
        }
    }

    @Test func aChangedCopyOfARecordLeavesTheOriginalAsItWas() {
        let original = record("1")
        var copy = original
        #expect(copy == original)
        copy.fingerprint = String(repeating: "0", count: 64)
        copy.etag = "\"e\""
        copy.tokenHash = nil
        copy.tokenPath = nil
        copy.imagePaths.append("b.png")
        #expect(original == record("1"))
        #expect(original.fingerprint == Self.hex && original.etag == "\"aa4110bb00abf38d2ec147a701a97bdf\"")
        #expect(
            original.tokenHash == Self.hex && original.tokenPath == "by-token/pass.t/1.tok"
                && original.imagePaths == ["a.png"])
        #expect(copy.fingerprint == String(repeating: "0", count: 64) && copy.etag == "\"e\"" && copy.tokenHash == nil)
        #expect(copy.tokenPath == nil && copy.imagePaths == ["a.png", "b.png"])
        #expect(copy != original)
        // Changed back field by field, it is equal again though it has fields of its own.
        copy.fingerprint = Self.hex
        copy.etag = "\"aa4110bb00abf38d2ec147a701a97bdf\""
        copy.tokenHash = Self.hex
        copy.tokenPath = "by-token/pass.t/1.tok"
        copy.imagePaths = ["a.png"]
        #expect(copy == original)
        // Every field takes part in equality.
        let changes: [(inout BuildState.ItemRecord) -> Void] = [
            { $0.typeIdentifier = "x" }, { $0.identifier = "x" }, { $0.teamIdentifier = "x" }, { $0.updateTag = 6 },
            { $0.etag = "x" }, { $0.size = 11 }, { $0.tokenHash = "x" }, { $0.fingerprint = "x" },
            { $0.definitionHash = "x" },
            { $0.templateName = "x" }, { $0.imagePaths = [] }, { $0.sourceFile = "x" }, { $0.downloadPath = "x" },
            { $0.publicDownloadPath = "x" }, { $0.tokenPath = nil },
        ]
        for change in changes {
            var changed = original
            change(&changed)
            #expect(changed != original)
        }
        var file = BuildState.ContentFileRecord(hash: Self.hex, passes: ["pass.t/1"], stamp: "1:2:3:4")
        let kept = file
        file.stamp = nil
        file.hash = "abc"
        file.passes.append("pass.t/2")
        file.entries = "e"
        #expect(kept == BuildState.ContentFileRecord(hash: Self.hex, passes: ["pass.t/1"], stamp: "1:2:3:4"))
        #expect(
            file
                == BuildState.ContentFileRecord(
                    hash: "abc", passes: ["pass.t/1", "pass.t/2"], stamp: nil, entries: "e"))
        #expect(file != kept)
    }
}

/// The scanner's fast reading of a string without escapes, eight bytes at a time.
@Suite struct JSONScannerStringTests {
    /// Every length around the eight-byte steps, with the closing quote, a backslash or the end of the bytes at every place.
    @Test func aPlainStringIsFoundWhereverItsQuoteOrABackslashIs() throws {
        for length in 0...40 {
            let body = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            // Closed: read whole, and the scanner is after the quote.
            var bytes = [UInt8(ascii: "\"")] + body + [UInt8(ascii: "\"")]
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                #expect(scanner.plainString().map(Array.init) == body)
                #expect(throws: Never.self) { try scanner.finish() }
            }
            // A backslash at any place: not plain, and the scanner does not move; `string` reads it.
            for place in 0..<length {
                var escaped = body
                escaped.insert(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")], at: place)
                bytes = [UInt8(ascii: "\"")] + escaped + [UInt8(ascii: "\"")]
                try bytes.withUnsafeBufferPointer { buffer in
                    var scanner = JSONScanner(buffer)
                    #expect(scanner.plainString() == nil)
                    var expected = body
                    expected.insert(0x0A, at: place)
                    #expect(Array(try scanner.string().utf8) == expected)
                    try scanner.finish()
                }
            }
            // No closing quote: nothing.
            bytes = [UInt8(ascii: "\"")] + body
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                #expect(scanner.plainString() == nil)
            }
        }
        // A quote in the bytes after the scanned range is not taken for the closing one.
        let bytes = Array(#""abcdefghijklmnop"xyz""#.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, range: 0..<12)
            #expect(scanner.plainString() == nil)
        }
    }

    /// Values skipped whole: a string ends at the first quote no backslash escapes, wherever the escapes fall.
    @Test func skippedValuesEndWhereTheirStringsEnd() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "\"", "\\", "\\\"", "/", "é", "\n", "\u{1F600}", "xxxxxxxx", "\"\""]
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            let value = String(decoding: JSONValue.string(text).serialized(), as: UTF8.self)
            let array = "[\(value),{\"q\":\(value)},-1.5e3,null]"
            let bytes = Array(
                "{\"k\":\(value),\"z\":\(array),\"\(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\":true}"
                    .utf8)
            try bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                let members = try scanner.members()
                try scanner.finish()
                #expect(members.map(\.key) == ["k", "z", text])
                #expect(
                    members.count == 3 && Array(bytes[members[0].range]) == Array(value.utf8)
                        && Array(bytes[members[1].range]) == Array(array.utf8))
                var string = JSONScanner(buffer, range: members[0].range)
                #expect(try string.string() == text)
            }
        }
        // Unclosed: refused.
        for unclosed in [#"{"k":"abc}"#, #"{"k":"abc\"}"#, #"{"k":"abcdefghijklmnopq"#] {
            Array(unclosed.utf8).withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                #expect(throws: BuildStateDecoding.Failure.self) { try scanner.members() }
            }
        }
    }

    @Test func aDigestIsReadAsTheStringItIs() throws {
        let texts = [
            #""5dc01fd954a633e11ffebf4af7faa2bb509d8d8d69d474fd14351f35223cb6bf""#,
            #""\"aa4110bb00abf38d2ec147a701a97bdf\"""#,
            #""\"aa4110bb00abf38d2ec147a701a97bdF\"""#, #""\"aa4110bb00abf38d2ec147a701a97bd\"x""#, #""\"e\"""#, #""""#,
            #""\u0035dc01fd954a633e11ffebf4af7faa2bb509d8d8d69d474fd14351f35223cb6bf""#,
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            try bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                let digest = try scanner.digest()
                try scanner.finish()
                var plain = JSONScanner(buffer)
                #expect(digest.text == (try plain.string()))
            }
        }
    }
}

@Suite struct SharedPassKeyTests {
    /// Where a string's bytes are: equal addresses mean one string.
    func address(_ text: String) -> UnsafeRawPointer? {
        text.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }

    @Test func aContentFilesPassesAreTheStringsOfThePassRecordsKeys() throws {
        var state = BuildState()
        let serials = (0..<40).map { "serial-number-\($0 * 7 % 40)" }
        for serial in serials {
            state.passes["pass.com.example.t/\(serial)"] = .init(
                typeIdentifier: "pass.com.example.t", identifier: serial, teamIdentifier: "T", updateTag: 1,
                etag: "\"e\"", size: 1,
                fingerprint: "f", definitionHash: "d", templateName: "t", imagePaths: [], sourceFile: "s",
                downloadPath: "d")
        }
        let keys = state.passes.keys.sorted()
        // In order, backwards, shuffled, with keys no pass has, and one with an escape in the file.
        state.contentFiles["a.yml"] = .init(hash: "h", passes: Array(keys[0..<10]))
        state.contentFiles["b.yml"] = .init(hash: "h", passes: keys[10..<20].reversed())
        state.contentFiles["c.yml"] = .init(
            hash: "h",
            passes: [keys[25], keys[21], "pass.com.example.t/none", keys[39], keys[0], "pass.t/é\"q", "", keys[22]])
        state.contentFiles["d.yml"] = .init(hash: "h", passes: [])
        var bytes = try state.encoded()
        // The same key spelled with an escaped slash: read as the same key.
        var text = String(decoding: bytes, as: UTF8.self)
        let escaped = keys[39].replacingOccurrences(of: "/", with: "\\/")
        text = text.replacingOccurrences(
            of: "\"passes\":[\"\(keys[25])\",\"\(keys[21])\",\"pass.com.example.t/none\",\"\(keys[39])\"",
            with: "\"passes\":[\"\(keys[25])\",\"\(keys[21])\",\"pass.com.example.t/none\",\"\(escaped)\"")
        #expect(text != String(decoding: bytes, as: UTF8.self))
        bytes = Array(text.utf8)
        for jobs in [1, 2] {
            let decoded = try BuildStateDecoding.decode(bytes, jobs: jobs).state
            #expect(decoded == state)
            var shared = 0
            for (path, file) in decoded.contentFiles {
                for key in file.passes {
                    guard let index = decoded.passes.index(forKey: key) else { continue }
                    let recordKey = decoded.passes.keys[index]
                    if address(recordKey) == address(key) {
                        shared += 1
                    } else {
                        #expect(path == "c.yml" && key == keys[39])
                    }
                }
            }
            // Every key of a pass but the one read with an escape: ten, ten, and four of c.yml's five.
            #expect(shared == 10 + 10 + 4)
        }
    }
}

@Suite struct UnchangedCheckMemoTests {
    /// A thread checking many records keeps the last one's template and identity: the answers are those of the plain check.
    @Test func checksWithAMemoAnswerAsChecksWithout() throws {
        let project = ProjectFixture(passCount: 4)
        let settings = try project.buildSettings(secret: "memo-token-secret-0123456789")
        _ = try PassBuilder(settings: settings).build()
        let state = try BuildState.load(from: project.output)
        let evaluator = PassEvaluator(
            settings: settings, state: state,
            secret: try TokenSecret.resolve(
                environment: settings.environment, projectStateDirectory: settings.projectStateDirectory),
            identities: SigningIdentities(settings: settings),
            templates: TemplateCache(loader: TemplateLoader(directory: settings.templatesDirectory)), product: .job)
        var records = state.passes.keys.sorted().map { state.passes[$0]! }
        #expect(records.count == 4)
        var changed = records[1]
        changed.fingerprint = String(repeating: "0", count: 64)
        var otherTemplate = records[2]
        otherTemplate.templateName = "no-such-template"
        var otherType = records[2]
        otherType.typeIdentifier = "pass.com.example.other"
        var otherTeam = records[3]
        otherTeam.teamIdentifier = "ZZZZZZZZZZ"
        records += [changed, records[0], otherTemplate, records[2], otherType, records[3], otherTeam, records[3]]
        var memo = PassEvaluator.UnchangedCheckMemo()
        let withMemo = records.map { evaluator.isUnchanged($0, memo: &memo) }
        let without = records.map { evaluator.isUnchanged($0) }
        #expect(withMemo == without)
        // (The test identity signs for any team: another team's record is unchanged all the same.)
        #expect(without == [true, true, true, true, false, true, false, true, false, true, true, true])
    }
}

@Suite struct MappedStateTests {
    @Test func aMappedFileHasTheBytesARead() throws {
        let folder = TemporaryDirectory()
        for (name, bytes) in [
            ("empty", [UInt8]()), ("one", [7]), ("pages", (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
        ] {
            try AtomicFileSystem.write(bytes, to: "\(folder.path)/\(name)")
            guard let file = RegularFile(openingForReading: "\(folder.path)/\(name)"), let mapping = MappedFile(file)
            else {
                Issue.record("cannot open or map \(name)")
                continue
            }
            #expect(mapping.withBytes { Array($0) } == bytes)
            #expect(file.readAll() == bytes)
        }
    }

    /// The build maps the state; other readers read it: the same state either way.
    @Test func aMappedStateIsTheStateRead() throws {
        var state = BuildState()
        state.lastUpdateTag = 9
        for serial in ["1", "2"] {
            state.passes["pass.t/\(serial)"] = .init(
                typeIdentifier: "pass.t", identifier: serial, teamIdentifier: "T", updateTag: 1, etag: "\"e\"", size: 1,
                fingerprint: CompactStateTests.hex, definitionHash: "d", templateName: "t", imagePaths: [],
                sourceFile: "s.yml",
                downloadPath: "download/\(serial).pkpass")
        }
        state.contentFiles["s.yml"] = .init(
            hash: CompactStateTests.hex, passes: ["pass.t/1", "pass.t/2"], stamp: "1:2:3:4")
        let folder = TemporaryDirectory()
        try AtomicFileSystem.write(try state.encoded(), to: BuildState.path(in: folder.path))
        let mapped = try BuildState.loadWithRecordRanges(from: folder.path, jobs: 2, mapped: true)
        let read = try BuildState.loadWithRecordRanges(from: folder.path, jobs: 2, mapped: false)
        #expect(mapped.state == state && read.state == state)
        #expect(mapped.file?.recordRanges.map(\.key) == read.file?.recordRanges.map(\.key))
        #expect(mapped.file?.recordRanges.map(\.range) == read.file?.recordRanges.map(\.range))
        // A damaged state is refused the same way.
        try AtomicFileSystem.write(Array(try state.encoded().dropLast(3)), to: BuildState.path(in: folder.path))
        for mapped in [true, false] {
            #expect(throws: BuildError.self) {
                try BuildState.loadWithRecordRanges(from: folder.path, jobs: 2, mapped: mapped)
            }
        }
    }
}
