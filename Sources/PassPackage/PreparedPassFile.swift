/// A file of a pass (an image, a `<lang>.lproj/pass.strings`) with the work
/// every pass holding it needs done once: its SHA-1 for `manifest.json` and
/// its zip entry, checksummed and compressed. The files of a template are
/// the same in each of its passes, so a build prepares them once per template.
package struct PreparedPassFile: Sendable {
    package var name: String { entry.name }
    let sha1Hex: String
    let entry: PreparedZipEntry

    /// Checks that `name` may be a file of a pass, then hashes and compresses `bytes`.
    package init(name: String, bytes: [UInt8], compression: PassPackager.Compression = .deflateExceptPNG) throws(PassPackageError) {
        if Manifest.isExcluded(name) || name == "pass.json" { throw .reservedFileName(name) }
        if let problem = PassPackager.layoutProblem(name) { throw .disallowedPath(name, problem) }
        sha1Hex = Manifest.sha1Hex(bytes)
        let deflates = compression == .deflateExceptPNG && !name.lowercased().hasSuffix(".png")
        entry = PreparedZipEntry(ZipEntry(name: name, bytes: bytes, isCompressed: deflates))
    }
}
