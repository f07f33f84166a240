import Foundation

/// Turns the files of a pass into the bytes of a signed `.pkpass`.
///
/// The archive holds the given files, `manifest.json` and `signature`, all at
/// the zip root (Apple, PassKit Package Format Reference: a pass wrapped in
/// a folder shows nothing on the device). Stored and deflated entries both
/// work; see `Compression` for the trade-off.
public struct PassPackager: Sendable {
    /// Which entries are deflated.
    public enum Compression: Sendable, Hashable {
        /// Deflate everything but PNGs (already compressed, so deflating them
        /// gains nothing). Smallest passes; pass.json and pass.strings shrink
        /// by about two thirds.
        case deflateExceptPNG
        /// Store everything. Passes are a few KB larger, but packaging is
        /// cheaper: every deflated entry costs a fresh zlib stream
        /// (≈0.1–0.25 ms measured on the build machine, see
        /// `ProcessTuning.reduceHeapTrimming()`), close to a third of the
        /// signature's cost.
        case storeAll
    }

    public var signer: any ManifestSigning
    public var compression: Compression

    public init(signer: any ManifestSigning, compression: Compression = .deflateExceptPNG) {
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
    public func makePKPass(files: [String: [UInt8]], signingTime: Date = Date()) throws(PassPackageError) -> [UInt8] {
        guard files["pass.json"] != nil else { throw .missingPassJSON }
        for name in files.keys {
            if Manifest.isExcluded(name) { throw .reservedFileName(name) }
            if let problem = Self.layoutProblem(name) { throw .disallowedPath(name, problem) }
        }

        let manifestBytes = Manifest(files: files).jsonBytes
        let signature: [UInt8]
        do {
            signature = try signer.signature(forManifest: manifestBytes, signingTime: signingTime)
        } catch {
            throw .signingFailed(error)
        }

        // pass.json first, then the rest in a fixed order, so equal inputs
        // give equal archives. Order does not matter to Wallet ("Zip").
        let others = files.keys.filter { $0 != "pass.json" }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let deflates = compression == .deflateExceptPNG
        var entries = [ZipEntry(name: "pass.json", bytes: files["pass.json"]!, isCompressed: deflates)]
        for name in others {
            let isPNG = name.lowercased().hasSuffix(".png")
            entries.append(ZipEntry(name: name, bytes: files[name]!, isCompressed: deflates && !isPNG))
        }
        entries.append(ZipEntry(name: Manifest.fileName, bytes: manifestBytes, isCompressed: deflates))
        // DER with two certificates and a signature: deflating gains little.
        entries.append(ZipEntry(name: Manifest.signatureFileName, bytes: signature, isCompressed: false))
        do {
            return try ZipArchive.make(entries, modificationDate: signingTime)
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

public enum PassPackageError: Error, Sendable, CustomStringConvertible, LocalizedError {
    case missingPassJSON
    /// `manifest.json` or `signature` was passed in; the packager makes them.
    case reservedFileName(String)
    case disallowedPath(String, String)
    case signingFailed(SigningError)
    case zipFailed(ZipError)

    public var description: String {
        switch self {
        case .missingPassJSON:
            return "a pass needs a pass.json at its root"
        case let .reservedFileName(name):
            return "\(name) is made when the pass is signed; remove it from the pass's files"
        case let .disallowedPath(name, reason):
            return "\(name) cannot be part of a pass: \(reason)"
        case let .signingFailed(error):
            return error.description
        case let .zipFailed(error):
            return error.description
        }
    }

    public var errorDescription: String? { description }
}
