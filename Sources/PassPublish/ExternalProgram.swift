import ExternalProcess

/// A program publish runs (rsync, ssh), found once in PATH; each run goes
/// through `ExternalProcess`, the one way passforge starts a process.
struct ExternalProgram: Sendable {
    struct Outcome: Sendable {
        var status: Int32
        var output: [UInt8]
        var errorOutput: String
    }

    /// The executable's full path.
    var path: String

    /// Finds `name` in the PATH of `environment`; nil when it is not installed.
    init?(named name: String, environment: [String: String]) {
        guard let path = ExternalProcess.locate(name, environment: environment) else { return nil }
        self.path = path
    }

    /// Runs the program and waits for it, on the caller's thread: publish's
    /// transports are synchronous (`ExternalProcess.runBlocking`).
    /// At most `outputLimit` bytes of standard output are taken: past them the program is stopped and the run
    /// is an error (a host that sends without end must not fill memory).
    func run(_ arguments: [String], input: [UInt8] = [], environment: [String: String], outputLimit: Int = 64 << 20)
        throws(PublishError) -> Outcome
    {
        let process = ExternalProcess(path, arguments, environment: environment, input: input, outputLimit: outputLimit)
        let outcome: ExternalProcess.Outcome
        do {
            outcome = try process.runBlocking()
        } catch  where error.kind == .outputLimitExceeded {
            throw PublishError(
                .tooLarge,
                "\(process.name) sent more than \(outputLimit >> 20) MB, more than a published build's state may be; stopped"
            )
        } catch {
            throw PublishError(.programMissing, error.description, underlying: error)
        }
        // A signal reads as the shell spells it (128 + signal), which RemoteFailure reports as a status.
        let status: Int32 =
            switch outcome.termination {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        return Outcome(status: status, output: outcome.output, errorOutput: outcome.errorText)
    }
}
