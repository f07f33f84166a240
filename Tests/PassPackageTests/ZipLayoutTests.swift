import Foundation
import PassPackage
import TestSupport
import Testing

/// Without libzip's consistency check, every zip a conforming reader reads
/// is read, and what a crafted archive could lie about is still refused.
@Suite("Zip layouts other writers use")
struct ZipLayoutTests {
    let files: [(String, [UInt8])] = [
        ("pass.json", Array(#"{"a": 1}"#.utf8)), ("icon.png", [UInt8](repeating: 7, count: 300)),
    ]

    @Test func dataDescriptorFlagWithSizesInTheLocalHeaderIsRead() throws {
        let archive = dataDescriptorZip(files)
        // General-purpose bit 3 is set in the local header, which still carries the size.
        #expect(archive[6] & 0x08 == 0x08)
        #expect(archive[22] == 8)
        let read = try ZipArchive.read(archive)
        #expect(read.map(\.name) == files.map(\.0))
        #expect(read.map(\.bytes) == files.map(\.1))
    }

    @Test func aCorruptedEntryIsRefusedByItsCRC() throws {
        var archive = storedZip(files)
        let start = try #require(archive.indices.first { archive[$0...].starts(with: Array(#"{"a": 1}"#.utf8)) })
        archive[start + 6] = UInt8(ascii: "2")
        #expect(throws: ZipError.self) { try ZipArchive.read(archive) }
    }

    @Test func unsafeNamesAndDeclaredSizesAreStillChecked() throws {
        #expect(throws: ZipError.unsafeEntryName("../evil")) { try ZipArchive.read(storedZip([("../evil", [1])])) }
        #expect(throws: ZipError.tooLarge(limit: 100)) {
            try ZipArchive.read(storedZip(files), limits: ZipReadLimits(maximumEntryCount: 10, maximumTotalSize: 100))
        }
    }

    @Test func entryNamesComeFromTheCentralDirectory() {
        #expect(ZipArchive.entryNames(dataDescriptorZip(files)) == ["pass.json", "icon.png"])
        #expect(ZipArchive.entryNames(Array("not a zip".utf8)) == nil)
    }
}
