import Crypto
import Foundation
import Testing

@testable import ObjectStorage

/// AWS's published Signature Version 4 vectors.
///
/// - The general suite ("Signature Version 4 Test Suite", retired from the AWS
///   docs, kept in awslabs/aws-c-auth `tests/aws-signing-test-suite/v4/<name>/`,
///   boto/botocore `tests/unit/auth/aws4_testsuite/` and the npm package
///   `@aws-sdk/signature-v4` `suite.fixture`): key `AKIDEXAMPLE`, secret
///   `wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY`, us-east-1, service `service`,
///   2015-08-30T12:36:00Z, no `x-amz-content-sha256`. Only the cases whose
///   path needs no normalization apply to S3, which signs paths as sent.
/// - The S3 examples of "Signature Calculations for the Authorization Header"
///   (Amazon S3 API Reference, sig-v4-header-based-auth): key
///   `AKIAIOSFODNN7EXAMPLE`, secret `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
///   us-east-1, 2013-05-24T00:00:00Z, virtual-hosted `examplebucket.s3.amazonaws.com`.
@Suite struct SigV4SignerTests {
    static let suiteSigner = SigV4Signer(
        credentials: S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1", service: "service")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let suiteScope = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
    static let empty = SigV4Signer.emptyPayloadHash

    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "GET"
        var path = "/"
        var query: [(name: String, value: String)] = []
        var headers: [(name: String, value: String)] = []
        var signedHeaders: String
        var signature: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(
            name: "get-vanilla", signedHeaders: "host;x-amz-date",
            signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        Vector(
            name: "post-vanilla", method: "POST", signedHeaders: "host;x-amz-date",
            signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
        Vector(
            name: "get-vanilla-query-order-key-case", query: [("Param2", "value2"), ("Param1", "value1")],
            signedHeaders: "host;x-amz-date",
            signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        Vector(
            name: "get-header-value-trim", headers: [("My-Header1", " value1"), ("My-Header2", "\"a   b   c\"")],
            signedHeaders: "host;my-header1;my-header2;x-amz-date",
            signature: "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"),
        Vector(
            name: "get-header-key-duplicate",
            headers: [("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")],
            signedHeaders: "host;my-header1;x-amz-date",
            signature: "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"),
        Vector(
            name: "post-header-value-case", method: "POST", headers: [("My-Header1", "VALUE1")],
            signedHeaders: "host;my-header1;x-amz-date",
            signature: "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"),
        Vector(
            name: "get-unreserved", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            signedHeaders: "host;x-amz-date",
            signature: "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"),
    ]

    @Test(arguments: vectors) func generalSuite(_ vector: Vector) {
        var request = SigV4Signer.Request(
            method: vector.method, encodedPath: S3URIEncoding.encode(vector.path, keepingSlashes: true),
            query: vector.query,
            headers: [(name: "Host", value: "example.amazonaws.com")] + vector.headers, payloadHash: Self.empty)
        Self.suiteSigner.sign(&request, at: Self.suiteDate)
        let authorization = request.headers.last { $0.name == "Authorization" }?.value
        #expect(
            authorization == "\(Self.suiteScope), SignedHeaders=\(vector.signedHeaders), Signature=\(vector.signature)")
        #expect(request.headers.contains { $0.name == "x-amz-date" && $0.value == "20150830T123600Z" })
    }

    /// get-vanilla, every stage: canonical request and string to sign as the suite's files have them.
    @Test func getVanillaStages() {
        var request = SigV4Signer.Request(
            method: "GET", encodedPath: "/",
            headers: [
                (name: "Host", value: "example.amazonaws.com"), (name: "X-Amz-Date", value: "20150830T123600Z"),
            ], payloadHash: Self.empty)
        let canonical = Self.suiteSigner.canonicalRequest(request)
        #expect(
            canonical.text
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(Self.empty)"
        )
        #expect(
            Self.suiteSigner.stringToSign(canonical.text, stamp: AmzDate(Self.suiteDate))
                == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                + "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63")
        request.headers.removeLast()
        Self.suiteSigner.sign(&request, at: Self.suiteDate)
        #expect(
            request.headers.last?.value.hasSuffix("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
                == true)
    }

