import PassModel

/// A file of a pass or an order (an image, a `<lang>.lproj/pass.strings`)
/// with the work every package holding it needs done once: its hash for
/// `manifest.json` and its zip entry, checksummed and compressed. The files of
/// a template are the same in each of its passes, so a build prepares them
/// once per template.
package struct PreparedPassFile: Sendable {
    package var name: String { entry.name }
    /// The hash `manifest.json` lists for the file, by `digest`.
    let digestHex: String
    let digest: Manifest.Digest
    let entry: PreparedZipEntry

    /// Checks that `name` may be a file of a pass (or an order), then hashes and compresses `bytes`.
    package init(
        name: String, bytes: [UInt8], compression: PassPackager.Compression = .deflateExceptPNG,
        digest: Manifest.Digest = .sha1
    ) throws(PassPackageError) {
        if Manifest.isExcluded(name) || WalletItemKind.allCases.contains(where: { $0.rootFile == name }) {
            throw .reservedFileName(name)
        }
        if let problem = PassPackager.layoutProblem(name) { throw .disallowedPath(name, problem) }
        digestHex = digest.hex(bytes)
        self.digest = digest
        let deflates = compression == .deflateExceptPNG && !name.lowercased().hasSuffix(".png")
        entry = PreparedZipEntry(ZipEntry(name: name, bytes: bytes, isCompressed: deflates))
    }
}
