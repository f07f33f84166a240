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
        try? FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: full, contents: Data(bytes))
        return full
    }

    public func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(relative)).map { Array($0) }
    }
}

/// The type of the file system holding `path` as the kernel's mount table names it ("tmpfs", "ext4", "overlay", …),
/// or nil: the last mount in /proc/self/mounts whose mount point holds `path` (a later mount hides an earlier one).
/// Read in process, without `stat -f`: unit tests start no program.
public func fileSystemType(of path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    let real = String(cString: resolved)
    free(resolved)
    guard let table = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
    var found: (point: String, type: String)?
    for line in table.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count > 2 else { continue }
        // Spaces and other characters in a mount point are written as octal escapes (\040).
        let point = String(fields[1]).replacingOccurrences(of: "\\040", with: " ")
        let holds = point == "/" || real == point || real.hasPrefix(point + "/")
        if holds, point.count >= (found?.point.count ?? 0) { found = (point, String(fields[2])) }
    }
    return found?.type
}
