/// The five pass styles. A pass.json holds exactly one of them, as the key of
/// the object with its fields ("Pass" in Apple's Wallet Passes documentation).
package enum PassStyle: String, CaseIterable, Sendable, Hashable, Codable {
    case boardingPass
    case coupon
    case eventTicket
    case generic
    case storeCard

    /// The pass.json key that holds this style's fields, e.g. `"boardingPass"`.
    package var key: String { rawValue }

    /// Words for messages: "boarding passes".
    package var pluralName: String {
        switch self {
        case .boardingPass: return "boarding passes"
        case .coupon: return "coupons"
        case .eventTicket: return "event tickets"
        case .generic: return "generic passes"
        case .storeCard: return "store cards"
        }
    }

    /// The images Wallet shows for this style (Apple's PassKit Package Format
    /// Reference).
    /// Any other image is ignored by the device, so it is a mistake.
    package var allowedImages: [PassImageKind] {
        switch self {
        case .boardingPass: return [.logo, .icon, .footer]
        case .coupon, .storeCard: return [.logo, .icon, .strip]
        case .eventTicket: return [.logo, .icon, .strip, .background, .thumbnail]
        case .generic: return [.logo, .icon, .thumbnail]
        }
    }

    package func allows(_ image: PassImageKind) -> Bool { allowedImages.contains(image) }

    /// The size, in points, that `image` should have on this style; `nil`
    /// when the style does not show that image. Multiply by the scale
    /// (1, 2 or 3) for pixels.
    package func expectedSize(of image: PassImageKind) -> ImageSizeRule? {
        guard allows(image) else { return nil }
        switch image {
        // 29×29 is the classic icon; the iOS 18 HIG asks for 38×38. Both display well.
        case .icon: return .exactly([PointSize(width: 29, height: 29), PointSize(width: 38, height: 38)])
        // The logo may be narrower or shorter; only its maximum is fixed.
        case .logo: return .atMost(PointSize(width: 160, height: 50))
        case .footer: return .exactly([PointSize(width: 286, height: 15)])
        case .thumbnail: return .exactly([PointSize(width: 90, height: 90)])
        case .background: return .exactly([PointSize(width: 180, height: 220)])
        case .strip:
            switch self {
            case .eventTicket: return .exactly([PointSize(width: 375, height: 98)])
            case .coupon, .storeCard: return .exactly([PointSize(width: 375, height: 144)])
            default: return .exactly([PointSize(width: 375, height: 123)])
            }
        }
    }
}
