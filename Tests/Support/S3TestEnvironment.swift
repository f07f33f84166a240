import Foundation
import Testing

/// The throwaway S3-compatible store of scripts/with-seaweedfs.sh, read from
/// its variables. Without them a test that needs the store is skipped with a
/// message (shown as cancelled) on a developer's machine, and fails under
/// CI=true, where the store must be there (make test starts it).
public enum S3TestEnvironment {
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String
    }

    /// The store's endpoint, region, key, secret and private bucket.
    public struct Store: Sendable {
        public var endpoint: String
        public var region: String
        public var accessKeyID: String
        public var secretAccessKey: String
        public var bucket: String

        /// The `AWS_*` variables a `passforge publish` to this store takes.
        public var environment: [String: String] {
            [
                "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKeyID,
                "AWS_SECRET_ACCESS_KEY": secretAccessKey,
            ]
        }

        /// A prefix of its own for one test: tests share the bucket, never a prefix.
        public func freshPrefix(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8).lowercased())" }
    }

    public static func store() throws -> Store {
        let environment = ProcessInfo.processInfo.environment
        guard let endpoint = environment["PASSFORGE_TEST_S3_ENDPOINT"], !endpoint.isEmpty else {
            if environment["CI"] == nil {
                _ = announceSkipping
                try Test.cancel("skipped: PASSFORGE_TEST_S3_ENDPOINT is not set (run under scripts/with-seaweedfs.sh)")
            }
            throw NotConfigured(
                description: """
                    PASSFORGE_TEST_S3_ENDPOINT is not set and CI is: this S3 test cannot run. Run the tests through \
                    scripts/with-seaweedfs.sh (make test does).
                    """)
        }
        func value(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw NotConfigured(description: "\(name) is not set; scripts/with-seaweedfs.sh sets it")
            }
            return value
        }
        return Store(
            endpoint: endpoint, region: environment["PASSFORGE_TEST_S3_REGION"] ?? "us-east-1",
            accessKeyID: try value("PASSFORGE_TEST_S3_ACCESS_KEY_ID"),
            secretAccessKey: try value("PASSFORGE_TEST_S3_SECRET_ACCESS_KEY"),
            bucket: try value("PASSFORGE_TEST_S3_BUCKET"))
    }

    /// Once per run, on standard error: Swift Testing does not print why a case was cancelled.
    private static let announceSkipping: Void = {
        FileHandle.standardError.write(
            Data(
                """
                note: PASSFORGE_TEST_S3_ENDPOINT is not set: the S3 publish tests are skipped (shown as cancelled); \
                run scripts/with-seaweedfs.sh swift test --skip-build --filter ObjectStorage to run them.\n
                """.utf8))
    }()
}
