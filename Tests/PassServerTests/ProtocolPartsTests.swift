import Foundation
import Hummingbird
import PassModel
import PassServer
import Testing

@Suite struct HTTPDateTests {
    // RFC 9110 §5.6.7's example, in its three forms.
    static let seconds: Int64 = 784_111_777

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(Self.seconds) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func parsesAllThreeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.seconds)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: 1_700_000_000) == Self.seconds)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.seconds)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Self.seconds + 10 * 86_400)
    }

    @Test func rfc850YearsMoreThanFiftyYearsAheadAreInThePast() {
        // In 2023, "-30" is 2030 and "-94" is 1994.
        let now: Int64 = 1_700_000_000
        #expect(
            HTTPDate.parse("Monday, 01-Jan-30 00:00:00 GMT", now: now).map(HTTPDate.format)
                == "Tue, 01 Jan 2030 00:00:00 GMT")
        #expect(
            HTTPDate.parse("Monday, 01-Jan-94 00:00:00 GMT", now: now).map(HTTPDate.format)
                == "Sat, 01 Jan 1994 00:00:00 GMT")
    }

    @Test func rejectsAnythingElse() {
        for bad in [
            "", "784111777", "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Funday, 06-Nov-94 08:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func roundTripsManyDates() {
        for seconds in stride(from: Int64(0), to: 4_102_444_800, by: 86_400 * 37 + 3_607) {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
    }
}

@Suite struct ConditionalRequestTests {
    let etag = "\"0123456789abcdef0123456789abcdef\""
    let modified: Int64 = 1_000_000

    @Test func ifNoneMatchUsesWeakComparisonListsAndStar() {
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: [etag], ifModifiedSince: nil, etag: etag, lastModified: modified))
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: ["W/" + etag], ifModifiedSince: nil, etag: etag, lastModified: modified))
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: ["\"other\", W/\"x,y\" , " + etag], ifModifiedSince: nil, etag: etag,
                lastModified: modified))
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: ["\"other\"", etag], ifModifiedSince: nil, etag: etag, lastModified: modified))
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: ["*"], ifModifiedSince: nil, etag: etag, lastModified: modified))
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: ["\"other\""], ifModifiedSince: nil, etag: etag, lastModified: modified))
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: ["0123456789abcdef0123456789abcdef"], ifModifiedSince: nil, etag: etag,
                lastModified: modified))
    }

    @Test func ifNoneMatchWinsOverIfModifiedSince() {
        let later = HTTPDate.format(modified + 100)
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: ["\"other\""], ifModifiedSince: later, etag: etag, lastModified: modified))
    }

    @Test func ifModifiedSinceComparesSeconds() {
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: [], ifModifiedSince: HTTPDate.format(modified), etag: etag, lastModified: modified))
        #expect(
            ConditionalRequest.isNotModified(
                ifNoneMatch: [], ifModifiedSince: HTTPDate.format(modified + 1), etag: etag, lastModified: modified))
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: [], ifModifiedSince: HTTPDate.format(modified - 1), etag: etag, lastModified: modified))
        // RFC 9110: an invalid date is ignored — and a number is not a date.
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: [], ifModifiedSince: "\(modified)", etag: etag, lastModified: modified))
        #expect(
            !ConditionalRequest.isNotModified(
                ifNoneMatch: [], ifModifiedSince: "garbage", etag: etag, lastModified: modified))
    }
}

@Suite struct PathRulesTests {
    @Test func deviceIdentifiers() {
        #expect(PathRules.isDeviceLibraryIdentifier("a1b2c3d4e5f6"))
        #expect(PathRules.isDeviceLibraryIdentifier(String(repeating: "a", count: 64)))
        for bad in ["", String(repeating: "a", count: 65), "a-b", "a.b", "..", "a%2Fb", "a\u{0}b", "ä"] {
            #expect(!PathRules.isDeviceLibraryIdentifier(bad), "\(bad)")
        }
    }

    @Test func passTypeIdentifiers() {
        #expect(PathRules.isPassTypeIdentifier("pass.com.example.test"))
        #expect(PathRules.isPassTypeIdentifier("pass.com.ex-ample.t1"))
        for bad in ["", ".pass", "pass..com", "pass/com", "pass%2Ecom", "-pass", String(repeating: "a", count: 256)] {
            #expect(!PathRules.isPassTypeIdentifier(bad), "\(bad)")
        }
    }

    @Test func serialNumbersFollowTheDesign() {
        for good in ["C-0001", "a", "A.b_c~d-e", "A..B", String(repeating: "9", count: 128)] {
            #expect(PathRules.isSerialNumber(good), "\(good)")
        }
        for bad in [
            "", ".", "..", ".hidden", "-x", "a/b", "a%2Fb", "a b", "a\u{0}", String(repeating: "9", count: 129),
        ] {
            #expect(!PathRules.isSerialNumber(bad), "\(bad)")
        }
    }

