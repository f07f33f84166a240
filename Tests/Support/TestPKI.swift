import Foundation
import Synchronization

/// A certificate chain made with the real `openssl` command, shaped like
/// Apple's: root → WWDR-like intermediate → Pass Type ID certificates whose
/// subject carries UID = pass type identifier and OU = Team ID, in Apple's
/// order (UID, CN, OU, O, C).
public final class TestPKI: Sendable {
    public static let shared = TestPKI()
    public static let passType = "pass.com.example.test"
    public static let team = "ABCDE12345"
    public static let password = "correct horse"

    public let directory: TemporaryDirectory
    public var root: String { directory.file("root.pem") }
    public var wwdr: String { directory.file("wwdr.pem") }

    /// The leaves made so far, by name; held while one is made.
    private let leaves = Mutex<[String: Leaf]>([:])
    /// Whether `makeSigningFormats()` ran; held while it runs.
    private let signingFormatsMade = Mutex(false)

    public struct Leaf: Sendable {
        public var certificate: String
        public var key: String
        public var encryptedKey: String
        public var p12: String
        public var der: String
    }

    /// The root, the WWDR intermediate, the default leaves and the APNs pairs are fixed files made by
    /// Tests/Fixtures/TestPKI/make.sh (valid for 100 years): unit targets start no process, so only the
    /// certificates made on demand (an expired leaf, other types or teams, `makeSigningFormats()`) run openssl.
    init() {
        directory = TemporaryDirectory("passforge-pki")
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/TestPKI").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures)) ?? []
        precondition(names.contains("wwdr.pem"), "no test certificates in \(fixtures): run make.sh there")
        for name in names where name != "make.sh" && name != "README.md" {
            try? FileManager.default.copyItem(atPath: "\(fixtures)/\(name)", toPath: directory.file(name))
        }
    }

