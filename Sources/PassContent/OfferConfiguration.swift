import Foundation
import PassModel

/// `deviceCheck:` in passforge.yml: how `passforge serve` reaches Apple's
/// DeviceCheck service for offers. The key file's path may be given by
/// `PASSFORGE_DEVICECHECK_KEY` instead; the key itself never goes in git.
package struct DeviceCheckSettings: Sendable, Equatable {
    package var teamIdentifier: String
    package var keyIdentifier: String
    /// The `.p8` key's path (relative to passforge.yml), when passforge.yml names it.
    package var privateKeyPath: String?
    /// `production` (default) or `development`.
    package var environment: String
    /// Overrides `environment` (a proxy, a test's mock).
    package var baseURL: String?
    package var location: SourceLocation
}

/// One offer of `offers:` in passforge.yml.
package struct OfferSettings: Sendable, Equatable {
    package var name: String
    /// Which of Apple's two bits marks a device that claimed: 0 or 1.
    package var bit: Int
    package var location: SourceLocation
}

extension ProjectConfiguration {
    static let deviceCheckKeys = ["teamIdentifier", "keyIdentifier", "privateKey", "environment", "baseURL"]

    static func parseDeviceCheck(
        _ member: SourceNode.Member, resolve: (String) -> String,
        problems: inout [ContentDiagnostic]
    ) -> DeviceCheckSettings? {
        let path: JSONPath = ["deviceCheck"]
        guard let members = member.value.members else {
            problems.append(
                .error(
                    at: member.value.location, keyPath: path, rule: "config.type",
                    "deviceCheck must be a map: teamIdentifier, keyIdentifier, privateKey, environment, baseURL"))
            return nil
        }
        let before = problems.count
        for inner in members where !deviceCheckKeys.contains(inner.key) {
            problems.append(
                .error(
                    at: inner.keyLocation, keyPath: path.appending(inner.key), rule: "config.unknown-key",
                    "unknown setting `deviceCheck.\(inner.key)`; deviceCheck knows "
                        + "\(deviceCheckKeys.joined(separator: ", "))"))
        }
        func text(_ key: String, required: Bool) -> String? {
            guard let node = member.value[key] else {
                if required {
                    problems.append(
                        .error(
                            at: member.keyLocation, keyPath: path.appending(key), rule: "config.deviceCheck",
                            "deviceCheck needs `\(key):` (Apple's 10-character ID, from Certificates, IDs & Profiles)"))
                }
                return nil
            }
            guard let value = node.stringValue else {
                problems.append(
                    .error(
                        at: node.location, keyPath: path.appending(key), rule: "config.type",
                        "deviceCheck.\(key) must be text"))
                return nil
            }
            return value
        }
        let team = text("teamIdentifier", required: true)
        let key = text("keyIdentifier", required: true)
        for (name, value) in [("teamIdentifier", team), ("keyIdentifier", key)] {
            guard let value else { continue }
            if value.utf8.count != 10 || !value.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) }) {
                problems.append(
                    .error(
                        at: member.value[name]!.location, keyPath: path.appending(name), rule: "config.deviceCheck",
                        "deviceCheck.\(name) \"\(value)\" is not Apple's 10-character ID (A-Z, 0-9)"))
            }
        }
        let environment = text("environment", required: false) ?? "production"
        if !["production", "development"].contains(environment) {
            problems.append(
                .error(
                    at: member.value["environment"]!.location, keyPath: path.appending("environment"),
                    rule: "config.deviceCheck",
                    "deviceCheck.environment must be production or development (Apple's two DeviceCheck hosts)"))
        }
        let keyPath = text("privateKey", required: false)
        let baseURL = text("baseURL", required: false)
        guard problems.count == before, let team, let key else { return nil }
        return DeviceCheckSettings(
            teamIdentifier: team, keyIdentifier: key, privateKeyPath: keyPath.map(resolve), environment: environment,
            baseURL: baseURL, location: member.keyLocation)
    }

    static func parseOffers(_ member: SourceNode.Member, problems: inout [ContentDiagnostic]) -> [OfferSettings] {
        guard let members = member.value.members else {
            problems.append(
                .error(
                    at: member.value.location, keyPath: ["offers"], rule: "config.type",
                    "offers must map an offer's name to its settings, e.g. welcome-coupon: { bit: 0 }"))
            return []
        }
        var offers: [OfferSettings] = []
        for entry in members {
            let path: JSONPath = ["offers", .key(entry.key)]
            guard OfferMembership.isValidName(entry.key) else {
                problems.append(
                    .error(
                        at: entry.keyLocation, keyPath: path, rule: "config.offer",
                        "offer name `\(entry.key)` must match "
                            + "\(OfferMembership.namePattern): it is part of the claim URL"))
                continue
            }
            for inner in entry.value.members ?? [] where inner.key != "bit" {
                problems.append(
                    .error(
                        at: inner.keyLocation, keyPath: path.appending(inner.key), rule: "config.unknown-key",
                        "unknown setting `\(inner.key)` of offer \(entry.key); an offer has `bit: 0` or `bit: 1`"))
            }
            guard let bitNode = entry.value["bit"] else {
                problems.append(
                    .error(
                        at: entry.keyLocation, keyPath: path.appending("bit"), rule: "config.offer-bit",
                        "offer \(entry.key) needs `bit: 0` or `bit: 1`: which of Apple's two "
                            + "DeviceCheck bits marks a device that claimed it"))
                continue
            }
            guard case .int(let bit) = bitNode.jsonValue, bit == 0 || bit == 1 else {
                problems.append(
                    .error(
                        at: bitNode.location, keyPath: path.appending("bit"), rule: "config.offer-bit",
                        "offer \(entry.key) has bit \(bitNode.jsonValue.serializedString()); "
                            + "Apple keeps two bits per device, so write 0 or 1"))
                continue
            }
            offers.append(OfferSettings(name: entry.key, bit: bit, location: entry.keyLocation))
        }
        return offers
    }
}
