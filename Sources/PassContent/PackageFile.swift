/// A file that goes into every pass made from a template: an image or a
/// `<lang>.lproj/pass.strings`.
package struct PackageFile: Sendable, Hashable {
    /// Path inside the .pkpass, e.g. `icon@2x.png` or `de.lproj/pass.strings`.
    package var name: String
    package var bytes: [UInt8]
    /// Where it came from, for messages.
    package var source: String

    package init(name: String, bytes: [UInt8], source: String) {
        self.name = name
        self.bytes = bytes
        self.source = source
    }
}
