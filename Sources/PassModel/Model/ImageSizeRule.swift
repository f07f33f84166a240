/// What size an image may have.
package enum ImageSizeRule: Sendable, Hashable, CustomStringConvertible {
    /// One of these sizes exactly.
    case exactly([PointSize])
    /// Any size that fits in this one.
    case atMost(PointSize)

    /// Whether an image of `pixels` is right at `scale` (1 for `name.png`, 2 for `name@2x.png`, …).
    package func accepts(_ pixels: PointSize, scale: Int) -> Bool {
        switch self {
        case .exactly(let sizes): return sizes.contains { $0.scaled(by: scale) == pixels }
        case .atMost(let size):
            let maximum = size.scaled(by: scale)
            return pixels.width <= maximum.width && pixels.height <= maximum.height
        }
    }

    /// The accepted sizes at `scale`, in pixels: "58×58 or 76×76", "at most 320×100".
    package func pixelDescription(scale: Int) -> String {
        switch self {
        case .exactly(let sizes): return sizes.map { $0.scaled(by: scale).description }.joined(separator: " or ")
        case .atMost(let size): return "at most \(size.scaled(by: scale))"
        }
    }

    package var description: String { pixelDescription(scale: 1) + " points" }
}
