/// `["boardingPass", "primaryFields", 0]` reads like the path it is.
extension JSONPath.Component: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    package init(stringLiteral value: String) { self = .key(value) }
    package init(integerLiteral value: Int) { self = .index(value) }
}
