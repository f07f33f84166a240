import Foundation

/// Where DeviceCheck calls go: Apple's production or development host, or a
/// `baseURL` given in passforge.yml (a proxy, or a test's mock).
package struct DeviceCheckEndpoint: Sendable, Equatable, CustomStringConvertible {
    package enum Environment: String, Sendable, CaseIterable {
        case production, development

        /// Apple, "Accessing and modifying per-device data".
        var baseURL: String {
            switch self {
            case .production: "https://api.devicecheck.apple.com"
            case .development: "https://api.development.devicecheck.apple.com"
            }
        }
    }

    /// The base URL without a trailing slash; the calls' paths follow it.
    package let baseURL: String

    package init(environment: Environment) {
        baseURL = environment.baseURL
    }

    /// - Throws: `.configuration` for anything but an https URL, or an http
    ///   one on a loopback address (127.0.0.0/8, ::1, localhost): the JWT and
    ///   device tokens must not cross a network in clear text.
    package init(baseURL text: String) throws(DeviceCheckError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.query == nil, url.fragment == nil, url.user == nil
        else {
            throw DeviceCheckError(
                .configuration,
                "deviceCheck.baseURL \(text.debugDescription) is not a URL such as https://api.devicecheck.apple.com")
        }
        switch scheme {
        case "https": break
        case "http" where Self.isLoopback(host): break
        case "http":
            throw DeviceCheckError(
                .configuration,
                "deviceCheck.baseURL \(text.debugDescription) is http on a non-loopback host; use "
                    + "https (http is accepted on 127.0.0.1, ::1 and localhost only)")
        default:
            throw DeviceCheckError(
                .configuration, "deviceCheck.baseURL \(text.debugDescription) must start with https://")
        }
        baseURL = text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    package var description: String { baseURL }
}
