import ArgumentParser
import Foundation
import PassBuild
import PassContent
import PassPush
import WalletTree

/// Writing to the terminal: diagnostics and progress on stderr, results on stdout.
enum Console {
    static let isTerminal = isatty(STDERR_FILENO) != 0

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func report(_ diagnostics: [ContentDiagnostic]) {
        for diagnostic in diagnostics { error(diagnostic.description) }
    }

    /// The development-signing warning: impossible to miss.
    static func warnDevelopmentSigning() {
        error(
            """
            ****************************************************************************
            warning: no signing certificate configured: passes were signed with the
            DEVELOPMENT chain in .passforge/dev-pki/. They will NOT install on a device.
            Set PASSFORGE_SIGNING_CERTIFICATE, PASSFORGE_SIGNING_KEY,
            PASSFORGE_SIGNING_PASSWORD and PASSFORGE_WWDR_CERTIFICATE to sign for real.
            ****************************************************************************
            """)
    }

    /// A progress line that a terminal rewrites in place; a log gets one line each.
    static func progressLine(_ text: String, final: Bool) {
        if isTerminal {
            FileHandle.standardError.write(Data("\r\(text)\(final ? "\n" : "")".utf8))
        } else {
            error(text)
        }
    }

    static func progress(_ event: BuildProgress) {
        switch event {
        case .planning(let files): error("reading \(files) content file\(files == 1 ? "" : "s")…")
        case .signing(let done, let total):
            let percent = total == 0 ? 100 : done * 100 / total
            progressLine("signing \(done)/\(total) (\(percent)%)", final: done == total)
        case .writing(let passes, let orders):
            let items = [
                passes > 0 || orders == 0 ? "\(passes) pass\(passes == 1 ? "" : "es")" : nil,
                orders > 0 ? "\(orders) order\(orders == 1 ? "" : "s")" : nil,
            ].compactMap { $0 }
            error("writing \(items.joined(separator: " and ")) into the output tree…")
        case .note(let text): error(text)
        }
    }

    static func progress(_ event: PushRun.Progress, store: String) {
        switch event {
        case .queued(let changed, let pending):
            error("\(changed) since the last push; \(pending) push\(pending == 1 ? "" : "es") to send (\(store))")
        case .sending(let topic, let pushes):
            error("pushing \(topic): \(pushes) device token\(pushes == 1 ? "" : "s")")
        case .sent(let done, let total):
            progressLine("  \(done)/\(total) answered", final: done == total)
        }
    }

    /// Runs a library call and turns its failures into messages for people and exit code 1.
    static func runReportingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as BuildFailure {
            Console.report(failure.diagnostics)
            let errors = failure.errorCount
            let warnings = failure.diagnostics.count - errors
            Console.error(
                "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s"); nothing was written"
            )
            throw ExitCode.failure
        } catch let error as ExitCode {
            throw error
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
    }
}
