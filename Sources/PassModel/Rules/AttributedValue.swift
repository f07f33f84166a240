import HTMLFragments
import Synchronization

/// A field's `attributedValue` as Wallet reads it: HTML in which only links (`<a href="…">…</a>`) count
/// (Apple's PassFieldContent: "The value of the field, including HTML markup for links. The only supported
/// tag is the `<a>` tag and its `href` attribute"). Read by libxml2's HTML parser (`HTMLFragment`), so the
/// rule and the preview see the tags a browser would, entities and all.
///
/// - `problems` is what the rule refuses: any other tag, comment or attribute, and a link whose target is
///   not an https, http, tel or mailto URL (`javascript:`, `data:`, a relative path).
/// - `segments` is what may be shown: text, and links with an allowed target; everything else is text.
package struct AttributedValue: Sendable, Hashable {
    package enum Segment: Sendable, Hashable {
        case text(String)
        case link(href: String, text: String)
    }

    package enum Problem: Sendable, Hashable {
        /// A tag other than `<a>`: `script`, `img`, `/p` (a stray end tag), `!--` (a comment), `?php`.
        case tag(String)
        /// An attribute other than `href` on a link: `onclick`, `target`.
        case attribute(String)
        case linkWithoutHref
        /// A link's target that is not an https, http, tel or mailto URL.
        case target(String)
        /// Markup the parser read around (a tag with no `>`, an unterminated attribute value), in its words.
        case malformed(String)
        case unreadable(String)
    }

    /// The link targets Wallet opens for a pass: web pages, phone numbers, mail.
    package static let linkSchemes = ["https", "http", "tel", "mailto"]

    package private(set) var segments: [Segment] = []
    package private(set) var problems: [Problem] = []

    /// The passes of a template usually share their attributedValue, and libxml2 takes about 23 µs a value
    /// (release build): each distinct short text is read once, for up to 512 texts of at most 4 KB each.
    package static func reading(_ text: String) -> AttributedValue {
        guard text.utf8.count <= 4096 else { return AttributedValue(text) }
        if let known = cache.withLock({ $0[text] }) { return known }
        let value = AttributedValue(text)
        cache.withLock { table in
            if table.count >= 512 { table.removeAll(keepingCapacity: true) }
            table[text] = value
        }
        return value
    }

    private static let cache = Mutex<[String: AttributedValue]>([:])

    package init(_ text: String) {
        // Without "<" or "&" there is neither markup nor an entity: the text is shown as it is.
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else {
            segments = text.isEmpty ? [] : [.text(text)]
            return
        }
        let fragment: HTMLFragment
        do {
            fragment = try HTMLFragment(parsing: text)
        } catch {
            problems = [.unreadable(error.description)]
            segments = [.text(text)]
            return
        }
        for name in fragment.discardedTags { note(.tag(name)) }
        for name in fragment.strayEndTags where name != "a" { note(.tag("/" + name)) }
        for message in fragment.malformedMarkup { note(.malformed(message)) }
        for node in fragment.nodes { read(node) }
    }

    /// Whether `href` is an absolute https, http, tel or mailto URL with no white space or control characters
    /// (a browser drops a tab inside "java\tscript:", so such characters are refused, not read around).
    package static func isAllowedTarget(_ href: String) -> Bool {
        guard
            !href.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control
            }),
            let colon = href.firstIndex(of: ":")
        else { return false }
        let scheme = href[..<colon].lowercased()
        let rest = href[href.index(after: colon)...]
        switch scheme {
        case "https", "http":
            return rest.hasPrefix("//") && !rest.dropFirst(2).prefix(while: { !"/?#".contains($0) }).isEmpty
                && !rest.hasPrefix("///")
        case "tel", "mailto":
            return !rest.isEmpty
        default:
            return false
        }
    }

    private mutating func note(_ problem: Problem) {
        if !problems.contains(problem) { problems.append(problem) }
    }

    private mutating func read(_ node: HTMLNode) {
        switch node {
        case .text(let text):
            appendText(text)
        case .comment:
            note(.tag("!--"))
        case .processingInstruction(let name):
            note(.tag("?" + name))
        case .element(let element) where element.name == "a":
            for attribute in element.attributes where attribute.name != "href" { note(.attribute(attribute.name)) }
            for child in element.children { checkLinkContent(child) }
            guard let href = element.attribute("href") else {
                note(.linkWithoutHref)
                appendText(node.text)
                return
            }
            if Self.isAllowedTarget(href) {
                segments.append(.link(href: href, text: node.text))
            } else {
                note(.target(href))
                appendText(node.text)
            }
        case .element(let element):
            note(.tag(element.name))
            for child in element.children { read(child) }
        }
    }

    /// Inside a link only text is allowed; any tag there is a problem (its text is the link's).
    private mutating func checkLinkContent(_ node: HTMLNode) {
        switch node {
        case .text: break
        case .comment: note(.tag("!--"))
        case .processingInstruction(let name): note(.tag("?" + name))
        case .element(let element):
            note(.tag(element.name))
            for child in element.children { checkLinkContent(child) }
        }
    }

    private mutating func appendText(_ text: String) {
        guard !text.isEmpty else { return }
        if case .text(let previous)? = segments.last {
            segments[segments.count - 1] = .text(previous + text)
        } else {
            segments.append(.text(text))
        }
    }
}
