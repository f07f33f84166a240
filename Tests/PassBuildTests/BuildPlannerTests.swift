import Foundation
import PassContent
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// The planner's decisions, taken on a project that was built once: what it
/// reuses, what it signs again, and what Apple's rules make it refuse.
@Suite struct BuildPlannerTests {
    static let secret = "planner-token-secret-0123456789"

    /// A project with one pass (`C-0000`), built once.
    let project = ProjectFixture(passCount: 1)
    let settings: BuildSettings
    let key = "\(TestPKI.passType)/C-0000"

    init() throws {
        let settings = try project.buildSettings(secret: Self.secret, jobs: 1)
        self.settings = settings
        _ = try PassBuilder(settings: settings).build()
    }

    /// The state the first build left.
    func builtState() throws -> BuildState { try BuildState.load(from: project.output) }

    /// Plans the next build, as `passforge build` would, with `secret` as the token secret.
    func plan(secret: String = Self.secret) throws -> BuildPlan {
        var planner = BuildPlanner(
            settings: settings, state: try builtState(), secret: TokenSecret(secret, origin: "test"),
            identities: SigningIdentities(settings: settings), consumer: PlanOnly())
        return try planner.makePlan(progress: { _ in })
    }

    /// The rules of the errors that stop the planned build, or nil when it is planned.
    func refusal(secret: String = Self.secret) throws -> [String]? {
        do {
            _ = try plan(secret: secret)
            return nil
        } catch let failure as BuildFailure {
            return failure.diagnostics.filter(\.isError).map(\.rule)
        }
    }

    @Test func anUnchangedPassIsReusedWithItsBytesAndTag() throws {
        let previous = try #require(try builtState().passes[key])
        let plan = try plan()
        #expect(plan.jobs.isEmpty)
        #expect(plan.removed.isEmpty)
        // The very record: same ETag, size and update tag, so devices see no change.
        #expect(plan.unchanged == [previous.key])
    }

    @Test func aRewrittenFileWhosePassIsTheSameStillReusesIt() throws {
        let previous = try #require(try builtState().passes[key])
        let file = project.directory.file("content/cards.yml")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        project.directory.write("content/cards.yml", "# edited, but the pass is the same\n" + text)
        let plan = try plan()
        #expect(plan.jobs.isEmpty)
        #expect(plan.unchanged == [previous.key])
        #expect(plan.contentFiles["\(settings.contentDirectory)/cards.yml"]?.passes == [key])
    }

    @Test func aChangedPassIsSignedAgainUnderItsKey() throws {
        let previous = try #require(try builtState().passes[key])
        project.writeList(count: 1, points: { _ in 500 })
        let plan = try plan()
        #expect(plan.unchanged.isEmpty)
        #expect(plan.jobs.map(\.record.key) == [key])
        #expect(plan.jobs.first?.record.tokenHash == previous.tokenHash)
        #expect(plan.jobs.first?.record.fingerprint != previous.fingerprint)
    }

    @Test func aChangedSerialInAOnePassFileIsRefused() throws {
        project.directory.write(
            "content/cards.yml",
            """
            template: card
            serialNumber: C-0001
            data: { name: "Member 0", points: 0 }
            """)
        #expect(try refusal() == ["content.serial-changed"])
    }

    @Test func aPassDroppedFromAListIsRemovedAndTheNewOneBuilt() throws {
        project.writeList(count: 2)
        _ = try PassBuilder(settings: settings).build()
        project.directory.write(
            "content/cards.yml",
            """
            template: card
            defaults: { data: { points: 0 } }
            passes:
              - serialNumber: C-0000
                data: { name: "Member 0", points: 0 }
              - serialNumber: C-0002
                data: { name: "Member 2", points: 2 }
            """)
        let plan = try plan()
        #expect(plan.removed.map(\.key) == ["\(TestPKI.passType)/C-0001"])
        #expect(plan.jobs.map(\.record.key) == ["\(TestPKI.passType)/C-0002"])
        #expect(plan.unchanged == [key])
    }

    @Test func aChangedTokenIsRefused() throws {
        #expect(try refusal(secret: "another-token-secret-0123456789") == ["pass.token-changed"])
    }
}
