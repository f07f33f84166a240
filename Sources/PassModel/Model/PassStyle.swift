/// The pass styles. A pass.json holds exactly one of them, as the key of
/// the object with its fields ("Pass" in Apple's Wallet Passes documentation).
package enum PassStyle: String, CaseIterable, Sendable, Hashable, Codable {
    case boardingPass
    case coupon
    case eventTicket
    case generic
    case storeCard
    /// A generic pass laid out as a poster (artwork, primary and secondary logos).
    case posterGeneric

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
        case .posterGeneric: return "poster generic passes"
        }
    }

    /// The images Wallet shows for this style (Apple's PassKit Package Format
    /// Reference; the poster images as Apple's pass-builder package describes
    /// them). Any other image is ignored by the device, so it is a mistake.
    ///
    /// An event ticket may carry the poster images too: Wallet shows them
    /// when the ticket prefers the `posterEventTicket` scheme, and falls back
    /// to the classic images on devices that cannot.
    package var allowedImages: [PassImageKind] {
        switch self {
        case .boardingPass: return [.logo, .icon, .footer]
        case .coupon, .storeCard: return [.logo, .icon, .strip]
        case .eventTicket:
            return [.logo, .icon, .strip, .background, .thumbnail, .artwork, .primaryLogo, .secondaryLogo]
        case .generic: return [.logo, .icon, .thumbnail]
        case .posterGeneric: return [.logo, .icon, .background, .artwork, .primaryLogo, .secondaryLogo]
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
        case .footer: return .atMost(PointSize(width: 286, height: 15))
        case .thumbnail: return .exactly([PointSize(width: 90, height: 90)])
        case .background:
            // A poster's background fills the pass (345×505); the classic event
            // ticket blurs a 180×220 one behind its fields. An event ticket that
            // prefers the poster layout falls back to the classic one, so either fits.
            switch self {
            case .posterGeneric: return .exactly([PointSize(width: 345, height: 505)])
            default: return .exactly([PointSize(width: 180, height: 220), PointSize(width: 345, height: 505)])
            }
        case .artwork: return .exactly([PointSize(width: 358, height: 448)])
        case .primaryLogo: return .atMost(PointSize(width: 126, height: 30))
        case .secondaryLogo: return .atMost(PointSize(width: 135, height: 12))
        case .strip:
            switch self {
            case .eventTicket: return .exactly([PointSize(width: 375, height: 98)])
            case .coupon, .storeCard: return .exactly([PointSize(width: 375, height: 144)])
            default: return .exactly([PointSize(width: 375, height: 123)])
            }
        }
    }
}
