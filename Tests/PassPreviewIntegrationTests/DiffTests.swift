import Foundation
import SQLiteRegistrationStore
import TestSupport
import Testing

/// A git repository holding a project made by `passforge init`, with a
/// webServiceURL so that passes carry tokens.
final class DiffRepository: Sendable {
    let directory = TemporaryDirectory("passforge-diff")
    var path: String { directory.path }

    init() throws {
        #expect(try passforge(["init"], in: path).status == 0)
        let config = try String(contentsOfFile: directory.file("passforge.yml"), encoding: .utf8)
        directory.write(
            "passforge.yml",
            config.replacingOccurrences(
                of: "# webServiceURL: https://passes.example.com/", with: "webServiceURL: https://passes.example.com/"))
        try git("init", "-q", "-b", "main")
        try commit("a new project")
    }

    func git(_ arguments: String...) throws {
        let result = try runProcess(
            "git", ["-c", "user.name=Editor", "-c", "user.email=editor@example.com"] + arguments, directory: path)
        #expect(result.status == 0, "git \(arguments): \(result.output)")
    }

    func commit(_ message: String) throws {
        try git("add", "-A")
        try git("commit", "-q", "-m", message)
    }

    func edit(_ file: String, _ old: String, _ new: String) throws {
        let text = try String(contentsOfFile: directory.file(file), encoding: .utf8)
        #expect(text.contains(old), "\(old) is not in \(file)")
        directory.write(file, text.replacingOccurrences(of: old, with: new))
    }

    func diff(_ arguments: [String]) throws -> ProcessResult {
        try passforge(["diff"] + arguments, in: path)
    }
}

