import Foundation
import MockAPNs
import PassBuild
import PassPublish
import TestSupport
import Testing
import WalletTree

/// The static deployment of issue 10, end to end with real processes: an
/// editor commits to a bare git origin; each CI run is a fresh clone with no
/// `output/` that runs the real `passforge build --state-from DEST` and
/// `passforge publish DEST` (CI=true, real signing material, a fixed token
/// secret); the host is DEST served by nginx with the shipped config, and
/// `passforge serve --output DEST --push` against the mock APNs. A device
/// registers through nginx and fetches its passes from nginx alone. The same
/// flow runs with DEST a folder, and over ssh to a local sshd.
@Suite(.serialized) struct StaticDeploymentEndToEndTests {
    /// Pass A changes, then is removed; pass B changes during a killed publish.
    static let passA = "C-0004", passB = "C-0001"
    static let unchangedByA = ["C-0000", "C-0001", "C-0002", "C-0003"]
    static let device = "5e7a1c0ffee0d15c"
    static let pushToken = String(repeating: "d7", count: 32)

    @Test(arguments: StaticDeployment.Transport.allCases)
    func ciPublishesEachCommitFromAFreshCloneAndTheHostFollows(transport: StaticDeployment.Transport) async throws {
        let deployment = try await StaticDeployment(transport, passCount: 5)
        defer { deployment.stop() }
        let tokens = try await firstDeployAndRegistration(deployment)
        try await aCommitChangingOnePassSignsSendsAndPushesOnlyIt(deployment, tokens: tokens)
        try await aCommitRemovingAPassTakesItOutOfTheIndex(deployment, tokens: tokens)
        try await aRunWithNoStateUnderCIChangesNothing(deployment)
        try await aKilledPublishLeavesThePreviousBuildAndTheNextCompletesIt(deployment, tokens: tokens)
        // The server at DEST read every published build whole, and is still up.
        #expect(deployment.serve.process.isRunning, "\(deployment.serve.output)")
        for failure in ["cannot read the new build state", "cannot load the build state", "could not be refreshed"] {
            #expect(!deployment.serve.output.contains(failure), "\(deployment.serve.output)")
        }
    }

    // MARK: Run 1: the first deploy

    /// Run 1 publishes every pass; the host takes the build by itself; a
    /// device registers for A and B through nginx. Returns the passes' tokens.
    private func firstDeployAndRegistration(_ d: StaticDeployment) async throws -> [String: String] {
        let run = try await d.repository.freshClone("ci-run-1")
        #expect(!FileManager.default.fileExists(atPath: run.output), "a fresh clone has no output/")
        // A folder: --initial, as the issue's first run. Over ssh: --state-from on an empty DEST, the reference workflow's first deploy.
        let arguments = d.transport == .directory ? ["build", "--initial"] : ["build", "--state-from", d.destination]
        let build = try await run.passforge(arguments, environment: d.ci)
        try #require(build.status == 0, "\(build.output)")
        #expect(build.stdout.contains("built 5, unchanged 0, removed 0"), "\(build.output)")
        if d.transport == .ssh { #expect(build.stderr.contains("has no build yet: a first deploy"), "\(build.output)") }

        let publish = try await run.passforge(["publish", d.destination], environment: d.ci)
        try #require(publish.status == 0, "\(publish.output)")
        #expect(publish.stdout.contains("published 5 passes (15 files"), "\(publish.output)")
        let state = try d.publishedState()
        #expect(d.published(".passforge/state.json") == run.localStateBytes)
        #expect(state.passes.count == 5)

        // The server at DEST noticed the build: index bookkeeping, and a first push run (nobody holds a pass yet).
        let noticed = try await eventually(timeout: 60) {
            try await d.sql("SELECT update_tag FROM push_cursor") == String(state.lastUpdateTag)
                && d.indexedTag == String(state.lastUpdateTag)
        }
        try #require(noticed, "passforge serve did not take run 1: \(d.serve.output)")
        #expect(d.mock.requests.isEmpty)

        var tokens: [String: String] = [:]
        for serial in state.passes.values.map(\.identifier) { tokens[serial] = try await d.token(serial) }
        for serial in [Self.passA, Self.passB] {
            let registered = try await d.client.register(
                Self.device, d.type, serial, token: tokens[serial]!, pushToken: Self.pushToken)
            #expect(
                registered.status == 201, "register \(serial) through nginx: \(registered.status) \(registered.text)")
        }
        let index = try await d.client.serials(Self.device, d.type)
        #expect(index.status == 200)
        #expect(Set(index.json?["serialNumbers"] as? [String] ?? []) == [Self.passA, Self.passB])
        return tokens
    }

    // MARK: Run 2: one pass changes

