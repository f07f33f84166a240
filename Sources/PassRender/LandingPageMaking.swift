package import Foundation
package import PassContent
package import PassModel

/// One item (a pass, an order, or a `.pkpasses` bundle) whose landing page is to be made.
package struct LandingItem: Sendable {
    /// `type/identifier`, or `bundle/NAME`.
    package var key: String
    package var kind: WalletItemKind
    package var isBundle: Bool
    /// `download/<capability>.pkpass|.order|.pkpasses`: what the badge links.
    package var downloadPath: String
    package var capability: String
    /// The files of the signed package (one, or each member of a bundle, in order), as the build reads them back
    /// from the zip it made: pass.json (order.json), manifest, signature, images and strings.
    package var packages: [[PackageFile]]

    package init(
        key: String, kind: WalletItemKind, isBundle: Bool, downloadPath: String, capability: String,
        packages: [[PackageFile]]
    ) {
        (self.key, self.kind, self.isBundle, self.downloadPath) = (key, kind, isBundle, downloadPath)
        (self.capability, self.packages) = (capability, packages)
    }
}

/// What a `LandingPageMaking` makes of one item.
package struct LandingPageOutput: Sendable {
    /// Path in the tree → bytes: the default page first (`download/<capability>.html`), then one page per
    /// language when the item has several, then its logo.
    package var files: [(path: String, bytes: [UInt8])]
    /// When the item expires, when it has an expiration date and its pages still offer it.
    package var expiresAt: Date?
    /// Expired or voided: the pages say so and show no badge.
    package var unavailable: Bool

    package init(files: [(path: String, bytes: [UInt8])], expiresAt: Date?, unavailable: Bool) {
        (self.files, self.expiresAt, self.unavailable) = (files, expiresAt, unavailable)
    }
}

/// Makes the landing pages (the preview's renderer, given by the command line: the build cannot import it).
package protocol LandingPageMaking: Sendable {
    /// Hash of everything every page shows besides its item: template, badge files, base URL, the renderer's version.
    var configurationHash: String { get }
    /// The absolute URL of the output folder, ending in a slash ("" when unknown).
    var baseURL: String { get }
    /// The project's badge files, by language, as placed in the tree (`TreeLayout.badgePath`).
    var badges: [String: (path: String, bytes: [UInt8])] { get }
    var orderBadges: [String: (path: String, bytes: [UInt8])] { get }
    /// The pages of one item, as they are at `now`.
    func pages(for item: LandingItem, now: Date) throws -> LandingPageOutput
}
