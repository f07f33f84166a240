import AtomicFiles
import Foundation
import PassBuild
import TestSupport
import Testing
import WalletTree

@testable import PassPublish

/// `build --state-from DEST`'s first step, from a folder; SSHPublishTests does it over ssh.
@Suite struct StateFetchTests {
    @Test func aFreshCloneGetsTheDestinationsState() throws {
        let built = try BuiltProject(passCount: 2)
        let folder = TemporaryDirectory("passforge-dest")
        _ = try Publisher(outputDirectory: built.output, destination: .directory(folder.path)).publish()

        let clone = TemporaryDirectory("passforge-clone")
        let output = clone.file("output")
        let outcome = try PublishDestination.directory(folder.path).fetchState(into: output)
        #expect(outcome == .fetched(lastUpdateTag: try built.state().lastUpdateTag))
        #expect(outcome.destinationHadState)
        #expect(
            clone.read("output/.passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: folder.path)))
        #expect(
            clone.read("output/.passforge/downloads.csv")
                == AtomicFileSystem.readFile("\(folder.path)/.passforge/downloads.csv"))
        #expect(!FileManager.default.fileExists(atPath: "\(output)/.passforge/published-state"))
        #expect(
            FreshBuildGuard.refusal(
                environment: ["CI": "true"], outputDirectory: output, isInitial: false, stateFetch: outcome) == nil)

        // The local state is as new: it is kept.
        #expect(
            try PublishDestination.directory(folder.path).fetchState(into: output)
                == .keptLocal(lastUpdateTag: outcome.lastUpdateTagValue))
        // An older local state is replaced.
        try built.build(count: 2, points: { $0 + 7 })
        _ = try Publisher(outputDirectory: built.output, destination: .directory(folder.path)).publish()
        let newer = try PublishDestination.directory(folder.path).fetchState(into: output)
        #expect(newer == .fetched(lastUpdateTag: try built.state().lastUpdateTag))
        #expect(
            clone.read("output/.passforge/state.json") == AtomicFileSystem.readFile(BuildState.path(in: built.output)))
    }

    @Test func aDestinationWithoutStateIsAFirstDeploy() throws {
        let folder = TemporaryDirectory("passforge-dest")
        let clone = TemporaryDirectory("passforge-clone")
        let output = clone.file("output")
        let outcome = try PublishDestination.directory(folder.path).fetchState(into: output)
        #expect(outcome == .destinationHasNoState && !outcome.destinationHadState)
        #expect(!FileManager.default.fileExists(atPath: BuildState.path(in: output)))
        #expect(
            FreshBuildGuard.refusal(
                environment: ["CI": "true"], outputDirectory: output, isInitial: false, stateFetch: outcome) == nil)
    }

    @Test func aMissingDestinationFolderIsAnErrorNotAFirstDeploy() throws {
        let clone = TemporaryDirectory("passforge-clone")
        let error = #expect(throws: PublishError.self) {
            try PublishDestination.directory(clone.file("no-such-site")).fetchState(into: clone.file("output"))
        }
        #expect(error?.description.contains("does not exist") == true, "\(String(describing: error))")
    }

    @Test func underCIABuildWithoutStateIsRefusedUnlessInitial() throws {
        let clone = TemporaryDirectory("passforge-clone")
        let output = clone.file("output")
        let refusal = try #require(
            FreshBuildGuard.refusal(
                environment: ["CI": "true"], outputDirectory: output, isInitial: false, stateFetch: nil))
        #expect(refusal.contains("this would re-sign every pass with new update tags and push every device"))
        #expect(refusal.contains("--state-from") && refusal.contains("--initial"))
        #expect(
            FreshBuildGuard.refusal(
                environment: ["CI": "true"], outputDirectory: output, isInitial: true, stateFetch: nil) == nil)
        #expect(
            FreshBuildGuard.refusal(environment: [:], outputDirectory: output, isInitial: false, stateFetch: nil) == nil
        )
    }
}

