// The only file in PassPackage that calls libzip (to read archives).

import CLibzip
package import Foundation

/// One file in a zip archive.
package struct ZipEntry: Sendable, Hashable {
    /// The path inside the archive, forward slashes, no leading slash.
    package var name: String
    package var bytes: [UInt8]
    /// Whether to deflate the entry (written archives only; ignored on read).
    package var isCompressed: Bool

    package init(name: String, bytes: [UInt8], isCompressed: Bool = true) {
        self.name = name
        self.bytes = bytes
        self.isCompressed = isCompressed
    }
}

/// Bounds on what reading an archive may allocate, so that a hostile archive
/// (a "zip bomb", or millions of tiny entries) cannot exhaust memory.
package struct ZipReadLimits: Sendable, Hashable {
    package var maximumEntryCount: Int
    /// The most uncompressed bytes all entries together may hold.
    package var maximumTotalSize: Int

    package init(maximumEntryCount: Int, maximumTotalSize: Int) {
        self.maximumEntryCount = maximumEntryCount
        self.maximumTotalSize = maximumTotalSize
    }

    /// One pass (see `PackageLimits`).
    package static let pass = ZipReadLimits(
        maximumEntryCount: PackageLimits.maximumFileCount, maximumTotalSize: PackageLimits.maximumTotalSize)
    /// A `.pkpasses` bundle of passes (see `PackageLimits`).
    package static let bundle = ZipReadLimits(
        maximumEntryCount: PackageLimits.maximumBundlePassCount,
        maximumTotalSize: PackageLimits.maximumBundleSize)
}

/// Why an archive could not be written or read.
package enum ZipError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The name is empty, absolute, has `..`, `.` or empty components, a
    /// backslash, or a NUL; or it is a directory.
    case unsafeEntryName(String)
    case duplicateEntry(String)
    case notAnArchive(reason: String)
    case tooManyEntries(count: Int, limit: Int)
    case tooLarge(limit: Int)
    case encryptedEntry(String)
    case unreadableEntry(name: String, reason: String)
    case cannotWrite(reason: String)

    package var description: String {
        switch self {
        case .unsafeEntryName(let name):
            return "zip entry name \"\(name)\" is not a safe relative path: names must not be empty, start "
                + "with /, contain .. or . or empty components, backslashes or NUL"
        case .duplicateEntry(let name):
            return "zip archive contains \"\(name)\" more than once"
        case .notAnArchive(let reason):
            return "not a readable zip archive: \(reason)"
        case .tooManyEntries(let count, let limit):
            return "zip archive has \(count) entries; at most \(limit) are accepted"
        case .tooLarge(let limit):
            return "zip archive expands to more than \(limit) bytes; refusing to unpack it"
        case .encryptedEntry(let name):
            return "zip entry \"\(name)\" is encrypted; passes must not be"
        case .unreadableEntry(let name, let reason):
            return "zip entry \"\(name)\" cannot be read: \(reason)"
        case .cannotWrite(let reason):
            return "cannot create the zip archive: \(reason)"
        }
    }

    package var errorDescription: String? { description }
}

