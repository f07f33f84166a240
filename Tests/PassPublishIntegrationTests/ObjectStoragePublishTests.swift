import AtomicFiles
import ConcurrencySupport
import Foundation
import ObjectStorage
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// A prefix of the test bucket on scripts/with-seaweedfs.sh's store, and what the tests check there.
final class BucketTree: Sendable {
    let store: S3TestEnvironment.Store
    let prefix: String
    let client: S3Client
    let bridge = BlockingBridge(pool: BlockingPool(threadCount: 2))

    init(_ name: String) throws {
        store = try S3TestEnvironment.store()
        prefix = store.freshPrefix(name)
        client = S3Client(configuration: try S3Configuration(environment: store.environment), bucket: store.bucket)
    }

    var destination: String { "s3://\(store.bucket)/\(prefix)" }
    /// This process's environment with the store's `AWS_*` variables, for an in-process publish.
    var environment: [String: String] { ProcessInfo.processInfo.environment.merging(store.environment) { $1 } }

    func key(_ path: String) -> String { "\(prefix)/\(path)" }

    func close() {
        let client = client
        _ = try? bridge.run { await client.shutdown() }
    }

    func object(_ path: String) throws -> S3Client.Object? {
        let (client, key) = (client, key(path))
        return try bridge.run { try await client.get(key) }
    }

    func put(_ path: String, _ bytes: [UInt8]) throws {
        let (client, key) = (client, key(path))
        _ = try bridge.run { try await client.put(key, body: bytes, contentType: "application/octet-stream") }
    }

    func delete(_ path: String) throws {
        let (client, key) = (client, key(path))
        try bridge.run { try await client.delete(key) }
    }

    func state() throws -> BuildState {
        let bytes = try #require(try object(TreeLayout.statePath)?.body, "no state at \(destination)")
        return try BuildState.decode(bytes, of: destination)
    }

    /// Every name of the pass is an object with the local bytes, its media type and `Cache-Control: no-cache`.
    func expectSame(
        as output: String, record: BuildState.ItemRecord, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let local = AtomicFileSystem.readFile("\(output)/\(record.path)")
        for path in PassFiles(record).allPaths {
            let object = try self.object(path)
            #expect(
                object.map { digest($0.body) } == local.map(digest), "\(path) differs from the local file",
                sourceLocation: sourceLocation)
            #expect(object?.contentType == "application/vnd.apple.pkpass", "\(path)", sourceLocation: sourceLocation)
            #expect(object?.cacheControl == "no-cache", "\(path)", sourceLocation: sourceLocation)
        }
    }

    /// What a CDN reading the bucket relies on: every pass the bucket's state
    /// lists is there, whole, under every name. Whole means the bytes of the
    /// listed version, or of `newer`'s (objects land before the state).
    func expectConsistent(newer: BuildState? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for record in try state().passes.values {
            let etags = [record.etag, newer?.passes[record.key]?.etag].compactMap { $0 }
            for path in PassFiles(record).allPaths {
                let body = try #require(try object(path)?.body, "\(path) is missing", sourceLocation: sourceLocation)
                #expect(
                    etags.contains(BuildState.etag(of: body)), "\(path) is not whole", sourceLocation: sourceLocation)
            }
        }
    }
}

/// A short stand-in for bytes in a failed expectation (a pass would print as thousands of numbers).
func digest(_ bytes: [UInt8]) -> String { BuildState.etag(of: bytes) }