/// Destinations and the paths a publish may touch.
@Suite struct PublishDestinationTests {
    @Test func remoteIffAColonComesBeforeAnySlash() throws {
        #expect(try PublishDestination(parsing: "/srv/passforge/output") == .directory("/srv/passforge/output"))
        #expect(try PublishDestination(parsing: "output") == .directory("output"))
        #expect(try PublishDestination(parsing: "./a:b") == .directory("./a:b"))
        #expect(try PublishDestination(parsing: "a/b:c") == .directory("a/b:c"))
        #expect(try PublishDestination(parsing: "./user@host@evil:/x") == .directory("./user@host@evil:/x"))
        #expect(try PublishDestination(parsing: "host:/srv/site") == .remote(userHost: "host", path: "/srv/site"))
        #expect(
            try PublishDestination(parsing: "deploy@passes.example.com:site")
                == .remote(userHost: "deploy@passes.example.com", path: "site"))
        #expect(
            try PublishDestination(parsing: "deploy_1@10.0.0.7:/srv")
                == .remote(userHost: "deploy_1@10.0.0.7", path: "/srv"))
        #expect(
            try PublishDestination(parsing: "[2001:db8::1]:/srv") == .remote(userHost: "[2001:db8::1]", path: "/srv"))
        #expect(try PublishDestination(parsing: "deploy@host:/srv/site").description == "deploy@host:/srv/site")
    }

    /// Issue 31: `user@host@evil:/x` was taken for a local folder (and under CI=true for a first deploy).
    @Test func whatIsNoneOfTheFormsIsRefusedNamingThem() {
        for bad in [
            "user@host@evil:/x", "@host:x", "a@b@host:x", "-oProxyCommand=x:/y", "user@-host:/x", "us er@host:/x",
            "host;rm:/x", "user@:/x", "user@host name:/x", "[::1:/x", "http://example.com/x", "ftp://h/x", "",
            "/srv/a\nb", "out\u{7}put", "s3://", "s3://ab", "s3://Bucket/x", "s3://-bucket/x", "s3://bucket/a//b",
            "s3://bucket/../x", "s3://bucket/a b", "s3://bucket/./x", "s3://bucket?x=1",
        ] {
            let error = #expect(throws: PublishError.self, "\(bad.debugDescription)") {
                try PublishDestination(parsing: bad)
            }
            #expect(
                error?.description.contains("[user@]host:/path (rsync over ssh), or s3://BUCKET/PREFIX") == true,
                "\(bad.debugDescription)")
        }
    }

    @Test func objectStorageDestinations() throws {
        #expect(try PublishDestination(parsing: "s3://passes") == .objectStorage(bucket: "passes", prefix: ""))
        #expect(try PublishDestination(parsing: "s3://passes/") == .objectStorage(bucket: "passes", prefix: ""))
        #expect(
            try PublishDestination(parsing: "s3://my.passes-2/site/prod/")
                == .objectStorage(bucket: "my.passes-2", prefix: "site/prod"))
        #expect(
            try PublishDestination(parsing: "s3://my.passes-2/site/prod").description == "s3://my.passes-2/site/prod")
    }

    @Test func remoteFoldersWithShellCharactersAreRefused() throws {
        #expect(try RsyncTransport.remoteRoot("~/site", destination: "h:~/site") == "site")
        #expect(try RsyncTransport.remoteRoot("", destination: "h:") == ".")
        #expect(
            try RsyncTransport.remoteRoot("/srv/pass-forge_1.0/out", destination: "h:x") == "/srv/pass-forge_1.0/out")
        for bad in ["/srv/my site", "/srv/$(reboot)", "/srv/a;b", "/srv/'x'", "-rf"] {
            #expect(throws: PublishError.self) { try RsyncTransport.remoteRoot(bad, destination: "h:\(bad)") }
        }
        #expect(RemoteShell.quoted("it's") == #"'it'\''s'"#)
    }

    @Test func onlyBuildOwnedPathsMayBeTouched() {
        let token = String(repeating: "a", count: 43)
        for good in [
            "v1/passes/pass.com.example/BA-1", "by-token/pass.com.example/BA-1.\(token)",
            "by-token/pass.x/A.B~C.\(token)",
            "download/AbCdEfGhIjKlMnOpQrStUv.pkpass", "download/pass.com.example/BA-1.pkpass",
        ] {
            #expect(TreePath.isBuildOwned(good), "\(good)")
        }
        for bad in [
            "v1/devices/d/registrations/pass.x", ".passforge/state.json", "v1/passes/../devices",
            "v1/passes/pass.x/../../x",
            "v1/passes/.x/A", "v1/passes/pass.x/-A", "by-token/pass.x/A.short", "download/../x.pkpass", "download/x",
            "/etc/passwd", "v1/passes/pass.x/A\nB", "download/pass.x/A/B.pkpass", "", "../victims/v1.txt",
            "download/.pkpass",
            "download/pass.x/.pkpass", "download/a.pkpass/", "v1/passes/pass.x/A\u{0}", "v1/passes/pass.x/Ä",
        ] {
            #expect(!TreePath.isBuildOwned(bad), "\(bad.debugDescription)")
        }
    }
}

extension StateFetchOutcome {
    var lastUpdateTagValue: Int64 {
        switch self {
        case .fetched(let tag), .keptLocal(let tag): tag
        case .destinationHasNoState: 0
        }
    }
}
