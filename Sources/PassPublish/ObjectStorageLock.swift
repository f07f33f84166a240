import AtomicFiles
import Foundation
import ObjectStorage
import WalletTree

#if canImport(Glibc)
    import Glibc
#endif

/// The lock object `PREFIX/.passforge/publish.lock` that keeps a second
/// publish to the same bucket and prefix out.
///
/// It is created with `If-None-Match: *`, which the store refuses (412) when
/// the object exists, so of two publishes exactly one gets it (AWS since
/// 2024, R2, MinIO, Ceph, SeaweedFS). A store that answers 501 (OpenStack
/// Swift's s3api before 2.36) gets a check-then-put lock instead: it keeps a
/// second publish of the same pipeline out, not two started in the same
/// instant, and passforge says so once.
///
/// The holder refreshes the object every 20 seconds and deletes it at the
/// end. A publish killed with SIGKILL leaves it behind: the next publish
/// takes it over (`If-Match` on the ETag it read, so only one does) when it
/// was held by a process of this machine that no longer runs, or was not
/// refreshed for 2 minutes.
final class ObjectStorageLock: DestinationLock, @unchecked Sendable {
    static let path = "\(TreeLayout.stateFolder)/publish.lock"
    static let refreshInterval: UInt64 = 20
    static let staleAfter: Double = 120

    let client: S3Client
    let key: String
    let bridge: BlockingBridge
    private let refresher: Task<Void, Never>
    private let released = NSLock()
    private var isReleased = false

    private init(
        client: S3Client, key: String, bridge: BlockingBridge, holder: Holder, etag: String?, conditional: Bool
    ) {
        (self.client, self.key, self.bridge) = (client, key, bridge)
        refresher = bridge.detached {
            var (holder, etag) = (holder, etag)
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: Self.refreshInterval * 1_000_000_000)
                if Task.isCancelled { return }
                holder.refreshed = Date().timeIntervalSince1970
                let condition: S3Client.WriteCondition = conditional ? etag.map { .matching(etag: $0) } ?? .none : .none
                if case .stored(let newTag)? = try? await client.put(
                    key, body: holder.bytes, contentType: "application/json",
                    cacheControl: "no-store", condition: condition)
                {
                    etag = newTag
                }
            }
        }
    }

    func release() {
        released.lock()
        defer { released.unlock() }
        guard !isReleased else { return }
        isReleased = true
        refresher.cancel()
        let (client, key) = (client, key)
        _ = try? bridge.run { try await client.delete(key) }
    }

    /// What the lock object says: who holds it, since when, last refreshed when.
    struct Holder: Codable, Sendable, Equatable {
        var host: String
        var boot: String
        var pid: Int32
        var nonce: String
        var started: Double
        var refreshed: Double

        var bytes: [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data()) }

        static func current() -> Holder {
            let now = Date().timeIntervalSince1970
            return Holder(
                host: ProcessInfo.processInfo.hostName, boot: bootID(), pid: getpid(),
                nonce: UUID().uuidString, started: now, refreshed: now)
        }

        /// Why this holder's lock may be taken over, or nil while it may still be publishing.
        func staleness(now: Double, here: Holder) -> String? {
            if host == here.host, boot == here.boot, !boot.isEmpty, kill(pid, 0) != 0, errno == ESRCH {
                return "the publish that held it (process \(pid) on this machine) is no longer running"
            }
            if now - refreshed > ObjectStorageLock.staleAfter {
                return "it was last refreshed \(Int(now - refreshed)) s ago, by \(host)"
            }
            return nil
        }

        private static func bootID() -> String {
            // /proc states no size: read as a stream, with a limit.
            (try? AtomicFileSystem.readFile("/proc/sys/kernel/random/boot_id", limit: 128))
                .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        }
    }
}

