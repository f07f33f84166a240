import Foundation
package import PassContent
package import PassModel
package import PassRender
import WalletTree

/// What a change to the content does to the passes and orders: `passforge diff BASE [HEAD]`.
package struct PassDiff: Sendable {
    /// One pass field whose label or value changed; for an order, one value of order.json, by its key path.
    package struct FieldChange: Sendable, Hashable {
        /// The pass's field list (`secondaryFields`); empty for an order.
        package var area: String
        package var key: String
        package var label: String
        package var before: String?
        package var after: String?
        /// The field has no changeMessage after the change, so the phone updates silently.
        package var isSilent: Bool
        /// An order's status that moves back in its sequence: that sequence.
        package var backwardsIn: StatusSequence? = nil
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
        package var kind: WalletItemKind = .pass
        package var fields: [FieldChange] = []
        package var images: [ImageChange] = []
        /// Other pass.json keys that changed (key paths), and localization files.
        package var otherKeys: [String] = []
        /// The authenticationToken changed: the build refuses.
        package var tokenChanged = false
    }

    /// A file's one pass that now has another serial (an order, another orderIdentifier): the build refuses.
    package struct SerialChange: Sendable, Hashable {
        package var file: String
        package var before: String
        package var after: String
        package var kind: WalletItemKind = .pass
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
    package var buildWouldRefuse: Bool {
        !headErrors.isEmpty || !serialChanges.isEmpty || changed.contains(where: \.tokenChanged)
    }

    package var isEmpty: Bool {
        added.isEmpty && removed.isEmpty && changed.isEmpty && serialChanges.isEmpty && headErrors.isEmpty
    }

    /// Either side has an order: the report speaks of passes and orders.
    package var hasOrders = false

    package init(base: UnsignedRendering, head: UnsignedRendering) {
        baseErrors = base.errors
        headErrors = head.errors
        let before = Dictionary(base.passes.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(head.passes.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        added = head.passes.filter { before[$0.key] == nil }
        removed = base.passes.filter { after[$0.key] == nil }
        hasOrders = (base.passes + head.passes).contains { $0.kind == .order }
        for pass in head.passes {
            guard let old = before[pass.key] else { continue }
            let change =
                pass.kind == .order || old.kind == .order ? Self.compareOrders(old, pass) : Self.compare(old, pass)
            if !change.fields.isEmpty || !change.images.isEmpty || !change.otherKeys.isEmpty || change.tokenChanged {
                changed.append(change)
            }
        }
        // A file whose only pass got another serial (of the same pass type).
        let baseByFile = Dictionary(grouping: base.passes, by: \.sourceFile)
        let headByFile = Dictionary(grouping: head.passes, by: \.sourceFile)
        for (file, passes) in headByFile.sorted(by: { $0.key < $1.key }) {
            guard passes.count == 1, let old = baseByFile[file], old.count == 1, old[0].key != passes[0].key,
                old[0].passTypeIdentifier == passes[0].passTypeIdentifier, after[old[0].key] == nil
            else { continue }
            serialChanges.append(
                SerialChange(
                    file: file, before: old[0].serialNumber, after: passes[0].serialNumber, kind: passes[0].kind))
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
            let before = previous.map(display)
            let after = display(field)
            let labelChanged = previous?["label"] != field["label"]
            guard before != after || labelChanged else { continue }
            let area = String(id.split(separator: "/")[0])
            let valueChanged = previous != nil && before != after
            change.fields.append(
                FieldChange(
                    area: area, key: field["key"]?.stringValue ?? "", label: field["label"]?.stringValue ?? "",
                    before: before, after: after,
                    isSilent: valueChanged && field["changeMessage"] == nil && area != "backFields"))
        }
        for (id, field) in oldFields where !seen.contains(id) {
            change.fields.append(
                FieldChange(
                    area: String(id.split(separator: "/")[0]), key: field["key"]?.stringValue ?? "",
                    label: field["label"]?.stringValue ?? "", before: display(field), after: nil, isSilent: false))
        }
        // Other keys: top level, and the style object's own keys other than its field lists.
        if oldStyle != newStyle {
            change.otherKeys.append("style: \(oldStyle?.key ?? "none") → \(newStyle?.key ?? "none")")
        }
        let oldTop = old.passJSON.objectValue ?? JSONObject()
        let newTop = new.passJSON.objectValue ?? JSONObject()
        for key in Set(oldTop.keys).union(newTop.keys).sorted()
        where !styleKeys.contains(key) && key != "authenticationToken" {
            if oldTop[key] != newTop[key] { change.otherKeys.append(key) }
        }
        if let style = newStyle, oldStyle == newStyle, let a = old.passJSON[style.key]?.objectValue,
            let b = new.passJSON[style.key]?.objectValue
        {
            let fieldLists = Set(FieldArea.allCases.map(\.key))
            for key in Set(a.keys).union(b.keys).sorted() where !fieldLists.contains(key) && a[key] != b[key] {
                change.otherKeys.append("\(style.key).\(key)")
            }
        }
        change.tokenChanged = old.passJSON["authenticationToken"] != new.passJSON["authenticationToken"]
        compareFiles(old, new, into: &change)
        return change
    }

    /// Files: images with their pixel sizes, localization files (and an order's receipts) by name.
    static func compareFiles(_ old: UnsignedPass, _ new: UnsignedPass, into change: inout ChangedPass) {
        let oldFiles = Dictionary(old.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        let newFiles = Dictionary(new.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        for name in Set(oldFiles.keys).union(newFiles.keys).sorted() where oldFiles[name] != newFiles[name] {
            let lowered = name.lowercased()
            if lowered.hasSuffix(".png") || lowered.hasSuffix(".jpg") || lowered.hasSuffix(".jpeg") {
                change.images.append(
                    ImageChange(name: name, before: oldFiles[name].map(pixelSize), after: newFiles[name].map(pixelSize))
                )
            } else {
                change.otherKeys.append(name)
            }
        }
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
        // An order's images may be JPEG (Apple, "Creating the source for an order").
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "JPEG, \(bytes.count) bytes" }
        guard let info = PNGImageInfo.parse(bytes) else { return "not a PNG, \(bytes.count) bytes" }
        return "\(info.width)×\(info.height) px"
    }
}

// MARK: - Orders

extension PassDiff {
    /// An order's changes: every value of order.json that differs, by key path (fulfillments and returns
    /// matched by their identifiers, which Apple says Wallet uses to detect changes; other lists by
    /// position), each status that moves back in its sequence flagged, and its images.
    static func compareOrders(_ old: UnsignedPass, _ new: UnsignedPass) -> ChangedPass {
        var change = ChangedPass(key: new.key, sourceFile: new.sourceFile, kind: new.kind)
        if old.kind != new.kind { change.otherKeys.append("kind: \(old.kind.noun) → \(new.kind.noun)") }
        // The token is compared on its own; updatedAt is the signing build's (and absent before signing).
        let ignored: Set<String> = ["authenticationToken", "updatedAt"]
        var before: [(path: String, value: String)] = []
        var after: [(path: String, value: String)] = []
        orderValues(old.passJSON, path: "", ignoring: ignored, into: &before)
        orderValues(new.passJSON, path: "", ignoring: ignored, into: &after)
        let oldValues = Dictionary(before.map { ($0.path, $0.value) }, uniquingKeysWith: { first, _ in first })
        let newValues = Dictionary(after.map { ($0.path, $0.value) }, uniquingKeysWith: { first, _ in first })
        let backwards = OrderStatusSequences.backwardsMoves(from: old.passJSON, to: new.passJSON)
        var seen = Set<String>()
        for (path, value) in after where seen.insert(path).inserted && oldValues[path] != value {
            change.fields.append(
                FieldChange(
                    area: "", key: path, label: "", before: oldValues[path], after: value, isSilent: false,
                    backwardsIn: backwards[path]))
        }
        for (path, value) in before where newValues[path] == nil && seen.insert(path).inserted {
            change.fields.append(
                FieldChange(area: "", key: path, label: "", before: value, after: nil, isSilent: false))
        }
        change.tokenChanged = old.passJSON["authenticationToken"] != new.passJSON["authenticationToken"]
        compareFiles(old, new, into: &change)
        return change
    }

    /// The leaves of an order's JSON as (key path, shown value): `status`, `payment.total.amount`,
    /// `fulfillments[SO-1-parcel].status`, `lineItems[0].title`. A list of plain values is one leaf.
    static func orderValues(
        _ value: JSONValue, path: String, ignoring ignored: Set<String> = [],
        into leaves: inout [(path: String, value: String)]
    ) {
        switch value {
        case .object(let object):
            for (key, child) in object where !(path.isEmpty && ignored.contains(key)) {
                orderValues(child, path: path.isEmpty ? key : "\(path).\(key)", into: &leaves)
            }
        case .array(let items) where !items.isEmpty && items.allSatisfy({ $0.objectValue != nil }):
            for (index, item) in items.enumerated() {
                orderValues(item, path: elementPath(path, item, index), into: &leaves)
            }
        case .string(let text): leaves.append((path, text))
        default: leaves.append((path, String(decoding: value.serialized(), as: UTF8.self)))
        }
    }

    /// `list[identifier]` for a fulfillment or a return, `list[index]` for anything else.
    static func elementPath(_ list: String, _ item: JSONValue, _ index: Int) -> String {
        let identifier = item["fulfillmentIdentifier"]?.stringValue ?? item["returnIdentifier"]?.stringValue
        return "\(list)[\(identifier ?? String(index))]"
    }
}

/// The order in which an order's statuses move, to flag a change that sends one back: a device that showed
/// "Delivered" would show "On the Way" again, and Wallet tells the customer about each status change.
/// Each step lists the statuses at the same stage; a status in no step (`issue`) is a detour that can
/// come and go at any stage, so no move into or out of it is flagged.
package struct StatusSequence: Sendable, Hashable {
    package var steps: [[String]]

    package func isBackwards(from old: String, to new: String) -> Bool {
        guard let from = steps.firstIndex(where: { $0.contains(old) }),
            let to = steps.firstIndex(where: { $0.contains(new) })
        else { return false }
        return to < from
    }

    /// "open → processing → onTheWay or shipped → …", with `arrow` between the steps.
    package func description(arrow: String = "→") -> String {
        steps.map { $0.joined(separator: " or ") }.joined(separator: " \(arrow) ")
    }
}

package enum OrderStatusSequences {
    /// Order.status: `open`, then `completed` or `cancelled`, which Apple calls closed
    /// (https://developer.apple.com/documentation/walletorders/order, key `status`).
    package static let order = StatusSequence(steps: [["open"], ["completed", "cancelled"]])
    /// ShippingFulfillment.status, in the order Apple's enum lists them: open, processing, onTheWay,
    /// outForDelivery, delivered, then shipped, issue, cancelled
    /// (https://developer.apple.com/documentation/walletorders/shippingfulfillment, key `status`). `shipped`
    /// is the step for a merchant without the carrier's steps (HIG, Order tracking: "use the shipped status"),
    /// so it stands beside onTheWay; `cancelled` ends a fulfillment as `delivered` does.
    package static let shipping = StatusSequence(steps: [
        ["open"], ["processing"], ["onTheWay", "shipped"], ["outForDelivery"], ["delivered", "cancelled"],
    ])
    /// PickupFulfillment.status: open, processing, readyForPickup, pickedUp, then issue, cancelled
    /// (https://developer.apple.com/documentation/walletorders/pickupfulfillment, key `status`).
    package static let pickup = StatusSequence(steps: [
        ["open"], ["processing"], ["readyForPickup"], ["pickedUp", "cancelled"],
    ])
    /// Return.status: open, onTheWay, processing, then issue, completed, cancelled
    /// (https://developer.apple.com/documentation/walletorders/return, key `status`).
    package static let orderReturn = StatusSequence(steps: [
        ["open"], ["onTheWay"], ["processing"], ["completed", "cancelled"],
    ])

    /// Key path (as `PassDiff.orderValues` spells it) → the sequence a status of it moves back in.
    static func backwardsMoves(from old: JSONValue, to new: JSONValue) -> [String: StatusSequence] {
        var moves: [String: StatusSequence] = [:]
        func check(_ path: String, _ before: JSONValue?, _ after: JSONValue?, _ sequence: StatusSequence) {
            guard let before = before?.stringValue, let after = after?.stringValue,
                sequence.isBackwards(from: before, to: after)
            else { return }
            moves[path] = sequence
        }
        check("status", old["status"], new["status"], order)
        for (list, sequenceOf) in [
            (
                "fulfillments",
                { (item: JSONValue) in item["fulfillmentType"]?.stringValue == "pickup" ? pickup : shipping }
            ),
            ("returns", { (_: JSONValue) in orderReturn }),
        ] {
            let oldItems = old[list]?.arrayValue ?? []
            let oldByPath = Dictionary(
                oldItems.enumerated().map { (PassDiff.elementPath(list, $1, $0), $1) },
                uniquingKeysWith: { first, _ in first })
            for (index, item) in (new[list]?.arrayValue ?? []).enumerated() {
                let path = PassDiff.elementPath(list, item, index)
                check(path + ".status", oldByPath[path]?["status"], item["status"], sequenceOf(item))
            }
        }
        return moves
    }
}
