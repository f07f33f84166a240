import Foundation
import PassBuild
import PassPreview
import TestSupport
import Testing
import WalletTree

/// The repository's root, for the example project and the scripts.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The venv python with selenium, zxing-cpp and pillow (scripts/test-venv.sh).
func testPython() throws -> String {
    let result = try runProcess("\(repositoryRoot)/scripts/test-venv.sh", [])
    guard result.status == 0, let path = result.stdout.split(separator: "\n").last else {
        throw PreviewTestError("scripts/test-venv.sh failed: \(result.output)")
    }
    return String(path)
}

/// `testPython` for async tests: the venv's install, when it is due, holds none of the test runner's threads.
func testPython() async throws -> String {
    let result = try await runProcessWithoutBlocking("\(repositoryRoot)/scripts/test-venv.sh", [])
    guard result.status == 0, let path = result.stdout.split(separator: "\n").last else {
        throw PreviewTestError("scripts/test-venv.sh failed: \(result.output)")
    }
    return String(path)
}

struct PreviewTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A copy of the example project (passforge.yml, templates/, content/) in a temporary folder.
func exampleProject() throws -> TemporaryDirectory {
    let directory = TemporaryDirectory("passforge-preview")
    for item in ["passforge.yml", "templates", "content"] {
        try FileManager.default.copyItem(atPath: "\(repositoryRoot)/\(item)", toPath: directory.file(item))
    }
    return directory
}

func passforge(_ arguments: [String], in directory: String) throws -> ProcessResult {
    var environment = ProcessInfo.processInfo.environment
    environment["CI"] = nil
    return try runProcess(passforgeExecutable(), arguments, directory: directory, environment: environment)
}

/// `passforge` for async tests: suspends until the run ends, holding none of the test runner's threads.
func passforge(_ arguments: [String], in directory: String) async throws -> ProcessResult {
    var environment = ProcessInfo.processInfo.environment
    environment["CI"] = nil
    return try await runProcessWithoutBlocking(
        passforgeExecutable(), arguments, directory: directory,
        environment: environment)
}

