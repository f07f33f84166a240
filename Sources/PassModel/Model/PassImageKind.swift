/// The kinds of image a pass can carry; the raw value is the file's base name.
package enum PassImageKind: String, CaseIterable, Sendable, Hashable {
    case icon
    case logo
    case footer
    case thumbnail
    case strip
    case background
}
