import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`), which bounds how many
/// connections `passforge serve` can hold. systemd starts services with a
/// soft limit of 1024 (systemd.exec(5), `LimitNOFILE=`; the hard limit is
/// higher, 524288 by default since systemd 240), and a shell's `ulimit -n`
/// is often 1024 too. Any process may raise its soft limit up to its hard
/// limit (setrlimit(2)), so `serve` does that before it listens.
package enum OpenFileLimit {
    package struct Raise: Sendable, Equatable {
        /// The soft limit before and after.
        package var before: Int
        package var after: Int
        /// Why the soft limit could not be raised to the hard one, if it could not.
        package var problem: String?
    }

    /// The soft limit now.
    package static func current() -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        return clamp(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard limit. An unlimited hard limit is taken as the kernel's
    /// `fs.nr_open` (setrlimit refuses more for RLIMIT_NOFILE).
    package static func raiseToHardLimit() -> Raise {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else {
            return Raise(before: 1024, after: 1024, problem: "getrlimit: \(String(cString: strerror(errno)))")
        }
        let before = clamp(limit.rlim_cur)
        var target = limit.rlim_max
        if target == rlimInfinity { target = rlim_t(kernelMaximum()) }
        guard target > limit.rlim_cur else { return Raise(before: before, after: before) }
        limit.rlim_cur = target
        guard setrlimit(resource, &limit) == 0 else {
            return Raise(before: before, after: before, problem: "setrlimit: \(String(cString: strerror(errno)))")
        }
        return Raise(before: before, after: current())
    }

    /// RLIM_INFINITY, all bits set (glibc's `(__rlim_t) -1`, which Swift does not import).
    private static let rlimInfinity = rlim_t.max

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }

    private static func clamp(_ value: rlim_t) -> Int {
        value == rlimInfinity || value > rlim_t(Int32.max) ? Int(Int32.max) : Int(value)
    }

    /// /proc/sys/fs/nr_open: the most file descriptors a process may have (1048576 by default).
    private static func kernelMaximum() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8)) ?? ""
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1_048_576
    }
}
