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