    private func aCommitChangingOnePassSignsSendsAndPushesOnlyIt(_ d: StaticDeployment, tokens: [String: String])
        async throws
    {
        let before = try d.publishedState()
        let others = try await HostView(d, serials: Self.unchangedByA, tokens: tokens)
        let oldA = try await d.client.pass(d.type, Self.passA, token: tokens[Self.passA]!)
        #expect(oldA.status == 200)
        let baseline = d.mock.requests.count

        d.repository.editor.writeList(count: 5, points: { $0 == 4 ? 1000 : $0 })
        try await d.repository.commit("More points for \(Self.passA)")
        let (run, build) = try await d.ciBuildFromPublishedState("ci-run-2")
        #expect(build.stderr.contains("starting from the build published at"), "\(build.output)")
        #expect(build.stdout.contains("built 1, unchanged 4, removed 0"), "\(build.output)")
        // Only A was signed: its record alone changed, and it alone is in this clone's output.
        let local = try run.localState()
        let keyA = "\(d.type)/\(Self.passA)"
        #expect(local.passes.filter { $0.key != keyA } == before.passes.filter { $0.key != keyA })
        #expect(local.passes[keyA]?.updateTag != before.passes[keyA]?.updateTag)
        #expect(local.passes[keyA]?.etag != before.passes[keyA]?.etag)
        #expect(local.passes[keyA]?.tokenPath == before.passes[keyA]?.tokenPath, "the token is the same")
        let signed = (try? FileManager.default.contentsOfDirectory(atPath: "\(run.output)/v1/passes/\(d.type)")) ?? []
        #expect(signed == [Self.passA])

        let publish = try await run.passforge(["publish", d.destination], environment: d.ci)
        try #require(publish.status == 0, "\(publish.output)")
        #expect(publish.stdout.contains("published 1 pass (3 files"), "\(publish.output)")
        #expect(publish.stdout.contains("removed 0"), "\(publish.output)")
        #expect(d.published(".passforge/state.json") == run.localStateBytes)

        // Exactly one push for the device (it holds A and B of one pass type), within a few seconds.
        let pushed = try await eventually(timeout: 60) { !d.pushes(after: baseline).isEmpty }
        #expect(pushed, "no push within 15 s: \(d.serve.output)")
        // A second push is an absence, which has no event to await: this window, four of the watcher's
        // 250 ms looks, is what the test measures.
        try await Task.sleep(for: .milliseconds(1000))
        let pushes = d.pushes(after: baseline)
        #expect(pushes.count == 1)
        #expect(pushes.first?.token == Self.pushToken)
        #expect(pushes.first?.outcome == .answered(status: 200))
        #expect(pushes.first.flatMap { push in push.headers.first { $0.name == "apns-topic" }?.value } == d.type)

        // The device fetches A from nginx alone: the new bytes, then 304 by ETag and by date.
        let newA = try #require(run.localFile(d.passPath(Self.passA)))
        let fetched = try await d.client.pass(d.type, Self.passA, token: tokens[Self.passA]!)
        #expect(fetched.status == 200)
        #expect(fetched.body == newA)
        #expect(fetched.header("Content-Type") == "application/vnd.apple.pkpass")
        let etag = try #require(fetched.header("ETag"))
        let lastModified = try #require(fetched.header("Last-Modified"))
        #expect(etag != oldA.header("ETag"))
        #expect(lastModified != oldA.header("Last-Modified"))
        let withOldETag = try await d.client.pass(
            d.type, Self.passA, token: tokens[Self.passA]!, headers: ["If-None-Match": oldA.header("ETag") ?? ""])
        #expect(withOldETag.status == 200, "a device holding the old A gets the new one")
        let byETag = try await d.client.pass(
            d.type, Self.passA, token: tokens[Self.passA]!, headers: ["If-None-Match": etag])
        #expect(byETag.status == 304)
        #expect(byETag.body.isEmpty)
        let byDate = try await d.client.pass(
            d.type, Self.passA, token: tokens[Self.passA]!, headers: ["If-Modified-Since": lastModified])
        #expect(byDate.status == 304)
        // The index the device reads next says A's new tag (the server rewrote it for the published build).
        let tagA = String(local.passes[keyA]!.updateTag)
        let indexed = try await eventually(timeout: 60) {
            try await d.client.serials(Self.device, d.type).json?["lastUpdated"] as? String == tagA
        }
        #expect(indexed, "the device's index does not show A's new tag \(tagA)")

        // Every other pass: the same ETag and Last-Modified through nginx, the same bytes, inode and mtime at DEST.
        try await others.expectUnchanged(d)
    }

    // MARK: Run 3: one pass removed

