import Foundation

/// A fresh folder under the system's temporary directory, removed on deinit.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(_ prefix: String = "passforge-test") {
        let template = NSTemporaryDirectory() + "/\(prefix)-XXXXXX"
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
