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

        package init(allowsHTTPWebService: Bool = false) {
            self.allowsHTTPWebService = allowsHTTPWebService
        }
    }

    package init() {}

    /// All problems of `pass`, in document order of the checks; empty when the pass is valid.
    package func validate(_ pass: JSONValue, options: Options = .init()) -> [Diagnostic] {
        guard case .object(let root) = pass else {
            return [.error(
                at: .root, rule: "json.root",
                "pass.json must be a JSON object ({ … }), but it is \(pass.typeName); put the pass's keys in one object"
            )]
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