    private func aCommitRemovingAPassTakesItOutOfTheIndex(_ d: StaticDeployment, tokens: [String: String]) async throws
    {
        let remaining = Self.unchangedByA
        let others = try await HostView(d, serials: remaining, tokens: tokens)
        let recordA = try #require(try d.publishedState().passes["\(d.type)/\(Self.passA)"])
        for file in recordA.files { #expect(d.published(file) != nil, "\(file) is published") }
        let baseline = d.mock.requests.count

        d.repository.editor.writeList(count: 4)
        try await d.repository.commit("\(Self.passA) is gone")
        let (run, build) = try await d.ciBuildFromPublishedState("ci-run-3")
        #expect(build.stdout.contains("built 0, unchanged 4, removed 1"), "\(build.output)")
        let publish = try await run.passforge(["publish", d.destination], environment: d.ci)
        try #require(publish.status == 0, "\(publish.output)")
        #expect(publish.stdout.contains("published 0 passes (0 files, 0 bytes), removed 1"), "\(publish.output)")

        // The device's index (through nginx) no longer lists A; A answers 401, its files are gone from DEST.
        let dropped = try await eventually(timeout: 60) {
            let index = try await d.client.serials(Self.device, d.type)
            return index.status == 204 || index.json?["serialNumbers"] as? [String] == [Self.passB]
        }
        #expect(
            dropped,
            "the device's index still lists \(Self.passA): \(d.published(TreeLayout.deviceIndexPath(device: Self.device, type: d.type)).map { String(decoding: $0, as: UTF8.self) } ?? "none")"
        )
        let gone = try await d.client.pass(d.type, Self.passA, token: tokens[Self.passA]!)
        #expect(gone.status == 401)
        for file in recordA.files { #expect(d.published(file) == nil, "\(file) was removed from DEST") }
        #expect(try d.publishedState().removedPasses["\(d.type)/\(Self.passA)"] != nil)

        // At most one push for the device that held A (a removal gives it nothing to fetch), never more.
        // An absence has no event to await: this window (six of the watcher's 250 ms looks) is what the test measures.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(d.pushes(after: baseline).count <= 1, "pushes for a removed pass: \(d.pushes(after: baseline).count)")
        try await others.expectUnchanged(d)
    }

    // MARK: A CI run with no state

    private func aRunWithNoStateUnderCIChangesNothing(_ d: StaticDeployment) async throws {
        let before = PublishedFile.tree(d.destinationPath)
        let baseline = d.mock.requests.count
        let run = try await d.repository.freshClone("ci-run-no-state")
        let refused = try await run.passforge(["build"], environment: d.ci)
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.stderr.contains("this would re-sign every pass with new update tags and push every device"),
            "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: "\(run.output)/v1"), "nothing was signed")
        // A script that publishes anyway publishes nothing.
        let publish = try await run.passforge(["publish", d.destination], environment: d.ci)
        #expect(publish.status == 1, "\(publish.output)")
        #expect(PublishedFile.tree(d.destinationPath) == before, "DEST is byte for byte (and inode, mtime) as it was")
        #expect(d.mock.requests.count == baseline)
    }

    // MARK: A publish killed half-way

    private func aKilledPublishLeavesThePreviousBuildAndTheNextCompletesIt(
        _ d: StaticDeployment, tokens: [String: String]
    ) async throws {
        let unchanged = Self.unchangedByA.filter { $0 != Self.passB }
        let others = try await HostView(d, serials: unchanged, tokens: tokens)
        let stateBefore = try #require(d.published(".passforge/state.json"))
        let indexedBefore = d.indexedTag
        let indexBefore = try await d.client.serials(Self.device, d.type)
        let oldB = try #require(d.published(d.passPath(Self.passB)))
        let baseline = d.mock.requests.count

        d.repository.editor.writeList(count: 4, points: { $0 == 1 ? 500 : $0 })
        try await d.repository.commit("More points for \(Self.passB)")
        let (run, build) = try await d.ciBuildFromPublishedState("ci-run-killed")
        #expect(build.stdout.contains("built 1, unchanged 3, removed 0"), "\(build.output)")
        let newB = try #require(run.localFile(d.passPath(Self.passB)))
        let recordB = try #require(try run.localState().passes["\(d.type)/\(Self.passB)"])

        // The publish stops after the files landed, before the state (its checkpoint): what DEST serves now is
        // what a publish killed there leaves. (That the next publish completes a killed one from there is
        // PassPublishIntegrationTests' part; here the paused one goes on.)
        let paused = try PausedPublish(
            output: run.output, destination: d.destination, environment: d.ci,
            at: PublishCheckpoint.uploaded)
        await paused.reached()

        // DEST still serves the previous build: its state, the other passes, the index, no push.
        #expect(d.published(".passforge/state.json") == stateBefore)
        try await others.expectUnchanged(d)
        // B is whole under both of its names, old or new (the files land before the state that lists them).
        let fileB = try #require(PublishedFile("\(d.destinationPath)/\(d.passPath(Self.passB))"))
        #expect(fileB.bytes == oldB || fileB.bytes == newB)
        #expect(PublishedFile("\(d.destinationPath)/\(recordB.tokenPath ?? "")")?.inode == fileB.inode)
        let servedB = try await d.client.pass(d.type, Self.passB, token: tokens[Self.passB]!)
        #expect(servedB.status == 200)
        #expect(servedB.body == oldB || servedB.body == newB)
        // No push and no new index are absences, with no event to await: this window, four of the watcher's
        // 250 ms looks, is what the test measures.
        try await Task.sleep(for: .milliseconds(1000))
        #expect(d.pushes(after: baseline).isEmpty, "no push before the state is published")
        #expect(d.indexedTag == indexedBefore, "passforge serve still has the previous build")
        #expect(try await d.client.serials(Self.device, d.type).body == indexBefore.body)

        // The publish goes on and completes: state, B, one push.
        let again = try await paused.finish()
        #expect(again.passesSent == 1, "\(again)")
        #expect(d.published(".passforge/state.json") == run.localStateBytes)
        #expect(d.published(d.passPath(Self.passB)) == newB)
        let pushed = try await eventually(timeout: 60) { !d.pushes(after: baseline).isEmpty }
        #expect(pushed, "no push within 15 s: \(d.serve.output)")
        // Measured window: a second push is an absence, with no event to await (four of the watcher's looks).
        try await Task.sleep(for: .milliseconds(1000))
        #expect(d.pushes(after: baseline).map(\.token) == [Self.pushToken])
        let fetched = try await d.client.pass(d.type, Self.passB, token: tokens[Self.passB]!)
        #expect(fetched.status == 200)
        #expect(fetched.body == newB)
        if let etag = fetched.header("ETag") {
            #expect(
                try await d.client.pass(
                    d.type, Self.passB, token: tokens[Self.passB]!, headers: ["If-None-Match": etag]
                ).status == 304)
        }
        try await others.expectUnchanged(d)
        let leftovers = PublishedFile.tree(d.destinationPath).keys.filter {
            $0.hasSuffix(".publishing") || $0.contains("published-state")
        }
        #expect(leftovers.isEmpty, "temporary files left at DEST: \(leftovers)")
    }
}

