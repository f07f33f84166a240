import Foundation

/// APNs additions to the test PKI (P-256 keys: quick to make, quick handshakes): a TLS server certificate for the in-process
/// APNs mock, issued by the same root as the Pass Type ID certificates, and a
/// Pass Type ID–shaped client certificate from an unrelated CA, which the mock
/// must refuse. Written as an extension so it can be merged into the main
/// repo's Tests/Support/TestPKI.swift as is.
extension TestPKI {
    /// A certificate and its unencrypted key, as file paths.
    public struct KeyPair: Sendable {
        public var certificate: String
        public var key: String
    }

    /// A `localhost` / `127.0.0.1` TLS server certificate (serverAuth) signed by `root`.
    public func apnsServerCertificate() -> KeyPair {
        APNsPKI.lock.withLock {
            let d = directory.path
            let pair = KeyPair(certificate: "\(d)/apns-server.pem", key: "\(d)/apns-server.key")
            if FileManager.default.fileExists(atPath: pair.certificate) { return pair }
            APNsPKI.openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", pair.key,
                "-out", "\(d)/apns-server.csr",
                "-subj", "/CN=localhost/O=passforge tests",
            ])
            directory.write(
                "apns-server.ext",
                """
                basicConstraints=CA:FALSE
                keyUsage=critical,digitalSignature,keyEncipherment
                extendedKeyUsage=serverAuth
                subjectAltName=DNS:localhost,IP:127.0.0.1

                """)
            APNsPKI.openssl([
                "x509", "-req", "-in", "\(d)/apns-server.csr", "-CA", root, "-CAkey", "\(d)/root.key",
                "-CAcreateserial", "-out", pair.certificate, "-days", "3650", "-extfile", "\(d)/apns-server.ext",
            ])
            return pair
        }
    }

    /// A client certificate with the same subject as `leaf()`'s, issued by a
    /// different, self-made root: the mock APNs must refuse it at handshake.
    public func foreignClientCertificate(passType: String = TestPKI.passType, team: String = TestPKI.team) -> KeyPair {
        APNsPKI.lock.withLock {
            let d = directory.path
            let pair = KeyPair(certificate: "\(d)/foreign-client.pem", key: "\(d)/foreign-client.key")
            if FileManager.default.fileExists(atPath: pair.certificate) { return pair }
            APNsPKI.openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                "\(d)/foreign-root.key",
                "-out", "\(d)/foreign-root.pem", "-days", "3650", "-subj", "/CN=Some Other Root/O=elsewhere",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
            APNsPKI.openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", pair.key,
                "-out", "\(d)/foreign-client.csr",
                "-subj", "/UID=\(passType)/CN=Pass Type ID: \(passType)/OU=\(team)/O=passforge tests/C=US",
            ])
            directory.write(
                "foreign-client.ext",
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n")
            APNsPKI.openssl([
                "x509", "-req", "-in", "\(d)/foreign-client.csr", "-CA", "\(d)/foreign-root.pem",
                "-CAkey", "\(d)/foreign-root.key", "-CAcreateserial", "-out", pair.certificate, "-days", "3650",
                "-extfile", "\(d)/foreign-client.ext",
            ])
            return pair
        }
    }

    /// The chain a Pass Type ID client presents to APNs: `leaf` then the WWDR intermediate, as PEM bytes.
    public func clientChainPEM(_ leaf: Leaf) -> [UInt8] {
        pemBytes(leaf.certificate) + pemBytes(wwdr)
    }

    /// A file's bytes, or none if it cannot be read.
    public func pemBytes(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map { Array($0) } ?? []
    }
}

/// State for the extension above (extensions cannot add stored properties).
private enum APNsPKI {
    static let lock = NSLock()

    static func openssl(_ arguments: [String]) {
        let result = try? runProcess("openssl", arguments)
        precondition(
            result?.status == 0, "openssl \(arguments.joined(separator: " ")) failed: \(result?.stderr ?? "not run")")
    }
}