/// `passforge publish s3://…` against a real S3-compatible store (SeaweedFS, started by
/// scripts/with-seaweedfs.sh); skipped with a message when it is not running and CI is not set.
@Suite struct ObjectStoragePublishTests {
    @Test func everyNameLandsWithItsMediaTypeAndCacheControl() throws {
        let bucket = try BucketTree("first")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 3)
        built.writeFamily(count: 2)
        try built.build()
        let result = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.contains("sent ") && result.stdout.contains("published 5 passes"), "\(result.output)")
        #expect(!result.output.contains(bucket.store.secretAccessKey))
        for record in try built.state().passes.values { try bucket.expectSame(as: built.output, record: record) }
        for bundle in try built.bundles().bundles.values {
            let object = try #require(try bucket.object(bundle.downloadPath))
            #expect(
                digest(object.body) == AtomicFileSystem.readFile("\(built.output)/\(bundle.downloadPath)").map(digest))
            #expect(object.contentType == "application/vnd.apple.pkpasses" && object.cacheControl == "no-cache")
        }
        for name in TreeLayout.publishedStateFiles {
            #expect(
                try bucket.object(name).map { digest($0.body) }
                    == AtomicFileSystem.readFile("\(built.output)/\(name)").map(digest),
                "\(name)")
        }
        #expect(try bucket.object(TreeLayout.statePath)?.contentType == "application/json")
        #expect(try bucket.object(ObjectStorageLock.path) == nil, "the lock is released")
        // Published again: nothing to send.
        let again = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(again.status == 0 && again.stdout.contains("nothing to publish"), "\(again.output)")
    }

    @Test func aChangedPassSendsOnlyItsObjectsAndTheState() throws {
        let bucket = try BucketTree("change")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 3)
        _ = try Publisher(
            outputDirectory: built.output,
            destination: .objectStorage(bucket: bucket.store.bucket, prefix: bucket.prefix),
            environment: bucket.environment
        ).publish()
        // A sentinel in an unchanged pass's object: a publish that sent it again would overwrite it.
        let unchanged = try built.record("C-0001")
        try bucket.put(unchanged.path, Array("sentinel".utf8))

        try built.build(count: 3, points: { $0 == 0 ? 500 : $0 })
        let changed = try built.record("C-0000")
        let publisher = try Publisher(
            outputDirectory: built.output,
            destination: .objectStorage(bucket: bucket.store.bucket, prefix: bucket.prefix),
            environment: bucket.environment)
        let plan = try publisher.publish(dryRun: true)
        // Its landing page after it: the page shows the changed pass, its logo did not change.
        #expect(
            plan.plannedUploads == PassFiles(changed).allPaths + [
                try #require(try built.landingPage("C-0000").pagePath)
            ])
        let summary = try publisher.publish()
        #expect(summary.passesSent == 1 && summary.filesSent == PassFiles(changed).allPaths.count && summary.stateSent)
        try bucket.expectSame(as: built.output, record: changed)
        #expect(try bucket.object(unchanged.path)?.body == Array("sentinel".utf8), "an unchanged pass was sent again")
        #expect(
            try bucket.object(TreeLayout.statePath).map { digest($0.body) }
                == AtomicFileSystem.readFile(BuildState.path(in: built.output)).map(digest))
    }

    @Test func aRemovedPassIsDeletedAfterTheState() throws {
        let bucket = try BucketTree("remove")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 3)
        let published = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(published.status == 0, "\(published.output)")
        let removed = try built.record("C-0002")
        try built.build(count: 2)

        try killPublish(
            built, to: bucket.destination, at: "removing", environment: bucket.store.environment, bucket: bucket)
        // Killed between the state and the deletions: the new state is there, the removed pass's objects too.
        #expect(
            try bucket.object(TreeLayout.statePath).map { digest($0.body) }
                == AtomicFileSystem.readFile(BuildState.path(in: built.output)).map(digest))
        for path in PassFiles(removed).allPaths { #expect(try bucket.object(path) != nil, "\(path)") }

        let result = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(result.status == 0, "\(result.output)")
        for path in PassFiles(removed).allPaths { #expect(try bucket.object(path) == nil, "\(path) is still there") }
        #expect(try bucket.object(ObjectStorageTransport.removalsNotePath) == nil)
        try bucket.expectConsistent()
    }

    @Test func aFreshCloneBuildsFromTheBucketsState() throws {
        let bucket = try BucketTree("clone")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 2)
        let published = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(published.status == 0, "\(published.output)")
        let publishedState = try built.state()
        try FileManager.default.removeItem(atPath: built.output)

        var environment = built.environment.merging(bucket.store.environment) { $1 }
        environment["CI"] = "true"
        let result = try built.project.passforge(
            ["build", "--state-from", bucket.destination], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stderr.contains("starting from the build published at \(bucket.destination)"), "\(result.stderr)")
        #expect(try built.state().lastUpdateTag == publishedState.lastUpdateTag, "no pass was signed again")

        let empty = try BucketTree("empty")
        defer { empty.close() }
        let first = try built.project.passforge(["build", "--state-from", empty.destination], environment: environment)
        #expect(first.status == 0 && first.stderr.contains("has no build yet"), "\(first.output)")
    }

    @Test func aSecondPublishIsRefusedWhileTheFirstHoldsTheLock() throws {
        let bucket = try BucketTree("lock")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 2)
        // The second publish comes from another machine's copy of the build (the first holds this output's build lock).
        let copy = TemporaryDirectory("passforge-copy")
        try FileManager.default.copyItem(atPath: built.output, toPath: copy.file("output"))
        try killPublish(
            built, to: bucket.destination, at: "items-uploaded", environment: bucket.store.environment, bucket: bucket
        ) {
            let second = try built.project.passforge(
                ["publish", "--output", copy.file("output"), bucket.destination],
                environment: built.environment.merging(bucket.store.environment) { $1 })
            #expect(second.status != 0, "\(second.output)")
            #expect(
                second.stderr.contains("another passforge publish to \(bucket.destination) is running"),
                "\(second.stderr)")
        }
        // The first was killed with the lock held: its process is gone, so the next publish takes the lock over.
        let next = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(next.status == 0, "\(next.output)")
        #expect(
            next.stderr.contains("taking over the publish lock") && next.stderr.contains("no longer running"),
            "\(next.stderr)")
        try bucket.expectConsistent()
    }

    @Test func aPublishKilledMidwayLeavesEveryObjectWholeAndTheNextCompletesIt() throws {
        let bucket = try BucketTree("kill")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 4)
        let published = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(published.status == 0, "\(published.output)")
        let before = try built.state()
        try built.build(count: 4, points: { $0 + 7 })
        let after = try built.state()

        for point in ["items-uploaded", "uploaded"] {
            try killPublish(
                built, to: bucket.destination, at: point, environment: bucket.store.environment, bucket: bucket)
            #expect(try bucket.state().lastUpdateTag == before.lastUpdateTag, "the state goes last")
            try bucket.expectConsistent(newer: after)
        }
        let result = try built.publishCommand(bucket.destination, environment: bucket.store.environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(try bucket.state().lastUpdateTag == after.lastUpdateTag)
        for record in after.passes.values { try bucket.expectSame(as: built.output, record: record) }
    }

    @Test func missingCredentialsAndAWrongSecretAreExplainedWithoutTheSecret() throws {
        let bucket = try BucketTree("refused")
        defer { bucket.close() }
        let built = try BuiltProject(passCount: 1)
        var wrong = bucket.store.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789"
        let refused = try built.publishCommand(bucket.destination, environment: wrong)
        #expect(refused.status != 0 && refused.stderr.contains("SignatureDoesNotMatch"), "\(refused.output)")
        #expect(
            !refused.output.contains("not-the-secret-0123456789")
                && !refused.output.contains(bucket.store.secretAccessKey))
        let none = try built.publishCommand(
            bucket.destination,
            environment: [
                "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "", "HOME": built.project.root,
            ])
        #expect(none.status != 0 && none.stderr.contains("no credentials"), "\(none.output)")
    }
}

