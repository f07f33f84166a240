import ConcurrencySupport
import Foundation
import PassBuild
import PassContent
import PassPreview
import Synchronization
import TestSupport
import Testing

/// Leaves `project`'s output as a build killed at `point` would: the build runs in process, as
/// `passforge build` runs it (the same settings, landing pages included), and its `Checkpoints` copy the
/// output folder when it reaches `point`, between two steps of the commit; that copy (hard links and
/// modification times kept, `cp -a`) then takes the place of the output the build went on to finish.
func killBuild(_ project: ProjectFixture, env: [String: String], at point: String) throws {
    var environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
    environment["CI"] = nil
    var settings = try BuildSettings(projectFolder: project.root, environment: environment)
    if settings.configuration.landingPages.enabled {
        settings.landingPages = try LandingPageRenderer(
            configuration: settings.configuration, templatesDirectory: settings.templatesDirectory)
    }
    let killed = "\(project.root)/killed-at-\(point)"
    let copier = TreeCopier(point: point, output: project.output, copy: killed)
    settings.checkpoints = copier
    _ = try PassBuilder(settings: settings).build()
    try #require(copier.copied, "the build never reached \(point)")
    try FileManager.default.removeItem(atPath: project.output)
    try FileManager.default.moveItem(atPath: killed, toPath: project.output)
}

/// Copies the output folder at one checkpoint of the build.
private final class TreeCopier: Checkpoints {
    let point: String, output: String, copy: String
    private let done = Mutex(false)

    init(point: String, output: String, copy: String) { (self.point, self.output, self.copy) = (point, output, copy) }

    var copied: Bool { done.withLock { $0 } }

    func reached(_ point: String) {
        guard point == self.point else { return }
        let result = try? runProcess("cp", ["-a", output, copy])
        #expect(result?.status == 0, "cp -a \(output) \(copy): \(result?.output ?? "did not start")")
        done.withLock { $0 = result?.status == 0 }
    }
}
