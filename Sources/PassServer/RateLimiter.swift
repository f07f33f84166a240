import Foundation
import Synchronization

/// Token buckets by client address, of a fixed capacity in memory: `--rate-limit`, registrations and offer
/// claims each have one.
///
/// - An IPv6 client is keyed by its /64 (`networkKey(of:)`): one subscriber or host gets a /64 and picks
///   any address in it, so per-address buckets would give one device as many buckets as it likes.
/// - The table never grows past `capacity` and is never cleared: a new client takes the place of the least
///   recently seen one only when that bucket has refilled (forgetting it changes nothing). When none has,
///   a flood of new addresses is in progress, and the new clients share one overflow bucket instead: the
///   buckets of the clients already limited stay as they are.
package final class RateLimiter: Sendable {
    package let ratePerSecond: Double
    private let burst: Double
    private let table: Mutex<BucketTable>

    package init(ratePerSecond: Int, capacity: Int = 65_536) {
        self.ratePerSecond = Double(max(1, ratePerSecond))
        self.burst = Double(max(1, ratePerSecond))
        table = Mutex(BucketTable(capacity: capacity))
    }

    /// `count` at once, then `count` per minute evenly.
    package init(perMinute count: Int, capacity: Int = 65_536) {
        self.ratePerSecond = Double(max(1, count)) / 60
        self.burst = Double(max(1, count))
        table = Mutex(BucketTable(capacity: capacity))
    }

    package func allow(_ address: String, now: ContinuousClock.Instant = .now) -> Bool {
        admit(address, now: now) == nil
    }

    /// Nil when the request may go on (a token is taken), else the whole seconds until the bucket holds one.
    package func admit(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
        let key = Self.networkKey(of: address)
        let (burst, rate) = (self.burst, ratePerSecond)
        return table.withLock { table in
            let slot = table.slot(for: key, now: now) { updated, tokens in
                // Refilled: as good as new, so it may be forgotten.
                tokens + Self.seconds(now - updated) * rate >= burst
            }
            var bucket = table.buckets[slot] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + Self.seconds(now - bucket.updated) * rate)
            bucket.updated = now
            // A nanotoken of slack: 12 s at 5 a minute must refill one token, whatever the rounding.
            let wait: Int? =
                bucket.tokens >= 1 - 1e-9
                ? nil : max(1, Int(((1 - bucket.tokens) / rate - 1e-6).rounded(.up)))
            if wait == nil { bucket.tokens = max(0, bucket.tokens - 1) }
            table.buckets[slot] = bucket
            return wait
        }
    }

    /// How many clients have a bucket now (at most the capacity; the overflow bucket not counted).
    package var count: Int { table.withLock { $0.index.count } }

    /// The key of a client address: an IPv6 address's first 64 bits (`2001:db8:1:2::/64`); an IPv4
    /// address, or an IPv4-mapped IPv6 one (`::ffff:192.0.2.1`), as the IPv4 address; anything else as is.
    package static func networkKey(of address: String) -> String {
        guard address.contains(":") else { return address }
        var storage = in6_addr()
        guard inet_pton(AF_INET6, address, &storage) == 1 else { return address }
        let bytes = withUnsafeBytes(of: storage) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

struct Bucket {
    var tokens: Double
    var updated: ContinuousClock.Instant
}

/// A fixed number of buckets in recency order (a doubly linked list over arrays: O(1) to find, touch and
/// replace), plus the overflow bucket at slot `capacity`.
struct BucketTable {
    let capacity: Int
    var index: [String: Int] = [:]
    var keys: [String] = []
    var buckets: [Bucket?]
    private var previous: [Int] = []
    private var next: [Int] = []
    /// Least and most recently used slots; -1 when empty.
    private var oldest = -1
    private var newest = -1

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        buckets = Array(repeating: nil, count: self.capacity + 1)
    }

    var overflowSlot: Int { capacity }

    /// The slot of `key`'s bucket, made most recent; a new key takes a free slot, the oldest slot when
    /// `isForgettable` says its bucket has refilled, or else the overflow slot.
    mutating func slot(
        for key: String, now: ContinuousClock.Instant,
        isForgettable: (ContinuousClock.Instant, Double) -> Bool
    ) -> Int {
        if let slot = index[key] {
            touch(slot)
            return slot
        }
        let slot: Int
        if keys.count < capacity {
            slot = keys.count
            keys.append(key)
            previous.append(-1)
            next.append(-1)
        } else if let bucket = buckets[oldest], isForgettable(bucket.updated, bucket.tokens) {
            slot = oldest
            unlink(slot)
            index[keys[slot]] = nil
            keys[slot] = key
            buckets[slot] = nil
        } else {
            return overflowSlot
        }
        index[key] = slot
        append(slot)
        return slot
    }

    private mutating func touch(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (before, after) = (previous[slot], next[slot])
        if before >= 0 { next[before] = after } else { oldest = after }
        if after >= 0 { previous[after] = before } else { newest = before }
        previous[slot] = -1
        next[slot] = -1
    }

    private mutating func append(_ slot: Int) {
        previous[slot] = newest
        next[slot] = -1
        if newest >= 0 { next[newest] = slot } else { oldest = slot }
        newest = slot
    }
}