extension ObjectStorageLock {
    /// Takes the lock, or throws naming who holds it.
    static func acquire(
        client: S3Client, key: String, destination: String, bridge: BlockingBridge
    ) throws -> ObjectStorageLock {
        let holder = Holder.current()
        let outcome = try bridge.run { try await take(client: client, key: key, holder: holder) }
        switch outcome {
        case .taken(let etag, let conditional, let notice):
            if let notice { FileHandle.standardError.write(Data("\(notice)\n".utf8)) }
            return ObjectStorageLock(
                client: client, key: key, bridge: bridge, holder: holder, etag: etag, conditional: conditional)
        case .held(let other):
            let since = Date(timeIntervalSince1970: other?.started ?? 0)
            let who =
                other.map { "process \($0.pid) on \($0.host), since \(since)" } ?? "a writer passforge cannot read"
            throw PublishError(
                .locked,
                "another passforge publish to \(destination) is running (\(client.describe(key)): \(who)); "
                    + "wait for it to finish. If none is running, delete that object, or wait "
                    + "\(Int(staleAfter)) s for it to go stale")
        }
    }

    enum Outcome: Sendable {
        case taken(etag: String?, conditional: Bool, notice: String?)
        case held(Holder?)
    }

    private static func take(client: S3Client, key: String, holder: Holder) async throws -> Outcome {
        switch try await client.put(
            key, body: holder.bytes, contentType: "application/json", cacheControl: "no-store",
            condition: .absent)
        {
        case .stored(let etag):
            return .taken(etag: etag, conditional: true, notice: nil)
        case .conditionNotImplemented:
            return try await takeWithoutConditions(client: client, key: key, holder: holder)
        case .conditionFailed:
            guard let existing = try await client.get(key, limit: 64 << 10) else {
                // Deleted meanwhile: one more try, conditional again.
                if case .stored(let etag) = try await client.put(
                    key, body: holder.bytes, contentType: "application/json",
                    cacheControl: "no-store", condition: .absent)
                {
                    return .taken(etag: etag, conditional: true, notice: nil)
                }
                return .held(nil)
            }
            let other = try? JSONDecoder().decode(Holder.self, from: Data(existing.body))
            // Our own PUT, retried after a first attempt that landed.
            if other == holder { return .taken(etag: existing.etag, conditional: true, notice: nil) }
            guard let other, let why = other.staleness(now: Date().timeIntervalSince1970, here: holder),
                let etag = existing.etag
            else { return .held(other) }
            let takeover = try await client.put(
                key, body: holder.bytes, contentType: "application/json",
                cacheControl: "no-store", condition: .matching(etag: etag))
            guard case .stored(let newTag) = takeover else { return .held(other) }
            return .taken(
                etag: newTag, conditional: true,
                notice: "taking over the publish lock \(client.describe(key)): \(why)")
        }
    }

    /// The fallback for a store without conditional writes: read, put, read back.
    private static func takeWithoutConditions(client: S3Client, key: String, holder: Holder) async throws -> Outcome {
        let notice =
            "note: \(client.describe(key)): the store does not support conditional writes (If-None-Match: *; "
            + "it answered 501), so the publish lock is checked, then written: it keeps out a second publish of the "
            + "same pipeline, not two started at the same instant; let one CI job publish at a time"
        var why: String?
        if let existing = try await client.get(key, limit: 64 << 10) {
            let other = try? JSONDecoder().decode(Holder.self, from: Data(existing.body))
            guard let other, let staleness = other.staleness(now: Date().timeIntervalSince1970, here: holder) else {
                return .held(other)
            }
            why = staleness
        }
        _ = try await client.put(key, body: holder.bytes, contentType: "application/json", cacheControl: "no-store")
        guard let back = try await client.get(key, limit: 64 << 10),
            (try? JSONDecoder().decode(Holder.self, from: Data(back.body))) == holder
        else { return .held(nil) }
        return .taken(
            etag: back.etag, conditional: false,
            notice: notice + (why.map { "\ntaking over the publish lock: \($0)" } ?? ""))
    }
}
