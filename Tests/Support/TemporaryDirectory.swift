import Foundation

/// A fresh folder under the system's temporary directory, removed on deinit.
public final class TemporaryDirectory: Sendable {
    public let path: String

    /// - Parameter base: the folder to make it in; the system's temporary directory when nil.
    public init(_ prefix: String = "passforge-test", under base: String? = nil) {
        let template = (base ?? NSTemporaryDirectory()) + "/\(prefix)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let result = mkdtemp(&bytes) else { fatalError("mkdtemp failed") }
        path = String(cString: result)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ relative: String) -> String { "\(path)/\(relative)" }

    /// Writes text (creating folders) and returns the full path.
    @discardableResult
    public func write(_ relative: String, _ text: String) -> String {
        write(relative, bytes: Array(text.utf8))
    }

    @discardableResult
    public func write(_ relative: String, bytes: [UInt8]) -> String {
        let full = file(relative)
        try? FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: full, contents: Data(bytes))
        return full
    }

    public func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(relative)).map { Array($0) }
    }
}

/// The type of the file system holding `path` as `stat -f` names it ("tmpfs", "ext2/ext3", …), or nil.
public func fileSystemType(of path: String) -> String? {
    guard let result = try? runProcess("/usr/bin/stat", ["-f", "-c", "%T", path]), result.status == 0 else { return nil }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}
