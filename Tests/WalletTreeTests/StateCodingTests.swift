import Foundation
import PassModel
import TestSupport
import Testing
import WalletTree

/// The fast encoder and the two fast decoders of state.json against Foundation's Codable (the oracle), on
/// random states whose strings are the awkward ones: escapes, quotes, slashes, control characters, non-ASCII,
/// empty; optional fields present and absent; passes and orders; removed items with and without files.
@Suite struct StateCodingTests {
    @Test(arguments: 0..<12)
    func fastEncodingDecodesWithCodable(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let state = random.state()
        let bytes = BuildStateEncoding.encode(state, jobs: 3)
        #expect(try JSONDecoder().decode(BuildState.self, from: Data(bytes)) == state)
        #expect(try state.encoded() == bytes)
        // Key for key and value for value what Foundation writes (its key order and escapes aside).
        let ours = try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? NSDictionary
        #expect(ours != nil && ours == theirs)
    }

    @Test(arguments: 0..<12)
    func codableEncodingDecodesFast(seed: UInt64) throws {
        var random = SeededRandom(seed: seed &+ 1000)
        let state = random.state()
        let encoder = JSONEncoder()
        // Pretty and escaped slashes (Foundation's default) on odd seeds: whitespace and escapes the build
        // never writes.
        encoder.outputFormatting = seed % 2 == 0 ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted]
        let bytes = Array(try encoder.encode(state))
        let decoded = try BuildStateDecoding.decode(bytes, jobs: 3).state
        #expect(decoded == state)
        let index = try PublishedIndex.decode(bytes, of: "/nowhere", jobs: 3)
        expectEqual(index, PublishedIndex(state))
    }

    /// The bytes the build writes, spelled out: the format of the first version, which a tree published by
    /// an earlier passforge has and which an earlier passforge reads (the keys of an order's record too).
    @Test func theFormatIsTheFirstVersions() throws {
        var state = BuildState()
        state.lastUpdateTag = 7
        state.builtAt = "2026-01-02T03:04:05Z"
        var order = SeededRandom.record(type: "order.x", identifier: "O-1", kind: .order)
        order.tokenHash = "ab"
        state.passes[order.key] = order
        state.contentFiles["content/o.yml"] = .init(hash: "h", passes: [order.key], stamp: "1:2", entries: nil)
        state.removedPasses["pass.a/S-1"] = .init(
            typeIdentifier: "pass.a", identifier: "S-1", tokenHash: "cd", removedTag: 5,
            files: ["v1/passes/pass.a/S-1"])
        let expected =
            #"{"version":1,"lastUpdateTag":7,"builtAt":"2026-01-02T03:04:05Z","passes":{"order.x/O-1":{"#
            + #""passTypeIdentifier":"order.x","serialNumber":"O-1","teamIdentifier":"T","updateTag":1,"etag":"\"e\"","#
            + #""size":1,"fingerprint":"f","definitionHash":"d","templateName":"t","imagePaths":[],"sourceFile":"s","#
            + #""downloadPath":"download/c.order","tokenHash":"ab","kind":"order"}},"contentFiles":{"content/o.yml":"#
            + #"{"hash":"h","passes":["order.x/O-1"],"identity":"1:2"}},"removedPasses":{"pass.a/S-1":"#
            + #"{"passTypeIdentifier":"pass.a","serialNumber":"S-1","tokenHash":"cd","removedTag":5,"#
            + #""files":["v1/passes/pass.a/S-1"]}}}"#
        #expect(String(decoding: try state.encoded(), as: UTF8.self) == expected)
    }

    @Test func anEmptyStateRoundTrips() throws {
        let bytes = BuildStateEncoding.encode(BuildState(), jobs: 2)
        #expect(try JSONDecoder().decode(BuildState.self, from: Data(bytes)) == BuildState())
        #expect(try BuildStateDecoding.decode(bytes, jobs: 2).state == BuildState())
        let index = try PublishedIndex.decode(bytes, of: "/nowhere")
        #expect(index.items.isEmpty && index.removedItems.isEmpty && index.lastUpdateTag == 0)
    }

    /// A state.json as the previous version wrote it: no `kind`, no `removedPasses`, no `files` or `identity`,
    /// keys in another order, and a key this version does not know.
    @Test func aStateOfTheLastVersionLoads() throws {
        let text = #"""
            {"version": 1, "builtAt": "2026-01-02T03:04:05Z", "lastUpdateTag": 1700000000000,
             "future": [1, {"a": null}],
             "passes": {"pass.com.example.a/S-1": {"serialNumber": "S-1", "passTypeIdentifier": "pass.com.example.a",
               "teamIdentifier": "ABCDE12345", "updateTag": 1700000000000,
               "etag": "\"00112233445566778899aabbccddeeff\"",
               "size": 1234, "fingerprint": "f", "definitionHash": "d", "templateName": "t", "imagePaths": [],
               "sourceFile": "content/a.yml", "downloadPath": "download/cap.pkpass", "tokenHash": "ab"}},
             "contentFiles": {"content/a.yml": {"hash": "h", "passes": ["pass.com.example.a/S-1"]}}}
            """#
        let bytes = Array(text.utf8)
        let oracle = try JSONDecoder().decode(BuildState.self, from: Data(bytes))
        #expect(try BuildStateDecoding.decode(bytes, jobs: 1).state == oracle)
        let index = try PublishedIndex.decode(bytes, of: "/nowhere")
        let key = ItemKey.pass("pass.com.example.a", "S-1")
        #expect(index.items[key]?.etag == "\"00112233445566778899aabbccddeeff\"")
        #expect(index.items[key]?.tokenHash == "ab")
        #expect(index.item(type: "pass.com.example.a", identifier: "S-1")?.kind == .pass)
        #expect(index.removedItems.isEmpty)
        expectEqual(index, PublishedIndex(oracle))
    }

    @Test func anOrderIsKeyedAsAnOrder() throws {
        var state = BuildState()
        state.passes["order.com.example/O-1"] = SeededRandom.record(
            type: "order.com.example", identifier: "O-1", kind: .order)
        state.removedPasses["order.com.example/O-0"] = .init(
            typeIdentifier: "order.com.example", identifier: "O-0", tokenHash: "h",
            removedTag: 3, kind: .order)
        let index = try PublishedIndex.decode(BuildStateEncoding.encode(state, jobs: 1), of: "/nowhere")
        let key = ItemKey(kind: .order, typeIdentifier: "order.com.example", identifier: "O-1")
        #expect(index.items[key]?.path == "v1/orders/order.com.example/O-1")
        #expect(index.items[ItemKey.pass("order.com.example", "O-1")] == nil)
        #expect(index.kind(ofType: "order.com.example") == .order)
        #expect(
            index.removedItem(type: "order.com.example", identifier: "O-0")?.filesToDelete == [
                "v1/orders/order.com.example/O-0"
            ])
        #expect(index.orderCount == 1 && index.passCount == 0)
    }

    @Test func anotherVersionIsAnErrorForPeople() throws {
        let bytes = Array(#"{"version": 2, "passes": {}}"#.utf8)
        #expect {
            try PublishedIndex.decode(bytes, of: "/srv/output")
        } throws: {
            "\($0)".contains(
                "/srv/output/.passforge/state.json was written by another passforge version (state version 2)")
        }
        #expect(throws: BuildError.self) { try PublishedIndex.decode(Array("{\"version\": 1".utf8), of: "/srv/output") }
    }

    @Test func noStateIsTheEmptyIndex() throws {
        let folder = TemporaryDirectory("passforge-index")
        let index = try PublishedIndex.load(from: folder.path)
        #expect(index.items.isEmpty && index.lastUpdateTag == 0 && index.builtAt.isEmpty)
    }

    /// Field by field: a missing `==` term would let two different indices pass as equal.
    private func expectEqual(
        _ index: PublishedIndex, _ expected: PublishedIndex, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(index.lastUpdateTag == expected.lastUpdateTag, sourceLocation: sourceLocation)
        #expect(index.builtAt == expected.builtAt, sourceLocation: sourceLocation)
        #expect(index.items == expected.items, sourceLocation: sourceLocation)
        #expect(index.removedItems == expected.removedItems, sourceLocation: sourceLocation)
        #expect(index.orderCount == expected.orderCount, sourceLocation: sourceLocation)
    }
}

/// Random states from a seed (SplitMix64), so that a failure can be replayed.
struct SeededRandom {
    private var seed: UInt64

    init(seed: UInt64) { self.seed = seed }

    mutating func next() -> UInt64 {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance() -> Bool { next() % 2 == 0 }

    /// A string that JSON must escape, or not.
    mutating func text() -> String {
        let pieces = [
            "a", "Z9", "/", "\"", "\\", "\n", "\t", "\u{01}", "\u{7F}", "é", "日本", "😀", "\u{2028}", " ", "-._~", "",
        ]
        return (0..<below(6)).map { _ in pieces[below(pieces.count)] }.joined()
    }

    mutating func digest() -> String {
        chance() ? "\"" + (0..<32).map { _ in String(below(16), radix: 16) }.joined() + "\"" : text()
    }

    mutating func optional(_ make: (inout SeededRandom) -> String) -> String? {
        chance() ? make(&self) : nil
    }

    static func record(type: String, identifier: String, kind: WalletItemKind) -> BuildState.ItemRecord {
        BuildState.ItemRecord(
            typeIdentifier: type, identifier: identifier, teamIdentifier: "T", updateTag: 1, etag: "\"e\"", size: 1,
            fingerprint: "f", definitionHash: "d", templateName: "t", imagePaths: [], sourceFile: "s",
            downloadPath: "download/c.\(kind.fileExtension)", kind: kind)
    }

    mutating func state() -> BuildState {
        var state = BuildState()
        state.lastUpdateTag = Int64(next() >> 2)
        state.builtAt = text()
        let types = ["pass.a", "pass.b.c", "order.x"]
        for number in 0..<below(40) {
            let type = types[below(types.count)]
            let identifier = "S\(number)" + (chance() ? text() : "")
            var record = BuildState.ItemRecord(
                typeIdentifier: type, identifier: identifier, teamIdentifier: text(), updateTag: Int64(next() >> 1),
                etag: digest(),
                size: below(1 << 30), tokenHash: optional { $0.digest() }, fingerprint: digest(),
                definitionHash: digest(),
                templateName: text(), imagePaths: (0..<below(3)).map { _ in text() }, sourceFile: text(),
                downloadPath: text(),
                publicDownloadPath: optional { $0.text() }, tokenPath: optional { $0.text() },
                offer: optional { $0.text() },
                kind: type.hasPrefix("order") ? .order : .pass)
            if chance() { record.updateTag = -record.updateTag }
            state.passes[record.key] = record
        }
        for number in 0..<below(5) {
            let type = types[below(types.count)]
            let removed = BuildState.RemovedItemRecord(
                typeIdentifier: type, identifier: "R\(number)", tokenHash: text(), removedTag: Int64(below(1 << 20)),
                files: (0..<below(3)).map { _ in text() }, kind: type.hasPrefix("order") ? .order : .pass)
            state.removedPasses[removed.key] = removed
        }
        for number in 0..<below(6) {
            state.contentFiles["content/\(number)\(text()).yml"] = .init(
                hash: digest(), passes: Array(state.passes.keys.shuffled(using: &self).prefix(below(4))),
                stamp: optional { $0.text() }, entries: optional { $0.text() })
        }
        return state
    }
}

extension SeededRandom: RandomNumberGenerator {}
