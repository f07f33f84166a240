import Foundation
import Testing

@testable import ObjectStorage

@Suite struct S3ConfigurationTests {
    @Test func environmentVariablesWin() throws {
        let configuration = try S3Configuration(environment: [
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET-VALUE", "AWS_SESSION_TOKEN": "TOKEN-VALUE",
            "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2", "AWS_ENDPOINT_URL": "http://127.0.0.1:8333/",
        ])
        #expect(configuration.credentials.accessKeyID == "AKID")
        #expect(configuration.credentials.sessionToken == "TOKEN-VALUE")
        #expect(configuration.region == "eu-west-1")
        #expect(configuration.endpoint?.description == "http://127.0.0.1:8333")
        #expect(
            try S3Configuration(environment: ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "S"]).region
                == "us-east-1")
        let s3Only = try S3Configuration(environment: [
            "AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "S",
            "AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_S3": "https://b",
        ])
        #expect(s3Only.endpoint?.description == "https://b")
    }

    /// No secret in any description: a configuration or credentials printed in a log show the key ID only.
    @Test func descriptionsHoldNoSecret() throws {
        let configuration = try S3Configuration(environment: [
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET-VALUE", "AWS_SESSION_TOKEN": "TOKEN-VALUE",
        ])
        for text in [
            "\(configuration)", String(reflecting: configuration), "\(configuration.credentials)",
            String(reflecting: configuration.credentials),
        ] {
            #expect(!text.contains("SECRET-VALUE") && !text.contains("TOKEN-VALUE"), "\(text)")
        }
    }

    @Test func profilesFromTheSharedCredentialsFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("passforge-aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials")
        try """
        # comment
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = default-secret

        [ci]
        AWS_ACCESS_KEY_ID=CIKEY
        aws_secret_access_key = ci secret with spaces
        aws_session_token = ci-token
        ; another comment
        """.write(to: file, atomically: true, encoding: .utf8)
        let ci = try S3Configuration(environment: ["AWS_PROFILE": "ci", "AWS_SHARED_CREDENTIALS_FILE": file.path])
        #expect(
            ci.credentials
                == S3Credentials(
                    accessKeyID: "CIKEY", secretAccessKey: "ci secret with spaces", sessionToken: "ci-token"))
        let home = try S3Configuration(environment: ["HOME": folder.path, "AWS_SHARED_CREDENTIALS_FILE": file.path])
        #expect(home.credentials.accessKeyID == "DEFAULTKEY")
        let missing = #expect(throws: ObjectStorageError.self) {
            try S3Configuration(environment: ["AWS_PROFILE": "prod", "AWS_SHARED_CREDENTIALS_FILE": file.path])
        }
        #expect(missing?.description.contains("no [prod] profile") == true)
        let none = #expect(throws: ObjectStorageError.self) {
            try S3Configuration(environment: ["HOME": "/nonexistent"])
        }
        #expect(none?.description.contains("AWS_ACCESS_KEY_ID") == true)
    }

    @Test func endpoints() throws {
        let local = try S3Endpoint(parsing: "http://127.0.0.1:8333")
        #expect(
            !local.isSecure && local.host == "127.0.0.1" && local.port == 8333 && local.hostHeader == "127.0.0.1:8333")
        #expect(
            try S3Endpoint(parsing: "https://acct.r2.cloudflarestorage.com").hostHeader
                == "acct.r2.cloudflarestorage.com")
        #expect(try S3Endpoint(parsing: "https://gw.example/s3/").basePath == "/s3")
        #expect(try S3Endpoint(parsing: "http://[::1]:9000").hostHeader == "[::1]:9000")
        for bad in ["127.0.0.1:8333", "ftp://x", "http://", "http://user:pw@host", "http://h:99999", "http://h?x"] {
            #expect(throws: ObjectStorageError.self, "\(bad)") { try S3Endpoint(parsing: bad) }
        }
    }

    /// Path-style on a custom endpoint; virtual-hosted on AWS, path-style there for a bucket with a dot.
    @Test func addressing() throws {
        let credentials = S3Credentials(accessKeyID: "A", secretAccessKey: "S")
        let local = S3Client(
            configuration: S3Configuration(
                credentials: credentials, endpoint: try S3Endpoint(parsing: "http://127.0.0.1:9")),
            bucket: "passes")
        defer { Task { await local.shutdown() } }
        #expect(
            local.target(key: "v1/passes/pass.x/A+B", query: []).url
                == "http://127.0.0.1:9/passes/v1/passes/pass.x/A%2BB")
        #expect(local.target(key: nil, query: [("delete", "")]).url == "http://127.0.0.1:9/passes?delete")
        let aws = S3Client(
            configuration: S3Configuration(credentials: credentials, region: "eu-west-1"), bucket: "passes")
        defer { Task { await aws.shutdown() } }
        #expect(aws.target(key: "a/b", query: []).url == "https://passes.s3.eu-west-1.amazonaws.com/a/b")
        let dotted = S3Client(configuration: S3Configuration(credentials: credentials), bucket: "my.passes")
        defer { Task { await dotted.shutdown() } }
        #expect(dotted.target(key: "a", query: []).url == "https://s3.us-east-1.amazonaws.com/my.passes/a")
    }

    @Test func deleteObjectsBodyAndContentMD5() {
        #expect(
            S3Client.deleteRequestXML(["a&b", "c"]).contains(
                "<Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object>"))
        // RFC 1864: base64 of the raw digest (MD5("") = d41d8cd98f00b204e9800998ecf8427e).
        #expect(S3Client.md5Base64([]) == "1B2M2Y8AsgTpgAmY7PhCfg==")
    }

    @Test func storeErrorsNameTheObjectAndWhatToDo() {
        let xml =
            "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
            + "<Message>The signature &amp; more</Message></Error>"
        let body = Array(xml.utf8)
        let failure = StoreAnswer(status: 403, body: body).failure("PUT", "s3://b/k")
        #expect(
            failure.description.contains(
                "PUT s3://b/k: the store answered 403 SignatureDoesNotMatch: The signature & more"))
        #expect(failure.description.contains("AWS_SECRET_ACCESS_KEY"))
        #expect(failure.code == "SignatureDoesNotMatch")
        #expect(
            RetryPolicy.isRetryable(status: 503, code: "SlowDown") && RetryPolicy.isRetryable(status: 429, code: nil))
        #expect(
            !RetryPolicy.isRetryable(status: 501, code: "NotImplemented")
                && !RetryPolicy.isRetryable(status: 412, code: nil))
        #expect(!RetryPolicy.isRetryable(status: 403, code: "AccessDenied"))
    }
}