/// The S3 client's calls against the real store.
@Suite struct S3ClientStoreTests {
    @Test func objectsRoundTripWithTheirHeadersAndConditions() async throws {
        let bucket = try BucketTree("client")
        let client = bucket.client
        defer { bucket.close() }
        for name in ["plain", "a+b c~d", "ü/ß", "x=;,@"] {
            let key = bucket.key(name)
            let stored = try await client.put(
                key, body: Array(name.utf8), contentType: "application/vnd.apple.pkpass",
                cacheControl: "no-cache")
            guard case .stored(let etag?) = stored else {
                Issue.record("\(name): \(stored)")
                continue
            }
            let object = try #require(try await client.get(key))
            #expect(object.body == Array(name.utf8) && object.etag == etag, "\(name)")
            #expect(
                object.contentType == "application/vnd.apple.pkpass" && object.cacheControl == "no-cache", "\(name)")
            #expect(try await client.head(key)?.etag == etag)
        }
        let lock = bucket.key("lock")
        #expect(
            try await client.put(lock, body: [1], contentType: "application/json", condition: .absent)
                != .conditionFailed)
        #expect(
            try await client.put(lock, body: [2], contentType: "application/json", condition: .absent)
                == .conditionFailed)
        #expect(try await client.get(lock)?.body == [1])
        try await client.delete(lock)
        #expect(try await client.get(lock) == nil)
        #expect(try await client.head(lock) == nil)
        try await client.delete(lock)  // a missing object: no error
    }

    /// DeleteObjects takes 1,000 keys a request: 1,003 keys take two.
    @Test func deleteObjectsInChunks() async throws {
        let bucket = try BucketTree("delete")
        let client = bucket.client
        defer { bucket.close() }
        let keys = (0..<1003).map { bucket.key("k/\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for slice in stride(from: 0, to: keys.count, by: 100) {
                group.addTask {
                    for key in keys[slice..<min(slice + 100, keys.count)] {
                        _ = try await client.put(key, body: [0], contentType: "application/octet-stream")
                    }
                }
            }
            try await group.waitForAll()
        }
        try await client.deleteObjects(keys + [bucket.key("never-there")])
        for key in [keys[0], keys[999], keys[1000], keys[1002]] { #expect(try await client.head(key) == nil, "\(key)") }
    }

    @Test func aWrongSecretIsRefusedAndTheErrorHoldsNoSecret() async throws {
        let store = try S3TestEnvironment.store()
        var environment = store.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-abcdef"
        let client = S3Client(configuration: try S3Configuration(environment: environment), bucket: store.bucket)
        let error = await #expect(throws: ObjectStorageError.self) { try await client.get("anything") }
        await client.shutdown()
        #expect(error?.code == "SignatureDoesNotMatch", "\(String(describing: error))")
        #expect(
            error?.description.contains("wrong-secret") == false
                && error?.description.contains(store.secretAccessKey) == false)
    }
}
