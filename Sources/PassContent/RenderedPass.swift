import Foundation
import PassModel

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
            if case .key(let name)? = diagnostic.keyPath.components.first, let file = files.first(where: { $0.name == name }) {
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
            return ContentDiagnostic(diagnostic.severity, at: location, keyPath: diagnostic.keyPath,
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
    package func orderDiagnostics(allowsHTTPWebService: Bool = false) -> [ContentDiagnostic] {
        var order = source
        let provisionalUpdatedAt = order["updatedAt"] == nil
        if provisionalUpdatedAt, let created = order["createdAt"] { order.set("updatedAt", to: created) }
        var files: [String: [UInt8]] = [:]
        for file in self.files { files[file.name] = file.bytes }
        var problems = OrderValidator().validate(order.jsonValue, options: .init(files: files, allowsHTTPWebService: allowsHTTPWebService))
        // A provisional updatedAt repeats createdAt's problems; report them once, at createdAt.
        if provisionalUpdatedAt { problems.removeAll { $0.keyPath == ["updatedAt"] } }
        return RenderedPass(definition: definition, source: order, files: self.files, download: download).locate(problems)
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

    /// `2026-11-25T09:30:00.123Z` for a count of milliseconds since 1970 (UTC; proleptic Gregorian calendar,
    /// computed without a formatter so that 10,000 orders cost nothing).
    package static func rfc3339(millisecondsSince1970 milliseconds: Int64) -> String {
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var totalSeconds = seconds, fraction = millisecond
        if fraction < 0 { fraction += 1000; totalSeconds -= 1 }
        var days = totalSeconds / 86_400
        var secondOfDay = totalSeconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 3))Z"
    }
}
