import ArgumentParser
import AtomicFiles
import Foundation
import PassModel
import PassPackage
import TextEscaping

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Read any .pkpass, .pkpasses or .order: fields, manifest check, signature check, certificate facts.",
        discussion: """
            Works on passes made by any tool. Exits 1 when the pass has any defect: something that
            makes Wallet refuse or misshow it (a file changed after signing, a missing signing time, a
            missing or wrong WWDR certificate, a pass.json that is not strict JSON or breaks Apple's
            rules, a certificate that does not match the pass). What Apple's documentation advises
            against but Wallet shows anyway (a hex colour, textAlignment on a primary field) is a
            warning. A .pkpasses bundle is recognised and each of its passes inspected. A Wallet
            order (.order) is recognised by its order.json: its SHA-256 manifest, its signature and
            every rule of Apple's order format are checked.

            Examples:
              passforge inspect output/v1/passes/pass.com.example.passforge/BA-2026-0001
              passforge inspect ticket.pkpass --trusted-root AppleIncRoot.pem --valid-at signing
              passforge inspect ticket.pkpass --trusted-root .passforge/dev-pki/root-certificate.pem
              passforge inspect ticket.pkpass --language de
              passforge inspect tickets.pkpasses
              passforge inspect output/v1/orders/order.com.example.shop/ORD-1001

            Labels and values are shown as Wallet shows them in one language: the
            pass's <language>.lproj/pass.strings, English by default. A pass.strings
            that does not parse is a defect, named with its line.
            """
    )

    @Argument(help: ArgumentHelp("The .pkpass (or .pkpasses bundle) file.", valueName: "file"))
    var file: String

    @Option(
        help: ArgumentHelp("Root certificate (PEM or DER) to verify the signer's chain against.", valueName: "file"))
    var trustedRoot: String?

    @Option(
        help: ArgumentHelp(
            "Show labels and values in this language (de, pt-BR); English by default.", valueName: "language"))
    var language: String?

    @Option(
        help: ArgumentHelp(
            "When the certificates must be valid: signing (the signature's signingTime; for old passes), now (the default), or an RFC 3339 date.",
            valueName: "signing|now|date"))
    var validAt: String = "now"

    /// Image rules whose breach Wallet tolerates in a distributed pass: files it does not use (it ignores them), and
    /// an image both top-level and in an .lproj folder (the top-level one wins, as Apple's "Creating the source for
    /// an order" says of the same package layout). The build refuses all of them in your own content.
    static let imageRulesWalletTolerates: Set<String> = [
        "image.name", "image.notAllowed", "image.posterOnly", "image.localizedDuplicate",
    ]

    /// The longest value printed (a 50 MB description prints as one bounded line).
    static let valueLimit = 200

    func validate() throws {
        _ = try Self.validityMoment(validAt)
    }

    static func validityMoment(_ text: String) throws -> ValidityMoment {
        switch text.lowercased() {
        case "signing": return .signingTime
        case "now": return .now
        default:
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return .date(date) }
            formatter.formatOptions.insert(.withFractionalSeconds)
            if let date = formatter.date(from: text) { return .date(date) }
            throw ValidationError(
                "--valid-at \"\(TerminalText.oneLine(text, limit: 60))\" is not signing, now or an RFC 3339 date such as 2024-05-01T12:00:00Z"
            )
        }
    }

    func run() throws {
        let moment = try Self.validityMoment(validAt)
        // A single pass is at most PackageLimits.maximumTotalSize; a bundle at
        // most maximumBundleSize. The size is checked before anything is read,
        // and no more than the bound is ever read (the file may grow).
        let bound =
            file.lowercased().hasSuffix(".pkpass") || file.lowercased().hasSuffix(".order")
            ? PackageLimits.maximumTotalSize : PackageLimits.maximumBundleSize
        let data: [UInt8]
        switch Self.readBounded(file, bound: bound) {
        case .success(let bytes): data = bytes
        case .failure(let message):
            Console.error("error: \(message.description)")
            throw ExitCode.failure
        }
        var root: [UInt8]?
        if let trustedRoot {
            guard case .success(let bytes) = Self.readBounded(trustedRoot, bound: 1 << 20) else {
                Console.error(
                    "error: cannot read the trusted root \(TerminalText.oneLine(trustedRoot)) (a certificate file of at most 1 MB)"
                )
                throw ExitCode.failure
            }
            root = bytes
        }

        let defects: [String]
        // A bundle (application/vnd.apple.pkpasses) is a zip of .pkpass files; a pass has a pass.json.
        if let names = ZipArchive.entryNames(data, limit: PackageLimits.maximumFileCount),
            names.contains(where: { $0.lowercased().hasSuffix(".pkpass") }), !names.contains("pass.json")
        {
            defects = inspectBundle(data, trustedRoot: root, moment: moment)
        } else if let names = ZipArchive.entryNames(data, limit: PackageLimits.maximumFileCount),
            names.contains("order.json"),
            !names.contains("pass.json")
        {
            defects = inspectOrder(data, trustedRoot: root, moment: moment)
        } else if data.count > PackageLimits.maximumTotalSize {
            defects = ["the file is \(data.count) bytes; a pass holds at most \(PackageLimits.maximumTotalSize) bytes"]
        } else {
            defects = inspectPass(data, trustedRoot: root, moment: moment)
        }
        if defects.isEmpty {
            Console.print("ok: no defects")
        } else {
            for defect in defects { Console.error("defect: \(TerminalText.oneLine(defect))") }
            Console.error("\(defects.count) defect\(defects.count == 1 ? "" : "s")")
            throw ExitCode.failure
        }
    }

    /// The bytes of `path`, refused without reading when the file is larger
    /// than `bound`, and never more than `bound` bytes read.
    static func readBounded(_ path: String, bound: Int) -> Result<[UInt8], InspectReadError> {
        let shown = TerminalText.oneLine(path)
        do {
            return .success(try AtomicFileSystem.readFile(path, limit: bound))
        } catch {
            switch error {
            case .folder:
                return .failure(
                    InspectReadError(
                        "\(shown) is a folder; give the .pkpass file (a pass's files zipped, not the folder)"))
            case .tooLarge(let size):
                return .failure(
                    InspectReadError(
                        "\(shown) is \(size) bytes; at most \(bound) are read (a pass holds at most \(PackageLimits.maximumTotalSize) bytes, a .pkpasses bundle \(PackageLimits.maximumBundleSize))"
                    ))
            case .grew:
                return .failure(InspectReadError("\(shown) grew while it was read; inspect it when it is complete"))
            case .unreadable:
                return .failure(InspectReadError("cannot read \(shown): \(error.reason); check the path"))
            }
        }
    }

    /// A bundle's passes, each inspected; defects are named by member.
    private func inspectBundle(_ data: [UInt8], trustedRoot: [UInt8]?, moment: ValidityMoment) -> [String] {
        let members: [ZipEntry]
        do {
            members = try ZipArchive.read(data, limits: .bundle)
        } catch {
            return ["not a readable .pkpasses bundle: \(error.description)"]
        }
        Console.print("bundle: \(members.count) pass\(members.count == 1 ? "" : "es") (.pkpasses)")
        var defects: [String] = []
        for member in members {
            let name = TerminalText.oneLine(member.name, limit: Self.valueLimit)
            Console.print("")
            Console.print("== \(name)")
            guard member.name.lowercased().hasSuffix(".pkpass") else {
                defects.append("\(name) is not a pass; a .pkpasses bundle holds only .pkpass files")
                continue
            }
            guard member.bytes.count <= PackageLimits.maximumTotalSize else {
                defects.append(
                    "\(name): it is \(member.bytes.count) bytes; a pass holds at most \(PackageLimits.maximumTotalSize)"
                )
                continue
            }
            defects += inspectPass(member.bytes, trustedRoot: trustedRoot, moment: moment).map { "\(name): \($0)" }
        }
        return defects
    }

    /// Prints what one pass holds and returns its defects.
    private func inspectPass(_ data: [UInt8], trustedRoot: [UInt8]?, moment: ValidityMoment) -> [String] {
        let inspection = PassInspection(pkpass: data, trustedRoots: trustedRoot, validAt: moment)
        var defects = inspection.defects.map(\.description)

        let localization = PassLocalization(files: inspection.files, language: language)
        defects += localization.defects
        for note in localization.notes { Console.print("note: \(TerminalText.oneLine(note))") }
        if let json = inspection.passJSON {
            printPass(json, localization: localization)
            // A pass someone else made: errors for what Wallet refuses or
            // misshows, warnings for what Apple's guidance advises against;
            // localizable text is checked as each language resolves it.
            let options = PassValidator.Options(
                allowsHTTPWebService: true, localizations: localization.tables,
                audience: .distributedPass)
            var diagnostics = PassValidator().validate(json, options: options).map { ("pass.json \($0.keyPath)", $0) }
            // With the pass.json at hand, the images are checked with its style scheme's rules
            // (a poster event ticket needs artwork or a background), as the build checks them.
            diagnostics += ImageRules.validate(files: inspection.files, pass: json).map { diagnostic in
                var diagnostic = diagnostic
                // Wallet ignores files it does not use (pass-builder's tooling.json, personalization.json,
                // an image the style does not show): the build refuses them in your own content, but
                // in a distributed pass they are warnings.
                if Self.imageRulesWalletTolerates.contains(diagnostic.rule) { diagnostic.severity = .warning }
                return ("\(diagnostic.keyPath)", diagnostic)
            }
            for (place, diagnostic) in diagnostics {
                let line = "\(place): \(diagnostic.message) [\(diagnostic.rule)]"
                if diagnostic.isError {
                    defects.append(line)
                } else {
                    Console.print("warning: \(TerminalText.oneLine(line))")
                }
            }
        }

        printPackage(inspection, moment: moment)
        return defects
    }

    /// The archive's files with their hashes, and the signature with its certificates.
    private func printPackage(_ inspection: PassInspection, moment: ValidityMoment) {
        Console.print("files:")
        for entry in inspection.entries {
            Console.print(
                "  \(TerminalText.oneLine(entry.name, limit: Self.valueLimit))  \(entry.size) bytes  \(inspection.kind == .pass ? "sha1" : "sha256") \(entry.digest)"
            )
        }
        if let signature = inspection.signature {
            Console.print(
                "signature: \(signature.verifiesManifest ? "verifies over manifest.json" : "DOES NOT VERIFY")"
                    + (signature.digestAlgorithm.map { ", digest \(TerminalText.oneLine($0, limit: 40))" } ?? ""))
            if let time = signature.signingTime {
                Console.print("  signing time: \(ISO8601DateFormatter().string(from: time))")
            }
            if let signer = signature.signer {
                Console.print("  signer: \(TerminalText.oneLine(signer.subject, limit: Self.valueLimit))")
                Console.print(
                    "  valid: \(ISO8601DateFormatter().string(from: signer.notBefore)) to \(ISO8601DateFormatter().string(from: signer.notAfter))"
                )
                Console.print(
                    "  issuer: \(TerminalText.oneLine(AppleIntermediate.name(ofIssuerOf: signer), limit: 2 * Self.valueLimit))"
                )
                for certificate in signature.embeddedCertificates where certificate.derBytes != signer.derBytes {
                    Console.print(
                        "  embedded: \(TerminalText.oneLine(AppleIntermediate.name(of: certificate), limit: 2 * Self.valueLimit))"
                    )
                }
            }
            let basis =
                moment == .signingTime
                ? (signature.signingTime == nil ? "now: no signing time" : "the signing time")
                : (validAt.lowercased() == "now" ? "now" : "--valid-at")
            Console.print(
                "  certificates checked at: \(ISO8601DateFormatter().string(from: signature.checkedAt)) (\(basis))")
            switch signature.chainTrust {
            case .notChecked: Console.print("  chain: not checked (give --trusted-root to check it)")
            case .trusted: Console.print("  chain: trusted")
            case .untrusted(let reason):
                Console.print("  chain: NOT trusted: \(TerminalText.oneLine(reason, limit: Self.valueLimit))")
            }
        }
    }

    /// Prints what one order holds and returns its defects: the package (SHA-256 manifest,
    /// signature, orderTypeIdentifier against the certificate) and every rule of order.json.
    private func inspectOrder(_ data: [UInt8], trustedRoot: [UInt8]?, moment: ValidityMoment) -> [String] {
        let inspection = PassInspection(order: data, trustedRoots: trustedRoot, validAt: moment)
        var defects = inspection.defects.map(\.description)
        if let json = inspection.passJSON {
            func shown(_ value: JSONValue?) -> String {
                value.map { TerminalText.oneLine($0.stringValue ?? $0.serializedString(), limit: Self.valueLimit) }
                    ?? "(missing)"
            }
            Console.print("order type:   \(shown(json["orderTypeIdentifier"]))")
            Console.print("order:        \(shown(json["orderIdentifier"])) (number \(shown(json["orderNumber"])))")
            Console.print("status:       \(shown(json["status"]))")
            Console.print("merchant:     \(shown(json["merchant"]?["displayName"]))")
            Console.print("created at:   \(shown(json["createdAt"]))")
            Console.print("updated at:   \(shown(json["updatedAt"]))")
            for (index, fulfillment) in (json["fulfillments"]?.arrayValue ?? []).enumerated() {
                Console.print(
                    "fulfillment \(index): \(shown(fulfillment["fulfillmentType"])) \(shown(fulfillment["status"]))")
            }
            for item in json["lineItems"]?.arrayValue ?? [] {
                Console.print(
                    "  \(shown(item["quantity"])) × \(shown(item["title"]))  \(shown(item["price"]?["amount"])) \(shown(item["price"]?["currency"]))"
                )
            }
            if let total = json["payment"]?["total"] {
                Console.print(
                    "total:        \(shown(total["amount"])) \(shown(total["currency"])) (\(shown(json["payment"]?["status"])))"
                )
            }
            var files = inspection.files
            for name in [Manifest.fileName, Manifest.signatureFileName, "order.json"] { files[name] = nil }
            // createdAt must not be later than the moment judged (--valid-at: now by default), the rule build and
            // validate apply at their update tag; a signing time is in whole seconds, so a second is allowed.
            let checkedAt =
                inspection.signature.map { $0.checkedAt.timeIntervalSince1970 + (moment == .signingTime ? 1 : 0) }
                ?? {
                    if case .date(let date) = moment {
                        date.timeIntervalSince1970
                    } else {
                        Date().timeIntervalSince1970
                    }
                }()
            for diagnostic in OrderValidator().validate(json, options: .init(files: files, checkedAt: checkedAt)) {
                let line = "order.json \(diagnostic.keyPath): \(diagnostic.message) [\(diagnostic.rule)]"
                if diagnostic.isError {
                    defects.append(line)
                } else {
                    Console.print("warning: \(TerminalText.oneLine(line))")
                }
            }
        }
        printPackage(inspection, moment: moment)
        return defects
    }

    private func printPass(_ json: JSONValue, localization: PassLocalization) {
        func shown(_ text: String) -> String { TerminalText.oneLine(text, limit: Self.valueLimit) }
        func text(_ key: String) -> String {
            json[key]?.stringValue.map { shown(localization.localized($0)) } ?? "(missing)"
        }
        Console.print("language:     \(shown(localization.summary))")
        let style = PassStyle.allCases.first { json[$0.key] != nil }
        Console.print("pass type:    \(text("passTypeIdentifier"))")
        Console.print("serial:       \(text("serialNumber"))")
        Console.print("team:         \(text("teamIdentifier"))")
        Console.print("organization: \(text("organizationName"))")
        Console.print("description:  \(text("description"))")
        Console.print("style:        \(style?.key ?? "(none)")")
        if let url = json["webServiceURL"]?.stringValue { Console.print("web service:  \(shown(url))") }
        guard let style, let structure = json[style.key]?.objectValue else { return }
        for area in [
            "headerFields", "primaryFields", "secondaryFields", "auxiliaryFields", "footerFields", "backFields",
            "additionalInfoFields",
        ] {
            guard let fields = structure[area]?.arrayValue, !fields.isEmpty else { continue }
            Console.print("\(area):")
            for field in fields {
                let key = field["key"]?.stringValue ?? "?"
                let label = field["label"]?.stringValue.map { "\(shown(localization.localized($0))): " } ?? ""
                let value =
                    field["value"].map { $0.stringValue.map(localization.localized) ?? $0.serializedString() } ?? ""
                Console.print("  \(shown(key)) — \(label)\(shown(value))")
            }
        }
    }
}

