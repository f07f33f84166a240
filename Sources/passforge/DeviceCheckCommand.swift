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
            PASSFORGE_DEVICECHECK_KEY). --token names a file holding the device's DCDevice tokens,
            base64 as the app sends them, one per line (- reads them from standard input). Apple
            calls a token single-use, so each call to Apple takes a token of its own: query and
            validate take one, set takes two (one to read the bit it keeps, one to write).

            Examples:
              passforge device-check query --token token.txt
              passforge device-check set --token two-tokens.txt --bit 0 --value false     give the device the offer again
              passforge device-check validate --token - < token.txt
            """,
        subcommands: [Query.self, Set.self, Validate.self]
    )

    struct TokenOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "A file holding DCDevice tokens, base64, one per line; - for standard input.", valueName: "file"))
        var token: String

        /// The first `count` tokens of the file, each used for one call.
        func read(_ count: Int) throws -> [String] {
            let tokens = try read().split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            guard tokens.count >= count, Swift.Set(tokens.prefix(count)).count == count else {
                throw ValidationError(
                    "\(token) must hold \(count == 2 ? "two tokens" : "a token"), one per line, each from its own "
                        + "DCDevice.generateToken call: Apple's tokens are single-use, and this takes one per call to Apple"
                )
            }
            return Array(tokens.prefix(count))
        }

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
    static func withClient(
        _ project: ProjectOptions, _ body: (DeviceCheckClient) async throws(DeviceCheckError) -> Void
    ) async throws {
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
        static let configuration = CommandConfiguration(
            abstract: "Print the device's two bits (both false for a device Apple has no bits for).")
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        func run() async throws {
            let deviceToken = try token.read(1)[0]
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                let bits = try await client.queryBits(deviceToken: deviceToken)
                Console.print("bit0: \(bits.bit0)\nbit1: \(bits.bit1)\nlast update: \(bits.lastUpdateTime ?? "never")")
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set one bit of the device, keeping the other as Apple has it.",
            discussion: """
                Two calls to Apple: a query (to keep the other bit) and an update. Apple's tokens are
                single-use, so the --token file holds two tokens, one per line, from two
                DCDevice.generateToken calls: the first is sent with the query, the second with the update.
                """)
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        @Option(help: "Which bit: 0 or 1.")
        var bit: Int

        @Option(help: "true or false.")
        var value: Bool

        func validate() throws {
            guard bit == 0 || bit == 1 else {
                throw ValidationError("--bit must be 0 or 1: Apple keeps two bits per device")
            }
        }

        func run() async throws {
            let tokens = try token.read(2)
            let (bit, value) = (self.bit, self.value)
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                var bits = try await client.queryBits(deviceToken: tokens[0])
                bits[bit] = value
                try await client.updateBits(bits, deviceToken: tokens[1])
                Console.print("bit0: \(bits.bit0)\nbit1: \(bits.bit1)")
            }
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask Apple whether the device token is valid.")
        @OptionGroup var project: ProjectOptions
        @OptionGroup var token: TokenOptions

        func run() async throws {
            let deviceToken = try token.read(1)[0]
            try await DeviceCheckCommand.withClient(project) { client throws(DeviceCheckError) in
                try await client.validate(deviceToken: deviceToken)
                Console.print("the device token is valid")
            }
        }
    }
}
