import Foundation
import PassBuild
import WalletTree
import PassContent
import PassModel

/// What a change to the content does to the passes: `passforge diff BASE [HEAD]`.
package struct PassDiff: Sendable {
    /// One pass field whose label or value changed.
    package struct FieldChange: Sendable, Hashable {
        package var area: String
        package var key: String
        package var label: String
        package var before: String?
        package var after: String?
        /// The field has no changeMessage after the change, so the phone updates silently.
        package var isSilent: Bool
    }

    package struct ImageChange: Sendable, Hashable {
        package var name: String
        /// "60×60 px", or nil when the image is not there on that side.
        package var before: String?
        package var after: String?
    }

    package struct ChangedPass: Sendable {
        package var key: String
        package var sourceFile: String
        package var fields: [FieldChange] = []
        package var images: [ImageChange] = []
        /// Other pass.json keys that changed (key paths), and localization files.
        package var otherKeys: [String] = []
        /// The authenticationToken changed: the build refuses.
        package var tokenChanged = false
    }

    /// A file's one pass that now has another serial: the build refuses.
    package struct SerialChange: Sendable, Hashable {
        package var file: String
        package var before: String
        package var after: String
    }

    package var added: [UnsignedPass] = []
    package var removed: [UnsignedPass] = []
    package var changed: [ChangedPass] = []
    package var serialChanges: [SerialChange] = []
    /// Errors of the HEAD side: the build refuses it.
    package var headErrors: [ContentDiagnostic] = []
    /// Errors of the BASE side (it did not build either; its passes are those that rendered).
    package var baseErrors: [ContentDiagnostic] = []

    /// Whether `passforge build` would refuse HEAD, given a previous build of BASE.
    package var buildWouldRefuse: Bool { !headErrors.isEmpty || !serialChanges.isEmpty || changed.contains(where: \.tokenChanged) }

    package var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty && serialChanges.isEmpty && headErrors.isEmpty }

    package init(base: UnsignedRendering, head: UnsignedRendering) {
        baseErrors = base.errors
        headErrors = head.errors
        let before = Dictionary(base.passes.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(head.passes.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        added = head.passes.filter { before[$0.key] == nil }
        removed = base.passes.filter { after[$0.key] == nil }
        for pass in head.passes {
            guard let old = before[pass.key] else { continue }
            let change = Self.compare(old, pass)
            if !change.fields.isEmpty || !change.images.isEmpty || !change.otherKeys.isEmpty || change.tokenChanged { changed.append(change) }
        }
        // A file whose only pass got another serial (of the same pass type).
        let baseByFile = Dictionary(grouping: base.passes, by: \.sourceFile)
        let headByFile = Dictionary(grouping: head.passes, by: \.sourceFile)
        for (file, passes) in headByFile.sorted(by: { $0.key < $1.key }) {
            guard passes.count == 1, let old = baseByFile[file], old.count == 1, old[0].key != passes[0].key,
                  old[0].passTypeIdentifier == passes[0].passTypeIdentifier, after[old[0].key] == nil else { continue }
            serialChanges.append(SerialChange(file: file, before: old[0].serialNumber, after: passes[0].serialNumber))
        }
    }

    static let styleKeys = Set(PassStyle.allCases.map(\.key))

    static func compare(_ old: UnsignedPass, _ new: UnsignedPass) -> ChangedPass {
        var change = ChangedPass(key: new.key, sourceFile: new.sourceFile)
        let oldStyle = PassStyle.allCases.first { old.passJSON[$0.key] != nil }
        let newStyle = PassStyle.allCases.first { new.passJSON[$0.key] != nil }
        // Fields, by area and key.
        let oldFields = fields(of: old.passJSON, style: oldStyle)
        let newFields = fields(of: new.passJSON, style: newStyle)
        var seen = Set<String>()
        for (id, field) in newFields {
            seen.insert(id)
            let previous = oldFields.first { $0.id == id }?.field
            let before = previous.map(display), after = display(field)
            let labelChanged = previous?["label"] != field["label"]
            guard before != after || labelChanged else { continue }
            let area = String(id.split(separator: "/")[0])
            let valueChanged = previous != nil && before != after
            change.fields.append(FieldChange(area: area, key: field["key"]?.stringValue ?? "", label: field["label"]?.stringValue ?? "",
                                             before: before, after: after,
                                             isSilent: valueChanged && field["changeMessage"] == nil && area != "backFields"))
        }
        for (id, field) in oldFields where !seen.contains(id) {
            change.fields.append(FieldChange(area: String(id.split(separator: "/")[0]), key: field["key"]?.stringValue ?? "",
                                             label: field["label"]?.stringValue ?? "", before: display(field), after: nil, isSilent: false))
        }
        // Other keys: top level, and the style object's own keys other than its field lists.
        if oldStyle != newStyle { change.otherKeys.append("style: \(oldStyle?.key ?? "none") → \(newStyle?.key ?? "none")") }
        let oldTop = old.passJSON.objectValue ?? JSONObject(), newTop = new.passJSON.objectValue ?? JSONObject()
        for key in Set(oldTop.keys).union(newTop.keys).sorted() where !styleKeys.contains(key) && key != "authenticationToken" {
            if oldTop[key] != newTop[key] { change.otherKeys.append(key) }
        }
        if let style = newStyle, oldStyle == newStyle, let a = old.passJSON[style.key]?.objectValue, let b = new.passJSON[style.key]?.objectValue {
            let fieldLists = Set(FieldArea.allCases.map(\.key))
            for key in Set(a.keys).union(b.keys).sorted() where !fieldLists.contains(key) && a[key] != b[key] {
                change.otherKeys.append("\(style.key).\(key)")
            }
        }
        change.tokenChanged = old.passJSON["authenticationToken"] != new.passJSON["authenticationToken"]
        // Files: images with their pixel sizes, localization files by name.
        let oldFiles = Dictionary(old.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        let newFiles = Dictionary(new.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        for name in Set(oldFiles.keys).union(newFiles.keys).sorted() where oldFiles[name] != newFiles[name] {
            if name.lowercased().hasSuffix(".png") {
                change.images.append(ImageChange(name: name, before: oldFiles[name].map(pixelSize), after: newFiles[name].map(pixelSize)))
            } else {
                change.otherKeys.append(name)
            }
        }
        return change
    }

    /// "area/key" → field, in layout order.
    static func fields(of pass: JSONValue, style: PassStyle?) -> [(id: String, field: JSONValue)] {
        guard let style, let object = pass[style.key] else { return [] }
        var list: [(String, JSONValue)] = []
        for area in FieldArea.allCases {
            for field in object[area.key]?.arrayValue ?? [] {
                list.append(("\(area.key)/\(field["key"]?.stringValue ?? "?")", field))
            }
        }
        return list
    }

    /// A field's value as the diff shows it: text as is, numbers and the rest as JSON.
    static func display(_ field: JSONValue) -> String {
        switch field["value"] {
        case .string(let text)?: return text
        case let value?: return String(decoding: value.serialized(), as: UTF8.self)
        case nil: return ""
        }
    }

    static func pixelSize(_ bytes: [UInt8]) -> String {
        guard let info = PNGImageInfo.parse(bytes) else { return "not a PNG, \(bytes.count) bytes" }
        return "\(info.width)×\(info.height) px"
    }
}
