import Foundation
import PassPackage
import Testing

/// The result of running a command-line tool.
struct CommandResult {
    var status: Int32
    var output: String
    var error: String
    var outputBytes: [UInt8]
}

struct CommandFailure: Error, CustomStringConvertible {
    var command: [String]
    var result: CommandResult
    var description: String {
        "\(command.joined(separator: " ")) exited \(result.status): \(result.error)\(result.output)"
    }
}

/// Runs `tool` (found on PATH) with `arguments` in `directory`.
/// Output goes through files so large outputs cannot fill a pipe and block.
@discardableResult
func run(_ tool: String, _ arguments: [String], in directory: String, check: Bool = true) throws -> CommandResult {
    let outputPath = directory + "/.out-" + UUID().uuidString
    let errorPath = directory + "/.err-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardOutput = FileHandle(forWritingAtPath: outputPath)
    process.standardError = FileHandle(forWritingAtPath: errorPath)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let outputBytes = [UInt8](FileManager.default.contents(atPath: outputPath) ?? Data())
    let result = CommandResult(
        status: process.terminationStatus,
        output: String(decoding: outputBytes, as: UTF8.self),
        error: String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self),
        outputBytes: outputBytes
    )
    if check && result.status != 0 { throw CommandFailure(command: [tool] + arguments, result: result) }
    return result
}

func makeTemporaryDirectory(_ label: String) throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("passforge-\(label)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

private func removeSharedTestPKI() {
    if case .success(let pki) = TestPKI.shared {
        try? FileManager.default.removeItem(atPath: pki.directory)
    }
}

/// A test CA, a WWDR-like intermediate and Pass Type ID leaf certificates in
/// every format passforge accepts, all made with the real `openssl` tool.
/// Created once per test run (three RSA-2048 keys) and shared by all tests.
final class TestPKI: Sendable {
    static let shared: Result<TestPKI, any Error> = Result { try TestPKI() }

    static func get() throws -> TestPKI { try shared.get() }

    let directory: String
    let passTypeIdentifier = "pass.com.example.test"
    let teamIdentifier = "TEAM123456"
    let password = "correct horse battery"

    func path(_ name: String) -> String { directory + "/" + name }

    private init() throws {
        directory = try makeTemporaryDirectory("testpki")
        // Swift Testing has no whole-run teardown; remove the files at exit.
        atexit(removeSharedTestPKI)
        func openssl(_ arguments: String...) throws { try run("openssl", arguments, in: directory) }

        try writeBytes(Array("""
            [ root_ext ]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            [ wwdr_ext ]
            basicConstraints = critical,CA:TRUE,pathlen:0
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid:always
            [ leaf_ext ]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid:always
            [ ca ]
            default_ca = wwdr_ca
            [ wwdr_ca ]
            database = index.txt
            new_certs_dir = .
            serial = serial.txt
            default_md = sha256
            policy = any_name
            unique_subject = no
            [ any_name ]
            UID = optional
            CN = optional
            OU = optional
            O = optional
            C = optional

            """.utf8), to: path("pki.cnf"))
        try writeBytes([], to: path("index.txt"))
        try writeBytes(Array("1000\n".utf8), to: path("serial.txt"))

        // Root CA.
        try openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "root.key", "-out", "root.pem",
                    "-days", "3650", "-subj", "/CN=passforge Test Root/O=passforge tests",
                    "-config", "pki.cnf", "-extensions", "root_ext")
        // WWDR-like intermediate.
        try openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "wwdr.key", "-out", "wwdr.csr",
                    "-subj", "/CN=passforge Test WWDR/OU=G4/O=passforge tests")
        try openssl("x509", "-req", "-in", "wwdr.csr", "-CA", "root.pem", "-CAkey", "root.key",
                    "-set_serial", "2", "-days", "3650", "-sha256",
                    "-extfile", "pki.cnf", "-extensions", "wwdr_ext", "-out", "wwdr.pem")
        // Pass Type ID leaf, subject as Apple issues it.
        try openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
                    "-subj", "/UID=\(passTypeIdentifier)/CN=Pass Type ID: \(passTypeIdentifier)/OU=\(teamIdentifier)/O=passforge tests/C=US")
        try openssl("x509", "-req", "-in", "leaf.csr", "-CA", "wwdr.pem", "-CAkey", "wwdr.key",
                    "-set_serial", "3", "-days", "365", "-sha256",
                    "-extfile", "pki.cnf", "-extensions", "leaf_ext", "-out", "leaf.pem")
        // The same key in an expired certificate (2020–2021).
        try openssl("ca", "-batch", "-config", "pki.cnf", "-cert", "wwdr.pem", "-keyfile", "wwdr.key",
                    "-in", "leaf.csr", "-out", "expired.pem", "-notext", "-preserveDN",
                    "-startdate", "20200101000000Z", "-enddate", "20210101000000Z", "-extensions", "leaf_ext")

        // Other formats of the same material.
        try openssl("x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der")
        try openssl("x509", "-in", "wwdr.pem", "-outform", "DER", "-out", "wwdr.der")
        try openssl("pkcs8", "-topk8", "-in", "leaf.key", "-v2", "aes-256-cbc",
                    "-passout", "pass:\(password)", "-out", "leaf-pkcs8-encrypted.key")
        try openssl("rsa", "-in", "leaf.key", "-aes256", "-traditional",
                    "-passout", "pass:\(password)", "-out", "leaf-traditional-encrypted.key")
        try openssl("rsa", "-in", "leaf.key", "-outform", "DER", "-out", "leaf-key.der")
        try openssl("pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "wwdr.pem",
                    "-passout", "pass:\(password)", "-out", "leaf.p12")
        try openssl("pkcs12", "-export", "-legacy", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "wwdr.pem",
                    "-passout", "pass:\(password)", "-out", "leaf-legacy.p12")
        try openssl("pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem",
                    "-passout", "pass:", "-out", "leaf-nopassword.p12")
        // An unrelated self-signed root (EC, so it is quick to make).
        try openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "other-root.key", "-out", "other-root.pem", "-days", "30",
                    "-subj", "/CN=Unrelated Root", "-config", "pki.cnf", "-extensions", "root_ext")
    }

    /// The leaf identity from PEM certificate + PEM key + PEM WWDR.
    func identity() throws -> SigningIdentity {
        try SigningIdentity(certificatePath: path("leaf.pem"), keyPath: path("leaf.key"),
                            wwdrCertificatePath: path("wwdr.pem"))
    }
}