@Suite("passforge preview in a real browser", .serialized)
struct PreviewBrowserTests {
    @Test(
        "every example pass: barcodes decode from a screenshot, labels and values are on the page, no console errors, languages switch"
    )
    func examplePassesInChromium() async throws {
        let project = try exampleProject()
        let preview = try await passforge(["preview", "--out", "gallery"], in: project.path)
        #expect(preview.status == 0, "\(preview.output)")
        let pages = try FileManager.default.contentsOfDirectory(
            atPath: project.file("gallery/pass.com.example.passforge"))
        #expect(pages.count >= 19, "\(pages)")
        let check = try await runProcessWithoutBlocking(
            try await testPython(),
            [
                "\(repositoryRoot)/scripts/check-preview-pages.py", project.file("gallery"),
                "--screenshots", project.file("screenshots"),
            ])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("\"failures\": 0"), "\(check.output)")
        // The localized member card was switched to German and back.
        #expect(
            check.stdout.contains("languages en, de") || check.stdout.contains("languages de, en"), "\(check.stdout)")
    }

    @Test(
        "--watch: an edited content file shows on the open page within 2 s, a broken one shows its error at file:line")
    func watchReloadsAndShowsErrors() async throws {
        let project = try exampleProject()
        let server = try await WatchServer(project: project)
        defer { server.stop() }
        let check = try await Self.checkWatch(
            server.base + "pass.com.example.passforge/BP-K7QX2M-PF117-1201-1.html",
            project.file("content/flights/pf117-2026-12-01-appleseed.yml"), "gate: B32", "gate: C77", "C77")
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("edit shown after"), "\(check.output)")
        #expect(check.stdout.contains("pf117-2026-12-01-appleseed.yml:"), "\(check.output)")
    }

    @Test(
        "--watch with orders: an edited order shows on its open page, a broken order file shows its error at file:line")
    func watchReloadsOrders() async throws {
        let project = try exampleProject()
        let server = try await WatchServer(project: project)
        defer { server.stop() }
        let check = try await Self.checkWatch(
            server.base + "order.com.example.passforge/SO-2026-1042.html",
            project.file("content/orders/so-2026-1042-shipping.yml"), "carrier: PostNord", "carrier: Bring Parcels",
            "Bring Parcels")
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("edit shown after"), "\(check.output)")
        #expect(check.stdout.contains("so-2026-1042-shipping.yml:"), "\(check.output)")
    }

    /// issue 24, item 5: a web page the editor visits can rebind its own
    /// name to 127.0.0.1 and read the preview as same-origin; its requests
    /// still name it in `Host`. Refused (403, 400 without a Host), with curl
    /// as the client. No page shows a pass's authenticationToken, and every
    /// answer says `nosniff`. A field holding `<!--<script>` (which, written
    /// raw into the page's JSON, turned the rest of the page's scripts into
    /// text) leaves the language switcher and live reload working in Chromium.
    @Test(
        "--watch: a foreign Host is refused, no page shows a token, nosniff everywhere, `<!--<script>` in a field breaks no script"
    )
    func watchServerTrustsOnlyItsOwnNames() async throws {
        let project = try exampleProject()
        let members = project.file("content/members/members.yml")
        let content = try String(contentsOfFile: members, encoding: .utf8)
        let hostile = "Ann <!--<script> Fischer"
        try content.replacingOccurrences(of: "name: Ann Fischer", with: "name: \"\(hostile)\"").write(
            toFile: members, atomically: true, encoding: .utf8)
        let secret = "preview-test-token-secret-0123456789"
        let server = try await WatchServer(project: project, environment: ["PASSFORGE_TOKEN_SECRET": secret])
        defer { server.stop() }
        let port = server.port
        let page = "pass.com.example.passforge/BL-M-0001.html"

        for host in [
            "localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)", "LOCALHOST:\(port)", "localhost", "127.0.0.1",
        ] {
            #expect(try await Curl.get(server.base + page, host: host).status == 200, "Host: \(host)")
        }
        for host in [
            "attacker.example", "attacker.example:\(port)", "127.0.0.1.attacker.example:\(port)",
            "localhost:\(port + 1)",
            "0.0.0.0:\(port)", "127.0.0.2:\(port)", "localhost.:\(port)",
        ] {
            for path in ["", "index.html", page, "_passforge/events", "no-such-page.html"] {
                let answer = try await Curl.get(server.base + path, host: host)
                #expect(answer.status == 403, "Host: \(host) /\(path): \(answer.status)")
                #expect(!answer.body.contains("BL-M-0001") && !answer.body.contains("<html"), "Host: \(host) /\(path)")
                #expect(answer.header("X-Content-Type-Options") == "nosniff", "Host: \(host) /\(path)")
            }
        }
        for host in [nil, "localhost:\(port):1", "user@localhost:\(port)", "localhost:abc", "[::1", "local host"]
            as [String?]
        {
            let answer = try await Curl.get(server.base + page, host: host ?? "")
            #expect(answer.status == 400, "Host: \(host ?? "none"): \(answer.status)")
        }

        // Every page, by its URL: no token, only its mask (so the test would see the token if it were there); nosniff.
        let gallery = project.file("gallery")
        var pages = ["index.html"]
        for folder in try FileManager.default.contentsOfDirectory(atPath: gallery) where !folder.hasSuffix(".html") {
            pages += try FileManager.default.contentsOfDirectory(atPath: "\(gallery)/\(folder)").map {
                "\(folder)/\($0)"
            }
        }
        #expect(pages.count >= 19, "\(pages)")
        let tokens = TokenSecret(secret, origin: "test")
        var masksSeen = 0
        for path in pages {
            let answer = try await Curl.get(server.base + path)
            #expect(answer.status == 200, "\(path)")
            #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(path)")
            #expect(answer.header("Cache-Control") == "no-store", "\(path)")
            for type in try FileManager.default.contentsOfDirectory(atPath: gallery) where !type.hasSuffix(".html") {
                for file in try FileManager.default.contentsOfDirectory(atPath: "\(gallery)/\(type)") {
                    let token = tokens.authenticationToken(
                        passTypeIdentifier: type, serialNumber: String(file.dropLast(".html".count)))
                    #expect(!answer.body.contains(token), "\(path) shows the token of \(type)/\(file)")
                    if path == "\(type)/\(file)",
                        answer.body.contains(#""authenticationToken": "\#(token.prefix(4))…""#)
                    {
                        masksSeen += 1
                    }
                }
            }
        }
        #expect(masksSeen == pages.count - 1, "each pass page shows its own token masked")
        let events = try await Curl.get(server.base + "_passforge/events", maxTime: 2)
        #expect(events.status == 200 && events.header("X-Content-Type-Options") == "nosniff", "\(events.head)")

        // In Chromium: the hostile value is shown as text, the language switcher and live reload work.
        let check = try await Self.checkWatch(
            server.base + page, members, "stamps: 7", "stamps: 8", "8 / 10", literal: hostile)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("edit shown after"), "\(check.output)")
        #expect(
            check.stdout.contains("languages switched: en, de") || check.stdout.contains("languages switched: de, en"),
            "\(check.output)")
    }

    /// scripts/check-preview-watch.py in headless Chromium.
    static func checkWatch(
        _ url: String, _ file: String, _ old: String, _ new: String, _ shown: String, literal: String? = nil
    ) async throws -> ProcessResult {
        // The issue's bound is 2 s. When the whole suite runs in parallel on a 2-core CI machine, the
        // load average is several times the core count and the page can take a little longer; then the
        // bound is 10 s (still far from a manual reload), and the script prints the measured delay.
        var environment = ProcessInfo.processInfo.environment
        environment["WATCH_DEADLINE"] = machineIsOverloaded() ? "10" : "2"
        return try await runProcessWithoutBlocking(
            try await testPython(),
            ["\(repositoryRoot)/scripts/check-preview-watch.py", url, file, old, new, shown]
                + (literal.map { ["--literal", $0] } ?? []), environment: environment)
    }

    /// The 1-minute load average is more than twice the cores (`/proc/loadavg`).
    static func machineIsOverloaded() -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
            let load = text.split(separator: " ").first.flatMap({ Double($0) })
        else { return false }
        return load > 2 * Double(ProcessInfo.processInfo.activeProcessorCount)
    }
}