/// Zip archives in memory: written in Swift (`ZipWriter`), read with libzip
/// from the central directory, with names and sizes checked here.
package enum ZipArchive {
    /// The bytes of a new archive holding `entries` in the given order.
    ///
    /// - Parameter modificationDate: the time stamp of every entry; a fixed
    ///   value makes the archive's bytes depend only on its contents.
    package static func make(
        _ entries: [ZipEntry],
        modificationDate: Date = Date()
    ) throws(ZipError) -> [UInt8] {
        var seen = Set<String>()
        for entry in entries {
            guard isSafeEntryName(entry.name) else { throw .unsafeEntryName(entry.name) }
            guard seen.insert(entry.name).inserted else { throw .duplicateEntry(entry.name) }
        }
        let prepared = entries.map(PreparedZipEntry.init)
        var writer = ZipWriter(modificationDate: modificationDate, capacity: ZipWriter.size(of: prepared))
        for entry in prepared { try writer.append(entry) }
        return try writer.finish()
    }

    /// The entries of the archive in `bytes`, in archive order. Directory
    /// entries are skipped.
    ///
    /// Rejects unsafe names (absolute, `..`), duplicates, encrypted entries,
    /// and archives beyond `limits`, checking the sizes the archive declares
    /// before allocating and the sizes actually inflated while reading.
    package static func read(_ bytes: [UInt8], limits: ZipReadLimits = .pass) throws(ZipError) -> [ZipEntry] {
        let result: Result<[ZipEntry], ZipError> = bytes.withUnsafeBytes { buffer in
            var error = zip_error_t()
            zip_error_init(&error)
            defer { zip_error_fini(&error) }
            // The source borrows `buffer`; everything that reads it happens
            // inside this closure and the archive is discarded before return.
            guard let source = zip_source_buffer_create(buffer.baseAddress, zip_uint64_t(buffer.count), 0, &error)
            else { return .failure(.notAnArchive(reason: String(cString: zip_error_strerror(&error)))) }
            // No ZIP_CHECKCONS: it refuses archives that every conforming
            // reader (unzip, Python, KDE's, Wallet) reads, e.g. local headers
            // that set the data-descriptor flag (bit 3) and still carry the
            // sizes, as Dart's `archive` package writes them (APPNOTE 4.4.4
            // says the local sizes are then zero, but readers take the central
            // directory's). The central directory is what is read; what a
            // crafted archive could lie about is checked here instead: names
            // (no `..`, absolute or duplicate paths), the declared sizes
            // before anything is inflated, the inflated bytes against the
            // declared size, and libzip checks each entry's CRC-32 at its end.
            guard let archive = zip_open_from_source(source, ZIP_RDONLY, &error) else {
                zip_source_free(source)
                return .failure(.notAnArchive(reason: String(cString: zip_error_strerror(&error))))
            }
            defer { zip_discard(archive) }
            return Result { () throws(ZipError) in try readEntries(of: archive, limits: limits) }
        }
        return try result.get()
    }

    /// The names in the archive's central directory, nothing inflated (to
    /// tell a `.pkpasses` bundle from a pass before reading either); nil when
    /// `bytes` is not a zip archive or lists more than `limit` entries.
    package static func entryNames(_ bytes: [UInt8], limit: Int = PackageLimits.maximumFileCount) -> [String]? {
        bytes.withUnsafeBytes { buffer -> [String]? in
            var error = zip_error_t()
            zip_error_init(&error)
            defer { zip_error_fini(&error) }
            guard let source = zip_source_buffer_create(buffer.baseAddress, zip_uint64_t(buffer.count), 0, &error)
            else { return nil }
            guard let archive = zip_open_from_source(source, ZIP_RDONLY, &error) else {
                zip_source_free(source)
                return nil
            }
            defer { zip_discard(archive) }
            let count = zip_get_num_entries(archive, 0)
            guard count >= 0, count <= limit else { return nil }
            return (0..<zip_uint64_t(count)).compactMap { index in
                zip_get_name(archive, index, 0).map { String(cString: $0) }
            }
        }
    }

    /// Whether `name` is a relative path that stays inside the archive root.
    /// (Works on UTF-8 bytes: it runs for every entry of every pass.)
    static func isSafeEntryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first != UInt8(ascii: "/") else { return false }
        // A Windows drive prefix ("C:") is absolute there.
        if bytes.count >= 2 && bytes[1] == UInt8(ascii: ":") { return false }
        if bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 == 0 }) { return false }
        return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { component in
            !component.isEmpty && !component.elementsEqual([UInt8(ascii: ".")])
                && !component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
        }
    }

    private static func readEntries(of archive: OpaquePointer, limits: ZipReadLimits) throws(ZipError) -> [ZipEntry] {
        let count = zip_get_num_entries(archive, 0)
        guard count >= 0 else { throw .notAnArchive(reason: String(cString: zip_strerror(archive))) }
        guard count <= limits.maximumEntryCount else {
            throw .tooManyEntries(count: Int(count), limit: limits.maximumEntryCount)
        }

        // Check names and declared sizes of all entries before inflating any.
        var stats: [(index: zip_uint64_t, name: String, size: Int)] = []
        var names = Set<String>()
        var declaredTotal = 0
        for index in 0..<zip_uint64_t(count) {
            var stat = zip_stat_t()
            zip_stat_init(&stat)
            guard zip_stat_index(archive, index, 0, &stat) == 0,
                stat.valid & zip_uint64_t(ZIP_STAT_NAME) != 0, let cName = stat.name
            else { throw .notAnArchive(reason: String(cString: zip_strerror(archive))) }
            let name = String(cString: cName)
            if name.hasSuffix("/") && stat.size == 0 {
                guard isSafeEntryName(String(name.dropLast())) else { throw .unsafeEntryName(name) }
                continue
            }
            guard isSafeEntryName(name) else { throw .unsafeEntryName(name) }
            guard names.insert(name).inserted else { throw .duplicateEntry(name) }
            if stat.valid & zip_uint64_t(ZIP_STAT_ENCRYPTION_METHOD) != 0,
                stat.encryption_method != UInt16(ZIP_EM_NONE)
            {
                throw .encryptedEntry(name)
            }
            guard stat.valid & zip_uint64_t(ZIP_STAT_SIZE) != 0,
                stat.size <= UInt64(limits.maximumTotalSize - declaredTotal)
            else { throw .tooLarge(limit: limits.maximumTotalSize) }
            declaredTotal += Int(stat.size)
            stats.append((index, name, Int(stat.size)))
        }

        var entries: [ZipEntry] = []
        entries.reserveCapacity(stats.count)
        for stat in stats {
            entries.append(
                ZipEntry(
                    name: stat.name,
                    bytes: try readEntry(
                        stat.index, name: stat.name,
                        declaredSize: stat.size, of: archive)))
        }
        return entries
    }

    /// Reads at most `declaredSize` bytes; an entry that inflates to more
    /// than it declared is refused rather than trusted.
    private static func readEntry(
        _ index: zip_uint64_t, name: String, declaredSize: Int, of archive: OpaquePointer
    ) throws(ZipError) -> [UInt8] {
        guard let file = zip_fopen_index(archive, index, 0) else {
            throw .unreadableEntry(name: name, reason: String(cString: zip_strerror(archive)))
        }
        defer { zip_fclose(file) }
        var bytes = [UInt8](repeating: 0, count: declaredSize)
        var filled = 0
        var failure: String?
        bytes.withUnsafeMutableBytes { buffer in
            while filled < declaredSize {
                let read = zip_fread(file, buffer.baseAddress! + filled, zip_uint64_t(declaredSize - filled))
                if read < 0 {
                    failure = String(cString: zip_file_strerror(file))
                    return
                }
                if read == 0 { break }
                filled += Int(read)
            }
        }
        if let failure { throw .unreadableEntry(name: name, reason: failure) }
        guard filled == declaredSize else {
            throw .unreadableEntry(name: name, reason: "it holds \(filled) bytes but declares \(declaredSize)")
        }
        // One more read must hit the end; more data means the size lied.
        var probe: UInt8 = 0
        let extra = zip_fread(file, &probe, 1)
        if extra < 0 {
            throw .unreadableEntry(name: name, reason: String(cString: zip_file_strerror(file)))
        }
        if extra > 0 {
            throw .unreadableEntry(name: name, reason: "it inflates to more than the \(declaredSize) bytes it declares")
        }
        return bytes
    }
}
