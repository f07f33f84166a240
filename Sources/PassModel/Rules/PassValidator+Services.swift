// The web service, the app link, grouping, colours and the remaining keys
// ("Pass" in Apple's Wallet Passes documentation, and "Adding a Web Service
// to Update Passes").

extension ValidationRun {
    /// Updates need both the URL and the token; the URL must be https
    /// because production devices refuse plain http.
    mutating func checkWebService() {
        let url = string("webServiceURL", of: root, at: .root)
        let token = string("authenticationToken", of: root, at: .root)
        if let url { checkWebServiceURL(url) }
        if let token, token.count < 16 {
            error(
                [.key("authenticationToken")], "authenticationToken.length",
                "authenticationToken has \(token.count) characters, but Wallet requires at least 16; use a "
                    + "longer random token (passforge derives one when the key is left out)"
            )
        }
        if root["webServiceURL"] != nil, root["authenticationToken"] == nil {
            error(
                [.key("authenticationToken")], "webService.pair",
                "the pass has a webServiceURL but no authenticationToken; add an "
                    + "authenticationToken of at least 16 characters, or remove webServiceURL"
            )
        }
        if root["authenticationToken"] != nil, root["webServiceURL"] == nil {
            error(
                [.key("webServiceURL")], "webService.pair",
                "the pass has an authenticationToken but no webServiceURL; add the https:// URL "
                    + "of the pass web service, or remove authenticationToken"
            )
        }
    }

