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

    public static func verify(_ pkpass: String, root: String) throws -> Verified {
        let work = TemporaryDirectory("passforge-verify")
        let unzip = try runProcess("unzip", ["-q", pkpass, "-d", work.path])
        guard unzip.status == 0 else { throw Failure(description: "unzip failed: \(unzip.output)") }
        var files: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: work.path)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: work.file(relative), isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = work.read(relative)
            }
        }
        guard let manifestBytes = files["manifest.json"],
              let manifest = try JSONSerialization.jsonObject(with: Data(manifestBytes)) as? [String: String] else {
            throw Failure(description: "no readable manifest.json at the zip root")
        }
        // An order holds order.json and lists SHA-256 hashes (Apple, "Building a distributable order package").
        let isOrder = files["order.json"] != nil
        let expected = Set(files.keys).subtracting(["manifest.json", "signature"])
        guard Set(manifest.keys) == expected else {
            throw Failure(description: "manifest lists \(manifest.keys.sorted()) but the zip holds \(expected.sorted())")
        }
        for (name, hash) in manifest {
            let actual = try runProcess("openssl", ["dgst", isOrder ? "-sha256" : "-sha1", "-r", work.file(name)])
            guard actual.stdout.split(separator: " ").first.map(String.init) == hash else {
                throw Failure(description: "\(isOrder ? "SHA-256" : "SHA-1") of \(name) does not match the manifest")
            }
        }
        let smime = try runProcess("openssl", [isOrder ? "cms" : "smime", "-verify", "-binary", "-inform", "DER", "-in", work.file("signature"),
                                               "-content", work.file("manifest.json"), "-CAfile", root, "-purpose", "any",
                                               "-out", "/dev/null"])
        guard smime.status == 0 else { throw Failure(description: "signature does not verify: \(smime.output)") }
        let rootFile = isOrder ? "order.json" : "pass.json"
        guard let passBytes = files[rootFile], let pass = try JSONSerialization.jsonObject(with: Data(passBytes)) as? [String: Any] else {
            throw Failure(description: "\(rootFile) is missing or not a JSON object")
        }
        return Verified(files: files, passJSON: pass)
    }
}