/// Why `inspect` could not read a file, for the person who ran it.
struct InspectReadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The pass.strings of one language in a pass: what Wallet looks labels and
/// values up in. English by default; a pass without that language shows its
/// text as written.
struct PassLocalization {
    var language: String?
    var file: String?
    var table: [String: String] = [:]
    var available: [String] = []
    var defects: [String] = []
    /// What the reader should know but is not wrong with the pass.
    var notes: [String] = []
    /// Every language's table, for the rules on localizable text.
    var tables: [String: [String: String]] = [:]

    init(files: [String: [UInt8]], language requested: String?) {
        var tables: [String: (file: String, table: [String: String])] = [:]
        defer { self.tables = tables.mapValues(\.table) }
        for name in files.keys.sorted() where name.hasSuffix("/pass.strings") {
            guard let language = PassStrings.language(ofPath: name) else { continue }
            do {
                tables[language] = (name, try PassStrings.table(files[name]!))
            } catch {
                defects.append("\(name):\(error.line):\(error.column): \(error.message)")
            }
        }
        available = Set(files.keys.compactMap { PassStrings.language(ofPath: $0) }).sorted()
        let wanted = requested ?? "en"
        // `pt` finds pt.lproj, else the first regional folder such as pt-BR.lproj.
        let match =
            tables.keys.sorted().first { $0.lowercased() == wanted.lowercased() }
            ?? tables.keys.sorted().first { $0.lowercased().hasPrefix(wanted.lowercased() + "-") }
        if let match {
            language = match
            file = tables[match]!.file
            table = tables[match]!.table
        } else if let requested {
            // Not a defect: Wallet then shows the pass as written (or in another of its languages).
            notes.append(
                "the pass has no \(requested).lproj/pass.strings, so it is shown as written; its languages: \(available.isEmpty ? "none" : available.joined(separator: ", "))"
            )
        }
    }

    func localized(_ text: String) -> String { table[text] ?? text }

    var summary: String {
        let others = available.isEmpty ? "" : " (languages: \(available.joined(separator: ", ")))"
        guard let language, let file else { return "as written, no translation used" + others }
        return "\(language) from \(file)" + others
    }
}
