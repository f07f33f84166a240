import Foundation
import PassModel
import Testing
import WalletTree

/// `StateDifference`: the local state and a destination's compared record by record, as publish plans from
/// them. Only what differs is decoded, and what differs at the destination is checked as a published state is.
@Suite struct StateDifferenceTests {
    static let type = "pass.com.example.member"
    static let tag: Int64 = 1_700_000_000_000

    static func record(_ serial: String, etag: String = "\"00112233445566778899aabbccddeeff\"", updateTag: Int64 = tag)
        -> BuildState.ItemRecord
    {
        BuildState.ItemRecord(
            typeIdentifier: type, identifier: serial, teamIdentifier: "ABCDE12345", updateTag: updateTag, etag: etag,
            size: 1234, fingerprint: "f", definitionHash: "d", templateName: "card", imagePaths: ["images/a.png"],
            sourceFile: "content/members.yml", downloadPath: "download/cap-\(serial).pkpass",
            tokenPath: "by-token/\(type)/\(serial).token0123456789abcdef-\(serial)")
    }

    static func state(_ serials: [String], tag: Int64 = tag, change: (inout BuildState) -> Void = { _ in }) -> [UInt8] {
        var state = BuildState()
        state.lastUpdateTag = tag
        state.builtAt = "2026-01-02T03:04:05Z"
        for serial in serials { state.passes["\(type)/\(serial)"] = record(serial) }
        state.contentFiles["content/members.yml"] = .init(
            hash: "h", passes: serials.map { "\(type)/\($0)" }, stamp: nil, entries: nil)
        change(&state)
        return BuildStateEncoding.encode(state, jobs: 2)
    }

    static let serials = (0..<50).map { "M-\($0)" }

    @Test func onlyTheRecordsThatDifferAreTaken() throws {
        let destination = Self.state(Self.serials + ["GONE"])
        let local = Self.state(Self.serials + ["NEW"], tag: Self.tag + 5) { state in
            state.passes["\(Self.type)/M-7"]!.etag = "\"ffeeddccbbaa99887766554433221100\""
            state.passes["\(Self.type)/M-7"]!.updateTag = Self.tag + 5
            state.removedPasses["\(Self.type)/GONE"] = .init(
                typeIdentifier: Self.type, identifier: "GONE", tokenHash: "ab", removedTag: Self.tag + 5,
                files: ["v1/passes/\(Self.type)/GONE"])
        }
        let difference = try StateDifference(local: local, of: "/srv/output", destination: destination)
        #expect(difference.unchangedCount == 49)
        #expect(Set(difference.local.items.keys.map(\.identifier)) == ["M-7", "NEW"])
        #expect(Set(difference.destination.items.keys.map(\.identifier)) == ["M-7", "GONE"])
        #expect(difference.local.items[.pass(Self.type, "M-7")]?.updateTag == Self.tag + 5)
        #expect(difference.destination.items[.pass(Self.type, "M-7")]?.updateTag == Self.tag)
        #expect(difference.local.removedItems.keys.map(\.identifier) == ["GONE"])
        #expect(difference.local.lastUpdateTag == Self.tag + 5 && difference.destination.lastUpdateTag == Self.tag)

        // Each changed item as the whole index has it, field for field.
        let whole = try PublishedIndex.decode(local, of: "/srv/output")
        for (key, item) in difference.local.items { #expect(item == whole.items[key]) }
        let published = try PublishedIndex.decode(destination, of: "/srv/output")
        for (key, item) in difference.destination.items { #expect(item == published.items[key]) }
    }

    @Test func theSameStateDiffersInNothing() throws {
        let bytes = Self.state(Self.serials)
        let difference = try StateDifference(local: bytes, of: "/srv/output", destination: bytes)
        #expect(difference.unchangedCount == Self.serials.count)
        #expect(difference.local.items.isEmpty && difference.destination.items.isEmpty)
    }

    /// A record is compared as bytes: the same record written another way (Foundation's encoder, keys in
    /// another order) is decoded, and found to be the same item.
    @Test func aRecordWrittenAnotherWayIsDecodedAndEqual() throws {
        var state = BuildState()
        state.lastUpdateTag = Self.tag
        for serial in Self.serials { state.passes["\(Self.type)/\(serial)"] = Self.record(serial) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let foreign = Array(try encoder.encode(state))
        let difference = try StateDifference(
            local: BuildStateEncoding.encode(state, jobs: 1), of: "/srv/output", destination: foreign)
        #expect(difference.unchangedCount == 0)
        #expect(difference.local.items.count == Self.serials.count)
        #expect(difference.local.items == difference.destination.items)
    }

    /// What differs at the destination is checked as `--state-from` checks a state: a record that leaves the
    /// tree, a removed item that does, a tag far ahead, another version, a bundle of the destination.
    @Test(arguments: [
        ("a changed record's path leaves the tree", "which is not download/<capability>.pkpass"),
        ("a record of the destination alone is under another key", "is listed under a key that is not"),
        ("a removed item's files leave the tree", "which is not a pass, token link or download path"),
        ("the last update tag is far ahead", "lastUpdateTag is 99999999999999"),
        ("another version", "written by another passforge version (state version 2)"),
        ("a changed record's update tag is negative", "has updateTag -5"),
    ])
    func aHostileDestinationIsRefused(attack: String, phrase: String) throws {
        let local = Self.state(Self.serials)
        let destination = Self.state(Self.serials) { state in
            switch attack {
            case "a changed record's path leaves the tree":
                state.passes["\(Self.type)/M-3"]!.downloadPath = "../victims/v1.txt"
            case "a record of the destination alone is under another key":
                state.passes["\(Self.type)/OTHER"] = Self.record("M-3")
            case "a removed item's files leave the tree":
                state.removedPasses["\(Self.type)/GONE"] = .init(
                    typeIdentifier: Self.type, identifier: "GONE", tokenHash: "ab", removedTag: 1,
                    files: ["../victims/v1.txt"])
            case "the last update tag is far ahead": state.lastUpdateTag = 99_999_999_999_999
            case "another version": state.version = 2
            default: state.passes["\(Self.type)/M-3"]!.updateTag = -5
            }
        }
        let error = #expect(throws: BuildError.self, "\(attack)") {
            try StateDifference(local: local, of: "/srv/output", destination: destination)
        }
        #expect(error?.kind == .refused, "\(attack)")
        #expect(error?.description.contains(phrase) == true, "\(attack): \(String(describing: error))")
    }

    /// A record of the destination equal to the local one, byte for byte, is the local build's own: taken
    /// without a check. The local state is the build's, and what is wrong with it names its file.
    @Test func aDamagedLocalStateNamesItsFile() throws {
        let destination = Self.state(Self.serials)
        var damaged = Self.state(Self.serials)
        damaged.removeLast(3)
        let error = #expect(throws: BuildError.self) {
            try StateDifference(local: damaged, of: "/srv/output", destination: destination)
        }
        #expect(error?.kind == .unreadable)
        #expect(error?.description.hasPrefix("/srv/output/.passforge/state.json is damaged") == true)
    }

    @Test func anOversizeDestinationIsRefusedBeforeItIsRead() throws {
        let huge = [UInt8](repeating: 0x20, count: BuildState.maximumPublishedSize + 1)
        let error = #expect(throws: BuildError.self) {
            try StateDifference(local: Self.state(Self.serials), of: "/srv/output", destination: huge)
        }
        #expect(error?.description.contains("larger than 256 MB") == true)
    }
}
