import Foundation

/// Checks a .pkpass (or an .order) the way a device would, with independent
/// tools: `unzip` to list and extract, SHA-1 (SHA-256 for an order) of every
/// file against manifest.json, and `openssl smime -verify` (`openssl cms
/// -verify` for an order) of the detached signature against a root.
public enum PassVerifier {
    public struct Verified {
        public var files: [String: [UInt8]]
        /// pass.json, or an order's order.json.
        public var passJSON: [String: Any]
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// For synchronous tests: blocks the calling thread while the tools run. Async tests call `verifyWithoutBlocking`.
    public static func verify(_ pkpass: String, root: String) throws -> Verified {
        let work = TemporaryDirectory("passforge-verify")
        let commands = Commands(pkpass: pkpass, root: root, work: work)
        try commands.checkUnzip(runProcess("unzip", commands.unzip))
        let (files, isOrder) = try commands.files()
        let digests = try runProcess("openssl", commands.digests(of: files, isOrder: isOrder))
        let signature = try runProcess("openssl", commands.signatureCheck(isOrder: isOrder))
        return try commands.verified(files, isOrder: isOrder, digests: digests, signature: signature)
    }

    /// `verify` for async tests: suspends while the tools run, holding none of the test runner's threads.
    public static func verifyWithoutBlocking(_ pkpass: String, root: String) async throws -> Verified {
        let work = TemporaryDirectory("passforge-verify")
        let commands = Commands(pkpass: pkpass, root: root, work: work)
        try commands.checkUnzip(await runProcessWithoutBlocking("unzip", commands.unzip))
        let (files, isOrder) = try commands.files()
        let digests = try await runProcessWithoutBlocking("openssl", commands.digests(of: files, isOrder: isOrder))
        let signature = try await runProcessWithoutBlocking("openssl", commands.signatureCheck(isOrder: isOrder))
        return try commands.verified(files, isOrder: isOrder, digests: digests, signature: signature)
    }

    /// The three tools' command lines and what their answers mean.
    private struct Commands {
        var pkpass: String
        var root: String
        var work: TemporaryDirectory

        var unzip: [String] { ["-q", pkpass, "-d", work.path] }

        func checkUnzip(_ result: ProcessResult) throws {
            guard result.status == 0 else { throw Failure(description: "unzip failed: \(result.output)") }
        }

        /// Every extracted file; an order holds order.json.
        func files() throws -> ([String: [UInt8]], isOrder: Bool) {
            var files: [String: [UInt8]] = [:]
            let enumerator = FileManager.default.enumerator(atPath: work.path)
            while let relative = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: work.file(relative), isDirectory: &isDirectory),
                    !isDirectory.boolValue
                {
                    files[relative] = work.read(relative)
                }
            }
            return (files, files["order.json"] != nil)
        }

        /// One `openssl dgst -r` over every file the manifest should list.
        func digests(of files: [String: [UInt8]], isOrder: Bool) -> [String] {
            let names = files.keys.filter { $0 != "manifest.json" && $0 != "signature" }.sorted()
            return ["dgst", isOrder ? "-sha256" : "-sha1", "-r"] + names.map { work.file($0) }
        }

        func signatureCheck(isOrder: Bool) -> [String] {
            [
                isOrder ? "cms" : "smime", "-verify", "-binary", "-inform", "DER", "-in", work.file("signature"),
                "-content", work.file("manifest.json"), "-CAfile", root, "-purpose", "any", "-out", "/dev/null",
            ]
        }

        func verified(
            _ files: [String: [UInt8]], isOrder: Bool, digests: ProcessResult, signature: ProcessResult
        ) throws -> Verified {
            guard let manifestBytes = files["manifest.json"],
                let manifest = try JSONSerialization.jsonObject(with: Data(manifestBytes)) as? [String: String]
            else {
                throw Failure(description: "no readable manifest.json at the zip root")
            }
            // An order lists SHA-256 hashes (Apple, "Building a distributable order package").
            let expected = Set(files.keys).subtracting(["manifest.json", "signature"])
            guard Set(manifest.keys) == expected else {
                throw Failure(
                    description: "manifest lists \(manifest.keys.sorted()) but the zip holds \(expected.sorted())")
            }
            // `openssl dgst -r` writes "HASH *PATH" per file.
            var actual: [String: String] = [:]
            for line in digests.stdout.split(separator: "\n") {
                guard let space = line.firstIndex(of: " ") else { continue }
                let path = line[line.index(after: space)...].drop { $0 == "*" }
                actual[String(path.dropFirst(work.path.count + 1))] = String(line[..<space])
            }
            for (name, hash) in manifest where actual[name] != hash {
                throw Failure(description: "\(isOrder ? "SHA-256" : "SHA-1") of \(name) does not match the manifest")
            }
            guard signature.status == 0 else {
                throw Failure(description: "signature does not verify: \(signature.output)")
            }
            let rootFile = isOrder ? "order.json" : "pass.json"
            guard let passBytes = files[rootFile],
                let pass = try JSONSerialization.jsonObject(with: Data(passBytes)) as? [String: Any]
            else {
                throw Failure(description: "\(rootFile) is missing or not a JSON object")
            }
            return Verified(files: files, passJSON: pass)
        }
    }
}