    @Test func pushTokens() {
        #expect(PathRules.isPushToken(String(repeating: "0f", count: 32)))
        #expect(PathRules.isPushToken(String(repeating: "AB", count: 100)))
        for bad in [
            "", "abc", String(repeating: "0f", count: 15), String(repeating: "0g", count: 32),
            String(repeating: "a", count: 65),
            String(repeating: "ab", count: 201),
        ] {
            #expect(!PathRules.isPushToken(bad), "\(bad)")
        }
    }
}

/// The routes themselves are tested through the router, in process (`RouteStatusTests`).
@Suite struct RouteTests {
    @Test func basePath() {
        #expect(Route.normalizeBasePath("passes/") == "/passes")
        #expect(Route.normalizeBasePath("/") == "")
        #expect(Route.normalizeBasePath(nil) == "")
        #expect(Route.normalizeBasePath("//a//b/") == "/a/b")
    }

    @Test func everyRouteHasItsOwnTemplate() {
        #expect(Set(Route.all.map(\.template)).count == Route.all.count)
        #expect(Route.all.allSatisfy { !$0.allowedMethods.isEmpty && $0.template.hasPrefix("/") })
    }
}

@Suite struct PassAuthenticationTests {
    @Test func parsesTheApplePassAndAppleOrderSchemes() {
        #expect(
            PassAuthentication.credentials(fromAuthorization: "ApplePass abcdefghijklmnop").map {
                "\($0.scheme) \($0.token)"
            } == "pass abcdefghijklmnop")
        #expect(
            PassAuthentication.credentials(fromAuthorization: "ApplePass   abcdefghijklmnop ")?.token
                == "abcdefghijklmnop")
        #expect(
            PassAuthentication.credentials(fromAuthorization: "AppleOrder abcdefghijklmnop").map {
                "\($0.scheme) \($0.token)"
            } == "order abcdefghijklmnop")
        // The scheme exactly as Apple spells it, as the shipped nginx and Caddy configs match it (issue 31).
        for bad in [
            nil, "", "ApplePass", "ApplePass ", "ApplePassabc", "Bearer abcdefghijklmnop", "ApplePass a b",
            "applepass abcdefghijklmnop", "APPLEPASS abcdefghijklmnop", "applePass abcdefghijklmnop",
            "appleorder abcdefghijklmnop", "APPLEORDER abcdefghijklmnop", "Appleorder abcdefghijklmnop",
            "ApplePass " + String(repeating: "x", count: 513), "AppleOrder", "AppleOrderabc",
            "AppleOrders abcdefghijklmnop",
            "AppleOrder a b", "ApplePassOrder abcdefghijklmnop",
        ] as [String?] {
            #expect(PassAuthentication.credentials(fromAuthorization: bad) == nil, "\(bad ?? "nil")")
        }
    }

    @Test func verifiesAgainstTheStoredDigest() throws {
        let digest = PassAuthentication.digest(of: "secret-token-1234")
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        #expect(PassAuthentication.digest(fromHex: hex) == digest)
        #expect(PassAuthentication.verify("secret-token-1234", expected: digest))
        #expect(!PassAuthentication.verify("secret-token-1235", expected: digest))
        #expect(!PassAuthentication.verify("secret-token-1234", expected: nil))
    }
}

@Suite struct LogRedactionTests {
    @Test func deviceMessagesBecomeOneBoundedLineWithoutTokens() {
        #expect(LogRedaction.message("line1\nline2\r\u{1B}[31mred\u{2028}x", limit: 100) == "line1 line2  [31mred x")
        #expect(
            LogRedaction.message(String(repeating: "a", count: 50), limit: 10) == String(repeating: "a", count: 10)
                + "…")
        #expect(
            LogRedaction.message("GET failed with Authorization: ApplePass s3cr3t-t0ken", limit: 200)
                == "GET failed with Authorization: ApplePass [redacted]")
        #expect(
            LogRedaction.message("order fetch: Authorization: AppleOrder s3cr3t-t0ken", limit: 200)
                == "order fetch: Authorization: AppleOrder [redacted]")
    }

    @Test func pathsShowOnlyThePrefixOfTheDeviceIdentifier() {
        #expect(
            LogRedaction.path("/v1/devices/0123456789abcdef/registrations/pass.a/S")
                == "/v1/devices/012345…/registrations/pass.a/S")
    }
}

@Suite struct RateLimiterTests {
    @Test func allowsABurstThenTheRate() {
        let limiter = RateLimiter(ratePerSecond: 5)
        let start = ContinuousClock.now
        let burst = (0..<10).map { _ in limiter.allow("1.2.3.4", now: start) }
        #expect(burst.filter { $0 }.count == 5)
        #expect(limiter.allow("5.6.7.8", now: start))
        #expect(limiter.allow("1.2.3.4", now: start + .milliseconds(200)))
        #expect(!limiter.allow("1.2.3.4", now: start + .milliseconds(200)))
    }
}
