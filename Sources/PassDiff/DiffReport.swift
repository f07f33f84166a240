import PassContent
import PassModel
import PassRender
import TextEscaping
import WalletTree

/// `passforge diff` output: terminal text, or Markdown for a pull-request comment.
///
/// Every string that comes from the change (values, labels, keys, file and template names, messages
/// that quote them, the revisions' names) is data: in Markdown it goes into a code span
/// (``MarkdownText/code(_:inTable:limit:)``), so that GitHub shows no link, image, mention or HTML from
/// it; on a terminal it is one line with no control, escape or bidirectional character
/// (``TerminalText/oneLine(_:limit:)``), so that a pass cannot draw lines of its own.
package struct DiffReport: Sendable {
    package enum Format: String, Sendable, CaseIterable { case text, markdown }

    package var diff: PassDiff
    package var base: String
    package var head: String
    /// Pass key → devices registered for it, when the registration store was reachable.
    package var devices: [String: Int]?

    package init(diff: PassDiff, base: String, head: String, devices: [String: Int]? = nil) {
        self.diff = diff
        self.base = base
        self.head = head
        self.devices = devices
    }

    package func render(_ format: Format) -> String {
        let md = format == .markdown
        var out: [String] = []
        let counts = "\(diff.added.count) added, \(diff.changed.count) changed, \(diff.removed.count) removed"
        let title = "passforge diff \(code(md, base)) → \(code(md, head)): \(counts)"
        out.append(md ? "### \(title)" : title)
        if diff.buildWouldRefuse {
            out += refusalLines(md)
        }
        if diff.isEmpty {
            let items = diff.hasOrders ? "pass or order" : "pass"
            out.append(md ? "\nNo \(items) changes." : "\nno \(items) changes")
            return out.joined(separator: "\n") + "\n"
        }
        if !diff.added.isEmpty {
            out.append(md ? "\n#### Added" : "\nadded:")
            for pass in diff.added {
                out.append(
                    bullet(
                        md,
                        "\(code(md, pass.key)) (\(code(md, pass.sourceFile)), template "
                            + "\(code(md, pass.templateName)))"))
            }
        }
        if !diff.removed.isEmpty {
            out.append(md ? "\n#### Removed" : "\nremoved:")
            for pass in diff.removed {
                out.append(
                    bullet(
                        md,
                        "\(flag(md)) \(code(md, pass.key)) (was \(code(md, pass.sourceFile))) is removed: "
                            + "holders keep it, no longer updated\(deviceNote(pass.key))"))
            }
        }
        if !diff.changed.isEmpty {
            out.append(md ? "\n#### Changed" : "\nchanged:")
            for pass in diff.changed { out += changeLines(md, pass) }
        }
        if devices == nil {
            out.append(
                md
                    ? "\n_Registration store not reachable: device counts unknown._"
                    : "\n(registration store not reachable: device counts unknown)")
        } else {
            let total = (diff.changed.map(\.key) + diff.removed.map(\.key)).reduce(0) { $0 + (devices?[$1] ?? 0) }
            let plural = total == 1 ? "" : "s"
            out.append(
                md
                    ? "\nThe build will push **\(total)** device\(plural)."
                    : "\nthe build will push \(total) device\(plural)")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Why `passforge build` would refuse the change: HEAD's errors, changed serials, changed tokens.
    func refusalLines(_ md: Bool) -> [String] {
        var out = [
            md
                ? "\n**❌ `passforge build` would refuse this change:**"
                : "\nerror: `passforge build` would refuse this change:"
        ]
        for error in diff.headErrors { out += diagnosticLines(md, error) }
        for serial in diff.serialChanges {
            out.append(
                bullet(
                    md,
                    serial.kind == .pass
                        ? "\(code(md, serial.file)): the serial changed from \(code(md, serial.before)) to "
                            + "\(code(md, serial.after)); Wallet identifies a pass by its "
                            + "serial, so holders of the old serial "
                            + "would never get this change. Issue a new pass in a new file instead"
                        : "\(code(md, serial.file)): the orderIdentifier changed from \(code(md, serial.before)) to "
                            + "\(code(md, serial.after)); Wallet identifies an order by its "
                            + "orderIdentifier, so devices holding "
                            + "the old one would never get this change. Put a new order in a new file instead"))
        }
        for pass in diff.changed where pass.tokenChanged {
            out.append(
                bullet(
                    md,
                    "\(code(md, pass.key)): the authenticationToken changes; devices keep the old one "
                        + "and their updates would fail"))
        }
        return out
    }

    /// One changed pass: its heading, its fields (a Markdown table), its images and its other keys.
    func changeLines(_ md: Bool, _ pass: PassDiff.ChangedPass) -> [String] {
        var out: [String] = []
        out.append(
            md
                ? "\n**\(code(md, pass.key))** (\(code(md, pass.sourceFile)))\(deviceNote(pass.key))"
                : "  \(code(md, pass.key)) (\(code(md, pass.sourceFile)))\(deviceNote(pass.key))")
        if md && !pass.fields.isEmpty {
            out.append("\n| field | before | after | |\n|---|---|---|---|")
        }
        for field in pass.fields { out.append(fieldLine(md, field)) }
        if md && !pass.fields.isEmpty { out.append("") }
        for image in pass.images {
            out.append(
                md
                    ? "- image \(code(md, image.name)): \(image.before ?? "none") → \(image.after ?? "removed")"
                    : "    image \(code(md, image.name)): \(image.before ?? "none") -> \(image.after ?? "removed")")
        }
        let other = pass.otherKeys
        if !other.isEmpty {
            let keys = other.map { code(md, $0) }.joined(separator: ", ")
            out.append(md ? "- other keys changed: \(keys)" : "    other keys changed: \(keys)")
        }
        return out
    }

    /// One changed field: a table row in Markdown, an indented line on a terminal.
    func fieldLine(_ md: Bool, _ field: PassDiff.FieldChange) -> String {
        let name = field.label.isEmpty ? field.key : "\(field.label) (\(field.key))"
        var note = field.isSilent ? "\(flag(md)) no changeMessage: the phone updates silently" : ""
        if let sequence = field.backwardsIn {
            note = "\(flag(md)) status goes backwards (\(sequence.description(arrow: md ? "→" : "->")))"
        }
        if md {
            return "| \(cell(name)) | \(field.before.map(cell) ?? "—") | \(field.after.map(cell) ?? "—") | \(note) |"
        }
        let before = field.before.map { "\"\(code(md, $0))\"" } ?? "(none)"
        let after = field.after.map { "\"\(code(md, $0))\"" } ?? "(removed)"
        let area = field.area.isEmpty ? "" : "\(field.area) "
        return "    \(area)\(code(md, name)): \(before) -> \(after)\(note.isEmpty ? "" : "  [\(note)]")"
    }

    /// A problem of HEAD: its line, then its notes, each a line of its own (in Markdown one code span).
    func diagnosticLines(_ md: Bool, _ diagnostic: ContentDiagnostic) -> [String] {
        if md { return ["- " + MarkdownText.code(diagnostic.description)] }
        var main = diagnostic
        main.notes = []
        return ["  " + TerminalText.oneLine(main.description)]
            + diagnostic.notes.map { "  " + TerminalText.oneLine("\($0.location): note: \($0.message)") }
    }

    func deviceNote(_ key: String) -> String {
        guard let devices else { return "" }
        let count = devices[key] ?? 0
        return ", pushes \(count) device\(count == 1 ? "" : "s")"
    }

    func bullet(_ md: Bool, _ text: String) -> String { md ? "- \(text)" : "  \(text)" }
    /// An outside string: a Markdown code span, or one line of terminal text.
    func code(_ md: Bool, _ text: String) -> String { md ? MarkdownText.code(text) : TerminalText.oneLine(text) }
    func flag(_ md: Bool) -> String { md ? "⚠️" : "warning:" }
    func cell(_ text: String) -> String { MarkdownText.code(text, inTable: true) }
}
