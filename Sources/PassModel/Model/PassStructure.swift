/// The object under the style key (`boardingPass`, `coupon`, …): the field
/// arrays, and for boarding passes the transit type.
package struct PassStructure: Sendable, Hashable, Codable {
    package var headerFields: [Field]?
    package var primaryFields: [Field]?
    package var secondaryFields: [Field]?
    package var auxiliaryFields: [Field]?
    package var backFields: [Field]?
    /// Required on boarding passes, forbidden on every other style.
    package var transitType: TransitType?

    package init(
        headerFields: [Field]? = nil, primaryFields: [Field]? = nil, secondaryFields: [Field]? = nil,
        auxiliaryFields: [Field]? = nil, backFields: [Field]? = nil, transitType: TransitType? = nil
    ) {
        self.headerFields = headerFields
        self.primaryFields = primaryFields
        self.secondaryFields = secondaryFields
        self.auxiliaryFields = auxiliaryFields
        self.backFields = backFields
        self.transitType = transitType
    }

    /// The fields of one area (an empty array when the area is absent).
    package subscript(area: FieldArea) -> [Field] {
        get {
            switch area {
            case .header: return headerFields ?? []
            case .primary: return primaryFields ?? []
            case .secondary: return secondaryFields ?? []
            case .auxiliary: return auxiliaryFields ?? []
            case .back: return backFields ?? []
            }
        }
        set {
            let fields = newValue.isEmpty ? nil : newValue
            switch area {
            case .header: headerFields = fields
            case .primary: primaryFields = fields
            case .secondary: secondaryFields = fields
            case .auxiliary: auxiliaryFields = fields
            case .back: backFields = fields
            }
        }
    }

    /// Every field with its area, front to back.
    package var allFields: [(area: FieldArea, field: Field)] {
        FieldArea.allCases.flatMap { area in self[area].map { (area, $0) } }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transitType, headerFields, primaryFields, secondaryFields, auxiliaryFields, backFields
    }
}
