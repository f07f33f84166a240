import Foundation
import PassContent
import PassModel
import TestSupport
import Testing

@testable import PassBuild
@testable import WalletTree

/// A large file with `passes:` is parsed in runs of entries by the workers
/// that evaluate them. What it gives, problems included, must be what a
/// parse of the whole file gives.
@Suite struct LazyPlanningTests {
    static let secret = "lazy-planning-token-secret-0123456789"

    /// More entries than two runs hold.
    static let count = BuildPlanner.runLength * 2 + 17

    /// The runs cover the list once, in order; none is longer than `runLength`, and they shorten
    /// towards the end so that no worker is left signing a long last run alone.
    @Test func theRunsCoverTheListAndShortenTowardsItsEnd() {
        for (count, jobs) in [(10_000, 2), (10_000, 8), (617, 2), (40, 2), (16, 4), (1, 1)] {
            let runs = BuildPlanner.runs(of: count, jobs: jobs)
            #expect(runs.first?.lowerBound == 0 && runs.last?.upperBound == count, "\(count) \(jobs)")
            #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "\(count) \(jobs)")
            #expect(runs.allSatisfy { $0.count <= BuildPlanner.runLength && !$0.isEmpty }, "\(count) \(jobs)")
            #expect(
                runs.suffix(jobs).allSatisfy { $0.count <= BuildPlanner.shortestRun },
                "\(count) \(jobs): \(runs.suffix(jobs))")
        }
        #expect(BuildPlanner.runs(of: 10_000, jobs: 2).first?.count == BuildPlanner.runLength)
    }

    func settings(_ project: ProjectFixture) throws -> BuildSettings { try project.buildSettings(secret: Self.secret) }

    /// A list with comments and blank lines between its entries, so that a run's lines are not a simple count of entries.
    static func list(count: Int = count, header: String = "", entry: (Int) -> String = { _ in "" }) -> String {
        var yaml = "# cards\ntemplate: card\n\(header)defaults: { data: { points: 0 } }\n\npasses:\n  # members\n"
        for i in 0..<count {
            yaml +=
                "  - serialNumber: C-\(String(format: "%04d", i))\n    data: { name: \"Member \(i)\", points: \(i) }\n\(entry(i))"
            if i % 7 == 0 { yaml += "\n  # a comment\n" }
        }
        return yaml
    }

    /// The errors of a validation of `yaml` as `content/cards.yml`, or nil when it is valid.
    func errors(of yaml: String) throws -> [ContentDiagnostic]? {
        let project = ProjectFixture(passCount: 0)
        project.directory.write("content/cards.yml", yaml)
        do {
            _ = try PassBuilder(settings: try settings(project)).validate()
            return nil
        } catch let failure as BuildFailure {
            return failure.diagnostics.filter(\.isError)
        }
    }

    @Test func aRunParsedAloneHasTheLocationsAndKeyPathsOfTheWholeFile() throws {
        let yaml = Self.list(entry: { $0 == 300 ? "    template: [card]\n" : "" })
        let bytes = Array(yaml.utf8)
        let list = try #require(PassListEntries(bytes))
        #expect(list.entries.count == Self.count)
        let whole = ContentLoader.definitions(in: "content/cards.yml", bytes: bytes)
        var definitions: [PassDefinition] = []
        var problems: [ContentDiagnostic] = []
        for start in stride(from: 0, to: list.entries.count, by: 100) {
            let run = start..<min(start + 100, list.entries.count)
            let excerpt = list.excerpt(run, of: bytes)
            let part = ContentLoader.definitions(
                in: "content/cards.yml", excerpt: excerpt.bytes, firstEntry: run.lowerBound,
                excerptEntryLine: excerpt.excerptEntryLine, entryLine: excerpt.entryLine)
            definitions += part.definitions
            problems += part.problems
        }
        #expect(problems == whole.problems)
        let line =
            try #require(
                yaml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex(of: "    template: [card]"))
            + 1
        #expect(
            problems.map { "\($0.location) \($0.keyPath?.description ?? "")" } == [
                "content/cards.yml:\(line):15 passes[300].template"
            ])
        #expect(definitions.count == whole.definitions.count)
        for (part, full) in zip(definitions, whole.definitions) {
            #expect(part.serialNumber == full.serialNumber)
            #expect(part.location == full.location)
            #expect(part.serialLocation == full.serialLocation)
            #expect(part.templateLocation == full.templateLocation)
            #expect(part.data.location == full.data.location)
            #expect(part.data["name"]?.location == full.data["name"]?.location)
            #expect(part.canonicalBytes == full.canonicalBytes)
        }
    }

    @Test func aLargeListIsBuiltInOrderWithItsEntryHashes() throws {
        let project = ProjectFixture(passCount: 0)
        project.directory.write("content/cards.yml", Self.list())
        let report = try PassBuilder(settings: try settings(project)).build()
        #expect(report.built.count == Self.count)
        let state = try BuildState.load(from: project.output)
        let record = try #require(
            state.contentFiles[project.directory.file("content/cards.yml")] ?? state.contentFiles.values.first)
        #expect(record.passes == (0..<Self.count).map { "\(TestPKI.passType)/C-\(String(format: "%04d", $0))" })
        #expect(record.entries.map { PassListEntries.hashes(in: $0).count } == Self.count + 1)
        // The next build reuses every pass.
        let again = try PassBuilder(settings: try settings(project)).build()
        #expect(again.built.isEmpty && again.unchanged == Self.count)
    }

    @Test func anErrorInALaterRunIsWhereTheWholeFileHasIt() throws {
        let yaml = Self.list(entry: { $0 == Self.count - 3 ? "    pass: [1]\n" : "" })
        let errors = try #require(try errors(of: yaml))
        let whole = ContentLoader.definitions(in: "content/cards.yml", bytes: Array(yaml.utf8)).problems
        #expect(whole.count == 1)
        // The planner names the file by its path under the content folder; the location within it is the same.
        #expect(
            errors.map { "\($0.location.line):\($0.location.column) \($0.rule) \($0.keyPath?.description ?? "")" }
                == whole.map { "\($0.location.line):\($0.location.column) \($0.rule) \($0.keyPath?.description ?? "")" }
        )
    }

    @Test func aProblemBeforePassesIsReportedOnceNotOncePerRun() throws {
        let errors = try #require(try errors(of: Self.list(header: "colour: blue\n")))
        #expect(errors.map(\.rule) == ["content.unknown-key"])
        #expect(errors.first?.location.line == 3)
        #expect(errors.first?.message.contains("(in ") == false)
    }

    @Test func aSyntaxErrorInOneRunIsTheWholeFilesOneError() throws {
        let yaml = Self.list(entry: { $0 == Self.count / 2 ? "    data: { name: \"unclosed }\n" : "" })
        let errors = try #require(try errors(of: yaml))
        let whole = ContentLoader.definitions(in: "content/cards.yml", bytes: Array(yaml.utf8))
        #expect(whole.definitions.isEmpty)
        #expect(errors.map(\.rule) == ["yaml.syntax"])
        #expect(
            errors.map { "\($0.location.line):\($0.location.column) \($0.message)" }
                == whole.problems.map { "\($0.location.line):\($0.location.column) \($0.message)" })
    }

    @Test func aSerialRepeatedInALaterRunPointsAtTheFirst() throws {
        let yaml = Self.list(entry: {
            $0 == Self.count - 1 ? "  - serialNumber: C-0010\n    data: { name: Again }\n" : ""
        })
        let errors = try #require(try errors(of: yaml))
        let whole = ContentLoader.definitions(in: "content/cards.yml", bytes: Array(yaml.utf8))
        #expect(errors.map(\.rule) == ["content.duplicate-serial"])
        #expect(errors.first?.location.line == whole.definitions.last?.serialLocation.line)
        #expect(errors.first?.notes.first?.location.line == whole.definitions[10].serialLocation.line)
    }
}
