import Foundation
import TestSupport
import Testing

/// Links through the real binary: a pass field's attributedValue and an order's URLs refused by `validate`
/// at their file:line, and an order's URL and future createdAt judged by `inspect` as the build judges them.
@Suite struct LinkRuleCLITests {
    @Test func anAttributedValueLinkToJavaScriptIsRefusedAtItsLine() async throws {
        let project = ProjectFixture(passCount: 1)
        let json = try String(contentsOfFile: project.directory.file("templates/card/pass.json"), encoding: .utf8)
        project.directory.write(
            "templates/card/pass.json",
            json.replacingOccurrences(
                of: """
                    "secondaryFields": [{"key": "points", "label": "Points", "value": "{{ points }}"}]
                    """,
                with: """
                    "secondaryFields": [{"key": "points", "label": "Points", "value": "{{ points }}"}],
                        "backFields": [{"key": "terms", "label": "Terms", "value": "See our terms",
                                        "attributedValue": "See <a href='javascript:alert(document.cookie)'>our terms</a>"}]
                    """))
        let result = try await project.passforge(["validate"])
        #expect(result.status == 1, "\(result.output)")
        // The template's line 8 holds the attributedValue key.
        let line = try #require(
            result.stderr.split(separator: "\n").first { $0.contains("[field.attributedValue.link]") },
            "\(result.output)")
        #expect(line.hasPrefix("templates/card/pass.json:8:"), "\(line)")
        #expect(line.contains("javascript:alert(document.cookie)") && line.contains("https, http, tel or mailto"))
        #expect(!FileManager.default.fileExists(atPath: project.output))
    }

    @Test func anOrderURLThatIsNotHTTPSIsRefusedAtItsLine() async throws {
        let project = ProjectFixture(passCount: 0)
        project.addOrderTemplate()
        project.directory.write(
            "content/orders/SO-1.yml",
            """
            template: shop
            orderIdentifier: SO-1
            data: { status: open, shipping: onTheWay }
            order:
              orderManagementURL: "vbscript:msgbox(1)"
            """)
        let result = try await project.passforge(["validate"])
        #expect(result.status == 1, "\(result.output)")
        let line = try #require(
            result.stderr.split(separator: "\n").first { $0.contains("[order.url.https]") }, "\(result.output)")
        #expect(line.hasPrefix("content/orders/SO-1.yml:5:"), "\(line)")
        #expect(line.contains("orderManagementURL") && line.contains("must be https"))
    }

    @Test func inspectJudgesAFutureCreatedAtAndAJavaScriptURLAsTheBuildDoes() async throws {
        let inspect = OrderInspectTests()
        let future = try inspect.order(
            OrderInspectTests.orderJSON
                .replacingOccurrences(
                    of: "\"createdAt\": \"2026-11-20T09:30:00Z\", \"updatedAt\": \"2026-11-21T09:30:00Z\"",
                    with: "\"createdAt\": \"2099-01-01T00:00:00Z\", \"updatedAt\": \"2099-01-01T00:00:00Z\""))
        var result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", future.path])
        #expect(result.status == 1 && result.output.contains("[order.createdAt.future]"), "\(result.output)")
        #expect(result.output.contains("created at:   2099-01-01T00:00:00Z"))

        let script = try inspect.order(
            OrderInspectTests.orderJSON
                .replacingOccurrences(
                    of: "\"url\": \"https://shop.example.com\"", with: "\"url\": \"javascript:alert(1)\""))
        result = try await runProcessWithoutBlocking(passforgeExecutable(), ["inspect", script.path])
        #expect(
            result.status == 1 && result.output.contains("merchant.url") && result.output.contains("[order.url.https]"),
            "\(result.output)")
    }
}
