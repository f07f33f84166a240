import Foundation
import PassPackage
import Testing

@Suite("Zip archives on libzip")
struct ZipArchiveTests {
    let entries = [
        ZipEntry(name: "pass.json", bytes: Array(String(repeating: #"{"key":"value"}"#, count: 200).utf8)),
        ZipEntry(name: "icon.png", bytes: (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 31) }, isCompressed: false),
        ZipEntry(name: "en.lproj/pass.strings", bytes: Array("\"a\" = \"b\";\n".utf8)),
        ZipEntry(name: "empty.txt", bytes: []),
        ZipEntry(name: "ünïcode.txt", bytes: Array("ü".utf8)),
    ]

    @Test func roundTrip() async throws {
        let bytes = try ZipArchive.make(entries)
        let read = try ZipArchive.read(bytes)
        #expect(read.map(\.name) == entries.map(\.name))
        #expect(read.map(\.bytes) == entries.map(\.bytes))
    }

    @Test func unzipAndPythonReadTheArchive() async throws {
        let directory = try makeTemporaryDirectory("zip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeBytes(try ZipArchive.make(entries), to: directory + "/test.zip")

        let listing = try await run("unzip", ["-v", "test.zip"], in: directory).output
        for entry in entries { #expect(listing.contains(entry.name)) }
        // PNGs are stored, the rest deflated.
        let iconLine = listing.split(separator: "\n").first { $0.hasSuffix("icon.png") } ?? ""
        let passLine = listing.split(separator: "\n").first { $0.hasSuffix("pass.json") } ?? ""
        #expect(iconLine.contains("Stored"))
        #expect(passLine.contains("Defl"))
        // unzip -t checks every CRC.
        let test = try await run("unzip", ["-t", "test.zip"], in: directory).output
        #expect(test.contains("No errors detected"))

        let python = try await run("python3", ["-m", "zipfile", "-l", "test.zip"], in: directory).output
        for entry in entries { #expect(python.contains(entry.name)) }

        try await run("python3", ["-m", "zipfile", "-e", "test.zip", "out"], in: directory)
        #expect(try readBytes(directory + "/out/pass.json") == entries[0].bytes)
        #expect(try readBytes(directory + "/out/en.lproj/pass.strings") == entries[2].bytes)
    }

    /// Each thread reuses its deflate streams (one per window size): an
    /// archive must come out the same whichever thread makes it and whatever
    /// that thread deflated before, and read back intact.
    @Test func reusedDeflateStreamsGiveTheSameBytesOnEveryThread() async throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let archives = [10, 700, 1_500, 300, 40_000, 1_400, 9_000, 20].map { size in
            [
                ZipEntry(
                    name: "pass.json",
                    bytes: Array(String(repeating: #"{"n":\#(size)}"#, count: size / 8 + 1).utf8.prefix(size))),
                ZipEntry(
                    name: "manifest.json",
                    bytes: (0..<size).map { UInt8(ascii: "a") + UInt8(truncatingIfNeeded: $0 &* 7 % 26) }),
            ]
        }
        let expected = try archives.map { try ZipArchive.make($0, modificationDate: date) }
        let results = try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var made: [[UInt8]] = []
                    for round in 0..<3 {
                        // A different order on each worker and round.
                        let rotated = archives.indices.map { ($0 + worker + round) % archives.count }
                        let order = worker.isMultiple(of: 2) ? rotated : rotated.reversed()
                        var byIndex = [[UInt8]](repeating: [], count: archives.count)
                        for index in order {
                            byIndex[index] = try ZipArchive.make(archives[index], modificationDate: date)
                        }
                        made = byIndex
                    }
                    return made
                }
            }
            var all: [[[UInt8]]] = []
            for try await made in group { all.append(made) }
            return all
        }
        for made in results {
            let differing = made.indices.filter { made[$0] != expected[$0] }
            #expect(differing.isEmpty, "archives \(differing) differ from those made on the test's thread")
        }
        for (archive, entries) in zip(expected, archives) {
            let readBack = try ZipArchive.read(archive).map(\.bytes) == entries.map(\.bytes)
            #expect(readBack)
        }
    }

    @Test func sameInputsGiveSameBytes() async throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            try ZipArchive.make(entries, modificationDate: date) == ZipArchive.make(entries, modificationDate: date))
    }

    @Test func readsArchivesMadeByPython() async throws {
        let directory = try makeTemporaryDirectory("pyzip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await run(
            "python3",
            [
                "-c",
                """
                import zipfile
                with zipfile.ZipFile('p.zip', 'w', zipfile.ZIP_DEFLATED) as z:
                    z.writestr('dir/', '')
                    z.writestr('dir/a.txt', 'hello ' * 100)
                    z.writestr('b.bin', bytes(range(256)), compress_type=zipfile.ZIP_STORED)
                """,
            ], in: directory)
        let read = try ZipArchive.read(try readBytes(directory + "/p.zip"))
        // The directory entry is skipped.
        #expect(read.map(\.name) == ["dir/a.txt", "b.bin"])
        #expect(read[0].bytes == Array(String(repeating: "hello ", count: 100).utf8))
        #expect(read[1].bytes == (0..<256).map { UInt8($0) })
    }

    /// An archive written by Python with a hostile entry name.
    func archive(withEntryNamed name: String) async throws -> [UInt8] {
        let directory = try makeTemporaryDirectory("evil")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await run(
            "python3",
            [
                "-c",
                """
                import sys, zipfile
                with zipfile.ZipFile('evil.zip', 'w') as z:
                    z.writestr('pass.json', '{}')
                    info = zipfile.ZipInfo('placeholder')
                    info.filename = sys.argv[1]
                    z.writestr(info, 'x')
                """, name,
            ], in: directory)
        return try readBytes(directory + "/evil.zip")
    }

    @Test(arguments: ["../x", "a/../../x", "/etc/passwd", "a//b", "./x"])
    func unsafeNamesAreRejectedOnRead(name: String) async throws {
        let bytes = try await archive(withEntryNamed: name)
        #expect(throws: ZipError.unsafeEntryName(name)) { try ZipArchive.read(bytes) }
    }

    @Test(arguments: ["../x", "/abs", "a\\b", "", "C:x", "a/./b"])
    func unsafeNamesAreRejectedOnWrite(name: String) {
        #expect(throws: ZipError.unsafeEntryName(name)) {
            try ZipArchive.make([ZipEntry(name: name, bytes: [1])])
        }
    }

    @Test func duplicateNamesAreRejected() {
        #expect(throws: ZipError.duplicateEntry("a")) {
            try ZipArchive.make([ZipEntry(name: "a", bytes: [1]), ZipEntry(name: "a", bytes: [2])])
        }
    }

