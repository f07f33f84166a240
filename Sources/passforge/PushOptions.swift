import ArgumentParser
import RegistrationStore

/// `push`'s own options.
struct PushOptions: ParsableArguments {
    @Flag(help: "Print the pushes that would be sent; send nothing and change nothing.")
    var dryRun = false

    @Option(
        name: .customLong("type"),
        help: ArgumentHelp("With --serial: push this one pass now.", valueName: "passTypeIdentifier"))
    var passType: String?

    @Option(help: ArgumentHelp("With --type: push this one pass now.", valueName: "serialNumber"))
    var serial: String?

    @Option(
        help: ArgumentHelp(
            "HTTP/2 connections to APNs per pass type, 1 to 16 (default: PASSFORGE_APNS_CONNECTIONS, else 1).",
            valueName: "N"))
    var connections: Int?

    func validate() throws {
        guard (passType == nil) == (serial == nil) else {
            throw ValidationError("--type and --serial go together: they name one pass")
        }
    }

    var pass: PassReference? {
        guard let passType, let serial else { return nil }
        return PassReference(passTypeIdentifier: passType, serialNumber: serial)
    }
}
