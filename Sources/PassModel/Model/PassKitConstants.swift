// The string constants Wallet understands, one enum per pass.json key.
// The raw values are Apple's spellings ("Pass" in Apple's Wallet Passes
// documentation).

/// `boardingPass.transitType`.
package enum TransitType: String, CaseIterable, Sendable, Hashable, Codable {
    case air = "PKTransitTypeAir"
    case boat = "PKTransitTypeBoat"
    case bus = "PKTransitTypeBus"
    case generic = "PKTransitTypeGeneric"
    case train = "PKTransitTypeTrain"
}

/// A field's `textAlignment`.
package enum TextAlignment: String, CaseIterable, Sendable, Hashable, Codable {
    case left = "PKTextAlignmentLeft"
    case center = "PKTextAlignmentCenter"
    case right = "PKTextAlignmentRight"
    case natural = "PKTextAlignmentNatural"
}

/// A field's `dateStyle` and `timeStyle`.
package enum DateStyle: String, CaseIterable, Sendable, Hashable, Codable {
    case none = "PKDateStyleNone"
    case short = "PKDateStyleShort"
    case medium = "PKDateStyleMedium"
    case long = "PKDateStyleLong"
    case full = "PKDateStyleFull"
}

/// A field's `numberStyle`.
package enum NumberStyle: String, CaseIterable, Sendable, Hashable, Codable {
    case decimal = "PKNumberStyleDecimal"
    case percent = "PKNumberStylePercent"
    case scientific = "PKNumberStyleScientific"
    case spellOut = "PKNumberStyleSpellOut"
}

/// An entry of a back field's `dataDetectorTypes`.
package enum DataDetectorType: String, CaseIterable, Sendable, Hashable, Codable {
    case phoneNumber = "PKDataDetectorTypePhoneNumber"
    case link = "PKDataDetectorTypeLink"
    case address = "PKDataDetectorTypeAddress"
    case calendarEvent = "PKDataDetectorTypeCalendarEvent"
}

/// A barcode's `format`.
package enum BarcodeFormat: String, CaseIterable, Sendable, Hashable, Codable {
    case qr = "PKBarcodeFormatQR"
    case pdf417 = "PKBarcodeFormatPDF417"
    case aztec = "PKBarcodeFormatAztec"
    case code128 = "PKBarcodeFormatCode128"
    case code39 = "PKBarcodeFormatCode39"
    case codabar = "PKBarcodeFormatCodabar"
    case ean13 = "PKBarcodeFormatEAN13"
    case i2of5 = "PKBarcodeFormatI2of5"

    /// QR and Aztec codes are square; they leave less room for fields on
    /// coupons, store cards and generic passes.
    package var isSquare: Bool { self == .qr || self == .aztec }

    /// Code 39, Codabar, EAN-13 and Interleaved 2 of 5 are recent formats:
    /// older iOS versions do not draw them, so a pass needs a barcode of
    /// another format after one of them.
    package var isRecent: Bool { [.code39, .codabar, .ean13, .i2of5].contains(self) }
}

/// `semantics.eventType`.
package enum EventType: String, CaseIterable, Sendable, Hashable, Codable {
    case generic = "PKEventTypeGeneric"
    case livePerformance = "PKEventTypeLivePerformance"
    case movie = "PKEventTypeMovie"
    case sports = "PKEventTypeSports"
    case conference = "PKEventTypeConference"
    case convention = "PKEventTypeConvention"
    case workshop = "PKEventTypeWorkshop"
    case socialGathering = "PKEventTypeSocialGathering"
}

extension CaseIterable where Self: RawRepresentable, Self.RawValue == String {
    /// "PKTextAlignmentLeft, PKTextAlignmentCenter, …", for messages.
    static var allowedValues: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The allowed value that `text` most likely meant: the one it ends with
    /// ("Air" → PKTransitTypeAir), the only one that contains it ("phone" →
    /// PKDataDetectorTypePhoneNumber), or the nearest by spelling.
    static func suggestion(for text: String) -> Self? {
        let lowered = text.lowercased()
        guard !lowered.isEmpty else { return nil }
        if let match = allCases.first(where: {
            $0.rawValue.lowercased() == lowered || $0.rawValue.lowercased().hasSuffix(lowered)
        }) {
            return match
        }
        let containing = allCases.filter { lowered.count >= 4 && $0.rawValue.lowercased().contains(lowered) }
        if containing.count == 1 { return containing[0] }
        let names = allCases.map(\.rawValue)
        guard let nearest = Spelling.nearest(to: text, in: names) else { return nil }
        return Self(rawValue: nearest)
    }
}
