/// A width and height in points (or pixels, once multiplied by a scale).
package struct PointSize: Sendable, Hashable, CustomStringConvertible {
    package var width: Int
    package var height: Int

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    package func scaled(by scale: Int) -> PointSize { PointSize(width: width * scale, height: height * scale) }

    package var description: String { "\(width)×\(height)" }
}
