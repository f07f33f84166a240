/// The object under the style key (`boardingPass`, `coupon`, …): the field
/// arrays, and for boarding passes the transit type.
package struct PassStructure: Sendable, Hashable, Codable {
    package var headerFields: [Field]?
    package var primaryFields: [Field]?
    package var secondaryFields: [Field]?
    package var auxiliaryFields: [Field]?
    package var footerFields: [Field]?
    package var backFields: [Field]?
    package var additionalInfoFields: [Field]?
    /// Required on boarding passes, forbidden on every other style.
    package var transitType: TransitType?

    package init(
        headerFields: [Field]? = nil, primaryFields: [Field]? = nil, secondaryFields: [Field]? = nil,
        auxiliaryFields: [Field]? = nil, footerFields: [Field]? = nil, backFields: [Field]? = nil,
        additionalInfoFields: [Field]? = nil, transitType: TransitType? = nil
    ) {
        self.headerFields = headerFields
        self.primaryFields = primaryFields
        self.secondaryFields = secondaryFields
        self.auxiliaryFields = auxiliaryFields
        self.footerFields = footerFields
        self.backFields = backFields
        self.additionalInfoFields = additionalInfoFields
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
            case .footer: return footerFields ?? []
            case .back: return backFields ?? []
            case .additionalInfo: return additionalInfoFields ?? []
            }
        }
        set {
            let fields = newValue.isEmpty ? nil : newValue
            switch area {
            case .header: headerFields = fields
            case .primary: primaryFields = fields
            case .secondary: secondaryFields = fields
            case .auxiliary: auxiliaryFields = fields
            case .footer: footerFields = fields
            case .back: backFields = fields
            case .additionalInfo: additionalInfoFields = fields
            }
        }
    }

    /// Every field with its area, front to back.
    package var allFields: [(area: FieldArea, field: Field)] {
        FieldArea.allCases.flatMap { area in self[area].map { (area, $0) } }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transitType, headerFields, primaryFields, secondaryFields, auxiliaryFields, footerFields, backFields
        case additionalInfoFields
    }
}
