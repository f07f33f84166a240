/// The two kinds of item Wallet fetches from a web service: a pass and an order.
///
/// They are siblings: each is a signed zip with a JSON file at its root, a
/// type identifier and an identifier, an authentication token, and the same
/// five web-service calls. What differs is spelled here, once, so that the
/// content, the build, the tree, the service and push all follow it.
/// Sources: Apple, "Wallet Passes" web service reference and "Wallet Orders"
/// ("Building a distributable order package", "Retrieve the latest version of an order").
package enum WalletItemKind: String, Sendable, Hashable, CaseIterable, Codable {
    case pass, order

    /// The JSON file at the package's root and in a template folder.
    package var rootFile: String { self == .pass ? "pass.json" : "order.json" }
    /// The strings file in each `.lproj` folder.
    package var stringsFile: String { self == .pass ? "pass.strings" : "order.strings" }
    /// The file extension of the signed package, without the dot.
    package var fileExtension: String { self == .pass ? "pkpass" : "order" }
    /// The MIME type of the signed package.
    package var mediaType: String {
        self == .pass ? "application/vnd.apple.pkpass" : "application/vnd.apple.finance.order"
    }
    /// The folder under `v1/` that holds the signed packages: `passes` or `orders`.
    package var webServiceFolder: String { self == .pass ? "passes" : "orders" }
    /// The scheme of the `Authorization` header the device sends: `ApplePass <token>` or `AppleOrder <token>`.
    package var authorizationScheme: String { self == .pass ? "ApplePass" : "AppleOrder" }
    /// The key in the root JSON that names the type: `passTypeIdentifier` or `orderTypeIdentifier`.
    package var typeIdentifierKey: String { self == .pass ? "passTypeIdentifier" : "orderTypeIdentifier" }
    /// The key in the root JSON that names the item within its type: `serialNumber` or `orderIdentifier`.
    package var identifierKey: String { self == .pass ? "serialNumber" : "orderIdentifier" }
    /// The query parameter of "get the list of updatable items": `passesUpdatedSince` or `ordersModifiedSince`.
    package var updatedSinceParameter: String { self == .pass ? "passesUpdatedSince" : "ordersModifiedSince" }
    /// The keys of the device's index answer: `{"serialNumbers", "lastUpdated"}` for passes,
    /// `{"orderIdentifiers", "lastModified"}` for orders (Apple, "Retrieve the registrations for a device").
    package var indexIdentifiersKey: String { self == .pass ? "serialNumbers" : "orderIdentifiers" }
    package var indexTagKey: String { self == .pass ? "lastUpdated" : "lastModified" }
    /// What people call one: "pass" or "order".
    package var noun: String { rawValue }
    /// The key of a content entry (and of `defaults:`) whose map overrides keys of the root file: `pass:`, `order:`.
    package var overrideKey: String { rawValue }
    /// The certificate that signs this kind's items and authenticates their pushes, as Apple's
    /// developer portal names it.
    package var certificateName: String { self == .pass ? "Pass Type ID certificate" : "Order Type ID certificate" }
}