    /// A Pass Type ID certificate for `passType`/`team`; `expired` makes one that ended yesterday.
    public func leaf(passType: String = TestPKI.passType, team: String = TestPKI.team, expired: Bool = false) -> Leaf {
        leaves.withLock { leaves in
            let name = "\(passType)-\(team)-\(expired)"
            if let leaf = leaves[name] { return leaf }
            let d = directory.path
            let base = "\(d)/\(name)"
            let fixed = Leaf(
                certificate: "\(base).pem", key: "\(base).key", encryptedKey: "\(base).enc.key", p12: "\(base).p12",
                der: "\(base).der")
            if FileManager.default.fileExists(atPath: fixed.certificate) {
                leaves[name] = fixed
                return fixed
            }
            openssl([
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(base).key", "-out", "\(base).csr",
                "-subj", "/UID=\(passType)/CN=Pass Type ID: \(passType)/OU=\(team)/O=passforge tests/C=US",
            ])
            directory.write(
                "leaf.ext",
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n")
            var sign = [
                "x509", "-req", "-in", "\(base).csr", "-CA", "\(d)/wwdr.pem", "-CAkey", "\(d)/wwdr.key",
                "-CAcreateserial",
                "-out", "\(base).pem", "-extfile", "\(d)/leaf.ext",
            ]
            if expired {
                // openssl 3.0 `x509 -req` cannot backdate; `ca` can, with a minimal config.
                directory.write(
                    "ca.cnf",
                    """
                    [ca]
                    default_ca = test
                    [test]
                    database = \(d)/index.txt
                    new_certs_dir = \(d)
                    serial = \(d)/serial
                    default_md = sha256
                    policy = any
                    copy_extensions = none
                    [any]
                    """)
                FileManager.default.createFile(atPath: "\(d)/index.txt", contents: Data())
                if !FileManager.default.fileExists(atPath: "\(d)/serial") { directory.write("serial", "1000\n") }
                sign = [
                    "ca", "-batch", "-config", "\(d)/ca.cnf", "-in", "\(base).csr", "-cert", "\(d)/wwdr.pem",
                    "-keyfile", "\(d)/wwdr.key",
                    "-out", "\(base).pem", "-startdate", "20200101000000Z", "-enddate", "20210101000000Z", "-extfile",
                    "\(d)/leaf.ext",
                    "-notext", "-preserveDN",
                ]
            }
            openssl(sign)
            openssl([
                "pkcs8", "-topk8", "-in", "\(base).key", "-out", "\(base).enc.key", "-passout", "pass:\(Self.password)",
                "-v2", "aes-256-cbc",
            ])
            openssl([
                "pkcs12", "-export", "-in", "\(base).pem", "-inkey", "\(base).key", "-certfile", "\(d)/wwdr.pem",
                "-out", "\(base).p12", "-passout", "pass:\(Self.password)",
            ])
            openssl(["x509", "-in", "\(base).pem", "-outform", "DER", "-out", "\(base).der"])
            let leaf = Leaf(
                certificate: "\(base).pem", key: "\(base).key", encryptedKey: "\(base).enc.key", p12: "\(base).p12",
                der: "\(base).der")
            leaves[name] = leaf
            return leaf
        }
    }

    /// The environment that makes passforge sign with `leaf`.
    public func environment(_ leaf: Leaf, secret: String = "test-token-secret-0123456789") -> [String: String] {
        [
            "PASSFORGE_SIGNING_CERTIFICATE": leaf.certificate,
            "PASSFORGE_SIGNING_KEY": leaf.key,
            "PASSFORGE_WWDR_CERTIFICATE": wwdr,
            "PASSFORGE_TOKEN_SECRET": secret,
        ]
    }

    // MARK: Every format of one certificate

    /// The team of the certificate `makeSigningFormats()` makes.
    public static let signingFormatsTeam = "TEAM123456"

    /// The path of a file of this PKI by name: `root.pem`, `root.key`,
    /// `wwdr.pem`, and those `makeSigningFormats()` writes.
    public func path(_ name: String) -> String { directory.file(name) }

    /// The shared PKI with `makeSigningFormats()` done.
    public static func withSigningFormats() -> TestPKI {
        shared.makeSigningFormats()
        return shared
    }

    /// Writes, once, a Pass Type ID certificate of `passType` for team
    /// `signingFormatsTeam` (serial 03) in every format passforge reads:
    /// `leaf.pem` + `leaf.key`, DER (`leaf.der`, `leaf-key.der`, `wwdr.der`),
    /// the key encrypted with `password` as PKCS#8 (`leaf-pkcs8-encrypted.key`)
    /// and as traditional PEM (`leaf-traditional-encrypted.key`), PKCS#12
    /// (`leaf.p12`, `leaf-legacy.p12` with OpenSSL 3's legacy ciphers,
    /// `leaf-nopassword.p12` without the WWDR certificate), the same key in
    /// a certificate that expired in 2021 (`expired.pem`), and an unrelated
    /// self-signed root (`other-root.pem`).
    public func makeSigningFormats() {
        signingFormatsMade.withLock { made in
            guard !made else { return }
            func openssl(_ arguments: String...) { self.openssl(arguments, in: directory.path) }
            directory.write(
                "formats.cnf",
                """
                [ leaf_ext ]
                basicConstraints = critical,CA:FALSE
                keyUsage = critical,digitalSignature
                subjectKeyIdentifier = hash
                authorityKeyIdentifier = keyid:always
                [ ca ]
                default_ca = wwdr_ca
                [ wwdr_ca ]
                database = formats-index.txt
                new_certs_dir = .
                serial = formats-serial.txt
                default_md = sha256
                policy = any_name
                unique_subject = no
                [ any_name ]
                UID = optional
                CN = optional
                OU = optional
                O = optional
                C = optional

                """)
            directory.write("formats-index.txt", "")
            directory.write("formats-serial.txt", "1000\n")
            let passType = Self.passType
            let team = Self.signingFormatsTeam
            let password = Self.password
            // Pass Type ID leaf, subject as Apple issues it.
            openssl(
                "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
                "-subj", "/UID=\(passType)/CN=Pass Type ID: \(passType)/OU=\(team)/O=passforge tests/C=US")
            openssl(
                "x509", "-req", "-in", "leaf.csr", "-CA", "wwdr.pem", "-CAkey", "wwdr.key",
                "-set_serial", "3", "-days", "365", "-sha256",
                "-extfile", "formats.cnf", "-extensions", "leaf_ext", "-out", "leaf.pem")
            // The same key in an expired certificate (2020–2021).
            openssl(
                "ca", "-batch", "-config", "formats.cnf", "-cert", "wwdr.pem", "-keyfile", "wwdr.key",
                "-in", "leaf.csr", "-out", "expired.pem", "-notext", "-preserveDN",
                "-startdate", "20200101000000Z", "-enddate", "20210101000000Z", "-extensions", "leaf_ext")

            // Other formats of the same material.
            openssl("x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der")
            openssl("x509", "-in", "wwdr.pem", "-outform", "DER", "-out", "wwdr.der")
            openssl(
                "pkcs8", "-topk8", "-in", "leaf.key", "-v2", "aes-256-cbc",
                "-passout", "pass:\(password)", "-out", "leaf-pkcs8-encrypted.key")
            openssl(
                "rsa", "-in", "leaf.key", "-aes256", "-traditional",
                "-passout", "pass:\(password)", "-out", "leaf-traditional-encrypted.key")
            openssl("rsa", "-in", "leaf.key", "-outform", "DER", "-out", "leaf-key.der")
            openssl(
                "pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "wwdr.pem",
                "-passout", "pass:\(password)", "-out", "leaf.p12")
            openssl(
                "pkcs12", "-export", "-legacy", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "wwdr.pem",
                "-passout", "pass:\(password)", "-out", "leaf-legacy.p12")
            openssl(
                "pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem",
                "-passout", "pass:", "-out", "leaf-nopassword.p12")
            // An unrelated self-signed root (EC, so it is quick to make).
            openssl(
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "other-root.key", "-out", "other-root.pem", "-days", "30",
                "-subj", "/CN=Unrelated Root", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
            made = true
        }
    }

    private func openssl(_ arguments: [String], in directory: String? = nil) {
        let result = try? runProcess("openssl", arguments, directory: directory)
        precondition(
            result?.status == 0, "openssl \(arguments.joined(separator: " ")) failed: \(result?.stderr ?? "not run")")
    }
}
