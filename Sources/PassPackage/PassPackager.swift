package import Foundation
import PassModel

/// Turns the files of a pass into the bytes of a signed `.pkpass`.
///
/// The archive holds the given files, `manifest.json` and `signature`, all at
/// the zip root (Apple, PassKit Package Format Reference: a pass wrapped in
/// a folder shows nothing on the device). Stored and deflated entries both
/// work; see `Compression` for the trade-off.
package struct PassPackager: Sendable {
    /// Which entries are deflated.
    package enum Compression: Sendable, Hashable {
        /// Deflate everything but PNGs (already compressed, so deflating them
        /// gains nothing), and but the files made anew for each package
        /// (pass.json, manifest.json) while they are smaller than
        /// `minimumDeflatedSize`. A template's files are deflated once per
        /// build, so they cost nothing per pass; pass.strings shrinks by
        /// about two thirds.
        case deflateExceptPNG
        /// Store everything.
        case storeAll
    }

    /// The size from which a file made for each package (its pass.json or order.json, its manifest.json) is
    /// deflated. Below it, deflating was 7% of a full build's CPU time on tmpfs (about 28 µs a pass, with
    /// caches cold after each RSA signature, for a 0.8 KB pass.json and a 0.3 KB manifest) to save some
    /// 400 bytes of a pass whose signature alone is 2.4 KB.
    package static let minimumDeflatedSize = 4096

    package var signer: any ManifestSigning
    package var compression: Compression

    package init(signer: any ManifestSigning, compression: Compression = .deflateExceptPNG) {
        self.signer = signer
        self.compression = compression
    }

    /// The `.pkpass` bytes for `files`.
    ///
    /// - Parameters:
    ///   - files: path in the pass → bytes: `pass.json`, images, and
    ///     `<lang>.lproj/…` files. Must not contain `manifest.json` or
    ///     `signature`; they are made here.
    ///   - signingTime: the signature's signing time and the zip entries'
    ///     time stamp.
    package func makePKPass(files: [String: [UInt8]], signingTime: Date = Date()) throws(PassPackageError) -> [UInt8] {
        guard let passJSON = files["pass.json"] else { throw .missingPassJSON }
        var prepared: [PreparedPassFile] = []
        for (name, bytes) in files where name != "pass.json" {
            prepared.append(try PreparedPassFile(name: name, bytes: bytes, compression: compression))
        }
        return try makePKPass(passJSON: passJSON, files: prepared, signingTime: signingTime)
    }

    /// The `.pkpass` bytes for `passJSON` and the other `files`, prepared
    /// beforehand (a template's files once for all its passes).
    ///
    /// The archive holds pass.json first, then the files sorted by name,
    /// `manifest.json` and `signature`, so equal inputs give equal archives
    /// (order does not matter to Wallet).
    package func makePKPass(passJSON: [UInt8], files: [PreparedPassFile], signingTime: Date) throws(PassPackageError)
        -> [UInt8]
    {
        try makePackage(.pass, rootBytes: passJSON, files: files, signingTime: signingTime)
    }

    /// The `.order` bytes for `orderJSON` and the other `files` (prepared with
    /// `digest: .sha256`): the same layout, signature and zip as a pass, with
    /// a manifest of SHA-256 hashes (Apple, "Building a distributable order
    /// package"), signed with the Order Type ID certificate.
    package func makeOrder(orderJSON: [UInt8], files: [PreparedPassFile], signingTime: Date) throws(PassPackageError)
        -> [UInt8]
    {
        try makePackage(.order, rootBytes: orderJSON, files: files, signingTime: signingTime)
    }

    /// The `.order` bytes for `files` (`order.json`, images, `<lang>.lproj/order.strings`).
    package func makeOrder(files: [String: [UInt8]], signingTime: Date = Date()) throws(PassPackageError) -> [UInt8] {
        let rootFile = WalletItemKind.order.rootFile
        guard let orderJSON = files[rootFile] else { throw .missingRootFile(rootFile) }
        var prepared: [PreparedPassFile] = []
        for (name, bytes) in files where name != rootFile {
            prepared.append(
                try PreparedPassFile(
                    name: name, bytes: bytes, compression: compression, digest: WalletItemKind.order.digest))
        }
        return try makeOrder(orderJSON: orderJSON, files: prepared, signingTime: signingTime)
    }

    /// A signed package: its root file first, then the files sorted by name, `manifest.json` (hashes by the kind's
    /// digest) and `signature`.
    private func makePackage(
        _ kind: WalletItemKind, rootBytes: [UInt8], files: [PreparedPassFile],
        signingTime: Date
    ) throws(PassPackageError) -> [UInt8] {
        let (rootFile, digest) = (kind.rootFile, kind.digest)
        let files = files.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        // The manifest's entries in its order (names sorted by bytes), the root file in its place; a name
        // that repeats is next to its twin. No dictionary: this runs once for every package a build signs.
        var entries: [(name: String, hash: String)] = []
        entries.reserveCapacity(files.count + 1)
        var root: (name: String, hash: String)? = (rootFile, digest.hex(rootBytes))
        for file in files {
            // A file prepared for the other kind of package would list the wrong hash.
            guard file.digest == digest else {
                throw .disallowedPath(
                    file.name,
                    "it was prepared for a package whose manifest lists \(file.digest) hashes; this one lists \(digest)"
                )
            }
            if let pending = root, !file.name.utf8.lexicographicallyPrecedes(rootFile.utf8) {
                entries.append(pending)
                root = nil
            }
            guard entries.last?.name != file.name else { throw .duplicateFile(file.name) }
            entries.append((file.name, file.digestHex))
        }
        if let root { entries.append(root) }
        let manifestBytes = Manifest.jsonBytes(sortedEntries: entries)
        let signature: [UInt8]
        do {
            signature = try signer.signature(forManifest: manifestBytes, signingTime: signingTime)
        } catch {
            throw .signingFailed(error)
        }

        let deflates = { (bytes: [UInt8]) in
            self.compression == .deflateExceptPNG && bytes.count >= Self.minimumDeflatedSize
        }
        let passEntry = PreparedZipEntry(ZipEntry(name: rootFile, bytes: rootBytes, isCompressed: deflates(rootBytes)))
        let manifestEntry = PreparedZipEntry(
            ZipEntry(name: Manifest.fileName, bytes: manifestBytes, isCompressed: deflates(manifestBytes)))
        // DER with two certificates and a signature: deflating gains little.
        let signatureEntry = PreparedZipEntry(
            ZipEntry(name: Manifest.signatureFileName, bytes: signature, isCompressed: false))
        let zipEntries = [passEntry] + files.map(\.entry) + [manifestEntry, signatureEntry]
        do {
            var writer = ZipWriter(modificationDate: signingTime, capacity: ZipWriter.size(of: zipEntries))
            for entry in zipEntries { try writer.append(entry) }
            return try writer.finish()
        } catch {
            throw .zipFailed(error)
        }
    }

    /// Why `name` may not be a file of a pass, or nil when it may: files sit
    /// at the root, or one level down in a `<lang>.lproj` folder (Apple,
    /// PassKit Package Format Reference, "Localizing a Pass").
    static func layoutProblem(_ name: String) -> String? {
        guard ZipArchive.isSafeEntryName(name) else {
            return "it must be a relative path without .., empty components or backslashes"
        }
        let components = name.split(separator: "/")
        switch components.count {
        case 1:
            return nil
        case 2 where components[0].hasSuffix(".lproj") && components[0].count > ".lproj".count:
            return nil
        default:
            return "pass files sit at the root of the pass, or directly inside a <language>.lproj folder"
        }
    }
}

package enum PassPackageError: Error, Sendable, CustomStringConvertible, LocalizedError {
    case missingPassJSON
    /// An order without its order.json.
    case missingRootFile(String)
    /// `manifest.json` or `signature` was passed in; the packager makes them.
    case reservedFileName(String)
    case disallowedPath(String, String)
    /// Two prepared files share a name.
    case duplicateFile(String)
    case signingFailed(SigningError)
    case zipFailed(ZipError)

    package var description: String {
        switch self {
        case .missingPassJSON:
            return "a pass needs a pass.json at its root"
        case .missingRootFile(let name):
            return "the package needs a \(name) at its root"
        case .reservedFileName(let name):
            return "\(name) is made when the pass is signed; remove it from the pass's files"
        case .disallowedPath(let name, let reason):
            return "\(name) cannot be part of a pass: \(reason)"
        case .duplicateFile(let name):
            return "\(name) is given twice; a pass holds each file once"
        case .signingFailed(let error):
            return error.description
        case .zipFailed(let error):
            return error.description
        }
    }

    package var errorDescription: String? { description }
}
