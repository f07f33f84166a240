import ConcurrencySupport
package import Foundation
import PassModel

/// The checks a build state passes before anything in it is used: a state
/// taken from a destination (`--state-from`, `publish`) comes from a host
/// that may be hostile, and the build deletes the paths its records name.
///
/// - every path is build-owned (`TreeLayout`), and is the path of its pass;
/// - every key is `type/serial`, both matching their patterns (which keeps
///   newlines and other bytes out of `downloads.csv` and of logs);
/// - every update tag is between 0 and a day past now: a tag near the top of
///   Int64 would overflow the next build's, and one far ahead would make
///   every later tag jump with it;
/// - other text fields hold no control character.
extension BuildState {
    /// What is wrong with a state, in words for its reader.
    /// The most bytes of `state.json` taken from a destination: about 300,000
    /// passes (a record is some 900 bytes). Reading stops there.
    package static let maximumPublishedSize = 256 << 20
    /// The most bytes of `bundles.json` or `downloads.csv` taken from a destination.
    package static let maximumPublishedListSize = 64 << 20
    /// How far past the clock a tag may be: a build's tag moves to the next
    /// second at most, and clocks of two machines differ by less than a day.
    package static let tagAllowance: Int64 = 86_400_000

    /// The greatest update tag a published state may hold at `now`.
    package static func greatestTag(at now: Date) -> Int64 {
        Int64(now.timeIntervalSince1970 * 1000) + tagAllowance
    }

    /// The greatest update tag the local state may hold: the end of year 9999. The local state's tags came from
    /// this machine's builds, and stay strictly increasing even if its clock once ran ahead (they continue from
    /// there: see `PassBuilder.updateTag`); this bound only keeps their arithmetic far from overflowing.
    package static let greatestLocalTag: Int64 = 253_402_300_799_999

    /// What a build takes from a destination: its state and bundle list, decoded from the bytes in memory and
    /// checked whole before any of it is used, and the downloads list made again from them (the destination's
    /// own `downloads.csv` is never taken: it could hold any row).
    package struct Published: Sendable {
        package var state: BuildState
        /// bundles.json when the destination has one that is a bundle list (a damaged one counts as none).
        package var bundlesJSON: [UInt8]?
        package var downloadsCSV: [UInt8]
    }