    /// get-vanilla-with-session-token (aws-c-auth's copy of the suite): the token is sent as
    /// `x-amz-security-token` and signed.
    @Test func sessionToken() {
        let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"
        var signer = Self.suiteSigner
        signer.credentials.sessionToken = token
        var request = SigV4Signer.Request(
            method: "GET", encodedPath: "/", headers: [(name: "Host", value: "example.amazonaws.com")],
            payloadHash: Self.empty)
        signer.sign(&request, at: Self.suiteDate)
        #expect(request.headers.contains { $0.name == "x-amz-security-token" && $0.value == token })
        #expect(
            request.headers.last?.value == "\(Self.suiteScope), SignedHeaders=host;x-amz-date;x-amz-security-token, "
                + "Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8")
    }

    static let s3Signer = SigV4Signer(
        credentials: S3Credentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    /// S3's "Example: GET Object" (a range of test.txt).
    @Test func s3GetObject() {
        var request = SigV4Signer.Request(
            method: "GET", encodedPath: "/test.txt",
            headers: [
                (name: "Host", value: "examplebucket.s3.amazonaws.com"), (name: "Range", value: "bytes=0-9"),
                (name: "x-amz-content-sha256", value: Self.empty),
            ], payloadHash: Self.empty)
        Self.s3Signer.sign(&request, at: Self.s3Date)
        #expect(
            request.headers.last?.value.hasSuffix(
                "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                    + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") == true)
    }

    /// S3's "Example: PUT Object": key `test$file.text`, encoded once to `/test%24file.text`.
    @Test func s3PutObject() {
        let payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
        #expect(hex(Array(SHA256Digest.of("Welcome to Amazon S3."))) == payload)
        var request = SigV4Signer.Request(
            method: "PUT", encodedPath: "/" + S3URIEncoding.encode("test$file.text", keepingSlashes: true),
            headers: [
                (name: "Host", value: "examplebucket.s3.amazonaws.com"),
                (name: "Date", value: "Fri, 24 May 2013 00:00:00 GMT"),
                (name: "x-amz-storage-class", value: "REDUCED_REDUNDANCY"),
                (name: "x-amz-content-sha256", value: payload),
            ], payloadHash: payload)
        #expect(request.encodedPath == "/test%24file.text")
        Self.s3Signer.sign(&request, at: Self.s3Date)
        #expect(
            request.headers.last?.value.hasSuffix(
                "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
                    + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true)
    }

    /// S3's "Example: GET Bucket (List Objects)": `?max-keys=2&prefix=J`.
    @Test func s3ListObjects() {
        var request = SigV4Signer.Request(
            method: "GET", encodedPath: "/", query: [("max-keys", "2"), ("prefix", "J")],
            headers: [
                (name: "Host", value: "examplebucket.s3.amazonaws.com"),
                (name: "x-amz-content-sha256", value: Self.empty),
            ], payloadHash: Self.empty)
        Self.s3Signer.sign(&request, at: Self.s3Date)
        #expect(
            request.headers.last?.value.hasSuffix(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
    }

    /// S3 encodes a key once: `+` as %2B (a literal + reads as a space), a space as %20, `/` kept, `~` literal.
    @Test func keysAreEncodedOnce() {
        #expect(
            S3URIEncoding.encode("by-token/pass.x/A+B C~D.tok", keepingSlashes: true)
                == "by-token/pass.x/A%2BB%20C~D.tok")
        #expect(S3URIEncoding.encode("a/b%2F", keepingSlashes: false) == "a%2Fb%252F")
        #expect(S3URIEncoding.encode("ሴ", keepingSlashes: true) == "%E1%88%B4")
    }
}

private enum SHA256Digest {
    static func of(_ text: String) -> [UInt8] {
        Array(Crypto.SHA256.hash(data: Array(text.utf8)))
    }
}
