import AtomicFiles

/// `.passforge/landing-pages.txt`: the landing pages of the last build, by
/// item. One codec for the build (which remakes an item's pages only when its
/// bytes, its expiry or the pages' configuration change), `passforge links`
/// and publish.
package struct LandingPageList: Sendable, Equatable {
    package static let path = TreeLayout.landingPageListPath
    /// The Content-Security-Policy of every landing page, in its `<meta>` and in the hosts' header (`passforge serve`,
    /// deploy/): its own images (and inline ones), its inline styles, no script, no other request.
    package static let contentSecurityPolicy =
        "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

    /// Hash of what every page shows besides its item: the template, the badge files, the base URL.
    package var configuration: String
    /// The absolute URL the output folder is served at (`landingPages.baseURL`), ending in a slash; "" when unknown.
    package var baseURL: String
    /// Item key (`type/identifier`, or `bundle/NAME`) → its pages.
    package var pages: [String: LandingPageRecord]
    /// The badge files every page links (`download/badge-<language>.svg`…), by language.
    package var badges: [String: LandingFileRecord]
    package var orderBadges: [String: LandingFileRecord]

    package init(
        configuration: String, baseURL: String, pages: [String: LandingPageRecord] = [:],
        badges: [String: LandingFileRecord] = [:], orderBadges: [String: LandingFileRecord] = [:]
    ) {
        (self.configuration, self.baseURL, self.pages, self.badges, self.orderBadges) = (
            configuration, baseURL, pages, badges, orderBadges
        )
    }

    /// Every file the list names.
    package var allFiles: [LandingFileRecord] {
        pages.values.flatMap(\.files) + badges.values + orderBadges.values
    }

    /// The earliest `expiresAt` of a page that still offers its item: a build after it makes that page again.
    package var nextExpiry: Int64? {
        pages.values.lazy.filter { !$0.unavailable }.compactMap(\.expiresAt).min()
    }

    /// Tab-separated lines, a build's list of 100,000 items read in a fraction of a second (names, paths and
    /// ETags hold no tab or line break: `TreeLayout`'s patterns). The first line holds what a build that changed
    /// no item needs (`Header`), so that it reads only that.
    ///
    ///     passforge-landing-pages 1 <TAB> configuration <TAB> nextExpiry|- <TAB> baseURL
    ///     badge|order-badge <TAB> language <TAB> path <TAB> etag <TAB> size
    ///     page <TAB> key <TAB> sourceETag <TAB> expiresAt|- <TAB> 0|1 <TAB> path <TAB> etag <TAB> size [<TAB> path …]
    package var encoded: [UInt8] {
        var text = "\(Self.magic)\t\(configuration)\t\(nextExpiry.map(String.init) ?? "-")\t\(baseURL)\n"
        for (kind, table) in [("badge", badges), ("order-badge", orderBadges)] {
            for language in table.keys.sorted() {
                let file = table[language]!
                text += "\(kind)\t\(language)\t\(file.path)\t\(file.etag)\t\(file.size)\n"
            }
        }
        for key in pages.keys.sorted() {
            let page = pages[key]!
            text +=
                "page\t\(key)\t\(page.sourceETag)\t\(page.expiresAt.map(String.init) ?? "-")\t\(page.unavailable ? 1 : 0)"
            for file in page.files { text += "\t\(file.path)\t\(file.etag)\t\(file.size)" }
            text += "\n"
        }
        return Array(text.utf8)
    }

    static let magic = "passforge-landing-pages 1"

    /// The first line: enough to tell whether a build that changed no item has pages to make.
    package struct Header: Sendable, Equatable {
        package var configuration: String
        package var nextExpiry: Int64?
    }

    /// The header of the list in `output`, reading its first line only; nil when there is none.
    package static func header(in output: String) -> Header? {
        guard let file = RegularFile(openingForReading: TreeLayout.path(path, in: output)),
            let bytes = file.read(at: 0, count: 4096),
            let end = bytes.firstIndex(of: UInt8(ascii: "\n"))
        else { return nil }
        let fields = bytes[..<end].split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard fields.count >= 3, fields[0] == magic else { return nil }
        return Header(configuration: fields[1], nextExpiry: Int64(fields[2]))
    }

    /// The list in `bytes`; nil when they are not one. Every path is checked to be a landing file of the tree.
    package init?(decoding bytes: [UInt8]) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"))[...]
        func fields(_ line: ArraySlice<UInt8>) -> [String] {
            line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
        }
        guard let first = lines.popFirst() else { return nil }
        let header = fields(first)
        guard header.count == 4, header[0] == Self.magic else { return nil }
        self.init(configuration: header[1], baseURL: header[3])
        pages.reserveCapacity(lines.count)
        for line in lines {
            let parts = fields(line)
            switch parts.first {
            case "badge"?, "order-badge"?:
                guard parts.count == 5, let file = LandingFileRecord(parts[2], parts[3], parts[4]) else { return nil }
                if parts[0] == "badge" { badges[parts[1]] = file } else { orderBadges[parts[1]] = file }
            case "page"?:
                guard parts.count >= 8, (parts.count - 5) % 3 == 0 else { return nil }
                var files: [LandingFileRecord] = []
                for index in stride(from: 5, to: parts.count, by: 3) {
                    guard let file = LandingFileRecord(parts[index], parts[index + 1], parts[index + 2]) else {
                        return nil
                    }
                    files.append(file)
                }
                pages[parts[1]] = LandingPageRecord(
                    key: parts[1], sourceETag: parts[2], files: files, expiresAt: Int64(parts[3]),
                    unavailable: parts[4] == "1")
            default:
                return nil
            }
        }
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

    /// nil unless the path is a landing file of the tree (`TreeLayout.isBuildOwned`, under `download/`).
    init?(_ path: String, _ etag: String, _ size: String) {
        guard let size = Int(size), size >= 0, path.hasPrefix("\(TreeLayout.downloadFolder)/"),
            TreeLayout.isBuildOwned(path),
            !etag.isEmpty
        else { return nil }
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
        (self.key, self.sourceETag, self.files, self.expiresAt, self.unavailable) = (
            key, sourceETag, files, expiresAt, unavailable
        )
    }

    /// The default page: `download/<capability>.html`.
    package var pagePath: String? { files.first?.path }
}
