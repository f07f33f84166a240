import AtomicFiles
import ConcurrencySupport
import Foundation
import PassContent
import PassModel
package import PassRender
import WalletTree

extension PassBuilder: UnsignedRenderer {
    /// Renders every pass without signing. The signing identity is only
    /// looked at for its certificate checks, with the development chain
    /// allowed (nothing is signed with it). The token secret is the build's;
    /// where there is none (CI), a fixed stand-in so that both sides of a
    /// diff agree.
    package func renderWithoutSigning() -> UnsignedRendering {
        var settings = settings
        settings.allowsDevelopmentSigning = true
        let secret =
            (try? TokenSecret.resolve(
                environment: settings.environment, projectStateDirectory: settings.projectStateDirectory))
            ?? TokenSecret("passforge-preview-token-secret", origin: "preview")
        // The build's own pipeline (scan, evaluate, the checks across items), with a consumer that keeps
        // each render instead of signing it.
        var planner = BuildPlanner(
            settings: settings, state: BuildState(), secret: secret, identities: SigningIdentities(settings: settings),
            consumer: RenderCollector())
        var rendering = UnsignedRendering()
        do {
            rendering.diagnostics = try planner.makePlan(progress: { _ in }).warnings
        } catch let failure as BuildFailure {
            rendering.diagnostics = failure.diagnostics
        } catch {
            rendering.diagnostics = [
                .error(at: SourceLocation(file: settings.contentDirectory), rule: "content.read", "\(error)")
            ]
        }
        rendering.passes = planner.collectedRenders
        rendering.contentFiles = planner.listedFiles
        return rendering
    }
}
