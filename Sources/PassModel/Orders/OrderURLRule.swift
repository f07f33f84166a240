/// Every URL key of Apple's order format, by key path, and the one rule they share: an https URL with a
/// host. Wallet opens these links itself (a tap on "Manage order", "Track shipment", the merchant, a
/// return's page) or hands them to an app, so a `javascript:`, `data:` or `vbscript:` link, or a plain
/// `http:` one that anyone on the network can rewrite, must never be signed into an order. Apple's
/// Order page asks for `webServiceURL` to start with https; passforge holds every URL to it (the HIG
/// asks for universal links, which are https, for the management and launch URLs).
///
/// The schema (`OrderSchema`) marks a key `.url`; this table says how it is checked, and
/// `OrderRuleTests` checks that the two name the same keys. Payment, PaymentTransaction and
/// PaymentMethod have no URL key (a transaction's receipt is a file in the package).
package struct OrderURLKey: Sendable, Hashable {
    /// Keys joined by ".", "[]" for every element of an array: `fulfillments[].trackingURL`.
    package var pattern: String
    /// `--allow-http-web-service` accepts a plain http URL here (a development service only).
    package var acceptsDevelopmentHTTP: Bool

    init(_ pattern: String, acceptsDevelopmentHTTP: Bool = false) {
        self.pattern = pattern
        self.acceptsDevelopmentHTTP = acceptsDevelopmentHTTP
    }

    /// Every URL key of order.json.
    package static let all: [OrderURLKey] = [
        OrderURLKey("orderManagementURL"),
        OrderURLKey("webServiceURL", acceptsDevelopmentHTTP: true),
        OrderURLKey("merchant.url"), OrderURLKey("merchant.businessChatURL"), OrderURLKey("merchant.contactURL"),
        OrderURLKey("associatedApplications[].launchURL"),
        OrderURLKey("fulfillments[].trackingURL"),
        OrderURLKey("orderProvider.url"),
        OrderURLKey("returnInfo.returnPolicyURL"), OrderURLKey("returnInfo.returnManagementURL"),
        OrderURLKey("returns[].returnManagementURL"),
    ]

    static let byPattern: [String: OrderURLKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.pattern, $0) })

    /// The pattern of a concrete path: `fulfillments[0].trackingURL` → `fulfillments[].trackingURL`.
    package static func pattern(of path: JSONPath) -> String {
        var text = ""
        for component in path.components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index: text += "[]"
            }
        }
        return text
    }
}

extension OrderValidationRun {
    /// The one URL rule of order.json, for every key `OrderURLKey.all` names.
    mutating func checkURL(_ text: String, at path: JSONPath) {
        // A key the table lacks is held to the strictest rule (and OrderRuleTests fails).
        let key = OrderURLKey.byPattern[OrderURLKey.pattern(of: path)] ?? OrderURLKey(OrderURLKey.pattern(of: path))
        let lowered = text.lowercased()
        let scheme = lowered.firstIndex(of: ":").map { String(lowered[..<$0]) } ?? ""
        let validScheme =
            scheme.first?.isLetter == true
            && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        // A browser drops tabs and newlines inside a URL ("java\tscript:" runs as javascript:), so any
        // white space or control character makes the URL unreadable rather than a different URL.
        let hasSpaceOrControl = text.unicodeScalars.contains {
            $0.properties.isWhitespace || $0.properties.generalCategory == .control
        }
        guard validScheme, !hasSpaceOrControl else {
            error(
                path, "order.url",
                "\(path) is \(quoted(text)), which is not an absolute URL (a scheme, no spaces or control characters); "
                    + "write it like https://shop.example.com/orders/42")
            return
        }
        let developmentHTTP = key.acceptsDevelopmentHTTP && options.allowsHTTPWebService && scheme == "http"
        if scheme != "https", !developmentHTTP {
            let hint = key.acceptsDevelopmentHTTP ? " (pass --allow-http-web-service for a development service)" : ""
            error(
                path, "order.url.https",
                "\(path) is a \(quoted(scheme + ":")) URL (\(quoted(text))), but every URL of an order must be "
                    + "https: Wallet opens it for the customer, and a javascript:, "
                    + "data: or plain http: link is unsafe; "
                    + "write it like https://shop.example.com/orders/42\(hint)")
            return
        }
        let rest = lowered.dropFirst(scheme.count + 1)
        let host = rest.hasPrefix("//") ? rest.dropFirst(2).prefix { !"/?#".contains($0) } : ""
        if host.isEmpty || host.hasPrefix("@") || host.hasPrefix(":") {
            error(
                path, "order.url",
                "\(path) is \(quoted(text)), which has no host; write it like https://shop.example.com/orders/42")
        }
    }
}
