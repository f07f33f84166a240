import Foundation
import PassModel
import Testing

@testable import PassContent

/// A seeded generator (SplitMix64): the same seed gives the same cases, so a
/// failure names the case that reproduces it.
struct FuzzRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Content files and templates made up and mutated from a seed: valid ones,
/// near-valid ones, and hostile ones (deep nesting, huge scalars, alias
/// bombs, invalid UTF-8, NUL bytes).
enum ContentFuzzer {
    static let words = [
        "card", "boarding", "Jane", "14C", "Gold", "", "0042", "NO", "yes", "~", "null", "1e999", "-.inf",
        "0x1F", "2026-12-01T09:30:00Z", "{{ name }}", "{{", "}}", "a: b", "- x", "#", "'", "\"", "ü東🎟", "\u{202E}",
    ]
    static let tokens: [[UInt8]] =
        [
            "{", "}", "[", "]", ":", ": ", "- ", ",", "&a ", "*a", "&b [*a, *a]", "!!binary ", "!!int ", "!!map ", "\t",
            "\"", "'", "|\n",
            ">-\n", "#", "---\n", "...\n", "? ", "%YAML 1.1\n", "<<: *a\n", "{{", "}}", "{{ x.y }}", "\r", "\n  ",
            "\n- ", "0x", "1e999",
            "~", "null", "@", "`", "%", "\\", "\\u0000", "\\ud800", "serialNumber: ", "passes:\n  - ", "bundle: b\n",
            "template: card\n",
        ].map { Array($0.utf8) } + [
            [0], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xEF, 0xBB, 0xBF], [0xFE, 0xFF], [0xF4, 0x90, 0x80, 0x80],
        ]

    static func word(_ random: inout FuzzRandom) -> String { random.pick(words) }

    static func scalar(_ random: inout FuzzRandom) -> JSONValue {
        switch random.below(6) {
        case 0: return .int(random.below(100_000) - 50)
        case 1: return .bool(random.chance(50))
        case 2: return .double(Double(random.below(10_000)) / 7)
        case 3: return .null
        default: return .string(word(&random))
        }
    }

    static func value(_ random: inout FuzzRandom, depth: Int) -> JSONValue {
        guard depth > 0, random.chance(40) else { return scalar(&random) }
        if random.chance(50) {
            return .array((0..<random.below(4)).map { _ in value(&random, depth: depth - 1) })
        }
        return .object(JSONObject((0..<random.below(4)).map { _ in (word(&random), value(&random, depth: depth - 1)) }))
    }

    /// A pass definition, mostly well-formed, sometimes with wrong types or unknown keys.
    static func definition(_ random: inout FuzzRandom, inList: Bool) -> JSONObject {
        var object = JSONObject()
        if !inList || random.chance(20) { object["template"] = random.chance(90) ? .string("card") : scalar(&random) }
        object["serialNumber"] = random.chance(85) ? .string("S-\(random.below(1000))") : scalar(&random)
        if random.chance(80) {
            object["data"] =
                random.chance(90)
                ? .object(
                    JSONObject([
                        ("name", scalar(&random)), ("points", .int(random.below(500))),
                        ("extra", value(&random, depth: 3)),
                    ]))
                : value(&random, depth: 2)
        }
        if random.chance(30) {
            object["pass"] =
                random.chance(80) ? .object(JSONObject([("description", scalar(&random))])) : value(&random, depth: 2)
        }
        if random.chance(15) {
            object["images"] =
                random.chance(70)
                ? .object(JSONObject([("thumbnail.png", .string("x.png"))])) : value(&random, depth: 2)
        }
        if random.chance(10) { object["download"] = random.chance(50) ? .string("public") : scalar(&random) }
        if random.chance(10) { object[word(&random)] = value(&random, depth: 2) }
        return object
    }

    static func contentFile(_ random: inout FuzzRandom) -> JSONValue {
        guard random.chance(50) else { return .object(definition(&random, inList: false)) }
        var object = JSONObject()
        object["template"] = .string("card")
        if random.chance(40) {
            object["defaults"] = .object(JSONObject([("data", .object(JSONObject([("points", .int(1))])))]))
        }
        if random.chance(30) {
            object["bundle"] = random.chance(80) ? .string("family-\(random.below(9))") : scalar(&random)
        }
        object["passes"] =
            random.chance(90)
            ? .array((0..<random.below(14)).map { _ in .object(definition(&random, inList: true)) })
            : value(&random, depth: 2)
        return .object(object)
    }

    /// The value as YAML, in block or flow style, with quoting chosen at random.
    static func yaml(_ value: JSONValue, _ random: inout FuzzRandom, indent: String = "") -> String {
        func inline(_ value: JSONValue) -> String {
            switch value {
            case .string(let text):
                if random.chance(50), !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) {
                    return text
                }
                return value.serializedString()
            case .array(let items): return "[" + items.map(inline).joined(separator: ", ") + "]"
            case .object(let object):
                return "{" + object.map { "\(inline(.string($0.key))): \(inline($0.value))" }.joined(separator: ", ")
                    + "}"
            default: return value.serializedString()
            }
        }
        switch value {
        case .object(let object) where !object.isEmpty && random.chance(80):
            return object.map { member in
                let key = inline(.string(member.key))
                let nested: Bool
                switch member.value {
                case .object(let inner): nested = !inner.isEmpty
                case .array(let inner): nested = !inner.isEmpty
                default: nested = false
                }
                return nested
                    ? "\(indent)\(key):\n" + yaml(member.value, &random, indent: indent + "  ")
                    : "\(indent)\(key): \(inline(member.value))\n"
            }.joined()
        case .array(let items) where !items.isEmpty && random.chance(80):
            return items.map { item in
                let body = yaml(item, &random, indent: indent + "  ")
                if case .object = item, body.hasPrefix(indent + "  ") {
                    return "\(indent)- " + body.dropFirst(indent.count + 2)
                }
                return "\(indent)-\n" + body
            }.joined()
        default:
            return indent + inline(value) + "\n"
        }
    }

    static func mutate(_ bytes: [UInt8], _ random: inout FuzzRandom) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<(1 + random.below(4)) {
            let position = random.below(bytes.count + 1)
            switch random.below(6) {
            case 0 where !bytes.isEmpty: bytes[min(position, bytes.count - 1)] ^= UInt8(1 << random.below(8))
            case 1: bytes.insert(contentsOf: random.pick(tokens), at: position)
            case 2 where !bytes.isEmpty:
                let end = min(bytes.count, position + random.below(16))
                bytes.removeSubrange(min(position, end)..<end)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + random.below(32))
                bytes.insert(contentsOf: bytes[min(position, end)..<end], at: random.below(bytes.count + 1))
            case 4: bytes = Array(bytes.prefix(position))
            default: bytes.insert(UInt8(random.below(256)), at: position)
            }
        }
        return bytes
    }

    /// Hand-made hostile inputs, the same in every run.
    static func hostile() -> [(name: String, file: String, bytes: [UInt8])] {
        var cases: [(String, String, [UInt8])] = []
        let depth = 50_000
        cases.append(
            (
                "deep flow YAML", "deep.yml",
                Array(("template: card\nserialNumber: A\ndata: " + String(repeating: "[", count: depth)).utf8)
            ))
        cases.append(
            ("deep flow YAML maps", "deep2.yml", Array(("data: " + String(repeating: "{a: ", count: depth)).utf8)))
        cases.append(
            (
                "deep block YAML", "deep3.yml",
                Array((0..<5_000).map { String(repeating: " ", count: $0) + "a:\n" }.joined().utf8)
            ))
        cases.append(
            (
                "deep block sequences", "deep4.yml",
                Array(("data:\n" + String(repeating: "- ", count: 5_000) + "x\n").utf8)
            ))
        cases.append(
            (
                "deep JSON", "deep.json",
                Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            ))
        cases.append(
            (
                "huge scalar", "huge.yml",
                Array(("template: card\nserialNumber: " + String(repeating: "A", count: 8 << 20) + "\n").utf8)
            ))
        cases.append(
            (
                "huge quoted scalar", "huge2.yml",
                Array(
                    ("template: card\nserialNumber: A\ndata: { name: \"" + String(repeating: "é", count: 2 << 20)
                        + "\" }\n").utf8)
            ))
        cases.append(("huge key", "huge3.yml", Array((String(repeating: "k", count: 1 << 20) + ": 1\n").utf8)))
        cases.append(
            (
                "huge JSON string", "huge.json",
                Array(
                    ("{\"template\": \"card\", \"serialNumber\": \"" + String(repeating: "x", count: 8 << 20) + "\"}")
                        .utf8)
            ))
        var laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...9 {
            laughs +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", ") + "]\n"
        }
        cases.append(
            (
                "billion laughs", "laughs.yml",
                Array(
                    ("template: card\nserialNumber: A\ndata:\n  " + laughs.replacingOccurrences(of: "\n", with: "\n  "))
                        .utf8)
            ))
        cases.append(
            (
                "billion laughs in keys", "laughs2.yml",
                Array(
                    "a: &a {x: 1, y: 2}\nb: &b {<<: [*a, *a, *a]}\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c]\n"
                        .utf8)
            ))
        cases.append(("alias to undefined anchor", "alias.yml", Array("template: *nowhere\n".utf8)))
        cases.append(("recursive anchor", "alias2.yml", Array("a: &a [*a]\n".utf8)))
        cases.append(
            (
                "invalid UTF-8", "utf8.yml",
                Array("template: card\nserialNumber: A\ndata: { name: \"".utf8) + [0xC3, 0x28, 0xFF]
                    + Array("\" }\n".utf8)
            ))
        cases.append(
            (
                "invalid UTF-8 JSON", "utf8.json",
                Array("{\n  \"template\": \"card\",\n  \"serialNumber\": \"".utf8) + [0xED, 0xA0, 0x80]
                    + Array("\"\n}".utf8)
            ))
        cases.append(("NUL bytes", "nul.yml", Array("template: card\nserial\0Number: A\0\n".utf8)))
        cases.append(
            ("NUL bytes JSON", "nul.json", Array("{\"template\": \"card\0\", \"serialNumber\": \"A\"}\0".utf8)))
        cases.append(("UTF-16 YAML", "utf16.yml", utf16LE("template: card\nserialNumber: A\n")))
        cases.append(("only a BOM", "bom.yml", [0xEF, 0xBB, 0xBF]))
        cases.append(("empty", "empty.yml", []))
        cases.append(("empty JSON", "empty.json", []))
        cases.append(("a tab indentation", "tab.yml", Array("template: card\ndata:\n\tname: x\n".utf8)))
        cases.append(
            ("many documents", "docs.yml", Array(String(repeating: "---\ntemplate: card\n", count: 1_000).utf8)))
        cases.append(
            (
                "100,000 passes", "many.yml",
                Array(("template: card\npasses:\n" + String(repeating: "  - {serialNumber: A}\n", count: 100_000)).utf8)
            ))
        return cases
    }
}

