package import PassModel

/// Which item of the tree: a pass (`passTypeIdentifier`, `serialNumber`) or an order (`orderTypeIdentifier`,
/// `orderIdentifier`).
///
/// Passes and orders share one namespace of type identifiers, as they share `by-token/` and
/// `v1/devices/…/registrations/` (the build refuses a type identifier used for both): `text`,
/// `<type>/<identifier>`, names one item whatever its kind. It is the key of the build state's records, of
/// `downloads.csv` and of landing-page lists; it is spelled and read here only.
package struct ItemKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let kind: WalletItemKind
    /// A pass's `passTypeIdentifier` or an order's `orderTypeIdentifier`.
    package let typeIdentifier: String
    /// A pass's `serialNumber` or an order's `orderIdentifier`.
    package let identifier: String

    package init(kind: WalletItemKind, typeIdentifier: String, identifier: String) {
        (self.kind, self.typeIdentifier, self.identifier) = (kind, typeIdentifier, identifier)
    }

    /// A pass's key.
    package static func pass(_ typeIdentifier: String, _ serialNumber: String) -> ItemKey {
        ItemKey(kind: .pass, typeIdentifier: typeIdentifier, identifier: serialNumber)
    }

    /// The key spelled `<type>/<identifier>` (`text`), or nil when it has no slash. The kind is not in the text:
    /// the caller knows it (the record it keys, or the type's kind in the build).
    package init?(_ text: some StringProtocol, kind: WalletItemKind) {
        guard let slash = text.firstIndex(of: "/") else { return nil }
        self.init(
            kind: kind, typeIdentifier: String(text[..<slash]), identifier: String(text[text.index(after: slash)...]))
    }

    /// `<type>/<identifier>`: the key as files and lists spell it.
    package var text: String { Self.text(typeIdentifier: typeIdentifier, identifier: identifier) }

    package var description: String { text }

    /// `<type>/<identifier>`, for a caller that has no key yet (a registration, say, which names no kind).
    package static func text(typeIdentifier: some StringProtocol, identifier: some StringProtocol) -> String {
        "\(typeIdentifier)/\(identifier)"
    }

    /// The two halves of `<type>/<identifier>` text, or nil when it has no slash.
    package static func split(_ text: String) -> (typeIdentifier: Substring, identifier: Substring)? {
        guard let slash = text.firstIndex(of: "/") else { return nil }
        return (text[..<slash], text[text.index(after: slash)...])
    }

    /// `v1/passes/<type>/<serial>` or `v1/orders/<type>/<identifier>`.
    package var path: String { TreeLayout.itemPath(kind: kind, type: typeIdentifier, identifier: identifier) }

    /// In the order of `text` (the order the build writes its records in), then passes before orders.
    package static func < (lhs: ItemKey, rhs: ItemKey) -> Bool {
        if lhs.typeIdentifier != rhs.typeIdentifier { return lhs.text < rhs.text }
        if lhs.identifier != rhs.identifier { return lhs.identifier < rhs.identifier }
        return lhs.kind == .pass && rhs.kind == .order
    }
}