    @Test func zipBombIsRefusedBeforeInflating() async throws {
        let directory = try makeTemporaryDirectory("bomb")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 100 MiB of zeros deflates to about 100 KB.
        try await run(
            "python3",
            [
                "-c",
                """
                import zipfile
                with zipfile.ZipFile('bomb.zip', 'w', zipfile.ZIP_DEFLATED) as z:
                    with z.open('zeros.bin', 'w', force_zip64=True) as f:
                        chunk = bytes(1 << 20)
                        for _ in range(100):
                            f.write(chunk)
                """,
            ], in: directory)
        let bytes = try readBytes(directory + "/bomb.zip")
        #expect(bytes.count < 1 << 20)
        #expect(throws: ZipError.tooLarge(limit: 64 << 20)) { try ZipArchive.read(bytes) }
        let small = ZipReadLimits(maximumEntryCount: 10, maximumTotalSize: 1 << 20)
        #expect(throws: ZipError.tooLarge(limit: 1 << 20)) { try ZipArchive.read(bytes, limits: small) }
    }

    @Test func entryThatLiesAboutItsSizeIsRefused() async throws {
        // Patch the declared uncompressed size (local header and central
        // directory) of a deflated entry down to 10 bytes.
        let content = [UInt8](repeating: 65, count: 1000)
        var bytes = try ZipArchive.make([ZipEntry(name: "a.txt", bytes: content)])
        let sizeLE: [UInt8] = [0xE8, 0x03, 0x00, 0x00]  // 1000
        var patched = 0
        var index = 0
        while index + 4 <= bytes.count {
            if Array(bytes[index..<index + 4]) == sizeLE {
                bytes.replaceSubrange(index..<index + 4, with: [10, 0, 0, 0])
                patched += 1
            }
            index += 1
        }
        #expect(patched == 2)
        #expect(throws: ZipError.self) { try ZipArchive.read(bytes) }
    }

    @Test func tooManyEntries() async throws {
        let many = (0..<20).map { ZipEntry(name: "f\($0)", bytes: [UInt8($0)]) }
        let bytes = try ZipArchive.make(many)
        let limits = ZipReadLimits(maximumEntryCount: 10, maximumTotalSize: 1 << 20)
        #expect(throws: ZipError.tooManyEntries(count: 20, limit: 10)) { try ZipArchive.read(bytes, limits: limits) }
        #expect(try ZipArchive.read(bytes).count == 20)
    }

    @Test func notAnArchive() {
        let error = #expect(throws: ZipError.self) { try ZipArchive.read(Array("not a zip at all".utf8)) }
        guard case .notAnArchive = error else {
            Issue.record("expected notAnArchive, got \(String(describing: error))")
            return
        }
    }

    @Test func corruptedDataIsDetected() async throws {
        var bytes = try ZipArchive.make([
            ZipEntry(name: "a.bin", bytes: [UInt8](repeating: 7, count: 500), isCompressed: false)
        ])
        // Flip a byte of the stored data (after the 30-byte local header and name).
        bytes[30 + 5 + 100] ^= 0xFF
        #expect(throws: ZipError.self) { try ZipArchive.read(bytes) }
    }
}