@Suite("passforge diff on a real git repository")
struct DiffTests {
    @Test(
        "added, changed (with and without changeMessage, images with pixel sizes, other keys) and removed passes, with device counts, as markdown"
    )
    func reviewableChanges() async throws {
        let repository = try DiffRepository()
        // Devices holding two of the passes, in the default registration store (state/registrations.sqlite).
        try FileManager.default.createDirectory(
            atPath: repository.directory.file("state"), withIntermediateDirectories: true)
        let store = try SQLiteRegistrationStore(path: repository.directory.file("state/registrations.sqlite"))
        for device in ["device-a", "device-b"] {
            _ = try await store.register(
                device: device, pushToken: "token-\(device)", passTypeIdentifier: "pass.com.example.passes",
                serialNumber: "FLIGHT-0001")
        }
        _ = try await store.register(
            device: "device-c", pushToken: "token-c", passTypeIdentifier: "pass.com.example.passes",
            serialNumber: "BADGE-0001")

        try repository.edit("content/boarding/example.yml", "gate: A1", "gate: B7")  // has a changeMessage
        // has none
        try repository.edit("content/boarding/example.yml", "passenger: Jane Appleseed", "passenger: Jane Doe")
        try repository.edit(
            "templates/coupon/pass.json", "\"logoText\": \"Example Market\"", "\"logoText\": \"Example Market 2\"")
        try FileManager.default.removeItem(atPath: repository.directory.file("templates/coupon/logo@2x.png"))
        try FileManager.default.copyItem(
            atPath: repository.directory.file("templates/coupon/icon@3x.png"),
            toPath: repository.directory.file("templates/coupon/logo@2x.png"))
        try FileManager.default.removeItem(atPath: repository.directory.file("content/generic/example.yml"))
        repository.directory.write(
            "content/event/second.yml",
            """
            template: event
            serialNumber: TICKET-0002
            data: { code: "TICKET-0002", event: Spring Concert, date: "2027-04-10T19:30:00Z", seat: "Row F, seat 13" }
            """)
        try repository.commit("gate, passenger, coupon logo, badge removed, second ticket")

        let result = try repository.diff(["HEAD~1", "HEAD", "--format", "markdown"])
        #expect(result.status == 0, "\(result.output)")
        let markdown = result.stdout
        #expect(
            markdown.hasPrefix("### passforge diff `HEAD~1` → `HEAD`: 1 added, 2 changed, 1 removed"), "\(markdown)")
        #expect(
            markdown.contains(
                "#### Added\n- `pass.com.example.passes/TICKET-0002` (`content/event/second.yml`, template `event`)"),
            "\(markdown)")
        #expect(
            markdown.contains(
                "#### Removed\n- ⚠️ `pass.com.example.passes/BADGE-0001` (was `content/generic/example.yml`) is removed: holders keep it, no longer updated, pushes 1 device"
            ), "\(markdown)")
        #expect(
            markdown.contains(
                "**`pass.com.example.passes/FLIGHT-0001`** (`content/boarding/example.yml`), pushes 2 devices"),
            "\(markdown)")
        #expect(markdown.contains("| `GATE (gate)` | `A1` | `B7` |  |"), "\(markdown)")
        #expect(
            markdown.contains(
                "| `PASSENGER (passenger)` | `Jane Appleseed` | `Jane Doe` | ⚠️ no changeMessage: the phone updates silently |"
            ), "\(markdown)")
        #expect(markdown.contains("- image `logo@2x.png`: 100×100 px → 87×87 px"), "\(markdown)")
        #expect(markdown.contains("- other keys changed: `logoText`"), "\(markdown)")
        #expect(markdown.contains("The build will push **3** devices."), "\(markdown)")
        #expect(!markdown.contains("would refuse"), "\(markdown)")

        // The same as terminal text, HEAD being the working tree.
        let text = try repository.diff(["HEAD~1"])
        #expect(text.status == 0, "\(text.output)")
        #expect(
            text.stdout.contains(
                "secondaryFields PASSENGER (passenger): \"Jane Appleseed\" -> \"Jane Doe\"  [warning: no changeMessage: the phone updates silently]"
            ), "\(text.stdout)")
    }

    @Test("a serial change, a token change and a content error are what the build refuses: exit 1")
    func refusedChanges() throws {
        let repository = try DiffRepository()
        try repository.edit("content/coupon/example.yml", "serialNumber: COUPON-0001", "serialNumber: COUPON-0002")
        try repository.edit(
            "content/store-card/example.yml", "member: Jane Appleseed",
            "member: Jane Appleseed\npass:\n  authenticationToken: abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ")
        try repository.commit("serial and token")
        let result = try repository.diff(["HEAD~1", "HEAD", "--format", "markdown"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stdout.contains("**❌ `passforge build` would refuse this change:**"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "- `content/coupon/example.yml`: the serial changed from `COUPON-0001` to `COUPON-0002`"),
            "\(result.stdout)")
        #expect(
            result.stdout.contains("- `pass.com.example.passes/CARD-0001`: the authenticationToken changes"),
            "\(result.stdout)")
        #expect(
            result.stdout.contains("_Registration store not reachable: device counts unknown._"), "\(result.stdout)")

        // A content error in the working tree.
        try repository.edit("content/event/example.yml", "template: event", "template: no-such-template")
        let broken = try repository.diff(["HEAD"])
        #expect(broken.status == 1, "\(broken.output)")
        #expect(
            broken.stdout.contains(
                "content/event/example.yml:1:11: error: template: unknown template `no-such-template`"),
            "\(broken.stdout)")

        // No change at all: exit 0.
        try repository.git("checkout", "-q", "--", "content/event/example.yml")
        let clean = try repository.diff(["HEAD"])
        #expect(clean.status == 0, "\(clean.output)")
        // `passforge init` writes an example order too.
        #expect(clean.stdout.contains("no pass or order changes"), "\(clean.stdout)")
    }

    @Test(
        "from another working directory (--config names the project): the same diff, with the same file names; passforge's own folder is unchanged"
    )
    func fromAnotherWorkingDirectory() throws {
        let repository = try DiffRepository()
        try repository.edit("content/boarding/example.yml", "gate: A1", "gate: B7")
        try repository.commit("gate")
        try repository.edit("content/boarding/example.yml", "gate: B7", "gate: C3")
        let inside = try repository.diff(["HEAD~1", "HEAD"])
        #expect(inside.status == 0 && inside.stdout.contains("content/boarding/example.yml"), "\(inside.output)")

        // A folder outside the repository: git and the build are pointed at the project, not at the working directory.
        let elsewhere = TemporaryDirectory("passforge-elsewhere")
        let outside = try passforge(
            ["diff", "--config", repository.directory.file("passforge.yml"), "HEAD~1", "HEAD"], in: elsewhere.path)
        #expect(outside.status == 0, "\(outside.output)")
        #expect(outside.stdout == inside.stdout)
        // The working tree too, against the last commit.
        let workingTree = try passforge(
            ["diff", "--config", repository.directory.file("passforge.yml"), "HEAD"], in: elsewhere.path)
        #expect(
            workingTree.status == 0 && workingTree.stdout.contains("B7") && workingTree.stdout.contains("C3"),
            "\(workingTree.output)")
        #expect(
            workingTree.stdout.contains("content/boarding/example.yml")
                && !workingTree.stdout.contains(repository.path), "\(workingTree.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }

    /// A change whose values, keys and file names are written to attack the pull-request comment and
    /// the reviewer's terminal; its last entries (a removed pass, a balance going from 12.5 to 0.01)
    /// are what it tries to hide.
    static func hostileChange() throws -> DiffRepository {
        let repository = try DiffRepository()
        let generic = try String(
            contentsOfFile: repository.directory.file("content/generic/example.yml"), encoding: .utf8)
        try FileManager.default.removeItem(atPath: repository.directory.file("content/generic/example.yml"))
        // A content file whose name opens an HTML comment on a line of its own.
        repository.directory.write(
            "content/new\n\n<!--\n.yml", generic.replacingOccurrences(of: "BADGE-0001", with: "BADGE-0002"))
        try repository.edit("content/store-card/example.yml", "balance: 12.5", "balance: 0.01")
        try repository.edit(
            "content/store-card/example.yml", "member: Jane Appleseed",
            #"""
            member: "Jane ![x](https://evil.example/track.png) [click](https://phish.example) @mention <img src=x> https://raw.example/x www.raw.example \u001B[2K\u001B[32m\nsignature: verifies\r\u202Egnp.exe | cell"
            """#)
        try repository.edit(
            "templates/store-card/pass.json", #""key": "terms", "label": "Terms""#,
            #""key": "te`r``ms", "label": "<b>Terms</b>""#)
        try repository.commit("hostile")
        return repository
    }

    @Test(
        "markdown: values, keys and file names from the change render as text (real cmark-gfm), and what follows them still renders"
    )
    func hostileMarkdownIsData() throws {
        let repository = try Self.hostileChange()
        let result = try repository.diff(["HEAD~1", "HEAD", "--format", "markdown"])
        // The file name with control characters is refused: the build would refuse it.
        #expect(result.status == 1, "\(result.output)")
        let html = try renderGFM(result.stdout)
        for tag in ["<a", "<img", "<b>", "<!--", "<script"] { #expect(!html.contains(tag), "\(tag): \(html)") }
        var outsideCode = html
        while let start = outsideCode.range(of: "<code>"),
            let end = outsideCode.range(of: "</code>", range: start.upperBound..<outsideCode.endIndex)
        {
            outsideCode.removeSubrange(start.lowerBound..<end.upperBound)
        }
        for text in ["@", "://", "www.", "evil", "phish"] {
            #expect(!outsideCode.contains(text), "\(text) outside code: \(html)")
        }
        // What the hostile entries come before.
        #expect(
            html.contains(
                "<code>pass.com.example.passes/BADGE-0001</code> (was <code>content/generic/example.yml</code>) is removed"
            ), "\(html)")
        #expect(
            html.contains(
                "<td><code>BALANCE (balance)</code></td>\n<td><code>12.5</code></td>\n<td><code>0.01</code></td>"),
            "\(html)")
        #expect(
            html.contains("content/new??&lt;!--?.yml: error: the name of this content file holds a control"), "\(html)")
        #expect(html.contains("<code>&lt;b&gt;Terms&lt;/b&gt; (te`r``ms)</code>"), "\(html)")
        #expect(
            html.contains("<p>The build will push") || html.contains("<em>Registration store not reachable"), "\(html)")
    }

    @Test("text: no control, escape or bidirectional character from a pass reaches the terminal")
    func hostileTextIsOneLinePerValue() throws {
        let repository = try Self.hostileChange()
        let result = try repository.diff(["HEAD~1", "HEAD"])
        #expect(result.status == 1, "\(result.output)")
        let shown = result.stdout
        // C0 but the newline, DEL and C1, line and paragraph separators, bidi controls.
        let controls = shown.unicodeScalars.filter { scalar in
            scalar != "\n"
                && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                    || [0x2028, 0x2029, 0x061C, 0x200E, 0x200F].contains(scalar.value)
                    || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value))
        }
        #expect(controls.isEmpty, "\(shown.debugDescription)")
        #expect(!shown.split(separator: "\n").contains { $0.hasPrefix("signature") }, "\(shown)")
        #expect(shown.contains("content/new??<!--?.yml: error: the name of this content file"), "\(shown)")
        #expect(shown.contains("BADGE-0001 (was content/generic/example.yml) is removed"), "\(shown)")
    }
}

extension DiffTests {
    @Test("a pull request's links and paths out of the project are errors that show nothing of the files they lead to")
    func linksOutOfTheProjectLeakNothing() throws {
        let repository = try DiffRepository()
        let outside = TemporaryDirectory("passforge-diff-outside")
        outside.write("secret.yml", "Zsecret-token: [unclosed\n")
        outside.write("photo.png", bytes: PNGFactory.png(width: 431, height: 123))
        try FileManager.default.createSymbolicLink(
            atPath: repository.directory.file("content/leak.yml"), withDestinationPath: outside.file("secret.yml"))
        try FileManager.default.removeItem(atPath: repository.directory.file("templates/coupon/logo@2x.png"))
        try FileManager.default.createSymbolicLink(
            atPath: repository.directory.file("templates/coupon/logo@2x.png"),
            withDestinationPath: outside.file("photo.png"))
        let relative =
            String(repeating: "../", count: repository.path.split(separator: "/").count + 6)
            + outside.file("photo.png").dropFirst()
        try repository.edit(
            "content/store-card/example.yml", "member: Jane Appleseed",
            "member: Jane Appleseed\nimages:\n  strip.png: \(relative)")
        try repository.commit("links out")
        for format in ["text", "markdown"] {
            let result = try repository.diff(["HEAD~1", "HEAD", "--format", format])
            #expect(result.status == 1, "\(result.output)")
            for rule in ["content.outside-project", "template.outside-project", "content.image-outside-project"] {
                #expect(result.stdout.contains(rule), "\(rule): \(result.stdout)")
            }
            for leak in ["Zsecret", "431", "123 px", "unclosed"] {
                #expect(!result.output.contains(leak), "\(leak): \(result.output)")
            }
        }
    }
}

/// `markdown` as GitHub renders it: the real cmark-gfm with GitHub's extensions.
func renderGFM(_ markdown: String) throws -> String {
    let result = try runProcess(
        "cmark-gfm", ["-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"], directory: "/",
        input: Data(markdown.utf8))
    #expect(result.status == 0, "cmark-gfm: \(result.output); install it (make deps)")
    return result.stdout
}

extension DiffTests {
    /// The repository's example orders (templates and content) added to a `passforge init` project.
    static func repositoryWithOrders() throws -> DiffRepository {
        let repository = try DiffRepository()
        for item in [
            "templates/shop-shipping-order", "templates/shop-pickup-order", "content/orders/so-2026-1042-shipping.yml",
            "content/orders/po-2026-0311-pickup.yml",
        ] {
            try FileManager.default.createDirectory(
                atPath: (repository.directory.file(item) as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: "\(repositoryRoot)/\(item)", toPath: repository.directory.file(item))
        }
        try repository.commit("orders")
        return repository
    }

    @Test(
        "orders: each changed value before → after by key path; a status moving forward is not flagged, one moving back is (order, shipping, pickup)"
    )
    func orderChanges() throws {
        let repository = try Self.repositoryWithOrders()
        let shipping = "content/orders/so-2026-1042-shipping.yml"
        let pickup = "content/orders/po-2026-0311-pickup.yml"
        // Forward: delivered and completed, the pickup picked up, a new price.
        try repository.edit(shipping, "    status: onTheWay", "    status: delivered")
        try repository.edit(shipping, "  status: open", "  status: completed")
        try repository.edit(shipping, "total: \"189.00\"", "total: \"179.00\"")
        try repository.edit(pickup, "status: readyForPickup", "status: pickedUp")
        try repository.commit("delivered, picked up")
        let forward = try repository.diff(["HEAD~1", "HEAD"])
        #expect(forward.status == 0, "\(forward.output)")
        #expect(forward.stdout.contains("0 added, 2 changed, 0 removed"), "\(forward.stdout)")
        #expect(
            forward.stdout.contains(
                "  order.com.example.passforge/SO-2026-1042 (content/orders/so-2026-1042-shipping.yml)\n"),
            "\(forward.stdout)")
        #expect(forward.stdout.contains("    status: \"open\" -> \"completed\"\n"), "\(forward.stdout)")
        #expect(
            forward.stdout.contains("    fulfillments[SO-2026-1042-parcel-1].status: \"onTheWay\" -> \"delivered\"\n"),
            "\(forward.stdout)")
        #expect(forward.stdout.contains("    payment.total.amount: \"189.00\" -> \"179.00\"\n"), "\(forward.stdout)")
        #expect(
            forward.stdout.contains(
                "    fulfillments[PO-2026-0311-pickup].status: \"readyForPickup\" -> \"pickedUp\"\n"),
            "\(forward.stdout)")
        #expect(!forward.stdout.contains("backwards"), "\(forward.stdout)")

        // Back, in the working tree: reopened, out for delivery again, ready for pickup again.
        try repository.edit(shipping, "    status: delivered", "    status: outForDelivery")
        try repository.edit(shipping, "  status: completed", "  status: open")
        try repository.edit(pickup, "status: pickedUp", "status: readyForPickup")
        let back = try repository.diff(["HEAD"])
        // A status going back is a warning, not a refusal: the build accepts it.
        #expect(back.status == 0, "\(back.output)")
        #expect(
            back.stdout.contains(
                "    status: \"completed\" -> \"open\"  [warning: status goes backwards (open -> completed or cancelled)]"
            ), "\(back.stdout)")
        #expect(
            back.stdout.contains(
                "    fulfillments[SO-2026-1042-parcel-1].status: \"delivered\" -> \"outForDelivery\"  [warning: status goes backwards (open -> processing -> onTheWay or shipped -> outForDelivery -> delivered or cancelled)]"
            ), "\(back.stdout)")
        #expect(
            back.stdout.contains(
                "    fulfillments[PO-2026-0311-pickup].status: \"pickedUp\" -> \"readyForPickup\"  [warning: status goes backwards (open -> processing -> readyForPickup -> pickedUp or cancelled)]"
            ), "\(back.stdout)")

        let markdown = try repository.diff(["HEAD", "--format", "markdown"])
        #expect(markdown.status == 0, "\(markdown.output)")
        #expect(
            markdown.stdout.contains(
                "**`order.com.example.passforge/SO-2026-1042`** (`content/orders/so-2026-1042-shipping.yml`)"),
            "\(markdown.stdout)")
        #expect(
            markdown.stdout.contains(
                "| `status` | `completed` | `open` | ⚠️ status goes backwards (open → completed or cancelled) |"),
            "\(markdown.stdout)")
        #expect(
            markdown.stdout.contains(
                "| `fulfillments[PO-2026-0311-pickup].status` | `pickedUp` | `readyForPickup` | ⚠️ status goes backwards"
            ), "\(markdown.stdout)")
    }

    @Test("orders: added and removed, hostile order values render as text in Markdown and on the terminal")
    func hostileOrderValues() throws {
        let repository = try Self.repositoryWithOrders()
        let shipping = "content/orders/so-2026-1042-shipping.yml"
        try repository.edit(
            shipping, "statusDescription: Your parcel is on its way.",
            #"""
            statusDescription: "On its way ![x](https://evil.example/t.png) [click](https://phish.example) <img src=x> | cell \u001B[2K\nsignature: ok"
            """#)
        try FileManager.default.removeItem(atPath: repository.directory.file("content/orders/po-2026-0311-pickup.yml"))
        let pickup = try String(
            contentsOfFile: "\(repositoryRoot)/content/orders/po-2026-0311-pickup.yml", encoding: .utf8)
        repository.directory.write(
            "content/orders/po-2026-0312-pickup.yml",
            pickup.replacingOccurrences(of: "PO-2026-0311", with: "PO-2026-0312"))
        try repository.commit("hostile status, another pickup")
        let result = try repository.diff(["HEAD~1", "HEAD", "--format", "markdown"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("1 added, 1 changed, 1 removed"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "#### Added\n- `order.com.example.passforge/PO-2026-0312` (`content/orders/po-2026-0312-pickup.yml`, template `shop-pickup-order`)"
            ), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "- ⚠️ `order.com.example.passforge/PO-2026-0311` (was `content/orders/po-2026-0311-pickup.yml`) is removed"
            ), "\(result.stdout)")
        let html = try renderGFM(result.stdout)
        for tag in ["<a", "<img", "<script"] { #expect(!html.contains(tag), "\(tag): \(html)") }
        #expect(
            html.contains("<td><code>statusDescription</code></td>\n<td><code>Your parcel is on its way.</code></td>"),
            "\(html)")

        let text = try repository.diff(["HEAD~1", "HEAD"])
        #expect(text.status == 0, "\(text.output)")
        #expect(!text.stdout.unicodeScalars.contains { $0.value == 0x1B }, "\(text.stdout.debugDescription)")
        #expect(!text.stdout.split(separator: "\n").contains { $0.hasPrefix("signature") }, "\(text.stdout)")
    }
}
