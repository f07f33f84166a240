import Foundation

/// A certificate chain made with the real `openssl` command, shaped like
/// Apple's: root → WWDR-like intermediate → Pass Type ID certificates with
/// UID = passTypeIdentifier and OU = team (pass-format-notes.md "Certificates").
public final class TestPKI: @unchecked Sendable {
    public static let shared = TestPKI()
    public static let passType = "pass.com.example.test"
    public static let team = "ABCDE12345"
    public static let password = "correct horse"

    public let directory: TemporaryDirectory
    public var root: String { directory.file("root.pem") }
    public var wwdr: String { directory.file("wwdr.pem") }

    private let lock = NSLock()
    private var leaves: [String: Leaf] = [:]

    public struct Leaf: Sendable {
        public var certificate: String
        public var key: String
        public var encryptedKey: String
        public var p12: String
        public var der: String
    }

    init() {
        directory = TemporaryDirectory("passforge-pki")
        let d = directory.path
        openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(d)/root.key", "-out", "\(d)/root.pem",
                 "-days", "3650", "-subj", "/CN=passforge Test Root/O=passforge tests", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(d)/wwdr.key", "-out", "\(d)/wwdr.csr",
                 "-subj", "/CN=Test WWDR Intermediate/OU=G4/O=passforge tests"])
        directory.write("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
        openssl(["x509", "-req", "-in", "\(d)/wwdr.csr", "-CA", "\(d)/root.pem", "-CAkey", "\(d)/root.key", "-CAcreateserial",
                 "-out", "\(d)/wwdr.pem", "-days", "3650", "-extfile", "\(d)/ca.ext"])
    }

    /// A Pass Type ID certificate for `passType`/`team`; `expired` makes one that ended yesterday.
    public func leaf(passType: String = TestPKI.passType, team: String = TestPKI.team, expired: Bool = false) -> Leaf {
        lock.withLock {
            let name = "\(passType)-\(team)-\(expired)"
            if let leaf = leaves[name] { return leaf }
            let d = directory.path
            let base = "\(d)/\(name)"
            openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(base).key", "-out", "\(base).csr",
                     "-subj", "/UID=\(passType)/CN=Pass Type ID: \(passType)/OU=\(team)/O=passforge tests/C=US"])
            directory.write("leaf.ext", "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n")
            var sign = ["x509", "-req", "-in", "\(base).csr", "-CA", "\(d)/wwdr.pem", "-CAkey", "\(d)/wwdr.key", "-CAcreateserial",
                        "-out", "\(base).pem", "-extfile", "\(d)/leaf.ext"]
            if expired {
                // openssl 3.0 `x509 -req` cannot backdate; `ca` can, with a minimal config.
                directory.write("ca.cnf", """
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
                sign = ["ca", "-batch", "-config", "\(d)/ca.cnf", "-in", "\(base).csr", "-cert", "\(d)/wwdr.pem", "-keyfile", "\(d)/wwdr.key",
                        "-out", "\(base).pem", "-startdate", "20200101000000Z", "-enddate", "20210101000000Z", "-extfile", "\(d)/leaf.ext",
                        "-notext", "-preserveDN"]
            }
            openssl(sign)
            openssl(["pkcs8", "-topk8", "-in", "\(base).key", "-out", "\(base).enc.key", "-passout", "pass:\(Self.password)", "-v2", "aes-256-cbc"])
            openssl(["pkcs12", "-export", "-in", "\(base).pem", "-inkey", "\(base).key", "-certfile", "\(d)/wwdr.pem",
                     "-out", "\(base).p12", "-passout", "pass:\(Self.password)"])
            openssl(["x509", "-in", "\(base).pem", "-outform", "DER", "-out", "\(base).der"])
            let leaf = Leaf(certificate: "\(base).pem", key: "\(base).key", encryptedKey: "\(base).enc.key", p12: "\(base).p12", der: "\(base).der")
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

    private func openssl(_ arguments: [String]) {
        let result = try? runProcess("openssl", arguments)
        precondition(result?.status == 0, "openssl \(arguments.joined(separator: " ")) failed: \(result?.stderr ?? "not run")")
    }
}
