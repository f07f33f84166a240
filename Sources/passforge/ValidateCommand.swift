import ArgumentParser
import PassBuild
import WalletTree

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check every pass against Apple's rules without signing or writing anything.",
        discussion: """
            Prints every problem as `file:line:col: error: message [rule]` and exits 1 on any error.
            Your own content is held to Apple's documentation: a hex colour or textAlignment on a
            primary field is an error here, though `inspect` only warns about it in a pass someone
            else made (Wallet shows it).

            Examples:
              passforge validate
              passforge validate --content content/flights
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Accept an http:// webServiceURL (works only on development devices).")
    var allowHTTPWebService = false

    @Flag(help: "Allow the development signing chain under CI=true.")
    var developmentSigning = false

    func run() throws {
        let settings = try project.settings(
            developmentSigning: developmentSigning, allowHTTP: allowHTTPWebService, jobs: nil)
        let warnings = try Console.runReportingErrors { try PassBuilder(settings: settings).validate() }
        Console.report(warnings)
        Console.print("no errors, \(warnings.count) warning\(warnings.count == 1 ? "" : "s")")
    }
}
