import Foundation
package import PassModel

/// One pass or one order as an editor defined it in `content/`: which
/// template, which serial (or order identifier), which values.
///
/// An order is written like a pass, with `orderIdentifier:` where a pass has
/// `serialNumber:`, `order:` where a pass has `pass:`, and `orders:` where a
/// file of passes has `passes:`. `kind` records which of these keys the entry
/// used; the renderer, which knows the template, refuses an entry whose kind
/// is not its template's (at the identifier's line).
package struct PassDefinition: Sendable {
    /// The identifier within the type: the pass's `serialNumber`, or for an order its `orderIdentifier`.
    /// (The build keys its records by it for both kinds.)
    package var serialNumber: String
    /// Where `serialNumber:` (or `orderIdentifier:`) was written.
    package var serialLocation: SourceLocation
    package var templateName: String
    package var templateLocation: SourceLocation
    /// `data:` (defaults merged in), an object.
    package var data: SourceNode
    /// `pass:` (`order:` for an order), deep-merged over the rendered pass.json (order.json).
    package var passOverride: SourceNode?
    /// `images:`: name in the pass → file on disk (relative paths resolved against the content file).
    package var images: [(name: String, path: String, location: SourceLocation)]
    package var download: DownloadPolicy?
    /// The DeviceCheck offer whose pool the pass is in (`offer:`), if any.
    package var offer: OfferMembership? = nil
    /// The `.pkpasses` bundle the pass belongs to: `bundle:` of its file.
    package var bundle: BundleDeclaration? = nil
    /// The content file, and where in it this pass starts.
    package var file: String
    package var location: SourceLocation
    /// The whole definition as canonical JSON: what decides whether the pass changed.
    package var canonicalBytes: [UInt8]
    /// A pass or an order, by the keys the entry used (`serialNumber:`/`pass:`/`passes:` or
    /// `orderIdentifier:`/`order:`/`orders:`).
    package var kind: WalletItemKind = .pass

    /// The identifier within the type: `serialNumber` or `orderIdentifier`.
    package var identifier: String { serialNumber }

    package static let serialPattern = IdentifierPatterns.identifier

    /// Whether `serial` matches `serialPattern`: safe as a file name and in a URL path.
    package static func isValidSerialNumber(_ serial: String) -> Bool { IdentifierPatterns.isIdentifier(serial) }
}

/// `offer: NAME` on a pass (or beside `passes:`): the pass is in that DeviceCheck
/// offer's pool, handed to at most one device by `passforge serve`.
package struct OfferMembership: Sendable, Hashable {
    package var name: String
    package var location: SourceLocation

    package static let namePattern = IdentifierPatterns.offerName

    /// Whether `name` matches `namePattern`: safe in a URL path and a metric label.
    package static func isValidName(_ name: String) -> Bool { IdentifierPatterns.isOfferName(name) }
}

/// `bundle: NAME` in a file with `passes:`: the file's passes, in order, are
/// also offered as one `.pkpasses` download (a family's tickets, the legs
/// of a trip).
package struct BundleDeclaration: Sendable, Hashable {
    /// Unique in the project; it derives the bundle's download URL.
    package var name: String
    package var location: SourceLocation

    /// Apple's limit for one `.pkpasses` bundle ("Distributing and updating a pass").
    package static let maximumPassCount = 10

    package init(name: String, location: SourceLocation) {
        self.name = name
        self.location = location
    }
}
