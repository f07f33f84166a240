import Testing
import WalletTree

@testable import PassPublish

/// `LandingComparison.difference`: two landing lists compared line by line, each read as its header and the
/// lines the other lacks; read whole when a side has none or the destination's changed lines are not a list.
@Suite struct LandingDifferenceTests {
    static let header = "passforge-landing-pages 1\tconf\t-\thttps://passes.example.com/\n"

    static func page(_ number: Int, etag: String = "\"e\"") -> String {
        "page\tpass.a/S-\(number)\t\"s\"\t-\t0\tdownload/cap\(number).html\t\(etag)\t10\tdownload/cap\(number).png\t\"p\"\t5\n"
    }

    static func list(_ lines: [String]) -> [UInt8] { Array((header + lines.joined()).utf8) }

    @Test func onlyTheChangedPagesAreRead() throws {
        let destination = Self.list((0..<20).map { Self.page($0) } + [Self.page(30)])
        let local = Self.list(
            (0..<20).map { $0 == 7 ? Self.page(7, etag: "\"new\"") : Self.page($0) } + [Self.page(31)])
        let difference = try LandingComparison.difference(local: local, destination: destination, localOutput: "/o")
        #expect(difference.isPartial)
        #expect(
            Set(difference.local.files.keys)
                == Set(["7", "31"].flatMap { ["download/cap\($0).html", "download/cap\($0).png"] }))
        #expect(
            Set(difference.destination.files.keys)
                == Set(["7", "30"].flatMap { ["download/cap\($0).html", "download/cap\($0).png"] }))
        // What is sent is what a whole comparison sends.
        let whole = try LandingComparison(localOutput: "/o", bytes: local)
        let theirs = LandingComparison(destination: destination)
        #expect(difference.local.uploads(over: difference.destination) == whole.uploads(over: theirs))
        #expect(
            difference.local.uploads(over: difference.destination).map(\.path) == [
                "download/cap31.png", "download/cap31.html", "download/cap7.html",
            ])
    }

    @Test func theSameListsDifferInNothing() throws {
        let list = Self.list((0..<5).map { Self.page($0) })
        let difference = try LandingComparison.difference(local: list, destination: list, localOutput: "/o")
        #expect(difference.isPartial && difference.local.files.isEmpty && difference.destination.files.isEmpty)
    }

    /// A damaged destination list counts as none (every page sent again), as when it was read whole; a damaged
    /// local line is an error naming the file.
    @Test func damagedListsAreReadAsBefore() throws {
        let local = Self.list((0..<5).map { Self.page($0) })
        let damaged = Self.list((0..<4).map { Self.page($0) } + ["page\tbroken\n"])
        let difference = try LandingComparison.difference(local: local, destination: damaged, localOutput: "/o")
        #expect(!difference.isPartial && difference.destination.files.isEmpty && difference.local.files.count == 10)
        let error = #expect(throws: PublishError.self) {
            try LandingComparison.difference(local: damaged, destination: local, localOutput: "/o")
        }
        #expect(error?.description.contains("/o/\(LandingPageList.path) is damaged") == true)
        let none = try LandingComparison.difference(local: local, destination: nil, localOutput: "/o")
        #expect(!none.isPartial && none.local.files.count == 10 && none.destination.files.isEmpty)
    }
}
