package import PassModel

/// `.passforge/landing-pages.json`: the landing pages of the last build, by
/// item. One codec for the build (which remakes an item's pages only when its
/// bytes, its expiry or the pages' configuration change), `passforge links`
/// and publish.
package struct LandingPageList: Sendable, Equatable {
    package static let path = TreeLayout.landingPageListPath

    /// Hash of what every page shows besides its item: the template, the badge files, the base URL.
    package var configuration: String
    /// The absolute URL the output folder is served at (`landingPages.baseURL`), ending in a slash; "" when unknown.
    package var baseURL: String
    /// Item key (`type/identifier`, or `bundle/NAME`) → its pages.
    package var pages: [String: LandingPageRecord]
    /// The badge files every page links (`download/badge-<language>.svg`…), by language.
    package var badges: [String: LandingFileRecord]
    package var orderBadges: [String: LandingFileRecord]

    package init(configuration: String, baseURL: String, pages: [String: LandingPageRecord] = [:],
                 badges: [String: LandingFileRecord] = [:], orderBadges: [String: LandingFileRecord] = [:]) {
        (self.configuration, self.baseURL, self.pages, self.badges, self.orderBadges) = (configuration, baseURL, pages, badges, orderBadges)
    }

    /// Every file the list names.
    package var allFiles: [LandingFileRecord] {
        pages.values.flatMap(\.files) + badges.values + orderBadges.values
    }

    package var json: JSONValue {
        func files(_ table: [String: LandingFileRecord]) -> JSONValue {
            .object(JSONObject(table.keys.sorted().map { ($0, table[$0]!.json) }))
        }
        return .object(JSONObject([
            ("configuration", .string(configuration)), ("baseURL", .string(baseURL)),
            ("badges", files(badges)), ("orderBadges", files(orderBadges)),
            ("pages", .array(pages.keys.sorted().map { pages[$0]!.json })),
        ]))
    }

    /// The list in `bytes`; nil when they are not one. Every path is checked to be a landing file of the tree.
    package init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONValue(parsing: bytes), let configuration = json["configuration"]?.stringValue,
              let list = json["pages"]?.arrayValue else { return nil }
        func files(_ value: JSONValue?) -> [String: LandingFileRecord]? {
            guard let members = value?.objectValue else { return [:] }
            var table: [String: LandingFileRecord] = [:]
            for (language, file) in members {
                guard let record = LandingFileRecord(json: file) else { return nil }
                table[language] = record
            }
            return table
        }
        var pages: [String: LandingPageRecord] = [:]
        for item in list {
            guard let record = LandingPageRecord(json: item) else { return nil }
            pages[record.key] = record
        }
        guard let badges = files(json["badges"]), let orderBadges = files(json["orderBadges"]) else { return nil }
        self.init(configuration: configuration, baseURL: json["baseURL"]?.stringValue ?? "", pages: pages, badges: badges,
                  orderBadges: orderBadges)
    }
}

/// One file of a landing page (the page in one language, the logo, a badge) as the build made it.
package struct LandingFileRecord: Sendable, Equatable {
    /// `download/<capability>.html`…, relative to the output folder.
    package var path: String
    /// Strong ETag of the bytes, with its quotes.
    package var etag: String
    package var size: Int

    package init(path: String, etag: String, size: Int) { (self.path, self.etag, self.size) = (path, etag, size) }

    package var json: JSONValue { .object(JSONObject([("path", .string(path)), ("etag", .string(etag)), ("size", .int(size))])) }

    /// nil unless the path is a landing file of the tree (`TreeLayout.isBuildOwned`, under `download/`).
    package init?(json: JSONValue) {
        guard let path = json["path"]?.stringValue, let etag = json["etag"]?.stringValue, case .int(let size)? = json["size"],
              path.hasPrefix("\(TreeLayout.downloadFolder)/"), TreeLayout.isBuildOwned(path), size >= 0 else { return nil }
        self.init(path: path, etag: etag, size: size)
    }
}

/// The landing pages of one item (or bundle): what the build made, and what decides when it makes them again.
package struct LandingPageRecord: Sendable, Equatable {
    /// `type/identifier`, or `bundle/NAME`.
    package var key: String
    /// The item's ETag (a bundle's) when its pages were made: the pages change only when the item does.
    package var sourceETag: String
    /// The default page first, then one per language (when the item has several), then the logo.
    package var files: [LandingFileRecord]
    /// Milliseconds since 1970 at which the item expires (its expirationDate), when it has one and its pages
    /// still offer it: the first build after that makes them again, saying it has expired.
    package var expiresAt: Int64?
    /// Made as expired or voided: no badge.
    package var unavailable: Bool

    package init(key: String, sourceETag: String, files: [LandingFileRecord], expiresAt: Int64?, unavailable: Bool) {
        (self.key, self.sourceETag, self.files, self.expiresAt, self.unavailable) = (key, sourceETag, files, expiresAt, unavailable)
    }

    /// The default page: `download/<capability>.html`.
    package var pagePath: String? { files.first?.path }

    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("key", .string(key)), ("sourceETag", .string(sourceETag)), ("files", .array(files.map(\.json))),
            ("unavailable", .bool(unavailable)),
        ]
        if let expiresAt { members.append(("expiresAt", .int(Int(expiresAt)))) }
        return .object(JSONObject(members))
    }

    package init?(json: JSONValue) {
        guard let key = json["key"]?.stringValue, let etag = json["sourceETag"]?.stringValue, let list = json["files"]?.arrayValue
        else { return nil }
        let files = list.compactMap(LandingFileRecord.init(json:))
        guard files.count == list.count, !files.isEmpty else { return nil }
        var expiresAt: Int64?
        if case .int(let value)? = json["expiresAt"] { expiresAt = Int64(value) }
        self.init(key: key, sourceETag: etag, files: files, expiresAt: expiresAt, unavailable: json["unavailable"]?.boolValue ?? false)
    }
}
