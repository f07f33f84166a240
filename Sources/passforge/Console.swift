import Foundation
import PassBuild
import PassContent

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
        error("""
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
            progressLine("signing \(done)/\(total) passes (\(percent)%)", final: done == total)
        case .writing(let passes): error("writing \(passes) pass\(passes == 1 ? "" : "es") into the output tree…")
        case .note(let text): error(text)
        }
    }
}
