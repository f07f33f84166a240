import ArgumentParser
import AtomicFiles
import Foundation
import PassBuild
import PassContent
import PassModel
import PassPreview
import PassRender
import WalletTree

struct PreviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Write an HTML gallery of every pass: front, back, every language, scannable barcodes.",
        discussion: """
            Renders and validates every pass as `passforge build` does, without signing, and writes
            preview/index.html (the passes grouped by template) and one page per pass at
            preview/<passTypeIdentifier>/<serialNumber>.html. The pages open from file:// with no network.
            Exits 1 when the build would fail (the errors are printed as file:line:col).

            With --watch it serves the gallery on a local port, rebuilds it when a content file,
            template, image or passforge.yml changes, and open pages reload by themselves; errors
            show on the page at file:line. Stop it with Ctrl-C. It answers only requests for
            localhost, 127.0.0.1, [::1] or --host (403 otherwise: no other web site can read it).

            Examples:
              passforge preview                      then open preview/index.html
              passforge preview --out /tmp/gallery
              passforge preview --watch              http://127.0.0.1:8080/
              passforge preview --watch --port 0     any free port (printed)
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Accept an http:// webServiceURL, as `build --allow-http-web-service` does.")
    var allowHTTPWebService = false

    @Option(
        name: .customLong("out"),
        help: ArgumentHelp("Folder of the gallery (default: preview, in the project's root).", valueName: "dir"))
    var givenOut: String?

    @Flag(help: "Serve the gallery, rebuild it on every change, and reload open pages.")
    var watch = false

    @Option(help: ArgumentHelp("Port of the --watch server; 0 picks a free one.", valueName: "port"))
    var port = 8080

    @Option(
        help: ArgumentHelp(
            "Address of the --watch server; open it by this address or a loopback name.", valueName: "address"))
    var host = "127.0.0.1"

    func run() async throws {
        let settings = try project.settings(developmentSigning: true, allowHTTP: allowHTTPWebService, jobs: nil)
        let out = project.project.path(given: givenOut, default: "preview")
        let builder = PassBuilder(settings: settings)
        guard watch else {
            let rendering = builder.renderWithoutSigning()
            Console.report(rendering.diagnostics)
            guard rendering.errors.isEmpty else {
                Console.error(
                    "\(rendering.errors.count) error\(rendering.errors.count == 1 ? "" : "s"); the preview was not written"
                )
                throw ExitCode.failure
            }
            let changed = try PreviewGallery(directory: out, output: project.output).write(rendering.passes)
            let warnings = rendering.diagnostics.count
            let orders = rendering.passes.filter { $0.kind == .order }.count
            let passes = rendering.passes.count - orders
            let items =
                "\(passes) pass\(passes == 1 ? "" : "es")"
                + (orders == 0 ? "" : " and \(orders) order\(orders == 1 ? "" : "s")")
            Console.print(
                "preview of \(items) in \(out)/index.html (\(changed.count) file\(changed.count == 1 ? "" : "s") written, \(warnings) warning\(warnings == 1 ? "" : "s"))"
            )
            return
        }
        var watched = [project.content, project.templates]
        if let config = project.config { watched.append(config) }
        let watcher = PreviewWatcher(
            renderer: builder, gallery: PreviewGallery(directory: out, output: project.output), watchedPaths: watched,
            host: host, port: port)
        try await watcher.run(
            onServerRunning: { port in
                Console.print("serving the preview on http://\(host):\(port)/ (Ctrl-C to stop)")
            },
            onRebuild: { rebuild in
                if rebuild.errors.isEmpty {
                    Console.error(
                        "rebuilt: \(rebuild.passes) passes, \(rebuild.changedPages.count) page\(rebuild.changedPages.count == 1 ? "" : "s") changed"
                    )
                } else {
                    Console.report(rebuild.errors)
                    Console.error(
                        "\(rebuild.errors.count) error\(rebuild.errors.count == 1 ? "" : "s"); the pages show them")
                }
            })
    }
}