/// `passforge preview --watch --port 0 --out gallery` running in a project.
final class WatchServer: Sendable {
    let process: BackgroundProcess
    /// `http://127.0.0.1:PORT/`, as the command prints it.
    let base: String
    let port: Int

    /// Started when its URL is printed: an awaited line of its output, no thread held.
    init(project: TemporaryDirectory, environment extra: [String: String] = [:]) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["CI"] = nil
        environment.merge(extra) { _, new in new }
        process = try BackgroundProcess(
            passforgeExecutable(), ["preview", "--watch", "--port", "0", "--out", "gallery"],
            directory: project.path, environment: environment)
        // "serving the preview on http://127.0.0.1:PORT/"
        let url = try await process.value("its URL") { stdout, _ in
            stdout.range(of: #"http://127\.0\.0\.1:\d+/"#, options: .regularExpression).map { String(stdout[$0]) }
        }
        guard let port = Int(url.dropFirst("http://127.0.0.1:".count).dropLast()) else {
            await process.kill()
            throw PreviewTestError("no URL in \(process.stdout)")
        }
        base = url
        self.port = port
    }

    /// SIGTERM without waiting (a `defer` cannot await); SIGKILL follows when it is released.
    func stop() {
        process.signal(SIGTERM)
    }
}

/// curl, the real HTTP client, with the Host header it is told to send.
enum Curl {
    struct Answer {
        var status: Int
        var head: String
        var body: String
        func header(_ name: String) -> String? {
            head.split(separator: "\r\n").dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// GET `url`; `host` replaces the Host header ("" sends none); `maxTime` ends an endless stream.
    static func get(_ url: String, host: String? = nil, maxTime: Int = 10) throws -> Answer {
        var arguments = ["-sS", "-i", "--max-time", String(maxTime), "--path-as-is"]
        if let host { arguments += ["-H", "Host:" + (host.isEmpty ? "" : " " + host)] }
        return try answer(url, try runProcess("/usr/bin/curl", arguments + [url]))
    }

    /// `get` for async tests: suspends until curl ends, holding none of the test runner's threads.
    static func get(_ url: String, host: String? = nil, maxTime: Int = 10) async throws -> Answer {
        var arguments = ["-sS", "-i", "--max-time", String(maxTime), "--path-as-is"]
        if let host { arguments += ["-H", "Host:" + (host.isEmpty ? "" : " " + host)] }
        return try answer(url, try await runProcessWithoutBlocking("/usr/bin/curl", arguments + [url]))
    }

    private static func answer(_ url: String, _ result: ProcessResult) throws -> Answer {
        // 28: the time ran out, which ends an event stream on purpose.
        guard result.status == 0 || result.status == 28 else {
            throw PreviewTestError("curl \(url) failed: \(result.output)")
        }
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts[0]
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return Answer(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

@Suite("passforge init")
struct InitTests {
    @Test("init, then build and preview in an empty folder: exit 0 and no warnings")
    func initBuildPreview() throws {
        let folder = TemporaryDirectory("passforge-init")
        let initResult = try passforge(["init", "project"], in: folder.path)
        #expect(initResult.status == 0, "\(initResult.output)")
        let project = folder.file("project")
        for style in ["boarding", "coupon", "event", "generic", "store-card"] {
            #expect(FileManager.default.fileExists(atPath: "\(project)/templates/\(style)/pass.json"))
            #expect(FileManager.default.fileExists(atPath: "\(project)/content/\(style)/example.yml"))
        }
        let config = try String(contentsOfFile: "\(project)/passforge.yml", encoding: .utf8)
        #expect(config.contains("# "))
        let build = try passforge(["build", "--development-signing"], in: project)
        #expect(build.status == 0, "\(build.output)")
        // Five passes and one order.
        #expect(build.stdout.contains("built 6,"), "\(build.output)")
        #expect(FileManager.default.fileExists(atPath: "\(project)/output/v1/orders/order.com.example.orders/EX-0001"))
        // No diagnostic warnings (the development-signing banner is not one: it is about the machine, not the project).
        #expect(!build.output.contains(": warning:"), "\(build.output)")
        #expect(build.stdout.contains("warnings 0"), "\(build.output)")
        let preview = try passforge(["preview"], in: project)
        #expect(preview.status == 0, "\(preview.output)")
        #expect(!preview.output.contains(": warning:"), "\(preview.output)")
        #expect(
            preview.stdout.contains("preview of 5 passes and 1 order") && preview.stdout.contains("0 warnings"),
            "\(preview.output)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: "\(project)/preview/pass.com.example.passes")
        #expect(
            pages.sorted() == [
                "BADGE-0001.html", "CARD-0001.html", "COUPON-0001.html", "FLIGHT-0001.html", "TICKET-0001.html",
            ])
    }

    @Test("init refuses to overwrite, and writes nothing then")
    func refusesToOverwrite() throws {
        let folder = TemporaryDirectory("passforge-init")
        folder.write("templates/coupon/pass.json", "{}")
        let result = try passforge(["init"], in: folder.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("templates/coupon/pass.json"), "\(result.output)")
        #expect(result.stderr.contains("never overwrites"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("passforge.yml")))
        #expect(String(decoding: folder.read("templates/coupon/pass.json") ?? [], as: UTF8.self) == "{}")
    }
}

@Suite("the build refuses a barcode message its format cannot encode")
struct BarcodeValidationBuildTests {
    @Test(
        "validate reports barcode.encodable at the content line of the message, with the reason",
        arguments: [
            ("PKBarcodeFormatQR", String(repeating: "Q", count: 4_400), "too long"),
            ("PKBarcodeFormatPDF417", String(repeating: "P", count: 2_000), "too long"),
            ("PKBarcodeFormatAztec", String(repeating: "a", count: 4_000), "too long"),
            ("PKBarcodeFormatCode128", "東京 gate 5", "Code 128 encodes only ISO 8859-1"),
            ("PKBarcodeFormatCode39", "member-42", "Code 39 encodes only digits, capital letters"),
            ("PKBarcodeFormatCodabar", "A12X4B", "Codabar encodes only digits"),
            ("PKBarcodeFormatEAN13", "400638133393", "EAN-13"),
            ("PKBarcodeFormatI2of5", "12345", "odd number"),
        ])
    func unencodableMessage(format: String, message: String, reason: String) throws {
        let project = ProjectFixture(passCount: 0)
        project.directory.write(
            "templates/code/pass.json",
            """
            {
              "description": "Barcode test",
              "generic": { "primaryFields": [{"key": "name", "label": "Name", "value": "test"}] },
              "barcodes": [
                {"format": "{{ format }}", "message": "{{ code }}", "messageEncoding": "iso-8859-1"},
                {"format": "PKBarcodeFormatQR", "message": "fallback", "messageEncoding": "iso-8859-1"}
              ]
            }
            """)
        for name in ["icon.png", "icon@2x.png"] {
            try FileManager.default.copyItem(
                atPath: project.directory.file("templates/card/\(name)"),
                toPath: project.directory.file("templates/code/\(name)"))
        }
        // The EAN-13 case: 12 digits are fine, so the test uses a 13th that is a wrong check digit.
        let value = format == "PKBarcodeFormatEAN13" ? message + "2" : message
        project.directory.write(
            "content/code.yml",
            """
            template: code
            serialNumber: CODE-1
            data:
              format: \(format)
              code: "\(value)"
            """)
        let result = try project.passforge(["validate", "--development-signing"])
        #expect(result.status == 1, "\(result.output)")
        let line =
            result.stderr.split(separator: "\n").first { $0.contains("[barcode.encodable]") }.map(String.init) ?? ""
        #expect(line.hasPrefix("content/code.yml:5:"), "\(result.output)")
        #expect(line.contains("barcodes[0].message"), "\(line)")
        #expect(line.contains(reason), "\(line)")
        #expect(
            result.stderr.components(separatedBy: "[barcode.encodable]").count == 2,
            "only the first barcode fails: \(result.output)")
    }
}

@Suite("the Host names preview --watch answers")
struct PreviewHostRuleTests {
    @Test("loopback names and the bound address, with no port or the bound one; anything else 403, malformed 400")
    func verdicts() {
        let loopback = PreviewHostRule(boundHost: "127.0.0.1")
        let cases: [(String, PreviewHostRule.Verdict)] = [
            ("localhost", .allowed), ("localhost:8080", .allowed), ("LocalHost:8080", .allowed),
            ("127.0.0.1:8080", .allowed),
            ("[::1]:8080", .allowed), ("[::1]", .allowed),
            ("localhost:8081", .foreign), ("attacker.example", .foreign), ("attacker.example:8080", .foreign),
            ("localhost.", .foreign), ("127.0.0.2:8080", .foreign), ("0.0.0.0:8080", .foreign),
            ("[::2]:8080", .foreign),
            ("", .malformed), ("localhost:", .malformed), ("localhost:80:80", .malformed),
            ("localhost:http", .malformed),
            ("user@localhost", .malformed), ("local host", .malformed), ("[::1", .malformed), ("[::1]x", .malformed),
            ("[]:8080", .malformed), ("localhost:123456", .malformed), ("localhost/x", .malformed),
        ]
        for (host, verdict) in cases {
            #expect(loopback.verdict(hosts: [host], port: 8080) == verdict, "Host: \(host)")
        }
        #expect(loopback.verdict(hosts: [], port: 8080) == .malformed)
        #expect(loopback.verdict(hosts: ["localhost", "localhost"], port: 8080) == .malformed)
        // Bound to a LAN address (to preview on a phone): that address too, and still the loopback names.
        let lan = PreviewHostRule(boundHost: "192.168.1.20")
        #expect(lan.verdict(hosts: ["192.168.1.20:8080"], port: 8080) == .allowed)
        #expect(lan.verdict(hosts: ["localhost:8080"], port: 8080) == .allowed)
        #expect(lan.verdict(hosts: ["192.168.1.21:8080"], port: 8080) == .foreign)
        #expect(PreviewHostRule(boundHost: "::1").names.contains("[::1]"))
        #expect(PreviewHostRule(boundHost: "fe80::1").verdict(hosts: ["[FE80::1]:8080"], port: 8080) == .allowed)
    }
}
