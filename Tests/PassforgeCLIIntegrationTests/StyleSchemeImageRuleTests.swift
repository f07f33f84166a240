import Foundation
import TestSupport
import Testing

/// Passes of one template share their image check, unless their style scheme
/// differs: a pass that turns itself into a poster event ticket in `pass:`
/// must get the poster image rules even when plain passes of its template
/// were checked first.
@Suite struct StyleSchemeImageRuleTests {
    @Test func aPassPreferringThePosterSchemeGetsThePosterImageRulesOfItsOwn() async throws {
        let project = ProjectFixture(passCount: 0)
        project.directory.write(
            "templates/ticket/pass.json",
            """
            {
              "description": "Ticket {{ serialNumber }}",
              "eventTicket": {"primaryFields": [{"key": "event", "label": "Event", "value": "Concert"}]},
              "barcodes": [{"format": "PKBarcodeFormatQR", "message": "{{ serialNumber }}", "messageEncoding": "iso-8859-1"}]
            }
            """)
        for (name, size) in [("icon.png", 29), ("icon@2x.png", 58), ("icon@3x.png", 87)] {
            project.directory.write("templates/ticket/\(name)", bytes: PNGFactory.png(width: size, height: size))
        }
        project.directory.write(
            "content/plain.yml",
            """
            template: ticket
            passes:
            \((0..<8).map { "  - serialNumber: T-000\($0)" }.joined(separator: "\n"))
            """)
        project.directory.write(
            "content/poster.yml",
            """
            template: ticket
            serialNumber: P-0001
            pass:
              preferredStyleSchemes: [posterEventTicket, eventTicket]
            """)
        let result = try await project.passforge(["validate"])
        #expect(result.status == 1)
        let artworkErrors = result.output.split(separator: "\n").filter { $0.contains("image.posterArtwork") }
        #expect(artworkErrors.count == 1, "\(result.output)")
        #expect(
            artworkErrors.allSatisfy { $0.contains("poster.yml") || $0.contains("templates/ticket") },
            "\(artworkErrors)")
    }
}