    /// Decodes and checks a destination's `state.json` and `bundles.json`.
    package static func decodePublished(
        _ bytes: [UInt8], bundlesJSON: [UInt8]?, now: Date = Date(),
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(BuildError) -> Published {
        guard bytes.count <= maximumPublishedSize else {
            throw BuildError(
                .refused, "state.json is larger than \(maximumPublishedSize >> 20) MB (a state of some 300,000 passes)")
        }
        let state: BuildState
        do {
            state = try BuildStateDecoding.decode(bytes, jobs: jobs).state
        } catch {
            throw BuildError(.refused, "state.json is not a build state (\(error))")
        }
        guard state.version == currentVersion else {
            throw BuildError(
                .refused, "state.json was written by another passforge version (state version \(state.version))")
        }
        try state.check(greatestTag: greatestTag(at: now), jobs: jobs)
        var bundles: [String: BundleRecord] = [:]
        var keptBundlesJSON: [UInt8]?
        if let bundlesJSON {
            guard bundlesJSON.count <= maximumPublishedListSize else {
                throw BuildError(.refused, "bundles.json is larger than \(maximumPublishedListSize >> 20) MB")
            }
            if let records = try BundleList.records(decoding: bundlesJSON, greatestTag: greatestTag(at: now)) {
                (bundles, keptBundlesJSON) = (records, bundlesJSON)
            }
        }
        let rows = bundles.keys.sorted().map { "bundle,\($0),\(bundles[$0]!.downloadPath)\n" }.joined()
        let csv = state.downloadsCSV(jobs: jobs, appending: rows)
        return Published(state: state, bundlesJSON: keptBundlesJSON, downloadsCSV: Array(csv.utf8))
    }

    /// Throws the first problem found, or returns when every record passes. `greatestTag`: the published
    /// bound (`greatestTag(at:)`, the default) or `greatestLocalTag`.
    package func check(
        greatestTag greatest: Int64 = BuildState.greatestTag(at: Date()),
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(BuildError) {
        func checkTag(_ tag: Int64, _ what: @autoclosure () -> String) throws(BuildError) {
            guard tag >= 0, tag <= greatest else {
                throw BuildError(
                    .refused,
                    "\(what()) is \(tag), not an update tag of this build's time (0 to \(greatest), milliseconds since 1970)"
                )
            }
        }
        try checkTag(lastUpdateTag, "lastUpdateTag")
        try Self.checkText(builtAt, "builtAt")
        // The pass records on every core: at 100,000 passes they are most of the work.
        let records = Array(passes)
        let chunk = 4096
        let failures = ParallelLoop.map(Array(stride(from: 0, to: records.count, by: chunk)), jobs: jobs) {
            start -> BuildError? in
            for (key, record) in records[start..<min(records.count, start + chunk)] {
                do throws(BuildError) { try Self.check(record, key: key, greatestTag: greatest) } catch { return error }
            }
            return nil
        }
        if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }
        for (key, record) in removedPasses { try Self.check(record, key: key, greatestTag: greatest) }
        for (path, file) in contentFiles {
            try Self.checkText(path, "content file path")
            for key in file.passes where !TreeLayout.isPassKey(key) {
                throw BuildError(
                    .refused,
                    "content file \(Self.quoted(path)) lists pass \(Self.quoted(key)), which is not passTypeIdentifier/serialNumber"
                )
            }
        }
    }

    /// One removed item's record of a published state, listed under `key`.
    static func check(_ record: RemovedItemRecord, key: String, greatestTag: Int64) throws(BuildError) {
        try checkKey(key, type: record.typeIdentifier, serial: record.identifier, of: "removed pass")
        guard record.removedTag >= 0, record.removedTag <= greatestTag else {
            throw BuildError(
                .refused,
                "removedTag of removed pass \(key) is \(record.removedTag), not an update tag of this build's time (0 to \(greatestTag), milliseconds since 1970)"
            )
        }
        try checkText(record.tokenHash, "tokenHash of removed pass \(key)")
        for file in record.files where !TreeLayout.isBuildOwned(file) {
            throw BuildError(
                .refused,
                "removed pass \(key) lists file \(quoted(file)), which is not a pass, token link or download path of the output tree"
            )
        }
    }

    /// One item record of a published state, listed under `key`.
    static func check(_ record: ItemRecord, key: String, greatestTag: Int64) throws(BuildError) {
        let type = record.typeIdentifier
        let serial = record.identifier
        try checkKey(key, type: type, serial: serial, of: "pass")
        guard record.updateTag >= 0, record.updateTag <= greatestTag else {
            throw BuildError(
                .refused,
                "pass \(key) has updateTag \(record.updateTag), not an update tag of this build's time (0 to \(greatestTag), milliseconds since 1970)"
            )
        }
        guard record.size >= 0 else { throw BuildError(.refused, "pass \(key) has a negative size") }
        let kind = record.kind
        guard TreeLayout.isCapabilityDownload(record.downloadPath, kind: kind) else {
            throw BuildError(
                .refused,
                "pass \(key) has downloadPath \(quoted(record.downloadPath)), which is not download/<capability>.\(kind.fileExtension)"
            )
        }
        if let path = record.publicDownloadPath,
            !TreeLayout.isPublicDownloadPath(path, kind: kind, type: type, serial: serial)
        {
            throw BuildError(
                .refused,
                "pass \(key) has publicDownloadPath \(quoted(path)), which is not download/\(key).\(kind.fileExtension)"
            )
        }
        if let path = record.tokenPath, !TreeLayout.isTokenPath(path, type: type, serial: serial) {
            throw BuildError(
                .refused, "pass \(key) has tokenPath \(quoted(path)), which is not by-token/\(key).<token>")
        }
        if let offer = record.offer, !IdentifierPatterns.isOfferName(offer) {
            throw BuildError(
                .refused,
                "pass \(key) has offer \(quoted(offer)), which is not an offer name (\(IdentifierPatterns.offerName))")
        }
        try checkText(record.etag, "etag of pass \(key)")
        try checkText(record.teamIdentifier, "teamIdentifier of pass \(key)")
        try checkText(record.templateName, "templateName of pass \(key)")
        try checkText(record.sourceFile, "sourceFile of pass \(key)")
        for path in record.imagePaths { try checkText(path, "an image path of pass \(key)") }
    }

    /// `key` is `type/serial`, and both match their patterns.
    private static func checkKey(_ key: String, type: String, serial: String, of what: String) throws(BuildError) {
        guard TreeLayout.isPassType(type) else {
            throw BuildError(
                .refused,
                "\(what) \(quoted(key)) has passTypeIdentifier \(quoted(type)), which does not match [A-Za-z0-9][A-Za-z0-9.-]*"
            )
        }
        guard TreeLayout.isSerial(serial) else {
            throw BuildError(
                .refused,
                "\(what) \(quoted(key)) has serialNumber \(quoted(serial)), which does not match [A-Za-z0-9][A-Za-z0-9._~-]{0,127}"
            )
        }
        guard TreeLayout.isKey(key, type: type, serial: serial) else {
            throw BuildError(
                .refused,
                "\(what) \(quoted(key)) is listed under a key that is not its passTypeIdentifier/serialNumber (\(type)/\(serial))"
            )
        }
    }

    /// Text with no control character (and so no newline), and valid UTF-8.
    package static func checkText(_ text: String, _ what: @autoclosure () -> String) throws(BuildError) {
        var text = text
        // On the bytes: C0 controls and DEL, C1 controls (U+0080–U+009F: C2 80–C2 9F), and U+FFFD (EF BF BD),
        // which stands for the invalid UTF-8 the decoder replaced.
        let clean = text.withUTF8 { bytes in
            for index in bytes.indices {
                let byte = bytes[index]
                if byte < 0x20 || byte == 0x7F { return false }
                if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] <= 0x9F { return false }
                if byte == 0xEF, index + 2 < bytes.count, bytes[index + 1] == 0xBF, bytes[index + 2] == 0xBD {
                    return false
                }
            }
            return true
        }
        guard clean else {
            throw BuildError(.refused, "\(what()) \(quoted(text)) holds a control character or invalid UTF-8")
        }
    }

    /// `text` in double quotes, every byte but printable ASCII written as `\u{…}`, cut short: safe in one line of
    /// an error or a log, whatever a hostile state holds (newlines, escapes, bidirectional marks).
    package static func quoted(_ text: String) -> String {
        var result = "\""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            guard index < 120 else {
                result += "…"
                break
            }
            switch scalar.value {
            case 0x22, 0x5C: result += "\\" + String(scalar)
            case 0x20..<0x7F: result.unicodeScalars.append(scalar)
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result + "\""
    }
}
