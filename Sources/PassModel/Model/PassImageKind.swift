/// The kinds of image a pass can carry; the raw value is the file's base name.
package enum PassImageKind: String, CaseIterable, Sendable, Hashable {
    case icon
    case logo
    case footer
    case thumbnail
    case strip
    case background
    /// The poster image of a poster event ticket or poster generic pass.
    case artwork
    /// The logo at the top of a poster pass.
    case primaryLogo
    /// A second, smaller logo some poster passes show.
    case secondaryLogo

    /// Shown only on the poster layouts (poster event tickets and poster generic passes).
    package var isPosterOnly: Bool { self == .artwork || self == .primaryLogo || self == .secondaryLogo }
}
