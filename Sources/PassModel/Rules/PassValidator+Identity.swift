// Required keys and the identifiers that name a pass ("Pass" in Apple's
// Wallet Passes documentation): formatVersion 1, passTypeIdentifier,
// serialNumber, teamIdentifier, organizationName and description.

extension ValidationRun {
    /// The keys every pass must have, each with a hint of what to put there.
    static let requiredKeys: [(key: String, hint: String)] = [
        ("formatVersion", "add \"formatVersion\": 1"),
        ("passTypeIdentifier", "add the Pass Type ID of your signing certificate, e.g. \"pass.com.example.tickets\""),
        ("serialNumber", "add an ID that is unique among passes of this passTypeIdentifier, e.g. \"TICKET-0001\""),
        ("teamIdentifier", "add your 10-character Apple Team ID, e.g. \"A1B2C3D4E5\""),
        ("organizationName", "add the name Wallet shows as the pass's issuer, e.g. \"Example Airlines\""),
        ("description", "add a short description that VoiceOver reads, e.g. \"Boarding pass for flight EX 117\""),
    ]

    mutating func checkIdentity() {
        for (key, hint) in Self.requiredKeys where root[key] == nil {
            error([.key(key)], "key.required", "required key \"\(key)\" is missing; \(hint)")
        }
        checkFormatVersion()
        if let serial = string("serialNumber", of: root, at: .root) { checkSerialNumber(serial) }
        if let identifier = string("passTypeIdentifier", of: root, at: .root) { checkPassTypeIdentifier(identifier) }
        if let team = string("teamIdentifier", of: root, at: .root) { checkTeamIdentifier(team) }
        for key in ["organizationName", "description"] {
            if let text = string(key, of: root, at: .root), text.trimmingSpaces().isEmpty {
                warning(
                    [.key(key)], "key.empty",
                    "\(key) is empty; Wallet shows it (and VoiceOver reads it), so give it a text")
            }
        }
    }

    /// Apple has only ever defined format version 1.
    mutating func checkFormatVersion() {
        guard let value = root["formatVersion"] else { return }
        let path: JSONPath = [.key("formatVersion")]
        switch value {
        case .int(1): return
        case .double(let d) where d == 1: return
        case .string(let text) where text.trimmingSpaces() == "1":
            error(path, "formatVersion", "formatVersion must be the number 1, not the string \"1\"; remove the quotes")
        default:
            error(
                path, "formatVersion",
                "formatVersion is \(value.serializedString()), but the only "
                    + "format version is 1; set \"formatVersion\": 1")
        }
    }

    /// A serial must match `[A-Za-z0-9][A-Za-z0-9._~-]{0,127}`: it is part of
    /// the web service's URL and of a file path in the output tree, so only
    /// URL- and path-safe characters are allowed.
    /// (passforge's own rule, not Wallet's: a distributed pass with another
    /// serial, e.g. Apple's sample "…-ORD07/09/25-…", gets a warning.)
    mutating func checkSerialNumber(_ serial: String) {
        guard let problem = Self.serialNumberProblem(serial) else { return }
        guidance(
            [.key("serialNumber")], "serialNumber.format",
            "serialNumber \"\(serial)\" \(problem); a serial number matches "
                + "[A-Za-z0-9][A-Za-z0-9._~-]{0,127}: it starts with a letter or digit, then has up to 127 "
                + "letters, digits, '.', '_', '~' or '-', because it becomes part of URLs and file names"
        )
    }