/// Issue 14: thousands of generated and mutated content files and templates,
/// seeded and reproducible. None may crash or hang the loader, and every
/// problem must be a `file:line:col` diagnostic.
@Suite struct ContentFuzzTests {
    static let seed: UInt64 = 0x5EED_2026_0014
    static let contentCases = 4_000
    static let templateCases = 600
    /// A hang detector, not a speed test: a case that takes this long is stuck.
    static let hangBound: Duration = .seconds(30)

    /// Runs `body` for every case on a worker thread; a case that does not
    /// finish within the bound is reported as hung (and the run stops).
    func run(_ count: Int, name: String, _ body: @escaping @Sendable (Int) -> [String]) {
        let finished = DispatchSemaphore(value: 0)
        let failures = FailureLog()
        let progress = FailureLog()
        let thread = Thread {
            for index in 0..<count {
                progress.set(index)
                failures.append(body(index))
                finished.signal()
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
        for _ in 0..<count {
            let seconds = Double(Self.hangBound.components.seconds)
            guard finished.wait(timeout: .now() + seconds) == .success else {
                Issue.record(
                    "\(name) case \(progress.current) (seed \(Self.seed)) did not finish within \(Self.hangBound): a hang"
                )
                return
            }
        }
        for failure in failures.all.prefix(20) { Issue.record(Comment(rawValue: failure)) }
    }

    /// Every problem must point at a line and column of a file.
    static func badDiagnostics(_ diagnostics: [ContentDiagnostic], case name: String) -> [String] {
        diagnostics.compactMap { diagnostic in
            let location = diagnostic.location
            if location.line < 1 || location.column < 1 || location.file.isEmpty {
                return "\(name): diagnostic without line and column: \(diagnostic)"
            }
            guard
                diagnostic.description.hasPrefix(
                    "\(location.file):\(location.line):\(location.column): \(diagnostic.severity.rawValue): ")
            else {
                return "\(name): diagnostic not in file:line:col form: \(diagnostic)"
            }
            return nil
        }
    }

    static func checkContent(
        _ bytes: [UInt8], file: String, case name: String, outcomes: FailureLog, template: Template
    ) -> [String] {
        let (definitions, problems) = ContentLoader.definitions(in: file, bytes: bytes)
        outcomes.count(definitions.isEmpty ? (problems.contains(where: \.isError) ? "rejected" : "empty") : "accepted")
        var failures = badDiagnostics(problems, case: name)
        // Accepted passes go on through rendering and Apple's rules, as in a build.
        for definition in definitions {
            switch PassRenderer(configuration: ProjectConfiguration(), boundary: ProjectBoundary(folders: ["/"]))
                .render(definition, template: template)
            {
            case .failure(let errors): failures += badDiagnostics(errors.diagnostics, case: "\(name) rendered")
            case .success(let rendered):
                let diagnostics = PassValidator().validate(
                    rendered.source.jsonValue, options: .init(allowsHTTPWebService: false))
                failures += badDiagnostics(rendered.locate(diagnostics), case: "\(name) validated")
            }
        }
        return failures
    }

    /// The `card` template the generated passes use.
    static func cardTemplate(in folder: TemplateFolder) -> Template? {
        folder.write(
            "card/pass.json",
            #"""
            {
              "passTypeIdentifier": "pass.example", "teamIdentifier": "ABCDE12345", "organizationName": "Fuzz",
              "description": "Card of {{ name }}",
              "generic": {
                "primaryFields": [{"key": "name", "label": "Name", "value": "{{ name }}"}],
                "secondaryFields": [{"key": "points", "label": "Points", "value": "{{ points }}"}],
                "backFields": [{"key": "extra", "label": "Extra", "value": "{{ extra }}"}]
              },
              "barcodes": [{"format": "PKBarcodeFormatQR", "message": "{{ serialNumber }}", "messageEncoding": "iso-8859-1"}]
            }
            """#)
        return try? folder.loader.load("card").get()
    }

    @Test func generatedAndMutatedContentFiles() throws {
        let folder = TemplateFolder()
        let template = try #require(Self.cardTemplate(in: folder))
        let outcomes = FailureLog()
        defer {
            // The generator must reach both sides: passes that load, and files that are refused.
            #expect(outcomes.counts["accepted", default: 0] > Self.contentCases / 10, "\(outcomes.counts)")
            #expect(outcomes.counts["rejected", default: 0] > Self.contentCases / 10, "\(outcomes.counts)")
        }
        run(Self.contentCases, name: "content") { index in
            var random = FuzzRandom(seed: Self.seed &+ UInt64(index))
            let value = ContentFuzzer.contentFile(&random)
            let asJSON = random.chance(30)
            var bytes =
                asJSON ? value.serialized(pretty: random.chance(50)) : Array(ContentFuzzer.yaml(value, &random).utf8)
            if random.chance(70) { bytes = ContentFuzzer.mutate(bytes, &random) }
            return Self.checkContent(
                bytes, file: "content/fuzz-\(index).\(asJSON ? "json" : "yml")", case: "content case \(index)",
                outcomes: outcomes, template: template)
        }
    }

    @Test func hostileContentFiles() {
        let cases = ContentFuzzer.hostile()
        run(cases.count, name: "hostile") { index in
            let (name, file, bytes) = cases[index]
            let (definitions, problems) = ContentLoader.definitions(in: "content/\(file)", bytes: bytes)
            var failures = Self.badDiagnostics(problems, case: name)
            if definitions.isEmpty, !problems.contains(where: \.isError) {
                failures.append("\(name): no pass and no error")
            }
            return failures
        }
    }

    @Test func generatedAndMutatedTemplates() {
        let folder = TemplateFolder()
        let validPass = Array(
            #"""
            {
              "description": "Card of {{ name }}",
              "generic": {
                "primaryFields": [{"key": "name", "label": "name_label", "value": "{{ name }}"}],
                "secondaryFields": [{"key": "points", "label": "Points", "value": "{{ points }}"}]
              },
              "barcodes": [{"format": "PKBarcodeFormatQR", "message": "{{ serialNumber }}", "messageEncoding": "iso-8859-1"}]
            }
            """#.utf8)
        let validStrings = utf16LE("/* c */\n\"name_label\" = \"Name {{ name }}\";\n\"Points\" = \"Punkte\";\n")
        let definition = ContentLoader.definitions(
            in: "content/d.yml", bytes: Array("template: t\nserialNumber: S-1\ndata: { name: Ann, points: 3 }\n".utf8)
        ).definitions[0]
        let templates = folder.path
        run(Self.templateCases, name: "template") { index in
            var random = FuzzRandom(seed: Self.seed &+ 1_000_000 &+ UInt64(index))
            let name = "t\(index)"
            let directory = random.chance(20) ? "\(templates)/\(name).pkpasstemplate" : "\(templates)/\(name)"
            try? FileManager.default.createDirectory(atPath: "\(directory)/de.lproj", withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var pass = validPass
            var strings = validStrings
            switch random.below(3) {
            case 0: pass = ContentFuzzer.mutate(pass, &random)
            case 1:
                strings =
                    random.chance(50)
                    ? ContentFuzzer.mutate(strings, &random)
                    : Array(
                        String(
                            decoding: ContentFuzzer.mutate(
                                Array("\"a\" = \"b {{ name }}\";\n\"c\" = \"d\";\n".utf8), &random), as: UTF8.self
                        ).utf8)
            default:
                pass = ContentFuzzer.mutate(pass, &random)
                strings = ContentFuzzer.mutate(strings, &random)
            }
            FileManager.default.createFile(atPath: "\(directory)/pass.json", contents: Data(pass))
            FileManager.default.createFile(atPath: "\(directory)/de.lproj/pass.strings", contents: Data(strings))
            switch TemplateLoader(directory: templates).load(name) {
            case .failure(let errors):
                return Self.badDiagnostics(errors.diagnostics, case: "template case \(index)")
            case .success(let template):
                var failures = Self.badDiagnostics(
                    template.warnings.filter { $0.rule != "template.ignored-file" }, case: "template case \(index)")
                if case .failure(let errors) = PassRenderer(
                    configuration: ProjectConfiguration(), boundary: ProjectBoundary(folders: ["/"])
                ).render(definition, template: template) {
                    failures += Self.badDiagnostics(errors.diagnostics, case: "template case \(index) rendered")
                }
                return failures
            }
        }
    }
}

/// Failures and outcomes collected from the fuzzing thread.
final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    private var index = 0
    private var tally: [String: Int] = [:]

    func count(_ outcome: String) { lock.withLock { tally[outcome, default: 0] += 1 } }
    var counts: [String: Int] { lock.withLock { tally } }

    func append(_ more: [String]) { lock.withLock { failures += more } }
    func set(_ value: Int) { lock.withLock { index = value } }
    var current: Int { lock.withLock { index } }
    var all: [String] { lock.withLock { failures } }
}

/// What the content fuzzing found, each kept as a case of its own.
@Suite struct ContentFuzzRegressionTests {
    func error(_ bytes: [UInt8], file: String = "content/x.yml") throws -> ContentDiagnostic {
        let (definitions, problems) = ContentLoader.definitions(in: file, bytes: bytes)
        #expect(definitions.isEmpty)
        return try #require(problems.first { $0.isError })
    }

    @Test func invalidUTF8InYAMLIsReportedAtItsLineAndColumn() throws {
        // Found: the error named the file only.
        let error = try error(
            Array("template: card\nserialNumber: A\ndata: { name: \"".utf8) + [0xC3, 0x28] + Array("\" }\n".utf8))
        #expect(error.rule == "yaml.encoding")
        #expect(error.description.hasPrefix("content/x.yml:3:16: error:"), "\(error)")
    }

    @Test func aNULByteInYAMLIsReportedAtItsLineAndColumn() throws {
        // Found: libyaml's reader error named the file only.
        let error = try error(Array("template: card\nserial\0Number: A\n".utf8))
        #expect(error.rule == "yaml.encoding")
        #expect(error.location.line == 2 && error.location.column == 7, "\(error)")
        #expect(error.message.contains("U+0"))
    }

    @Test func invalidUTF8AndNULInJSONAreReportedAtTheirLine() throws {
        let utf8 = try error(
            Array("{\n  \"template\": \"card\",\n  \"serialNumber\": \"".utf8) + [0xED, 0xA0, 0x80]
                + Array("\"\n}".utf8),
            file: "content/x.json")
        #expect(utf8.location.line == 3 && utf8.location.column > 0, "\(utf8)")
        let nul = try error(Array("{\"template\": \"card\0\"}".utf8), file: "content/x.json")
        #expect(nul.location.line == 1 && nul.location.column > 0, "\(nul)")
    }
}
