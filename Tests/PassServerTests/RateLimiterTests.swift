import PassServer
import Testing

/// The per-address limiter of `--rate-limit`, registrations and offer claims (issue 31, item 5).
@Suite struct RateLimiterBoundsTests {
    @Test func anIPv6ClientIsKeyedByItsSlash64() {
        #expect(RateLimiter.networkKey(of: "2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(RateLimiter.networkKey(of: "2001:0db8:0001:0002:ffff:eeee:dddd:cccc") == "2001:db8:1:2::/64")
        #expect(RateLimiter.networkKey(of: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(
            RateLimiter.networkKey(of: "::ffff:192.0.2.1") == "192.0.2.1", "an IPv4-mapped address is its IPv4 address")
        #expect(RateLimiter.networkKey(of: "192.0.2.1") == "192.0.2.1")
        #expect(RateLimiter.networkKey(of: "unknown") == "unknown")
    }

    /// 12 new devices from one /64 against a limit of 5 a minute: 5 pass, 7 are told when to come back.
    @Test func twelveDevicesOfOneSlash64MeetALimitOfFiveAMinute() {
        let limiter = RateLimiter(perMinute: 5)
        let now = ContinuousClock.now
        let waits = (1...12).map { limiter.admit("2001:db8:aa:bb::\(String($0, radix: 16))", now: now) }
        #expect(waits.prefix(5).allSatisfy { $0 == nil })
        #expect(waits.dropFirst(5).allSatisfy { $0 == 12 }, "one claim every 12 s: \(waits)")
        #expect(limiter.allow("2001:db8:aa:cc::1", now: now), "another /64 has its own bucket")
        #expect(limiter.allow("2001:db8:aa:bb::1", now: now + .seconds(12)), "refilled at the pace of 5 a minute")
    }

    /// 100,000 rotating addresses neither clear an existing bucket nor grow the table past its capacity.
    @Test func rotatingAddressesDoNotClearAnExistingBucket() {
        let limiter = RateLimiter(perMinute: 5, capacity: 1000)
        let now = ContinuousClock.now
        for _ in 0..<5 { #expect(limiter.allow("198.51.100.9", now: now)) }
        #expect(!limiter.allow("198.51.100.9", now: now))
        for index in 0..<100_000 {
            _ = limiter.allow(
                "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)", now: now + .milliseconds(index / 100))
        }
        #expect(limiter.count == 1000)
        #expect(!limiter.allow("198.51.100.9", now: now + .seconds(1)), "still limited after the flood")
    }

    /// A bucket that has refilled is as good as new: its place goes to a new client.
    @Test func refilledBucketsMakeRoomForNewClients() {
        let limiter = RateLimiter(perMinute: 2, capacity: 2)
        let now = ContinuousClock.now
        #expect(limiter.allow("192.0.2.1", now: now) && limiter.allow("192.0.2.2", now: now))
        // The table is full and no bucket has refilled: a new client shares the overflow bucket.
        #expect(limiter.allow("192.0.2.3", now: now) && limiter.allow("192.0.2.4", now: now))
        #expect(!limiter.allow("192.0.2.5", now: now), "the overflow bucket is spent")
        // A minute on, the oldest bucket has refilled and is forgotten: the new client gets its own.
        #expect(
            limiter.allow("192.0.2.6", now: now + .seconds(61)) && limiter.allow("192.0.2.6", now: now + .seconds(61)))
        #expect(limiter.count == 2)
    }
}
