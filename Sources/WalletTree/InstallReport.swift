import Foundation
import PassModel
package import RegistrationStore

/// `passforge stats` and the install gauges of `/metrics`: per pass type, template and offer, the passes the
/// last build issued, those on at least one device now, those ever added, and registrations added and removed
/// per day. Counts only: no device identifier or push token is read.
package struct InstallReport: Sendable, Equatable {
    package struct Group: Sendable, Hashable, Comparable {
        package var passTypeIdentifier: String
        package var template: String
        /// "" when the passes are in no offer.
        package var offer: String
        package static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.passTypeIdentifier, lhs.template, lhs.offer) < (rhs.passTypeIdentifier, rhs.template, rhs.offer)
        }
    }

    package struct Counts: Sendable, Equatable {
        package var issued = 0
        package var onDevices = 0
        package var everAdded = 0
        /// Day (`YYYY-MM-DD`, UTC) → registrations added and removed that day.
        package var days: [String: (added: Int, removed: Int)] = [:]
        /// Of the issued passes, the share ever added (0 when none was issued).
        package var shareEverAdded: Double { issued == 0 ? 0 : Double(everAdded) / Double(issued) }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.issued == rhs.issued && lhs.onDevices == rhs.onDevices && lhs.everAdded == rhs.everAdded
                && lhs.days.mapValues { [$0.added, $0.removed] } == rhs.days.mapValues { [$0.added, $0.removed] }
        }
    }

    package var groups: [Group: Counts]

    /// Passes (not orders) of `index`, grouped; the store's counts of passes the build no longer lists are left out.
    package init(index: PublishedIndex, onDevices: [PassDeviceCount], events: [RegistrationDayCount]) {
        self.init(items: index.items.values, onDevices: onDevices, events: events)
    }

    package init(items: some Sequence<PublishedItem>, onDevices: [PassDeviceCount], events: [RegistrationDayCount]) {
        var groups: [Group: Counts] = [:]
        // By `ItemKey.text`: the store's counts name a type and a serial, not a kind.
        var groupOfKey: [String: Group] = [:]
        for item in items where item.kind == .pass {
            let key = item.key.text
            let group = Group(
                passTypeIdentifier: item.typeIdentifier, template: item.templateName, offer: item.offer ?? "")
            groupOfKey[key] = group
            groups[group, default: Counts()].issued += 1
        }
        var everAdded = Set<String>()
        for pass in onDevices where pass.devices > 0 {
            let key = ItemKey.text(typeIdentifier: pass.passTypeIdentifier, identifier: pass.serialNumber)
            guard let group = groupOfKey[key] else { continue }
            groups[group]!.onDevices += 1
            everAdded.insert(key)
        }
        for event in events {
            let key = ItemKey.text(typeIdentifier: event.passTypeIdentifier, identifier: event.serialNumber)
            guard let group = groupOfKey[key] else { continue }
            let day = groups[group]!.days[event.day] ?? (0, 0)
            groups[group]!.days[event.day] = (day.added + event.added, day.removed + event.removed)
            if event.added > 0 { everAdded.insert(key) }
        }
        for key in everAdded { groups[groupOfKey[key]!]!.everAdded += 1 }
        self.groups = groups
    }

    /// The report as JSON text: groups sorted, days sorted.
    package var json: String {
        var text = "{\"groups\": ["
        for (index, group) in groups.keys.sorted().enumerated() {
            let counts = groups[group]!
            text += index == 0 ? "\n" : ",\n"
            text +=
                "  {\"passTypeIdentifier\": \(Self.quoted(group.passTypeIdentifier)), \"template\": \(Self.quoted(group.template)), "
            text +=
                "\"offer\": \(group.offer.isEmpty ? "null" : Self.quoted(group.offer)), \"issued\": \(counts.issued), "
            text += "\"onDevices\": \(counts.onDevices), \"everAdded\": \(counts.everAdded), "
            text += "\"shareEverAdded\": \((counts.shareEverAdded * 10_000).rounded() / 10_000), \"days\": ["
            text += counts.days.keys.sorted().map { day in
                "{\"day\": \"\(day)\", \"registrations\": \(counts.days[day]!.added), \"removals\": \(counts.days[day]!.removed)}"
            }.joined(separator: ", ")
            text += "]}"
        }
        return text + "\n]}\n"
    }

    /// Type identifiers, template and offer names are the project's own patterns; quoted all the same.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