/// What the host shows of some passes: nginx's answers to their devices, and
/// their files at DEST (pass, token-keyed name, download link).
struct HostView {
    struct Answer: Equatable {
        var status: Int
        var etag: String?
        var lastModified: String?
        var body: [UInt8]
    }

    var answers: [String: Answer] = [:]
    var files: [String: PublishedFile] = [:]
    let tokens: [String: String]

    init(_ d: StaticDeployment, serials: [String], tokens: [String: String]) async throws {
        self.tokens = tokens
        answers = try await Self.answers(d, serials: serials, tokens: tokens)
        let state = try d.publishedState()
        for serial in serials {
            let record = try #require(state.passes["\(d.type)/\(serial)"])
            #expect(record.tokenPath != nil)
            for file in record.files {
                files[file] = try #require(PublishedFile("\(d.destinationPath)/\(file)"), "\(file) at DEST")
            }
        }
    }

    static func answers(_ d: StaticDeployment, serials: [String], tokens: [String: String]) async throws -> [String:
        Answer]
    {
        var answers: [String: Answer] = [:]
        for serial in serials {
            let answer = try await d.client.pass(d.type, serial, token: tokens[serial]!)
            answers[serial] = Answer(
                status: answer.status, etag: answer.header("ETag"), lastModified: answer.header("Last-Modified"),
                body: answer.body)
        }
        return answers
    }

    /// The same answers from nginx (and a 304 for the ETag a device holds), the same files at DEST.
    func expectUnchanged(_ d: StaticDeployment, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let now = try await Self.answers(d, serials: Array(answers.keys), tokens: tokens)
        for (serial, before) in answers.sorted(by: { $0.key < $1.key }) {
            #expect(before.status == 200, "\(serial) answered \(before.status)", sourceLocation: sourceLocation)
            #expect(now[serial] == before, "\(serial) changed through nginx", sourceLocation: sourceLocation)
            if let etag = before.etag {
                let conditional = try await d.client.pass(
                    d.type, serial, token: tokens[serial]!, headers: ["If-None-Match": etag])
                #expect(conditional.status == 304, "\(serial) with its old ETag", sourceLocation: sourceLocation)
            }
        }
        for (file, before) in files.sorted(by: { $0.key < $1.key }) {
            #expect(
                PublishedFile("\(d.destinationPath)/\(file)") == before, "\(file) at DEST: same bytes, inode and mtime",
                sourceLocation: sourceLocation)
        }
    }
}

extension Checkout {
    var localStateBytes: [UInt8]? { localFile(".passforge/state.json") }

    func localFile(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: "\(output)/\(relative)").map { Array($0) }
    }
}
