/// Where the registrations live: the value of PASSFORGE_DATABASE_URL.
///
/// - `sqlite:PATH`, `sqlite://PATH` or a plain file path: an SQLite file.
/// - `postgres://…` or `postgresql://…`: a PostgreSQL server.
/// - nothing: `state/registrations.sqlite`.
package enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    package static let defaultSQLitePath = "state/registrations.sqlite"
    package static let environmentVariable = "PASSFORGE_DATABASE_URL"

    /// Parses a PASSFORGE_DATABASE_URL value; nil or empty gives the default file.
    package init(_ value: String?) throws(RegistrationStoreError) {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else {
            self = .sqlite(path: Self.defaultSQLitePath)
            return
        }
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(url: value)
        } else if lowered.hasPrefix("sqlite://") {
            self = try Self.sqlite(String(value.dropFirst("sqlite://".count)), original: value)
        } else if lowered.hasPrefix("sqlite:") {
            self = try Self.sqlite(String(value.dropFirst("sqlite:".count)), original: value)
        } else if let colon = value.firstIndex(of: ":"), value[..<colon].allSatisfy({ $0.isLetter }),
            value[..<colon].count > 1,
            value[value.index(after: colon)...].hasPrefix("//")
        {
            throw RegistrationStoreError(
                .invalidLocation,
                "\(Self.environmentVariable) has an unknown scheme \(value[..<colon]):// "
                    + "— use sqlite:PATH, a file path, or postgres://…")
        } else {
            self = try Self.sqlite(value, original: value)
        }
    }

    private static func sqlite(_ path: String, original: String) throws(RegistrationStoreError) -> StoreLocation {
        guard !path.isEmpty else {
            throw RegistrationStoreError(
                .invalidLocation,
                "\(environmentVariable)=\(original) names no file; write sqlite:PATH, e.g. "
                    + "sqlite:state/registrations.sqlite")
        }
        return .sqlite(path: path)
    }

    /// Never prints a password that a PostgreSQL URL may hold.
    package var description: String {
        switch self {
        case .sqlite(let path): return "SQLite file \(path)"
        case .postgres(let url):
            // A password may also be a query parameter (libpq's password=…).
            let url = Self.redacted(url)
            guard let schemeEnd = url.firstRange(of: "://"), let at = url[schemeEnd.upperBound...].lastIndex(of: "@")
            else {
                return "PostgreSQL \(url)"
            }
            return "PostgreSQL \(url[..<schemeEnd.upperBound])…@\(url[url.index(after: at)...])"
        }
    }

    /// A URL as written, with anything that may be a password replaced by `…`.
    package static func redacted(_ url: String) -> String {
        var text = url
        if let schemeEnd = text.firstRange(of: "://") {
            let afterScheme = text[schemeEnd.upperBound...]
            let queryStart = afterScheme.firstIndex(of: "?") ?? afterScheme.endIndex
            if let at = afterScheme[..<queryStart].lastIndex(of: "@"),
                let colon = afterScheme[..<at].firstIndex(of: ":")
            {
                text.replaceSubrange(text.index(after: colon)..<at, with: "…")
            }
        }
        if let range = text.firstRange(of: "password=") {
            let end = text[range.upperBound...].firstIndex(of: "&") ?? text.endIndex
            text.replaceSubrange(range.upperBound..<end, with: "…")
        }
        return text
    }
}

extension String {
    /// The string without leading and trailing white space (no Foundation needed).
    package func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
