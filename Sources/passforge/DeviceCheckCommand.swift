import ArgumentParser
import AtomicFiles
import DeviceCheck
import Foundation

struct DeviceCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-check",
        abstract: "Ask Apple's DeviceCheck service about one device by hand: query, set or validate.",
        discussion: """
        Uses passforge.yml's deviceCheck: settings and the .p8 key (deviceCheck.privateKey or
        PASSFORGE_DEVICECHECK_KEY). --token names a file holding the device's DCDevice token,
        base64 as the app sends it (- reads it from standard input). Apple asks for a new token
        per request.

        Examples:
          passforge device-check query --token token.txt
          passforge device-check set --token token.txt --bit 0 --value false     give the device the offer again
          passforge device-check validate --token - < token.txt
        """,
        subcommands: [Query.self, Set.self, Validate.self]
    )

    struct TokenOptions: ParsableArguments {
        @Option(help: ArgumentHelp("A file holding the DCDevice token, base64; - for standard input.", valueName: "file"))
        var token: String

        func read() throws -> String {
            let limit = 64 * 1024
            // Standard input too is read no further than the limit.
            let bytes = try? AtomicFileSystem.readFile(token == "-" ? "/dev/stdin" : token, limit: limit)
            guard let bytes, let text = String(validating: bytes, as: UTF8.self) else {
                throw ValidationError("cannot read the device token from \(token) (at most \(limit) bytes of UTF-8)")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Runs `body` with a client, printing Apple's answer or why there is none (never the token or the key).
    static func withClient(_ project: ProjectOptions, _ body: (DeviceCheckClient) async throws(DeviceCheckError) -> Void) async throws {
        let client: DeviceCheckClient
        do {
            client = try DeviceCheckSetup.client(configuration: try project.loadConfiguration())
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
        do {
            try await body(client)
            await client.shutdown()
        } catch {
            await client.shutdown()
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
    }

    struct Query: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the device's two bits (both false for a device Apple has no bits for).")
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        func run() async throws {
            let deviceToken = try token.read()
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                let bits = try await client.queryBits(deviceToken: deviceToken)
                Console.print("bit0: \(bits.bit0)\nbit1: \(bits.bit1)\nlast update: \(bits.lastUpdateTime ?? "never")")
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set one bit of the device, keeping the other as Apple has it.")
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        @Option(help: "Which bit: 0 or 1.")
        var bit: Int

        @Option(help: "true or false.")
        var value: Bool

        func validate() throws {
            guard bit == 0 || bit == 1 else { throw ValidationError("--bit must be 0 or 1: Apple keeps two bits per device") }
        }

        func run() async throws {
            let deviceToken = try token.read()
            let (bit, value) = (self.bit, self.value)
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                var bits = try await client.queryBits(deviceToken: deviceToken)
                bits[bit] = value
                try await client.updateBits(bits, deviceToken: deviceToken)
                Console.print("bit0: \(bits.bit0)\nbit1: \(bits.bit1)")
            }
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask Apple whether the device token is valid.")
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        func run() async throws {
            let deviceToken = try token.read()
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                try await client.validate(deviceToken: deviceToken)
                Console.print("the device token is valid")
            }
        }
    }
}
