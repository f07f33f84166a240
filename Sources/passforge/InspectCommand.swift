import ArgumentParser
import Foundation
import PassModel
import PassPackage

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Read any .pkpass: fields, manifest check, signature check, certificate facts.",
        discussion: """
        Works on passes made by any tool. Exits 1 when the pass has any defect: a file changed
        after signing, a missing signing time, a missing WWDR certificate, a pass.json that
        breaks Apple's rules, a certificate that does not match the pass.

        Examples:
          passforge inspect output/v1/passes/pass.com.example.passforge/BA-2026-0001
          passforge inspect ticket.pkpass --trusted-root AppleRootCA-G3.cer
          passforge inspect ticket.pkpass --trusted-root .passforge/dev-pki/root-certificate.pem
          passforge inspect ticket.pkpass --language de

        Labels and values are shown as Wallet shows them in one language: the
        pass's <language>.lproj/pass.strings, English by default. A pass.strings
        that does not parse is a defect, named with its line.
        """
    )

    @Argument(help: ArgumentHelp("The .pkpass file.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Root certificate (PEM or DER) to verify the signer's chain against.", valueName: "file"))
    var trustedRoot: String?

    @Option(help: ArgumentHelp("Show labels and values in this language (de, pt-BR); English by default.", valueName: "language"))
    var language: String?

    func run() throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            Console.error("error: cannot read \(file); check the path")
            throw ExitCode.failure
        }
        var root: [UInt8]?
        if let trustedRoot {
            guard let bytes = FileManager.default.contents(atPath: trustedRoot) else {
                Console.error("error: cannot read the trusted root \(trustedRoot)")
                throw ExitCode.failure
            }
            root = Array(bytes)
        }
        let inspection = PassInspection(pkpass: Array(data), trustedRoots: root)
        var defects = inspection.defects.map(\.description)

        let localization = PassLocalization(files: inspection.files, language: language)
        defects += localization.defects
        if let passBytes = inspection.files["pass.json"] {
            do {
                let json = try JSONValue(parsing: passBytes)
                printPass(json, localization: localization)
                for diagnostic in PassValidator().validate(json, options: .init(allowsHTTPWebService: true)) {
                    let line = "pass.json \(diagnostic.keyPath): \(diagnostic.message) [\(diagnostic.rule)]"
                    if diagnostic.isError { defects.append(line) } else { Console.print("warning: \(line)") }
                }
                // With the pass.json at hand, the images are checked with its style scheme's rules
                // (a poster event ticket needs artwork or a background), as the build checks them.
                for diagnostic in ImageRules.validate(files: inspection.files, pass: json) {
                    let line = "\(diagnostic.keyPath): \(diagnostic.message) [\(diagnostic.rule)]"
                    if diagnostic.isError { defects.append(line) } else { Console.print("warning: \(line)") }
                }
            } catch {
                // PassInspection already reports an unreadable pass.json.
            }
        }

        Console.print("files:")
        for entry in inspection.entries {
            Console.print("  \(entry.name)  \(entry.size) bytes  sha1 \(entry.sha1)")
        }
        if let signature = inspection.signature {
            Console.print("signature: \(signature.verifiesManifest ? "verifies over manifest.json" : "DOES NOT VERIFY")"
                          + (signature.digestAlgorithm.map { ", digest \($0)" } ?? ""))
            if let time = signature.signingTime { Console.print("  signing time: \(ISO8601DateFormatter().string(from: time))") }
            if let signer = signature.signer {
                Console.print("  signer: \(signer.subject)")
                Console.print("  valid: \(ISO8601DateFormatter().string(from: signer.notBefore)) to \(ISO8601DateFormatter().string(from: signer.notAfter))")
                Console.print("  issuer: \(signer.issuer)")
            }
            switch signature.chainTrust {
            case .notChecked: Console.print("  chain: not checked (give --trusted-root to check it)")
            case .trusted: Console.print("  chain: trusted")
            case .untrusted(let reason): Console.print("  chain: NOT trusted: \(reason)")
            }
        }
        if defects.isEmpty {
            Console.print("ok: no defects")
        } else {
            for defect in defects { Console.error("defect: \(defect)") }
            Console.error("\(defects.count) defect\(defects.count == 1 ? "" : "s")")
            throw ExitCode.failure
        }
    }

    private func printPass(_ json: JSONValue, localization: PassLocalization) {
        func text(_ key: String) -> String { json[key]?.stringValue.map(localization.localized) ?? "(missing)" }
        Console.print("language:     \(localization.summary)")
        let style = PassStyle.allCases.first { json[$0.key] != nil }
        Console.print("pass type:    \(text("passTypeIdentifier"))")
        Console.print("serial:       \(text("serialNumber"))")
        Console.print("team:         \(text("teamIdentifier"))")
        Console.print("organization: \(text("organizationName"))")
        Console.print("description:  \(text("description"))")
        Console.print("style:        \(style?.key ?? "(none)")")
        if let url = json["webServiceURL"]?.stringValue { Console.print("web service:  \(url)") }
        guard let style, let structure = json[style.key]?.objectValue else { return }
        for area in ["headerFields", "primaryFields", "secondaryFields", "auxiliaryFields", "footerFields", "backFields", "additionalInfoFields"] {
            guard let fields = structure[area]?.arrayValue, !fields.isEmpty else { continue }
            Console.print("\(area):")
            for field in fields {
                let key = field["key"]?.stringValue ?? "?"
                let label = field["label"]?.stringValue.map { "\(localization.localized($0)): " } ?? ""
                let value = field["value"].map { $0.stringValue.map(localization.localized) ?? $0.serializedString() } ?? ""
                Console.print("  \(key) — \(label)\(value)")
            }
        }
    }
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

    init(files: [String: [UInt8]], language requested: String?) {
        var tables: [String: (file: String, table: [String: String])] = [:]
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
        let match = tables.keys.sorted().first { $0.lowercased() == wanted.lowercased() }
            ?? tables.keys.sorted().first { $0.lowercased().hasPrefix(wanted.lowercased() + "-") }
        if let match {
            language = match
            file = tables[match]!.file
            table = tables[match]!.table
        } else if let requested {
            defects.append("the pass has no \(requested).lproj/pass.strings; its languages: \(available.isEmpty ? "none" : available.joined(separator: ", "))")
        }
    }

    func localized(_ text: String) -> String { table[text] ?? text }

    var summary: String {
        let others = available.isEmpty ? "" : " (languages: \(available.joined(separator: ", ")))"
        guard let language, let file else { return "as written, no translation used" + others }
        return "\(language) from \(file)" + others
    }
}
