/// The field areas of a pass, in the order Wallet lays them out.
package enum FieldArea: String, CaseIterable, Sendable, Hashable {
    case header = "headerFields"
    case primary = "primaryFields"
    case secondary = "secondaryFields"
    case auxiliary = "auxiliaryFields"
    case back = "backFields"

    /// The key of the array in the style object, e.g. `"primaryFields"`.
    package var key: String { rawValue }
}
