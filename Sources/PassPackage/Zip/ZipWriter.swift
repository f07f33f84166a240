import Foundation

/// One zip entry, checksummed and compressed once, ready to be copied into
/// any number of archives: a template's images go into every pass made from
/// it, so they are deflated and checksummed once per template, not per pass.
package struct PreparedZipEntry: Sendable {
    package let name: String
    let nameBytes: [UInt8]
    let crc: UInt32
    let uncompressedSize: Int
    /// 0: stored, 8: deflated (PKWARE APPNOTE 4.4.5).
    let method: UInt16
    /// The bytes as they go into the archive.
    let data: [UInt8]

    /// Deflates `entry` when it asks for it and deflating makes it smaller;
    /// stores it otherwise.
    package init(_ entry: ZipEntry) {
        name = entry.name
        nameBytes = Array(entry.name.utf8)
        crc = Deflate.crc32(entry.bytes)
        uncompressedSize = entry.bytes.count
        if entry.isCompressed, let deflated = Deflate.compress(entry.bytes) {
            method = 8
            data = deflated
        } else {
            method = 0
            data = entry.bytes
        }
    }
}

/// Writes a zip archive in memory (PKWARE APPNOTE.TXT 6.3: local headers and
/// data, then the central directory and its end record; no data descriptors,
/// no zip64, no extra fields). Entries keep the order they are appended in.
struct ZipWriter {
    private var archive: [UInt8] = []
    private var directory: [UInt8] = []
    private var count = 0
    private let time: UInt16
    private let date: UInt16

    /// - Parameter modificationDate: every entry's time stamp, in local time
    ///   as zip tools expect (MS-DOS format: two-second steps, 1980–2107).
    init(modificationDate: Date, capacity: Int = 0) {
        (time, date) = Self.dosTime(modificationDate)
        archive.reserveCapacity(capacity)
    }

    /// The bytes an archive of `entries` takes, to reserve them at once.
    static func size(of entries: some Sequence<PreparedZipEntry>) -> Int {
        entries.reduce(22) { $0 + 30 + 46 + 2 * $1.nameBytes.count + $1.data.count }
    }

    mutating func append(_ entry: PreparedZipEntry) throws(ZipError) {
        guard archive.count <= Int(UInt32.max) - entry.data.count - 30 - entry.nameBytes.count,
            entry.uncompressedSize <= Int(UInt32.max), count < Int(UInt16.max)
        else { throw .cannotWrite(reason: "the archive would need zip64, which passes never do") }
        let offset = UInt32(archive.count)
        // Bit 11: the name is UTF-8 (APPNOTE appendix D); set only when it is not plain ASCII.
        let flags: UInt16 = entry.nameBytes.contains { $0 >= 0x80 } ? 0x0800 : 0
        let version: UInt16 = entry.method == 8 ? 20 : 10

        archive.append(uint32: 0x0403_4b50)
        archive.append(uint16: version)
        appendCommonFields(entry, flags: flags, to: &archive)
        archive.append(uint16: 0)  // extra field length
        archive += entry.nameBytes
        archive += entry.data

        directory.append(uint32: 0x0201_4b50)
        directory.append(uint16: 3 << 8 | 20)  // made by: Unix, zip 2.0 (so the permissions below count)
        directory.append(uint16: version)
        appendCommonFields(entry, flags: flags, to: &directory)
        directory.append(uint16: 0)  // extra field length
        directory.append(uint16: 0)  // comment length
        directory.append(uint16: 0)  // disk number
        directory.append(uint16: 0)  // internal attributes
        directory.append(uint32: UInt32(0o100644) << 16)  // external attributes: a regular file, rw-r--r--
        directory.append(uint32: offset)
        directory += entry.nameBytes
        count += 1
    }

    /// Flags through name length: the fields local and central headers share.
    private func appendCommonFields(_ entry: PreparedZipEntry, flags: UInt16, to bytes: inout [UInt8]) {
        bytes.append(uint16: flags)
        bytes.append(uint16: entry.method)
        bytes.append(uint16: time)
        bytes.append(uint16: date)
        bytes.append(uint32: entry.crc)
        bytes.append(uint32: UInt32(entry.data.count))
        bytes.append(uint32: UInt32(entry.uncompressedSize))
        bytes.append(uint16: UInt16(entry.nameBytes.count))
    }

    /// The archive: entries, central directory, end record.
    consuming func finish() throws(ZipError) -> [UInt8] {
        guard archive.count + directory.count <= Int(UInt32.max) else {
            throw .cannotWrite(reason: "the archive would need zip64, which passes never do")
        }
        let directoryOffset = UInt32(archive.count)
        archive += directory
        archive.append(uint32: 0x0605_4b50)
        archive.append(uint16: 0)  // this disk
        archive.append(uint16: 0)  // disk with the central directory
        archive.append(uint16: UInt16(count))
        archive.append(uint16: UInt16(count))
        archive.append(uint32: UInt32(directory.count))
        archive.append(uint32: directoryOffset)
        archive.append(uint16: 0)  // comment length
        return archive
    }

    /// MS-DOS time and date of `date` in local time, clamped to what they can hold.
    static func dosTime(_ date: Date) -> (time: UInt16, date: UInt16) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return (0, 1 << 5 | 1) }
        let year = Int(parts.tm_year) + 1900
        if year < 1980 { return (0, 1 << 5 | 1) }
        if year > 2107 { return (23 << 11 | 59 << 5 | 29, 127 << 9 | 12 << 5 | 31) }
        let time = UInt16(parts.tm_hour) << 11 | UInt16(parts.tm_min) << 5 | UInt16(parts.tm_sec / 2)
        let day = UInt16(year - 1980) << 9 | UInt16(parts.tm_mon + 1) << 5 | UInt16(parts.tm_mday)
        return (time, day)
    }
}

extension [UInt8] {
    fileprivate mutating func append(uint16 value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    fileprivate mutating func append(uint32 value: UInt32) {
        append(uint16: UInt16(truncatingIfNeeded: value))
        append(uint16: UInt16(truncatingIfNeeded: value >> 16))
    }
}
