import CLibxml2

/// A fragment of HTML (a pass field's `attributedValue`) as libxml2's HTML parser reads it: the same
/// tolerant reading a browser makes of tag soup, entities decoded, tag and attribute names in lower
/// case. Every libxml2 call of passforge is in this file; what leaves it is plain Swift values.
///
/// The parser reads from memory only (`HTML_PARSE_NONET`, no DTD, no file), so the wrapper does no I/O.
package struct HTMLFragment: Sendable, Hashable {
    /// The fragment's nodes, in document order.
    package var nodes: [HTMLNode]
    /// Start tags the parser dropped, by name: an `<html>`, `<head>` or `<body>` inside the fragment
    /// ("misplaced" to libxml2), whose attributes are lost with it. A rule that must see every tag
    /// refuses these too.
    package var discardedTags: [String]
    /// End tags that close nothing open (`</p>` with no `<p>`), by name.
    package var strayEndTags: [String]
    /// What the parser read around rather than as markup, in its words: a start tag with no `>`, an
    /// attribute value or a comment that does not end. A browser may read these differently.
    package var malformedMarkup: [String]

    /// Nesting deeper than this is refused rather than walked (a 64 MB pass.json could nest millions of tags).
    package static let maximumDepth = 256

    /// Parses `text` as the inside of a `<body>`.
    package init(parsing text: String) throws(HTMLFragmentError) {
        if text.utf8.contains(0) { throw .nulCharacter }
        _ = Self.parserInitialized
        // Inside an explicit <html><body>, leading text stays text (no implied <p>), and the fragment's
        // own <html> or <body> is reported as misplaced instead of merged away silently.
        let source = Array("<html><body>".utf8) + Array(text.utf8)
        let collector = ParseErrorCollector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        xmlSetStructuredErrorFunc(
            context,
            { context, error in
                guard let context, let error else { return }
                Unmanaged<ParseErrorCollector>.fromOpaque(context).takeUnretainedValue().record(error.pointee)
            })
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        let options = Int32(
            bitPattern: HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
                | HTML_PARSE_NODEFDTD.rawValue)
        guard source.count < Int(Int32.max) else { throw .tooLarge }
        let document = source.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                htmlReadMemory($0.baseAddress, Int32($0.count), nil, "UTF-8", options)
            }
        }
        guard let document else { throw .unreadable }
        defer { xmlFreeDoc(document) }
        // A fatal error stops the parser, and what follows it would go unseen ("Excessive depth in document").
        if let fatal = collector.fatalError { throw fatal.contains("depth") ? .tooDeep : .unreadable }
        var discarded: [String] = []
        var nodes: [HTMLNode] = []
        // The document is <html><body>…</body></html>; content after a closing </html> lands beside them.
        try Self.collectContent(of: document.pointee.children, into: &nodes, discarded: &discarded)
        self.nodes = nodes
        self.discardedTags = collector.discardedTags + discarded
        self.strayEndTags = collector.strayEndTags
        self.malformedMarkup = collector.malformedMarkup
    }

    private static let parserInitialized: Void = xmlInitParser()

    /// The nodes under the wrapper `<html>` and `<body>`: their children, in order, the wrappers left out
    /// (an attribute on them came from a tag in the fragment, so it is reported as a discarded tag).
    private static func collectContent(of first: xmlNodePtr?, into nodes: inout [HTMLNode], discarded: inout [String])
        throws(HTMLFragmentError)
    {
        var node = first
        while let current = node {
            let name = current.pointee.name.map { String(cString: $0) } ?? ""
            if current.pointee.type == XML_ELEMENT_NODE, name == "html" || name == "body" || name == "head" {
                if current.pointee.properties != nil { discarded.append(name) }
                try collectContent(of: current.pointee.children, into: &nodes, discarded: &discarded)
            } else if let converted = try convert(current, depth: 1) {
                nodes.append(converted)
            }
            node = current.pointee.next
        }
    }

    private static func convert(_ node: xmlNodePtr, depth: Int) throws(HTMLFragmentError) -> HTMLNode? {
        guard depth <= maximumDepth else { throw .tooDeep }
        let name = node.pointee.name.map { String(cString: $0) } ?? ""
        switch node.pointee.type {
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
            return .text(node.pointee.content.map { String(cString: $0) } ?? "")
        case XML_ELEMENT_NODE:
            var attributes: [HTMLAttribute] = []
            var attribute = node.pointee.properties
            while let current = attribute {
                attributes.append(
                    HTMLAttribute(
                        name: current.pointee.name.map { String(cString: $0) } ?? "",
                        value: text(of: current.pointee.children)))
                attribute = current.pointee.next
            }
            var children: [HTMLNode] = []
            var child = node.pointee.children
            while let current = child {
                if let converted = try convert(current, depth: depth + 1) { children.append(converted) }
                child = current.pointee.next
            }
            return .element(HTMLElement(name: name, attributes: attributes, children: children))
        case XML_COMMENT_NODE:
            return .comment(node.pointee.content.map { String(cString: $0) } ?? "")
        case XML_PI_NODE:
            return .processingInstruction(name)
        default:
            // Entity references and DTD nodes do not occur in an HTML body; named so a rule can refuse them.
            return .processingInstruction(name)
        }
    }

    /// An attribute's value: the text of its child nodes.
    private static func text(of first: xmlNodePtr?) -> String {
        var text = ""
        var node = first
        while let current = node {
            if let content = current.pointee.content { text += String(cString: content) }
            node = current.pointee.next
        }
        return text
    }
}

