/// The field areas of a pass, in the order Wallet lays them out.
package enum FieldArea: String, CaseIterable, Sendable, Hashable {
    case header = "headerFields"
    case primary = "primaryFields"
    case secondary = "secondaryFields"
    case auxiliary = "auxiliaryFields"
    /// The footer of the pass face.
    case footer = "footerFields"
    case back = "backFields"
    /// The "Additional Info" section Wallet shows below the pass.
    case additionalInfo = "additionalInfoFields"

    /// The key of the array in the style object, e.g. `"primaryFields"`.
    package var key: String { rawValue }
}
