import Foundation
package import PassModel

/// `passforge.yml`: project-wide defaults for every pass and every order, and
/// which certificate signs which pass type or order type. Secrets never live here.
package struct ProjectConfiguration: Sendable {
    /// The signing files for one pass type or order type, from `signing:` in passforge.yml:
    /// the certificate (PEM, DER or .p12) and, when it is a separate file, the key.
    package struct SigningFiles: Sendable, Hashable {
        package var certificate: String
        package var key: String?
        package var location: SourceLocation
    }

    /// Values that every pass starts from: passTypeIdentifier, teamIdentifier,
    /// organizationName, webServiceURL — each with the line it was written on.
    package var passDefaults: SourceNode
    /// Values that every order starts from: orderTypeIdentifier and webServiceURL (the keys of
    /// `orderDefaultKeys` that passforge.yml sets). Pass-only keys (passTypeIdentifier, teamIdentifier,
    /// organizationName) are not in it: order.json has no such keys.
    package var orderDefaults: SourceNode
    /// Type identifier (a passTypeIdentifier or an orderTypeIdentifier) → its certificate and key paths
    /// (relative to the yml).
    package var signing: [String: SigningFiles]
    /// Where the configuration came from, or nil when there is none.
    package var file: String?
    /// `deviceCheck:`: Apple's DeviceCheck service, for offers.
    package var deviceCheck: DeviceCheckSettings?
    /// `offers:`: DeviceCheck offers, each a pool of passes handed out one per device.
    package var offers: [OfferSettings] = []
    /// `landingPages:`: the page beside every download link (`LandingPageSettings`).
    package var landingPages = LandingPageSettings()

    package static let defaultKeys = ["passTypeIdentifier", "teamIdentifier", "organizationName", "webServiceURL"]
    /// The passforge.yml keys that go into every order.json.
    package static let orderDefaultKeys = ["orderTypeIdentifier", "webServiceURL"]

    package init(
        passDefaults: SourceNode? = nil, orderDefaults: SourceNode? = nil, signing: [String: SigningFiles] = [:],
        file: String? = nil
    ) {
        self.passDefaults = passDefaults ?? SourceNode(.object([]), at: SourceLocation(file: file ?? "passforge.yml"))
        self.orderDefaults = orderDefaults ?? SourceNode(.object([]), at: SourceLocation(file: file ?? "passforge.yml"))
        self.signing = signing
        self.file = file
    }

    /// The values every pass (or every order) starts from.
    package func defaults(for kind: WalletItemKind) -> SourceNode { kind == .pass ? passDefaults : orderDefaults }

    /// The configured default for `key`, e.g. `passTypeIdentifier` or `orderTypeIdentifier`.
    package func defaultValue(_ key: String) -> String? {
        passDefaults[key]?.stringValue ?? orderDefaults[key]?.stringValue
    }

    /// Reads a passforge.yml. Every problem is reported at once.
    package static func load(file: String) throws(ContentErrors) -> ProjectConfiguration {
        // In a pull request's CI a passforge.yml linked to a file elsewhere would show that file's keys in
        // messages: it may be a link only within the folder that holds it.
        let folder = (file as NSString).deletingLastPathComponent
        let data: [UInt8]
        switch ProjectBoundary(folders: [folder.isEmpty ? "." : folder]).read(file) {
        case .success(let bytes): data = bytes
        case .failure(.outside):
            throw ContentErrors([
                .error(
                    at: SourceLocation(file: file), rule: "config.outside-project",
                    "the configuration file is a symbolic link to a file outside its folder; passforge reads "
                        + "it only from the project, so replace the link with a copy of the file")
            ])
        case .failure(.unreadable), .failure(.unsafeName):
            throw ContentErrors([
                .error(
                    at: SourceLocation(file: file), rule: "config.unreadable",
                    "cannot read the configuration file; check the path given to --config")
            ])
        }
        let root: SourceNode
        do { root = try SourceParser.parse(data, file: file) } catch { throw ContentErrors([error]) }
        return try parse(root, file: file)
    }

    static func parse(_ root: SourceNode, file: String) throws(ContentErrors) -> ProjectConfiguration {
        guard let members = root.members else {
            throw ContentErrors([
                .error(at: root.location, rule: "config.shape", "passforge.yml must be a map of settings")
            ])
        }
        var problems: [ContentDiagnostic] = []
        var defaults: [SourceNode.Member] = []
        var orderDefaults: [SourceNode.Member] = []
        var signing: [String: SigningFiles] = [:]
        var deviceCheck: DeviceCheckSettings?
        var offers: [OfferSettings] = []
        var landingPages: LandingPageSettings?
        let directory = (file as NSString).deletingLastPathComponent
        func resolve(_ path: String) -> String {
            path.hasPrefix("/") || directory.isEmpty ? path : (directory as NSString).appendingPathComponent(path)
        }
        for member in members {
            switch member.key {
            case let key where defaultKeys.contains(key) || orderDefaultKeys.contains(key):
                guard member.value.stringValue != nil else {
                    problems.append(
                        .error(
                            at: member.value.location, keyPath: [.key(key)], rule: "config.type", "\(key) must be text")
                    )
                    continue
                }
                if defaultKeys.contains(key) { defaults.append(member) }
                if orderDefaultKeys.contains(key) { orderDefaults.append(member) }
            case "signing":
                guard let entries = member.value.members else {
                    problems.append(
                        .error(
                            at: member.value.location, keyPath: ["signing"], rule: "config.type",
                            "signing must map a passTypeIdentifier or orderTypeIdentifier to {certificate:, key:}"))
                    continue
                }
                for entry in entries {
                    let path: JSONPath = ["signing", .key(entry.key)]
                    guard let certificate = entry.value["certificate"]?.stringValue else {
                        problems.append(
                            .error(
                                at: entry.value.location, keyPath: path, rule: "config.signing",
                                "signing for \(entry.key) needs `certificate: PATH` (PEM, DER or .p12)"))
                        continue
                    }
                    for inner in entry.value.members ?? [] where !["certificate", "key"].contains(inner.key) {
                        problems.append(secretOrUnknown(inner, path: path.appending(inner.key)))
                    }
                    signing[entry.key] = SigningFiles(
                        certificate: resolve(certificate),
                        key: entry.value["key"]?.stringValue.map(resolve),
                        location: entry.keyLocation)
                }
            case "deviceCheck":
                deviceCheck = parseDeviceCheck(member, resolve: resolve, problems: &problems)
            case "offers":
                offers = parseOffers(member, problems: &problems)
            case "landingPages":
                landingPages = parseLandingPages(member, resolve: resolve, problems: &problems)
            default:
                problems.append(secretOrUnknown(member, path: [.key(member.key)]))
            }
        }
        if !problems.isEmpty { throw ContentErrors(problems) }
        var configuration = ProjectConfiguration(
            passDefaults: SourceNode(.object(defaults), at: root.location),
            orderDefaults: SourceNode(.object(orderDefaults), at: root.location),
            signing: signing, file: file)
        configuration.deviceCheck = deviceCheck
        configuration.offers = offers
        if let landingPages { configuration.landingPages = landingPages }
        return configuration
    }

    private static func secretOrUnknown(_ member: SourceNode.Member, path: JSONPath) -> ContentDiagnostic {
        let lowered = member.key.lowercased()
        if ["password", "secret", "token", "passphrase"].contains(where: lowered.contains) {
            return .error(
                at: member.keyLocation, keyPath: path, rule: "config.secret",
                "secrets never go in passforge.yml (it is committed to git); remove `\(member.key)` and set "
                    + "PASSFORGE_SIGNING_PASSWORD or PASSFORGE_TOKEN_SECRET in the environment")
        }
        let known = defaultKeys + ["orderTypeIdentifier", "signing", "deviceCheck", "offers", "landingPages"]
        return .error(
            at: member.keyLocation, keyPath: path, rule: "config.unknown-key",
            "unknown setting `\(member.key)`; passforge.yml knows \(known.joined(separator: ", "))")
    }
}