/// Collects the parser's structural complaints that change what the tree shows: tags it dropped.
private final class ParseErrorCollector {
    var discardedTags: [String] = []
    var strayEndTags: [String] = []
    var malformedMarkup: [String] = []
    var fatalError: String?

    func record(_ error: xmlError) {
        let message = error.message.map { String(cString: $0).trimmingSpaceAndNewlines() } ?? "error \(error.code)"
        if error.level == XML_ERR_FATAL {
            fatalError = fatalError ?? message
            return
        }
        guard error.domain == Int32(XML_FROM_HTML.rawValue) else { return }
        let name = error.str1.map { String(cString: $0) }
        switch xmlParserErrors(rawValue: UInt32(bitPattern: error.code)) {
        case XML_HTML_STRUCURE_ERROR:
            // "htmlParseStartTag: misplaced <body> tag": the tag and its attributes are dropped.
            discardedTags.append(name ?? "?")
        case XML_ERR_TAG_NAME_MISMATCH:
            // "Unexpected end tag : p".
            strayEndTags.append(name ?? "?")
        case XML_ERR_GT_REQUIRED, XML_ERR_ATTRIBUTE_NOT_STARTED, XML_ERR_ATTRIBUTE_NOT_FINISHED,
            XML_ERR_LITERAL_NOT_FINISHED,
            XML_ERR_COMMENT_NOT_FINISHED:
            // "Couldn't find end of Start Tag a", "AttValue: \" expected", "Comment not terminated".
            malformedMarkup.append(message)
        case XML_ERR_NAME_REQUIRED where message.hasPrefix("error parsing attribute name"):
            malformedMarkup.append(message)
        default:
            // A lone "&" or an invalid character: read as text, as a browser does.
            break
        }
    }
}

extension String {
    /// Without the spaces and newlines at either end (libxml2's messages end in a newline). No Foundation here.
    func trimmingSpaceAndNewlines() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}

package enum HTMLNode: Sendable, Hashable {
    case text(String)
    case element(HTMLElement)
    case comment(String)
    /// `<?name …?>` (or any other node kind, by its name).
    case processingInstruction(String)

    /// The text a reader sees: the text of this node and everything under it (comments left out).
    package var text: String {
        switch self {
        case .text(let text): text
        case .element(let element): element.children.map(\.text).joined()
        case .comment, .processingInstruction: ""
        }
    }
}

package struct HTMLElement: Sendable, Hashable {
    /// The tag's name, in lower case.
    package var name: String
    /// Attributes in source order, names in lower case, values with entities decoded.
    package var attributes: [HTMLAttribute]
    package var children: [HTMLNode]

    package func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
}

package struct HTMLAttribute: Sendable, Hashable {
    package var name: String
    package var value: String
}

package enum HTMLFragmentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A NUL character: libxml2 would stop reading there, so what follows would go unseen.
    case nulCharacter
    case tooDeep
    case tooLarge
    case unreadable

    package var description: String {
        switch self {
        case .nulCharacter: "it contains a NUL character (\\u0000)"
        case .tooDeep: "its tags are nested more than \(HTMLFragment.maximumDepth) levels deep"
        case .tooLarge: "it is larger than 2 GB"
        case .unreadable: "libxml2 could not read it as HTML"
        }
    }
}