    mutating func checkWebServiceURL(_ url: String) {
        // Every pass of a build has one, nearly always the same plain https URL: accepted from its bytes.
        guard !Self.isPlainHTTPSURL(url) else { return }
        let path: JSONPath = [.key("webServiceURL")]
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = url.dropFirst("https://".count)
        } else if lowered.hasPrefix("http://") {
            guard options.allowsHTTPWebService else {
                error(
                    path, "webServiceURL.scheme",
                    "webServiceURL \"\(url)\" uses plain http, which only development devices accept; "
                        + "use https://, or pass --allow-http-web-service for development"
                )
                return
            }
            rest = url.dropFirst("http://".count)
        } else {
            error(
                path, "webServiceURL.scheme",
                "webServiceURL \"\(url)\" is not an https:// URL; write the full URL of "
                    + "the web service, e.g. https://passes.example.com/")
            return
        }
        let host = rest.prefix { $0 != "/" && $0 != ":" }
        if host.isEmpty {
            error(
                path, "webServiceURL.format",
                "webServiceURL \"\(url)\" has no host name; write the full URL of the "
                    + "web service, e.g. https://passes.example.com/")
        } else if url.contains(where: \.isWhitespace) || url.contains("?") || url.contains("#") {
            // Wallet appends /v1/devices/… to the URL, which a query or fragment would swallow.
            error(
                path, "webServiceURL.format",
                "webServiceURL \"\(url)\" contains whitespace, '?' or '#'; Wallet appends /v1/… to "
                    + "it, so give a plain base URL such as https://passes.example.com/")
        }
    }

    /// `https://` (any case), a host, and only printable ASCII without `?` or `#`: a URL every check
    /// below accepts.
    static func isPlainHTTPSURL(_ url: String) -> Bool {
        var url = url
        return url.withUTF8 { bytes in
            let scheme = "https://".utf8
            guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else {
                return false
            }
            let host = bytes[scheme.count]
            guard host != UInt8(ascii: "/"), host != UInt8(ascii: ":") else { return false }
            return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        }
    }

    /// The app link opens an app from the App Store, which needs its ID.
    mutating func checkAppLaunch() {
        _ = string("appLaunchURL", of: root, at: .root)
        let identifiers = checkStoreIdentifiers("associatedStoreIdentifiers", of: root, at: .root)
        checkStoreIdentifiers("auxiliaryStoreIdentifiers", of: root, at: .root)
        guard root["appLaunchURL"] != nil else { return }
        if root["associatedStoreIdentifiers"] == nil || identifiers?.isEmpty == true {
            error(
                [.key("associatedStoreIdentifiers")], "appLaunchURL.storeIdentifiers",
                "appLaunchURL needs associatedStoreIdentifiers, the App Store IDs of the app it opens; add "
                    + "e.g. \"associatedStoreIdentifiers\": [284882215], or remove appLaunchURL"
            )
        }
    }

    /// App Store IDs are positive whole numbers. Returns the array when it is one.
    @discardableResult
    mutating func checkStoreIdentifiers(_ key: String, of object: JSONObject, at base: JSONPath) -> [JSONValue]? {
        let identifiers = array(key, of: object, at: base)
        for (index, identifier) in (identifiers ?? []).enumerated() {
            let path = base.appending(key).appending(index)
            guard expect(identifier, is: .number, at: path), let number = identifier.numberValue else { continue }
            if number != number.rounded() || number <= 0 {
                error(
                    path, "\(key).value",
                    "\(JSONValue.format(number)) is not an App Store ID, which is a positive whole "
                        + "number like 284882215; copy it from the app's App Store URL")
            }
        }
        return identifiers
    }

    /// Wallet groups only event tickets and boarding passes.
    mutating func checkGrouping(styles: [PassStyle]) {
        guard string("groupingIdentifier", of: root, at: .root) != nil else { return }
        for style in styles where style != .eventTicket && style != .boardingPass {
            // Wallet ignores it there (Apple documents where it applies): guidance.
            guidance(
                [.key("groupingIdentifier")], "groupingIdentifier.style",
                "groupingIdentifier is allowed only on eventTicket and boardingPass "
                    + "passes, but the pass's style is \(style.key); remove it"
            )
        }
    }

    /// Colours are `rgb(r, g, b)` (see `checkColor` for hex colours).
    mutating func checkAppearance() {
        for key in ["backgroundColor", "foregroundColor", "labelColor", "stripColor", "footerBackgroundColor"] {
            if let text = string(key, of: root, at: .root) { checkColor(text, at: [.key(key)], name: key) }
        }
        for key in ["logoText", "eventLogoText", "logoSymbolName"] { _ = string(key, of: root, at: .root) }
        for key in ["suppressStripShine", "sharingProhibited", "suppressHeaderDarkening", "useAutomaticColors"] {
            checkBoolean(key, of: root, at: .root)
        }
    }

    mutating func checkColor(_ text: String, at path: JSONPath, name: String) {
        guard RGBColor(parsing: text) == nil else { return }
        if let rgb = RGBColor.fromHex(text) {
            // A hex colour (#1595d7, #RGB): Apple's documentation (PassKit
            // Package Format Reference, "Pass" keys) specifies rgb(r, g, b),
            // but Apple's own pass-builder accepts #RRGGBB and #RGB
            // (apple/pass-builder, Sources/PassBuilder/PassPackage/Pass/PassColor.swift). The documentation
            // is followed for own content (an error); a distributed pass
            // with one gets a warning, as Apple's tool accepts it.
            guidance(
                path, "color",
                "\(name) \"\(text)\" is a hex colour; Apple's documentation specifies rgb(r, g, b), so write \(rgb)")
            return
        }
        let fix = "write e.g. rgb(60, 65, 76)"
        error(
            path, "color",
            "\(name) \"\(text)\" is not a colour Wallet reads; colours are rgb(r, g, b) "
                + "with each component a whole number from 0 to 255, so \(fix)"
        )
    }

    mutating func checkOtherKeys(style: PassStyle?) {
        checkBoolean("voided", of: root, at: .root)
        _ = object("userInfo", of: root, at: .root)
        if let semantics = object("semantics", of: root, at: .root) {
            checkSemantics(semantics, at: [.key("semantics")], style: style)
        }
    }
}
