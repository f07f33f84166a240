package import Foundation
package import PassModel

/// A pass (or an order) rendered from its definition: the pass.json (order.json)
/// with where each part came from, and the files that go into the package.
package struct RenderedPass: Sendable {
    package var definition: PassDefinition
    /// The full pass.json (order.json), every value tagged with the line that produced it.
    package var source: SourceNode
    /// Images and localization files: the template's, with the pass's own images replacing them by name.
    package var files: [PackageFile]
    package var download: DownloadPolicy

    package var passTypeIdentifier: String? { source["passTypeIdentifier"]?.stringValue }
    package var serialNumber: String { definition.serialNumber }
    /// A pass or an order.
    package var kind: WalletItemKind { definition.kind }
    /// `passTypeIdentifier`, or an order's `orderTypeIdentifier`.
    package var typeIdentifier: String? { source[kind.typeIdentifierKey]?.stringValue }

    /// Maps PassModel diagnostics (key paths into pass.json) to the lines an
    /// editor has to change.
    package func locate(_ diagnostics: [Diagnostic]) -> [ContentDiagnostic] {
        diagnostics.map { diagnostic in
            let location: SourceLocation
            if case .key(let name)? = diagnostic.keyPath.components.first,
                let file = files.first(where: { $0.name == name })
            {
                location = SourceLocation(file: file.source)
            } else {
                location = source.location(at: diagnostic.keyPath)
            }
            var message = "\(kind.noun) \(definition.serialNumber): \(diagnostic.message)"
            var notes: [(SourceLocation, String)] = []
            if location.file != definition.file {
                notes.append((definition.location, "\(kind.noun) \(definition.serialNumber) is defined here"))
            } else {
                message = diagnostic.message
            }
            return ContentDiagnostic(
                diagnostic.severity, at: location, keyPath: diagnostic.keyPath,
                rule: diagnostic.rule, message, notes: notes)
        }
    }
}

// MARK: Orders

extension RenderedPass {
    /// Every rule of Apple's order format on this order (`OrderValidator`: required keys, enums, RFC 3339
    /// dates, currencies and amounts, URLs, the images each key names with their format and size, unknown
    /// keys with a spelling hint), each at the line of the template or content that wrote the value.
    ///
    /// Call it after the build has set the authenticationToken (an order with a webServiceURL needs one).
    /// `updatedAt` is the build's: until `withUpdatedAt(_:)` sets it, it is checked as if it were createdAt
    /// (Apple: "equals createdAt until the first update"), so the order can be judged before its tag is known.
    ///
    /// `checkedAt` is the moment the order is made (the build's update tag) or checked (`validate`'s now): a
    /// createdAt after it is an error (`order.createdAt.future`, the rule `inspect` applies too).
    package func orderDiagnostics(allowsHTTPWebService: Bool = false, checkedAt: Date? = nil) -> [ContentDiagnostic] {
        var order = source
        let provisionalUpdatedAt = order["updatedAt"] == nil
        if provisionalUpdatedAt, let created = order["createdAt"] { order.set("updatedAt", to: created) }
        var files: [String: [UInt8]] = [:]
        for file in self.files { files[file.name] = file.bytes }
        let options = OrderValidator.Options(
            files: files, allowsHTTPWebService: allowsHTTPWebService,
            checkedAt: checkedAt?.timeIntervalSince1970)
        var problems = OrderValidator().validate(order.jsonValue, options: options)
        // A provisional updatedAt repeats createdAt's problems; report them once, at createdAt.
        if provisionalUpdatedAt { problems.removeAll { $0.keyPath == ["updatedAt"] } }
        return RenderedPass(definition: definition, source: order, files: self.files, download: download).locate(
            problems)
    }

    /// A new order: `updatedAt` equals `createdAt`, as written (Apple's Order page: updatedAt "should equal
    /// createdAt if the order hasn't had any updates"). The build calls it for an order it has not built before.
    package func withUpdatedAtOfNewOrder() -> RenderedPass {
        var order = self
        if let created = source["createdAt"] { order.source.set("updatedAt", to: created) }
        return order
    }

    /// The order with `updatedAt` set to `date`, the time of its update tag: the build calls it with the
    /// tag of the build that last changed the order, which strictly increases from build to build as Apple
    /// requires ("Wallet Orders" › Order › updatedAt). Written in UTC with milliseconds, so two tags a
    /// millisecond apart give two different, increasing values. A value earlier than createdAt is
    /// reported by `orderDiagnostics` at the content's createdAt.
    package func withUpdatedAt(_ date: Date) -> RenderedPass {
        withUpdatedAt(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// `withUpdatedAt(_:)` with the tag itself: milliseconds since 1970, as an update tag counts them.
    package func withUpdatedAt(millisecondsSince1970 milliseconds: Int64) -> RenderedPass {
        var order = self
        let at = source["createdAt"]?.location ?? definition.location
        order.source.set("updatedAt", to: .scalar(.string(Self.rfc3339(millisecondsSince1970: milliseconds)), at: at))
        return order
    }

    /// `2026-11-25T09:30:00.123Z` for a count of milliseconds since 1970 (UTC). The whole seconds are
    /// formatted by Foundation and the milliseconds appended as digits, so no binary fraction can round
    /// two tags a millisecond apart to the same text.
    package static func rfc3339(millisecondsSince1970 milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millisecond = milliseconds - seconds * 1000
        let text = Date.ISO8601FormatStyle(timeZone: .gmt).format(Date(timeIntervalSince1970: TimeInterval(seconds)))
        let digits = String(millisecond)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
