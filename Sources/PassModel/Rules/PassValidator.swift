/// Checks a pass.json tree against every rule of Apple's pass format
/// ("Pass" in Apple's Wallet Passes documentation, and the PassKit Package
/// Format Reference) and reports all problems at
/// once, each with the exact key path, a stable rule id and a message that
/// says what is wrong, what is allowed and what to do.
///
/// It works on the JSON tree rather than on ``Pass`` so that it can name the
/// exact key of a value of the wrong type, and keep keys Apple does not
/// define (they produce an `unknown-key` warning and pass through).
///
/// Errors are passes a device rejects or mishandles; warnings are passes
/// that install but do not show what the author expects (fields beyond the
/// display limits, Code128 on Apple Watch, unknown keys).
package struct PassValidator: Sendable {
    package struct Options: Sendable, Hashable {
        /// Accept a plain `http://` `webServiceURL`. Only development devices
        /// talk to such a service (`--allow-http-web-service`).
        package var allowsHTTPWebService: Bool
        /// The pass's `<language>.lproj/pass.strings` tables by language:
        /// Wallet shows a localizable string (a label, a value, a
        /// changeMessage) as the table's value for it, so rules on such text
        /// check the value each language resolves to.
        package var localizations: [String: [String: String]]
        /// What the rules are judging.
        package var audience: Audience

        package init(
            allowsHTTPWebService: Bool = false, localizations: [String: [String: String]] = [:],
            audience: Audience = .ownContent
        ) {
            self.allowsHTTPWebService = allowsHTTPWebService
            self.localizations = localizations
            self.audience = audience
        }
    }

    /// Whose pass is judged, which decides how strict a rule of Apple's
    /// design guidance is.
    package enum Audience: Sendable, Hashable {
        /// Content passforge builds: every rule of Apple's documentation is
        /// an error, so what passforge signs follows the documented format
        /// exactly (stricter than Wallet on purpose, e.g. textAlignment on
        /// primary fields, or a hex colour).
        case ownContent
        /// A pass someone else made, read by `inspect`: an error only for
        /// what makes Wallet refuse or misshow the pass; what Wallet accepts
        /// but Apple's documentation or guidance advises against is a warning.
        case distributedPass
    }

    package init() {}

    /// Whether `pass` has text whose rules depend on its pass.strings (a
    /// field's changeMessage or attributedValue), so a caller reads the
    /// tables only then.
    package static func checksLocalizedText(in pass: JSONValue) -> Bool {
        PassStyle.allCases.contains { style in
            guard let structure = pass[style.key]?.objectValue else { return false }
            return structure.contains { area in
                area.value.arrayValue?.contains {
                    $0["changeMessage"] != nil || $0["attributedValue"]?.stringValue != nil
                } ?? false
            }
        }
    }

    /// All problems of `pass`, in document order of the checks; empty when the pass is valid.
    package func validate(_ pass: JSONValue, options: Options = .init()) -> [Diagnostic] {
        guard case .object(let root) = pass else {
            return [
                .error(
                    at: .root, rule: "json.root",
                    "pass.json must be a JSON object ({ … }), but it is "
                        + "\(pass.typeName); put the pass's keys in one object"
                )
            ]
        }
        var run = ValidationRun(options: options, root: root)
        run.reportUnknownKeys(in: root, at: .root, known: Pass.knownKeySet, place: "the pass")
        run.checkIdentity()
        let firstBarcode = run.checkBarcodes()
        let styles = run.checkStyles()
        for (style, structure) in styles {
            run.checkStructure(structure, style: style, firstBarcode: firstBarcode)
        }
        run.checkAppearance()
        run.checkRelevance()
        run.checkWebService()
        run.checkAppLaunch()
        run.checkGrouping(styles: styles.map(\.style))
        run.checkNFC()
        let style = styles.count == 1 ? styles[0].style : nil
        run.checkOtherKeys(style: style)
        run.checkLinks()
        run.checkFeaturedActions()
        run.checkUpcomingPassInformation(style: style)
        run.checkStyleSchemes(styles: styles.map(\.style))
        run.checkPosterOnlyKeys(styles: styles.map(\.style))
        run.checkSemanticStyle()
        return run.diagnostics
    }
}
