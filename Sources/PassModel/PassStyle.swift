/// The five pass styles. A pass.json holds exactly one of them, as the key of
/// the object with its fields (pass-format-notes.md, "Required keys and style").
public enum PassStyle: String, CaseIterable, Sendable, Hashable, Codable {
    case boardingPass
    case coupon
    case eventTicket
    case generic
    case storeCard

    /// The pass.json key that holds this style's fields, e.g. `"boardingPass"`.
    public var key: String { rawValue }

    /// Words for messages: "boarding passes".
    public var pluralName: String {
        switch self {
        case .boardingPass: return "boarding passes"
        case .coupon: return "coupons"
        case .eventTicket: return "event tickets"
        case .generic: return "generic passes"
        case .storeCard: return "store cards"
        }
    }

    /// The images Wallet shows for this style (pass-format-notes.md, "Images").
    /// Any other image is ignored by the device, so it is a mistake.
    public var allowedImages: [PassImageKind] {
        switch self {
        case .boardingPass: return [.logo, .icon, .footer]
        case .coupon, .storeCard: return [.logo, .icon, .strip]
        case .eventTicket: return [.logo, .icon, .strip, .background, .thumbnail]
        case .generic: return [.logo, .icon, .thumbnail]
        }
    }

    public func allows(_ image: PassImageKind) -> Bool { allowedImages.contains(image) }

    /// The size, in points, that `image` should have on this style; `nil`
    /// when the style does not show that image. Multiply by the scale
    /// (1, 2 or 3) for pixels.
    public func expectedSize(of image: PassImageKind) -> ImageSizeRule? {
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

/// The kinds of image a pass can carry; the raw value is the file's base name.
public enum PassImageKind: String, CaseIterable, Sendable, Hashable {
    case icon
    case logo
    case footer
    case thumbnail
    case strip
    case background
}

/// A width and height in points (or pixels, once multiplied by a scale).
public struct PointSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public func scaled(by scale: Int) -> PointSize { PointSize(width: width * scale, height: height * scale) }

    public var description: String { "\(width)×\(height)" }
}

/// What size an image may have.
public enum ImageSizeRule: Sendable, Hashable, CustomStringConvertible {
    /// One of these sizes exactly.
    case exactly([PointSize])
    /// Any size that fits in this one.
    case atMost(PointSize)

    /// Whether an image of `pixels` is right at `scale` (1 for `name.png`, 2 for `name@2x.png`, …).
    public func accepts(_ pixels: PointSize, scale: Int) -> Bool {
        switch self {
        case .exactly(let sizes): return sizes.contains { $0.scaled(by: scale) == pixels }
        case .atMost(let size):
            let maximum = size.scaled(by: scale)
            return pixels.width <= maximum.width && pixels.height <= maximum.height
        }
    }

    /// The accepted sizes at `scale`, in pixels: "58×58 or 76×76", "at most 320×100".
    public func pixelDescription(scale: Int) -> String {
        switch self {
        case .exactly(let sizes): return sizes.map { $0.scaled(by: scale).description }.joined(separator: " or ")
        case .atMost(let size): return "at most \(size.scaled(by: scale))"
        }
    }

    public var description: String { pixelDescription(scale: 1) + " points" }
}
