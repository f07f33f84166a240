/// Where the devices' lists of updatable passes and orders (Apple's "Get the List of Updatable
/// Passes") come from for the static host in front of `passforge serve`
/// (`serve --device-lists`, `PASSFORGE_DEVICE_LISTS`).
package enum DeviceListSource: String, Sendable, CaseIterable {
    /// Every registration rewrites the device's index file, `v1/devices/<type>/<device>`, before it
    /// is answered, and nginx or Caddy serve the lists from those files: one tree on one disk
    /// (shared by the servers on one host).
    case files
    /// No index files: the proxy sends the list's GET to `serve`, which answers from the registration
    /// store. For a tree in a bucket, or several hosts on one PostgreSQL: a registration on any server
    /// is in the list the moment it is acknowledged, whichever server answers.
    case store

    /// `PASSFORGE_DEVICE_LISTS`.
    package static let environmentVariable = "PASSFORGE_DEVICE_LISTS"

    /// The source `option` (the flag) or else `environment` names; `files` when neither does.
    /// Throws a message for people when either names no source.
    package static func resolve(option: String?, environment: [String: String]) throws(Invalid) -> DeviceListSource {
        let (text, origin) =
            option.map { ($0, "--device-lists") }
            ?? environment[environmentVariable].map { ($0, environmentVariable) } ?? ("files", "")
        guard let source = DeviceListSource(rawValue: text) else { throw Invalid(origin: origin, text: text) }
        return source
    }

    package struct Invalid: Error, CustomStringConvertible {
        var origin: String
        var text: String
        package var description: String {
            "\(origin) is \"\(text)\": say files (index files in the tree, served by nginx or Caddy) or store "
                + "(no index files; passforge serve answers the lists from the registration store)"
        }
    }
}
