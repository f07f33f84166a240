import AtomicFiles
import Foundation
import PassModel

/// Reads `content/**/*.yml|yaml|json` into pass definitions.
package struct ContentLoader: Sendable {
    package var directory: String

    package init(directory: String) { self.directory = directory }

    /// Whether `name` is a content file's: it ends in `.yml`, `.yaml` or `.json`, in any case, after at least one
    /// other character (the build lists 100,000 names with it, so it compares bytes, not strings).
    package static func isContentFileName(_ name: String) -> Bool {
        let utf8 = name.utf8
        func ends(with suffix: StaticString) -> Bool {
            let count = suffix.utf8CodeUnitCount
            guard utf8.count > count else { return false }
            let lower = UnsafeBufferPointer(start: suffix.utf8Start, count: count)
            for (index, byte) in utf8.suffix(count).enumerated() {
                let folded: UInt8 = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                if folded != lower[index] { return false }
            }
            return true
        }
        return ends(with: ".yml") || ends(with: ".yaml") || ends(with: ".json")
    }

    /// Every content file below the directory, sorted, as paths that start with `directory`.
    package func contentFiles() throws(ContentErrors) -> [String] {
        guard isDirectory(directory) else {
            throw ContentErrors([
                .error(
                    at: SourceLocation(file: directory), rule: "content.missing",
                    "content folder \(directory) does not exist; create it or pass --content DIR")
            ])
        }
        // Hidden files and folders (.git, an editor's backups) are not content; links are listed, not followed.
        let below = AtomicFileSystem.filesBelow(directory, skippingHidden: true) ?? []
        return below.filter { Self.isContentFileName(($0 as NSString).lastPathComponent) }
            .map { (directory as NSString).appendingPathComponent($0) }
            .sorted()
    }

    /// Parses one content file; returns its definitions and every problem in it.
    package static func definitions(in file: String, bytes: [UInt8]) -> (
        definitions: [PassDefinition], problems: [ContentDiagnostic]
    ) {
        let root: SourceNode
        do { root = try SourceParser.parse(bytes, file: file) } catch { return ([], [error]) }
        return definitions(of: root, file: file, firstEntry: 0)
    }

    /// Parses a run of the entries of a YAML file with `passes:`, apart from the others, so that the
    /// runs of a large file are parsed one at a time (and on every core). `excerpt` holds the file's
    /// lines before `passes:`, the `passes:` line and the entries `firstEntry...` of the file, the first
    /// of which starts at line `excerptEntryLine` of `excerpt` and at line `entryLine` of the file.
    /// Locations and key paths are those of the whole file. Problems of the part before `passes:`
    /// are found in each run; a file with `bundle:` or anchors has to be parsed whole.
    package static func definitions(
        in file: String, excerpt: [UInt8], firstEntry: Int, excerptEntryLine: Int,
        entryLine: Int
    ) -> (definitions: [PassDefinition], problems: [ContentDiagnostic]) {
        let root: SourceNode
        let shift = YAMLSourceParser.LineShift(from: excerptEntryLine, by: entryLine - excerptEntryLine)
        do { root = try YAMLSourceParser.parse(excerpt, file: file, lineShift: shift) } catch { return ([], [error]) }
        return definitions(of: root, file: file, firstEntry: firstEntry)
    }

    /// The definitions of a parsed file; `firstEntry` is the index in the file of the first entry of `passes:`
    /// (or `orders:`) in `root`.
    private static func definitions(
        of root: SourceNode, file: String, firstEntry: Int
    ) -> (definitions: [PassDefinition], problems: [ContentDiagnostic]) {
        var problems: [ContentDiagnostic] = []
        guard root.members != nil else {
            return (
                [],
                [
                    .error(
                        at: root.location, rule: "content.shape",
                        "a content file must be a map with `template:` and `serialNumber:` (`orderIdentifier:` "
                            + "for an order), or `passes:` (or `orders:`)")
                ]
            )
        }
        let directory = (file as NSString).deletingLastPathComponent
        if let passes = root.member("passes"), let orders = root.member("orders") {
            let second = passes.keyLocation.line > orders.keyLocation.line ? passes : orders
            return (
                [],
                [
                    .error(
                        at: second.keyLocation, keyPath: [.key(second.key)], rule: "content.kind-key",
                        "a file lists `passes:` or `orders:`, not both; move the orders into a file of their own")
                ]
            )
        }
        if let listMember = root.member("passes") ?? root.member("orders") {
            return listDefinitions(listMember, in: root, file: file, directory: directory, firstEntry: firstEntry)
        }
        if let member = root.member("bundle") {
            problems.append(
                .error(
                    at: member.keyLocation, keyPath: ["bundle"], rule: "content.bundle",
                    "`bundle:` groups the passes of a file with `passes:`; move this pass into such a file "
                        + "with the others of its bundle"))
            return ([], problems)
        }
        if let definition = definition(
            from: root, entry: root, listKind: nil, file: file, directory: directory,
            keyPath: .root, problems: &problems)
        {
            return ([definition], problems)
        }
        return ([], problems)
    }

    /// The definitions of a file with `passes:` (or `orders:`): each entry merged over the file's `defaults:`
    /// (and its `template:`, and for passes its `offer:`).
    private static func listDefinitions(
        _ listMember: SourceNode.Member, in root: SourceNode, file: String, directory: String, firstEntry: Int
    ) -> (definitions: [PassDefinition], problems: [ContentDiagnostic]) {
        var problems: [ContentDiagnostic] = []
        let kind: WalletItemKind = listMember.key == "passes" ? .pass : .order
        let listKey = listMember.key
        let passes = listMember.value
        let fileKeys =
            kind == .pass
            ? ["template", "defaults", "passes", "bundle", "offer"] : ["template", "defaults", "orders"]
        for member in root.members ?? [] where !fileKeys.contains(member.key) {
            problems.append(unknownKey(member, allowed: fileKeys, context: "a file with `\(listKey):`", kind: kind))
        }
        let bundle =
            kind == .pass
            ? root.member("bundle").flatMap { bundleDeclaration($0, passes: passes, problems: &problems) } : nil
        var defaults = fileDefaults(of: root, kind: kind, problems: &problems)
        if let template = root.member("template") { defaults.set("template", to: template.value) }
        // `offer:` beside `passes:` puts every pass of the file in that offer's pool.
        if kind == .pass, let offer = root.member("offer") { defaults.set("offer", to: offer.value) }
        let noun = kind.noun
        guard let entries = passes.elements else {
            problems.append(
                .error(
                    at: passes.location, keyPath: [.key(listKey)], rule: "content.type",
                    "\(listKey) must be a list of \(noun)s (`- \(kind.identifierKey): …`)"))
            return ([], problems)
        }
        if entries.isEmpty {
            problems.append(
                .warning(
                    at: passes.location, keyPath: [.key(listKey)], rule: "content.empty",
                    "\(listKey) is empty; this file defines no \(noun)"))
        }
        var definitions: [PassDefinition] = []
        for (offset, entry) in entries.enumerated() {
            let keyPath = JSONPath([.key(listKey), .index(firstEntry + offset)])
            guard entry.members != nil else {
                problems.append(
                    .error(
                        at: entry.location, keyPath: keyPath, rule: "content.type",
                        "each entry of \(listKey) must be a map"))
                continue
            }
            if var definition = definition(
                from: defaults.merging(entry), entry: entry, listKind: kind, file: file,
                directory: directory, keyPath: keyPath, problems: &problems)
            {
                definition.bundle = bundle
                definitions.append(definition)
            }
        }
        // A wrong key under `defaults:` is found in every entry: report it once.
        var seen = Set<ContentDiagnostic>()
        return (definitions, problems.filter { seen.insert($0).inserted })
    }

    /// The `defaults:` map of a list file, its unknown keys reported; an empty map when absent or not a map.
    private static func fileDefaults(
        of root: SourceNode, kind: WalletItemKind, problems: inout [ContentDiagnostic]
    ) -> SourceNode {
        let empty = SourceNode(.object([]), at: root.location)
        guard let node = root["defaults"] else { return empty }
        guard let members = node.members else {
            problems.append(
                .error(
                    at: node.location, keyPath: ["defaults"], rule: "content.type",
                    "defaults must be a map (data:, \(kind.overrideKey):, images:, download:)"))
            return empty
        }
        let allowed = entryKeys(for: kind).filter { $0 != kind.identifierKey }
        for member in members where !allowed.contains(member.key) {
            let isIdentifierKey = WalletItemKind.allCases.contains(where: { $0.identifierKey == member.key })
            if isIdentifierKey || !allEntryKeys.contains(member.key) {
                problems.append(unknownKey(member, allowed: allowed, context: "defaults", kind: kind))
            }
        }
        return node
    }

    /// `bundle: NAME` beside `passes:`: a name like a serial, and at most 10 passes.
    private static func bundleDeclaration(
        _ member: SourceNode.Member, passes: SourceNode, problems: inout [ContentDiagnostic]
    ) -> BundleDeclaration? {
        guard let name = member.value.stringValue, PassDefinition.isValidSerialNumber(name) else {
            problems.append(
                .error(
                    at: member.value.location, keyPath: ["bundle"], rule: "content.bundle",
                    "bundle must be a name matching \(PassDefinition.serialPattern), e.g. bundle: "
                        + "smith-family-2026; it is unique in the project and derives the bundle's download link"))
            return nil
        }
        if let entries = passes.elements, entries.count > BundleDeclaration.maximumPassCount {
            let extra = entries[BundleDeclaration.maximumPassCount]
            problems.append(
                .error(
                    at: member.keyLocation, keyPath: ["bundle"], rule: "content.bundle-size",
                    "bundle \(name) has \(entries.count) passes; Apple allows at most "
                        + "\(BundleDeclaration.maximumPassCount) in one .pkpasses download, so split the file into "
                        + "bundles of 10 or fewer",
                    notes: [(extra.location, "pass \(BundleDeclaration.maximumPassCount + 1) is here")]))
            return nil
        }
        return BundleDeclaration(name: name, location: member.keyLocation)
    }

    static let entryKeys = ["template", "serialNumber", "data", "pass", "images", "download", "offer"]
    static let orderEntryKeys = ["template", "orderIdentifier", "data", "order", "images", "download"]
    static let allEntryKeys = entryKeys + ["orderIdentifier", "order"]

    /// The keys of one entry of `kind`.
    static func entryKeys(for kind: WalletItemKind) -> [String] { kind == .pass ? entryKeys : orderEntryKeys }

    private static func unknownKey(
        _ member: SourceNode.Member, allowed: [String], context: String, kind: WalletItemKind = .pass
    ) -> ContentDiagnostic {
        .error(
            at: member.keyLocation, keyPath: [.key(member.key)], rule: "content.unknown-key",
            "unknown key `\(member.key)` in \(context); allowed: \(allowed.joined(separator: ", ")). "
                + "\(kind == .pass ? "Pass.json keys go under `pass:`" : "Order.json keys go under `order:`")")
    }

    /// Whether an entry defines a pass or an order, by its keys: `orderIdentifier:` or `order:` make it an
    /// order, `serialNumber:`, `pass:` or `offer:` a pass; in a list, `orders:` or `passes:` decide. A key of
    /// the other kind is an error at its line, with the key to use instead. The template's kind is checked
    /// where the template is loaded (`PassRenderer`).
    private static func kind(
        of merged: SourceNode, entry: SourceNode, listKind: WalletItemKind?, keyPath: JSONPath,
        problems: inout [ContentDiagnostic]
    ) -> WalletItemKind {
        let kind: WalletItemKind
        if let listKind {
            kind = listKind
        } else if merged["serialNumber"] != nil {
            kind = .pass
        } else if merged["orderIdentifier"] != nil || merged["order"] != nil {
            kind = .order
        } else {
            kind = .pass
        }
        let foreign: [(key: String, instead: String)] =
            kind == .pass
            ? [("orderIdentifier", "serialNumber"), ("order", "pass")]
            : [("serialNumber", "orderIdentifier"), ("pass", "order"), ("offer", "")]
        for (key, instead) in foreign {
            guard let member = merged.member(key) else { continue }
            let why: String
            switch (kind, listKind) {
            case (.pass, .pass?): why = "this entry is in `passes:`, so it is a pass"
            case (.pass, _): why = "this entry names a pass with `serialNumber:`"
            case (.order, .order?): why = "this entry is in `orders:`, so it is an order"
            case (.order, _):
                let orderKey = merged["orderIdentifier"] != nil ? "orderIdentifier" : "order"
                why = "this entry is an order (it has `\(orderKey):`)"
            }
            let fix =
                instead.isEmpty
                ? "an offer hands out passes, so remove `offer:` from the order"
                : kind == .pass
                    ? "a pass uses `\(instead):`; to define an order, use `orderIdentifier:` and `order:` "
                        + "throughout (a list of orders is `orders:`) with an order template"
                    : "an order uses `\(instead):` where a pass uses `\(key):`; rename the key"
            let path = entry.member(key) != nil ? keyPath.appending(key) : JSONPath(["defaults", .key(key)])
            problems.append(
                .error(
                    at: member.keyLocation, keyPath: path, rule: "content.kind-key",
                    "`\(key):` belongs to \(kind == .pass ? "an order" : "a pass"), but \(why); \(fix)"))
        }
        return kind
    }

    private static func definition(
        from merged: SourceNode, entry: SourceNode, listKind: WalletItemKind?, file: String,
        directory: String, keyPath: JSONPath,
        problems: inout [ContentDiagnostic]
    ) -> PassDefinition? {
        let before = problems.count
        let kind = kind(of: merged, entry: entry, listKind: listKind, keyPath: keyPath, problems: &problems)
        for member in entry.members ?? [] where !allEntryKeys.contains(member.key) {
            problems.append(
                unknownKey(
                    member, allowed: entryKeys(for: kind), context: "a \(kind.noun) definition",
                    kind: kind))
        }
        func text(_ key: String, hint: String) -> (String, SourceLocation)? {
            requiredText(key, hint: hint, in: merged, entry: entry, keyPath: keyPath, problems: &problems)
        }
        let template = text("template", hint: "name a folder in templates/")
        let identifierKey = kind.identifierKey
        let serial =
            kind == .pass
            ? text(
                "serialNumber",
                hint: "give the pass a unique serial, e.g. serialNumber: BA-2026-0001 "
                    + "(an order has `orderIdentifier:` instead)")
            : text("orderIdentifier", hint: "give the order a unique identifier, e.g. orderIdentifier: SO-2026-0001")
        if let (value, location) = serial, !PassDefinition.isValidSerialNumber(value) {
            let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
            problems.append(
                .error(
                    at: location, keyPath: keyPath.appending(identifierKey), rule: "content.serial",
                    "\(identifierKey) \"\(shown)\" (\(value.utf8.count) characters) is not allowed: it must "
                        + "match \(PassDefinition.serialPattern) — start with a letter or digit, then letters, "
                        + "digits, . _ ~ -, at most 128 in all — because it becomes a file name and a URL path"))
        }
        let data = merged["data"] ?? SourceNode(.object([]), at: entry.location)
        if data.members == nil {
            problems.append(
                .error(
                    at: data.location, keyPath: keyPath.appending("data"), rule: "content.type",
                    "`data:` must be a map of placeholder values"))
        }
        let overrideKey = kind.overrideKey
        let passOverride = merged[overrideKey]
        if let passOverride, passOverride.members == nil {
            problems.append(
                .error(
                    at: passOverride.location, keyPath: keyPath.appending(overrideKey), rule: "content.type",
                    "`\(overrideKey):` must be a map of \(kind.rootFile) keys"))
        }
        let images =
            merged["images"].map {
                imagePaths($0, kind: kind, file: file, directory: directory, keyPath: keyPath, problems: &problems)
            } ?? []
        var download: DownloadPolicy?
        if let node = merged["download"] { download = parseDownload(node, problems: &problems) }
        var offer: OfferMembership?
        if kind == .pass, let node = merged["offer"] {
            offer = offerMembership(node, keyPath: keyPath, problems: &problems)
        }
        guard problems[before...].allSatisfy({ !$0.isError }), let template, let serial else { return nil }
        var canonical = merged
        canonical.remove("template")
        return PassDefinition(
            serialNumber: serial.0, serialLocation: serial.1, templateName: template.0, templateLocation: template.1,
            data: data, passOverride: passOverride, images: images, download: download, offer: offer, file: file,
            location: entry.location, canonicalBytes: Array(template.0.utf8) + [0] + canonical.jsonValue.serialized(),
            kind: kind)
    }

    /// The text of a required key of an entry (merged over the defaults), or nil with the problem reported.
    private static func requiredText(
        _ key: String, hint: String, in merged: SourceNode, entry: SourceNode, keyPath: JSONPath,
        problems: inout [ContentDiagnostic]
    ) -> (String, SourceLocation)? {
        guard let node = merged[key] else {
            problems.append(
                .error(
                    at: entry.location, keyPath: keyPath.appending(key), rule: "content.required",
                    "missing `\(key):`; \(hint)"))
            return nil
        }
        guard let text = node.stringValue else {
            problems.append(
                .error(
                    at: node.location, keyPath: keyPath.appending(key), rule: "content.type",
                    "`\(key)` must be text, found \(node.jsonValue.typeName); quote it, e.g. \(key): "
                        + "\"\(node.jsonValue.serializedString())\""))
            return nil
        }
        return (text, node.location)
    }

    /// `images:`: each image name (a PNG, or for an order a JPEG too) with its file, relative to the content file.
    private static func imagePaths(
        _ node: SourceNode, kind: WalletItemKind, file: String, directory: String, keyPath: JSONPath,
        problems: inout [ContentDiagnostic]
    ) -> [(name: String, path: String, location: SourceLocation)] {
        guard let members = node.members else {
            problems.append(
                .error(
                    at: node.location, keyPath: keyPath.appending("images"), rule: "content.type",
                    "`images:` must map an image name to a file, e.g. thumbnail.png: photos/jane.png"))
            return []
        }
        var images: [(name: String, path: String, location: SourceLocation)] = []
        for member in members {
            let memberPath = keyPath + ["images", .key(member.key)]
            guard let path = member.value.stringValue else {
                problems.append(
                    .error(
                        at: member.value.location, keyPath: memberPath, rule: "content.type",
                        "an image path must be text"))
                continue
            }
            let name = member.key
            // An order's images may be JPEG too (Apple, "Creating the source for an order").
            let lowered = name.lowercased()
            let isImageName =
                lowered.hasSuffix(".png")
                || (kind == .order && (lowered.hasSuffix(".jpg") || lowered.hasSuffix(".jpeg")))
            let isSafeName =
                !name.hasPrefix("/") && !name.split(separator: "/").contains("..")
                && isImageName && name.split(separator: "/").count <= 2
            guard isSafeName else {
                problems.append(
                    .error(
                        at: member.keyLocation, keyPath: memberPath, rule: "content.image-name",
                        kind == .pass
                            ? "image name `\(name)` must be a PNG file name such as thumbnail.png or "
                                + "de.lproj/logo.png"
                            : "image name `\(name)` must be a PNG or JPEG file name such as product.png "
                                + "or de.lproj/logo.png"))
                continue
            }
            // An absolute path ties the project to one machine, and may name any file on it.
            guard !path.hasPrefix("/"), !path.hasPrefix("~") else {
                let shown = path.count > 80 ? String(path.prefix(80)) + "…" : path
                problems.append(
                    .error(
                        at: member.value.location, keyPath: memberPath, rule: "content.image-path",
                        "image path `\(shown)` is absolute; give it relative to this file (\(file)), "
                            + "inside the content or templates folder, e.g. \(name): photos/\(name)"))
                continue
            }
            images.append((name, (directory as NSString).appendingPathComponent(path), member.value.location))
        }
        return images
    }

    /// `offer: NAME`: the pass is in the pool of that offer of passforge.yml.
    private static func offerMembership(
        _ node: SourceNode, keyPath: JSONPath, problems: inout [ContentDiagnostic]
    ) -> OfferMembership? {
        if let name = node.stringValue, OfferMembership.isValidName(name) {
            return OfferMembership(name: name, location: node.location)
        }
        problems.append(
            .error(
                at: node.location, keyPath: keyPath.appending("offer"), rule: "content.offer",
                "offer must name an offer of passforge.yml's `offers:` (\(OfferMembership.namePattern)), "
                    + "e.g. offer: welcome-coupon"))
        return nil
    }
}
