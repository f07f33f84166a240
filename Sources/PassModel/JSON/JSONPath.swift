/// A path to a value inside a JSON document: `boardingPass.primaryFields[0].key`.
package struct JSONPath: Sendable, Hashable, CustomStringConvertible, ExpressibleByArrayLiteral {
    package enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    package var components: [Component]

    package init(_ components: [Component] = []) { self.components = components }
    package init(arrayLiteral elements: Component...) { self.components = elements }

    package static let root = JSONPath()

    package func appending(_ key: String) -> JSONPath { JSONPath(components + [.key(key)]) }
    package func appending(_ index: Int) -> JSONPath { JSONPath(components + [.index(index)]) }
    package static func + (lhs: JSONPath, rhs: JSONPath) -> JSONPath { JSONPath(lhs.components + rhs.components) }

    package var isEmpty: Bool { components.isEmpty }

    package var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let i): text += "[\(i)]"
            }
        }
        return text.isEmpty ? "(top level)" : text
    }
}