    static func serialNumberProblem(_ serial: String) -> String? {
        guard let first = serial.unicodeScalars.first else { return "is empty" }
        func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
            s.isASCII && (ASCII.asciiLetters(s) || ("0"..."9").contains(s))
        }
        if !isAlphanumeric(first) { return "starts with '\(first)'" }
        if let bad = serial.unicodeScalars.first(where: { !isAlphanumeric($0) && !".-_~".unicodeScalars.contains($0) })
        {
            return bad == " " ? "contains a space" : "contains '\(bad)'"
        }
        if serial.unicodeScalars.count > 128 { return "has \(serial.unicodeScalars.count) characters, more than 128" }
        return nil
    }

    /// Pass Type IDs are reverse-DNS names Apple issues as `pass.<domain>…`.
    /// The ID is a directory name in the output tree and a URL path
    /// component, so it must hold only letters, digits, '.' and '-', with no
    /// empty component (which also excludes "..").
    mutating func checkPassTypeIdentifier(_ identifier: String) {
        // Every pass of a build has one: a well-formed `pass.` name is accepted from its bytes.
        guard !Self.isWellFormedPassTypeIdentifier(identifier) else { return }
        let path: JSONPath = [.key("passTypeIdentifier")]
        let components = identifier.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = identifier.unicodeScalars.allSatisfy {
            $0.isASCII && (ASCII.asciiLetters($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-")
        }
        var problem: String?
        if identifier.isEmpty {
            problem = "is empty"
        } else if !allowed {
            let bad = identifier.unicodeScalars.first {
                !($0.isASCII && (ASCII.asciiLetters($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-"))
            }!
            problem = bad == " " ? "contains a space" : "contains '\(bad)'"
        } else if components.count < 2 {
            problem = "has only one component"
        } else if components.contains(where: \.isEmpty) {
            problem = "has an empty component (a leading, trailing or doubled '.')"
        }
        if let problem {
            error(
                path, "passTypeIdentifier.format",
                "passTypeIdentifier \"\(identifier)\" \(problem); it must be a reverse-DNS name of letters, "
                    + "digits, '-' and '.', like pass.com.example.tickets, exactly as in your Pass Type ID "
                    + "certificate"
            )
        } else if !identifier.hasPrefix("pass.") {
            warning(
                path, "passTypeIdentifier.prefix",
                "passTypeIdentifier \"\(identifier)\" does not start with \"pass.\"; every Pass Type ID Apple "
                    + "issues does (pass.com.example.tickets), so check it against your certificate"
            )
        }
    }

    /// `pass.` then components of ASCII letters, digits and `-`, none empty: what the checks below accept
    /// with neither error nor warning.
    static func isWellFormedPassTypeIdentifier(_ identifier: String) -> Bool {
        var identifier = identifier
        return identifier.withUTF8 { bytes in
            guard bytes.starts(with: "pass.".utf8), bytes.last != UInt8(ascii: ".") else { return false }
            var previous = UInt8(ascii: ".")
            for byte in bytes.dropFirst(5) {
                let isAllowed = IdentifierPatterns.isAlphanumeric(byte) || byte == UInt8(ascii: "-")
                guard isAllowed || (byte == UInt8(ascii: ".") && previous != UInt8(ascii: ".")) else { return false }
                previous = byte
            }
            return true
        }
    }

    /// Apple Team IDs are exactly 10 upper-case letters and digits.
    mutating func checkTeamIdentifier(_ team: String) {
        let valid =
            team.unicodeScalars.count == 10
            && team.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        guard !valid else { return }
        var hint = "copy it from the Membership page of your Apple developer account or from the OU of your certificate"
        if team.uppercased() != team, team.uppercased().unicodeScalars.count == 10 {
            hint = "write it in upper case: \(team.uppercased())"
        }
        error(
            [.key("teamIdentifier")], "teamIdentifier.format",
            "teamIdentifier \"\(team)\" is not an Apple Team ID, which is 10 "
                + "upper-case letters and digits like A1B2C3D4E5; \(hint)"
        )
    }
}

/// Small ASCII character tests (PassModel avoids Foundation).
enum ASCII {
    static func asciiLetters(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
    static func hexDigit(_ s: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(s) || ("a"..."f").contains(s) || ("A"..."F").contains(s)
    }
}
