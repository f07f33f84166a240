package import PassModel

/// A template's `<lang>.lproj/pass.strings` (or `order.strings`), parsed once: its lines, and the
/// placeholders in its values, which every pass or order fills from its `data:`.
/// order.strings has pass.strings' syntax (Apple, "Creating the source for an order").
package struct LocalizedStrings: Sendable {
    package var language: String
    /// `pass.strings` or `order.strings`.
    package var stringsFileName = WalletItemKind.pass.stringsFile
    /// The name inside the package: `de.lproj/pass.strings`.
    package var fileName: String { "\(language).lproj/\(stringsFileName)" }
    /// The file on disk, for messages.
    package var path: String
    package var entries: [PassStrings.Entry]
    /// Entry index → the pieces of its value, for values with placeholders.
    var placeholders: [Int: [PlaceholderTemplate.Piece]] = [:]
    package var keys: Set<String>

    package var hasPlaceholders: Bool { !placeholders.isEmpty }

    /// Parses a pass.strings file: UTF-8 or UTF-16, comments, escapes. A
    /// syntax error or a malformed placeholder is an error at its line.
    static func parse(
        _ bytes: [UInt8], language: String, path: String,
        fileName: String = WalletItemKind.pass.stringsFile
    ) -> Result<LocalizedStrings, ContentErrors> {
        let entries: [PassStrings.Entry]
        do { entries = try PassStrings.entries(bytes) } catch {
            return .failure(
                ContentErrors([
                    .error(
                        at: SourceLocation(file: path, line: error.line, column: error.column), rule: "strings.syntax",
                        "\(language).lproj/\(fileName): \(error.message). Each line is "
                            + "\"key\" = \"value\"; with /* comments */")
                ]))
        }
        var strings = LocalizedStrings(
            language: language, stringsFileName: fileName, path: path, entries: entries,
            keys: Set(entries.map(\.key)))
        var problems: [ContentDiagnostic] = []
        var paths: [String] = []
        for (index, entry) in entries.enumerated() where entry.value.contains("{{") {
            let location = SourceLocation(file: path, line: entry.valueLine, column: entry.valueColumn)
            strings.placeholders[index] = PlaceholderTemplate.pieces(
                of: entry.value, at: location, problems: &problems, paths: &paths)
        }
        if !problems.isEmpty { return .failure(ContentErrors(problems)) }
        return .success(strings)
    }

    /// The file as it goes into one pass: values filled from its data.
    func rendered(with renderer: PlaceholderRenderer, problems: inout [ContentDiagnostic]) -> [UInt8] {
        var pairs = entries.map { (key: $0.key, value: $0.value) }
        for (index, pieces) in placeholders {
            let location = SourceLocation(
                file: path, line: entries[index].valueLine, column: entries[index].valueColumn)
            pairs[index].value = renderer.text(of: pieces, at: location, problems: &problems)
        }
        return PassStrings.encode(pairs)
    }
}

/// Checks that every label and value used as a localization key (it is a
/// key of some language's pass.strings or order.strings) is translated in
/// every language: Wallet shows a key that a language lacks as it is.
enum TemplateLocalization {
    /// The pass.json keys whose text Wallet looks up in pass.strings
    /// (Apple's PassKit Package Format Reference, "Localizing a pass").
    static let localizableKeys: Set<String> = [
        "label", "value", "attributedValue", "changeMessage", "description", "organizationName", "logoText",
        "relevantText", "altText",
    ]

    /// The order.json keys Apple marks "localizable" (Wallet Orders › Order and its objects: LineItem
    /// title and subtitle, summary item label, statusDescription, notes, displayName, barcode altText,
    /// returnPolicyDescription).
    static let localizableOrderKeys: Set<String> = [
        "title", "subtitle", "label", "statusDescription", "notes", "displayName", "altText", "returnPolicyDescription",
    ]

    static func missingTranslations(
        in root: SourceNode, kind: WalletItemKind = .pass, localizations: [LocalizedStrings],
        languages: [String]
    ) -> [ContentDiagnostic] {
        guard !localizations.isEmpty else { return [] }
        let localizableKeys = kind == .order ? localizableOrderKeys : localizableKeys
        var byLanguage: [String: Set<String>] = [:]
        for language in languages { byLanguage[language] = [] }
        for strings in localizations { byLanguage[strings.language] = strings.keys }
        let sortedLanguages = byLanguage.keys.sorted()
        var problems: [ContentDiagnostic] = []
        func visit(_ node: SourceNode, key: String?, path: JSONPath) {
            switch node.kind {
            case .scalar(.string(let text)):
                guard let key, localizableKeys.contains(key), !text.contains("{{") else { return }
                let having = sortedLanguages.filter { byLanguage[$0]!.contains(text) }
                guard !having.isEmpty else { return }
                for language in sortedLanguages where !byLanguage[language]!.contains(text) {
                    problems.append(
                        .warning(
                            at: node.location, keyPath: path, rule: "strings.missing",
                            "\"\(text)\" is a localization key (translated in "
                                + "\(having.map { "\($0).lproj" }.joined(separator: ", "))) but language "
                                + "\(language) lacks it, so Wallet shows \"\(text)\" as it is in \(language); "
                                + "add \"\(text)\" = \"…\"; to \(language).lproj/\(kind.stringsFile)"))
                }
            case .scalar: return
            case .array(let elements):
                for (index, element) in elements.enumerated() { visit(element, key: key, path: path.appending(index)) }
            case .object(let members):
                for member in members { visit(member.value, key: member.key, path: path.appending(member.key)) }
            }
        }
        visit(root, key: nil, path: .root)
        if kind == .order { problems += unevenOrderStrings(localizations) }
        return problems
    }

    /// Apple: "All order.strings files must have the same set of keys" ("Creating the source for an
    /// order"). A key that one language has and another lacks is a warning at the file that lacks it.
    static func unevenOrderStrings(_ localizations: [LocalizedStrings]) -> [ContentDiagnostic] {
        let allKeys = localizations.reduce(into: Set<String>()) { $0.formUnion($1.keys) }
        return localizations.sorted { $0.language < $1.language }.compactMap { strings in
            let missing = allKeys.subtracting(strings.keys).sorted()
            guard !missing.isEmpty else { return nil }
            let shown =
                missing.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
                + (missing.count > 5 ? " and \(missing.count - 5) more" : "")
            return .warning(
                at: SourceLocation(file: strings.path), rule: "strings.uneven",
                "\(strings.fileName) lacks \(shown), which another language's order.strings has; Apple "
                    + "asks that every order.strings have the same keys, so add them")
        }
    }
}
