import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A file that holds a secret — a signing key or a `.p12`, a DeviceCheck
/// `.p8`, the token secret, a database URL with its password — should be
/// readable by its owner alone: anyone who can read it can sign passes as the
/// project, derive every pass's token, or read every push token.
///
/// Each reader of such a file asks here; a file that group or others may read
/// gets one warning per process (one command), however many times it is read
/// and under whichever name (files are told apart by device and inode).
package enum SecretFile {
    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private static let warned = Mutex<Set<Identity>>([])

    /// The warning for the file at `path` (links followed) when its mode lets
    /// group or others read it, naming `what` it holds ("the token secret");
    /// nil when only its owner may, when it is no regular file, or when this
    /// process has warned about it already.
    package static func exposureWarning(_ path: String, holding what: String) -> String? {
        var info = stat()
        guard path.withCString({ stat($0, &info) }) == 0, info.st_mode & S_IFMT == S_IFREG,
            info.st_mode & 0o044 != 0
        else { return nil }
        let identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        guard warned.withLock({ $0.insert(identity).inserted }) else { return nil }
        let readers = info.st_mode & 0o004 != 0 ? "every user of this machine" : "its group"
        let mode = String(info.st_mode & 0o7777, radix: 8)
        let shown = shellWord(path)
        return "warning: \(shown) holds \(what) and \(readers) can read it (mode 0\(mode)); "
            + "make it readable by its owner alone: chmod 600 \(shown)"
    }

    /// Writes `exposureWarning` to standard error, where every command's
    /// diagnostics go (`serve` too: its log is standard error).
    package static func warnIfExposed(_ path: String, holding what: String) {
        guard let warning = exposureWarning(path, holding: what) else { return }
        FileHandle.standardError.write(Data((warning + "\n").utf8))
    }

    /// `path` as a shell word to paste: plain when it holds only plain
    /// characters, else in single quotes; control and format characters become
    /// `?` (the path comes from the environment or passforge.yml, and goes to a
    /// terminal).
    static func shellWord(_ path: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+,=@%:-")
        let hidden: Set<Unicode.GeneralCategory> = [.control, .format]  // format: the bidirectional overrides
        var visible = String(
            path.unicodeScalars.map {
                hidden.contains($0.properties.generalCategory) ? "?" : Character($0)
            })
        if visible.hasPrefix("-") { visible = "./" + visible }  // not an option of chmod
        if !visible.isEmpty, visible.allSatisfy(plain.contains) { return visible }
        return "'" + visible.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
