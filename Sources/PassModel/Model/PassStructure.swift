/// The object under the style key (`boardingPass`, `coupon`, …): the field
/// arrays, and for boarding passes the transit type.
public struct PassStructure: Sendable, Hashable, Codable {
    public var headerFields: [Field]?
    public var primaryFields: [Field]?
    public var secondaryFields: [Field]?
    public var auxiliaryFields: [Field]?
    public var backFields: [Field]?
    /// Required on boarding passes, forbidden on every other style.
    public var transitType: TransitType?

    public init(
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
    public subscript(area: FieldArea) -> [Field] {
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
    public var allFields: [(area: FieldArea, field: Field)] {
        FieldArea.allCases.flatMap { area in self[area].map { (area, $0) } }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transitType, headerFields, primaryFields, secondaryFields, auxiliaryFields, backFields
    }
}
