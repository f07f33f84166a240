// swift-tools-version:6.1
import PackageDescription

// One target per concern; dependencies point one way (→ reads "depends on"):
//   PassContent → PassModel → HTMLFragments → CLibxml2 (libxml2's HTML parser, from memory)
//   PassPackage → AtomicFiles → CSystemCalls; PassPackage → COpenSSL, CZlib, CLibzip
//   WalletTree → AtomicFiles, PassModel, RegistrationStore (the protocols only)
//   PassRender → PassContent, PassModel
//   PassBuild → PassContent, PassPackage, PassRender, Barcodes, WalletTree
//   Barcodes → CZint (libzint), PassModel; ProjectScaffold → CZlib
//   RegistrationStore → ConcurrencySupport
//   SQLiteRegistrationStore, PostgresRegistrationStore → RegistrationStore (only passforge links them)
//   PassServer, PassPush, PassPublish → WalletTree (never PassBuild: no OpenSSL, libzint or Yams in the server)
//   PassPreview, PassDiff → PassRender (the unsigned render's API, which PassBuild implements), WalletTree:
//     never PassBuild or OpenSSL; only PassPreview (its barcodes) and PassBuild link libzint
//   PassPush → its own APNsIdentityProvider (the command line adapts the build's identities): no OpenSSL
//   PassServer → PassOffers → DeviceCheck, RegistrationStore
//   PassServer, PassContent, PassDiff, passforge → TextEscaping
//   PassPublish, PassDiff → ExternalProcess (every program passforge starts: git, tar, rsync, ssh)
//   PassPublish → ObjectStorage (the S3 client: async-http-client, swift-crypto) → AtomicFiles
//   every target that touches files → AtomicFiles (no FileManager elsewhere; scripts/check-architecture.py)
//   passforge (the command line) → all of them
let package = Package(
    name: "passforge",
    products: [
        .executable(name: "passforge", targets: ["passforge"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // APNs over HTTP/2 with a client certificate; in tests also the real client that drives the server.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // HTTP/2 types for the APNs client; in tests the in-process mock of APNs (HTTP/2 server).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // `GET /metrics` of `passforge serve`: swift-metrics' API, exported in Prometheus' text format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The landing pages' template (`passforge build`), which a project may replace with its own.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        // System libraries, each used by exactly one small wrapper in PassPackage.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibzip",
            pkgConfig: "libzip",
            providers: [.apt(["libzip-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // libzint, the barcode encoder; used only by the Barcodes wrapper.
        .systemLibrary(
            name: "CZint",
            path: "Sources/CZint",
            providers: [.apt(["libzint-dev"])]
        ),

        // libxml2's HTML parser; used only by the HTMLFragments wrapper.
        .systemLibrary(
            name: "CLibxml2",
            path: "Sources/CLibxml2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // HTML fragments (a field's attributedValue) read by libxml2 from memory into Swift values: no I/O.
        .target(name: "HTMLFragments", dependencies: ["CLibxml2"]),

        // The glibc calls Swift's Glibc module does not export (syncfs, mallopt, mallinfo2), and the commit `make dist` links in.
        .target(name: "CSystemCalls"),

        // Text from outside made safe for each place it is shown: terminal, log, markdown, HTML.
        .target(name: "TextEscaping"),

        // Every program passforge starts (git, rsync, ssh): arguments as an array, its own environment and working
        // directory, input bytes, capped outputs, a wait that holds no thread of the cooperative pool. Foundation only.
        .target(name: "ExternalProcess"),

        // Whole-file writes that are never seen half-done, shared by every writer.
        .target(name: "AtomicFiles", dependencies: ["CSystemCalls", "ConcurrencySupport"]),

        // pass.json model and every Apple rule; no I/O (attributedValue's HTML is read by HTMLFragments).
        .target(name: "PassModel", dependencies: ["HTMLFragments"]),
        // Templates, content files, placeholders, merge, file:line diagnostics.
        .target(
            name: "PassContent",
            dependencies: ["AtomicFiles", "PassModel", "TextEscaping", .product(name: "Yams", package: "Yams")]
        ),
        // manifest.json, CMS signature (OpenSSL), zip (written in Swift on zlib, read with libzip): the bytes of a .pkpass.
        .target(
            name: "PassPackage",
            dependencies: [
                "AtomicFiles", "COpenSSL", "CLibzip", "CZlib", "CSystemCalls", "PassModel",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Barcodes encoded with libzint: SVG drawings for the preview, and the build's encodability check.
        .target(name: "Barcodes", dependencies: ["CZint", "PassModel"]),
        // The output tree every reader shares: its layout (every path spelled once), the build
        // state (read-only for readers, written by the build), the journal and commit, the
        // device index files. Passes and orders alike, keyed by kind, type and identifier.
        .target(
            name: "WalletTree",
            dependencies: [
                "AtomicFiles", "ConcurrencySupport", "PassModel", "RegistrationStore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The render API of preview and diff: an item as the build would package it, unsigned, and the landing
        // pages' maker; the build implements it, the command line hands it in. No OpenSSL, libzint or build.
        .target(name: "PassRender", dependencies: ["PassContent", "PassModel"]),
        // The build: scan, classify, evaluate, sign, check, commit into the tree.
        .target(
            name: "PassBuild",
            dependencies: [
                "AtomicFiles", "Barcodes", "ConcurrencySupport", "PassModel", "PassContent", "PassPackage",
                "PassRender", "WalletTree",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A batching queue (one drainer, shared batches) and a bounded task-group map. (Not
        // "ConcurrencyHelpers": swift-service-lifecycle has a target of that name.)
        .target(name: "ConcurrencySupport"),
        // Devices, push tokens, registrations, the push queue, device logs: the protocols and
        // their values, no database driver. `migrate-store`'s copy (StoreMigration).
        .target(name: "RegistrationStore", dependencies: ["ConcurrencySupport"]),
        // The registration store in one SQLite file (GRDB), with group commit.
        .target(
            name: "SQLiteRegistrationStore",
            dependencies: [
                "AtomicFiles", "ConcurrencySupport", "RegistrationStore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The registration store on a PostgreSQL server (postgres-nio), shared by several servers.
        .target(
            name: "PostgresRegistrationStore",
            dependencies: [
                "AtomicFiles", "RegistrationStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `passforge serve`: Apple's pass web service over the output tree (Hummingbird 2).
        .target(
            name: "PassServer",
            dependencies: [
                "AtomicFiles", "ConcurrencySupport", "PassModel", "WalletTree", "PassOffers", "RegistrationStore",
                "TextEscaping",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // `passforge push`: APNs HTTP/2 client (async-http-client), push planning, answer handling.
        .target(
            name: "PassPush",
            dependencies: [
                "AtomicFiles", "PassModel", "WalletTree", "RegistrationStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // `passforge preview`: HTML pages of every pass as Wallet lays it out, and the --watch server.
        .target(
            name: "PassPreview",
            dependencies: [
                "AtomicFiles", "Barcodes", "PassRender", "WalletTree", "PassContent", "PassModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        // `passforge diff`: both sides of a git change rendered without signing, compared pass by pass.
        .target(
            name: "PassDiff",
            dependencies: [
                "AtomicFiles", "ExternalProcess", "PassRender", "WalletTree", "PassContent", "PassModel",
                "TextEscaping",
            ]),
        // `passforge init`: a new project's files (PNG images deflated with zlib).
        .target(name: "ProjectScaffold", dependencies: ["AtomicFiles", "CZlib"]),
        // Apple's DeviceCheck service (two bits per device): the ES256 JWT and the three calls, over async-http-client.
        .target(
            name: "DeviceCheck",
            dependencies: [
                "AtomicFiles",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // DeviceCheck offers: a claim hands one pre-built pass of an offer's pool to a device that never claimed it.
        .target(name: "PassOffers", dependencies: ["DeviceCheck", "RegistrationStore"]),
        // An S3 client for any S3-compatible store (SigV4 with swift-crypto's HMAC, over async-http-client): PUT,
        // GET, HEAD, DELETE, DeleteObjects, retries with backoff; credentials and endpoint from the AWS_* variables.
        .target(
            name: "ObjectStorage",
            dependencies: [
                "AtomicFiles",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // `passforge publish` and `build --state-from`: the build-owned tree to a folder, over rsync/ssh, or to S3.
        .target(name: "PassPublish", dependencies: ["AtomicFiles", "ExternalProcess", "ObjectStorage", "WalletTree"]),
        // The command-line tool: thin, calls the libraries.
        .executableTarget(
            name: "passforge",
            dependencies: [
                "AtomicFiles", "PassBuild", "WalletTree", "PassContent", "PassModel", "PassPackage", "PassRender",
                "PassDiff", "PassPreview", "PassPublish", "PassPush", "PassServer", "ProjectScaffold",
                "RegistrationStore", "TextEscaping", "SQLiteRegistrationStore", "PostgresRegistrationStore",
                "DeviceCheck", "PassOffers", "CSystemCalls",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Shared by the test targets: temporary folders, a test PKI made with
        // the openssl command, a project fixture, an independent pass verifier.
        .target(name: "TestSupport", dependencies: ["ExternalProcess"], path: "Tests/Support"),
        // An in-process APNs (HTTP/2 + mutual TLS) with scripted answers, for tests and the push benchmark.
        .target(
            name: "MockAPNs",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/MockAPNs"
        ),
        // An in-process stand-in for Apple's DeviceCheck service (HTTPS on loopback, JWT checked, bits kept), and a
        // client that trusts it: for tests and the claims benchmark.
        .target(
            name: "MockDeviceCheck",
            dependencies: [
                "DeviceCheck", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MockDeviceCheck"
        ),
        // `make bench`: 20,000 pushes through PushSender into MockAPNs on loopback.
        .executableTarget(
            name: "push-benchmark",
            dependencies: ["PassPush", "MockAPNs", "TestSupport", .product(name: "NIOCore", package: "swift-nio")],
            path: "Benchmarks/PushBenchmark"),
        // scripts/bench-scale.py: the APNs mock as a process, for `passforge push` and `build --push` to push into.
        .executableTarget(
            name: "mock-apns",
            dependencies: [
                "MockAPNs", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/MockAPNsProcess"),
        // `make bench`: DeviceCheck offer claims per second against MockDeviceCheck, on SQLite and PostgreSQL.
        .executableTarget(
            name: "claim-benchmark",
            dependencies: [
                "PassOffers", "MockDeviceCheck", "TestSupport", "RegistrationStore", "SQLiteRegistrationStore",
                "PostgresRegistrationStore",
            ],
            path: "Benchmarks/ClaimBenchmark"
        ),

        .testTarget(name: "PassModelTests", dependencies: ["PassModel"]),
        // The tree's model without the build: state.json's encoder and decoders against a Codable oracle, ItemKey.
        .testTarget(
            name: "WalletTreeTests",
            dependencies: [
                "WalletTree", "PassModel", "AtomicFiles", "ConcurrencySupport", "RegistrationStore", "TestSupport",
            ]),
        .testTarget(name: "HTMLFragmentsTests", dependencies: ["HTMLFragments"]),
        .testTarget(name: "PassContentTests", dependencies: ["PassContent", "PassModel", "TestSupport"]),
        .testTarget(name: "PassPackageTests", dependencies: ["PassPackage", "TestSupport"]),
        // The build and its packaging checked by the real tools: openssl verifies every signature, unzip reads every
        // archive, cmark-gfm renders the markdown of attributed values.
        .testTarget(
            name: "PassBuildIntegrationTests",
            dependencies: [
                "AtomicFiles", "PassBuild", "WalletTree", "PassContent", "PassPackage", "TextEscaping", "TestSupport",
            ]
        ),
        .testTarget(
            name: "PassBuildTests",
            dependencies: [
                "AtomicFiles", "PassBuild", "WalletTree", "PassContent", "PassModel", "PassPackage",
                "RegistrationStore", "SQLiteRegistrationStore", "TestSupport",
            ]
        ),
        .testTarget(
            name: "PassforgeCLIIntegrationTests",
            // PassPreview and ConcurrencySupport: the killed-build tests build in process, with landing pages and checkpoints.
            dependencies: [
                "passforge", "PassBuild", "PassPreview", "ConcurrencySupport", "PassModel", "WalletTree", "PassPackage",
                "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PassPublishIntegrationTests",
            dependencies: [
                "PassPublish", "PassBuild", "WalletTree", "AtomicFiles", "TestSupport", "passforge", "ObjectStorage",
                // FakeObjectStore: a store that answers 5xx, 429 or 501 on demand.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ObjectStorageTests",
            dependencies: ["ObjectStorage", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "RegistrationStoreIntegrationTests",
            dependencies: [
                "RegistrationStore", "SQLiteRegistrationStore", "PostgresRegistrationStore", "TestSupport",
                // An administrator's connection: CREATE DATABASE per test.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ConcurrencySupportTests", dependencies: ["ConcurrencySupport"]),
        .testTarget(name: "TextEscapingTests", dependencies: ["TextEscaping"]),
        .testTarget(name: "ExternalProcessIntegrationTests", dependencies: ["ExternalProcess"]),
        .testTarget(name: "AtomicFilesTests", dependencies: ["AtomicFiles", "TestSupport"]),
        .testTarget(
            name: "DeviceCheckTests",
            dependencies: [
                "DeviceCheck", "MockDeviceCheck", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PassOffersIntegrationTests",
            dependencies: [
                "PassOffers", "DeviceCheck", "MockDeviceCheck", "RegistrationStore", "SQLiteRegistrationStore",
                "PostgresRegistrationStore", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "BarcodesTests", dependencies: ["Barcodes", "PassModel"]),
        // preview (in headless Chromium), --watch, init, diff and barcode validation, through the real passforge binary.
        .testTarget(
            name: "PassPreviewIntegrationTests",
            dependencies: [
                "PassPreview", "PassBuild", "PassRender", "WalletTree", "SQLiteRegistrationStore", "TestSupport",
                "passforge",
            ]),
        .testTarget(
            name: "PassPushTests",
            dependencies: [
                "PassPush", "MockAPNs", "TestSupport", "RegistrationStore", "SQLiteRegistrationStore", "PassBuild",
                "PassModel", "PassPackage", "WalletTree", "passforge",
                // serve --push in process: the web service's registrations beside a push run's dead-token cleanup.
                "PassServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The web service in process (HummingbirdTesting's router client): every status code, the
        // protocol's parts, openapi.yaml against the routes. No socket, no process.
        .testTarget(
            name: "PassServerTests",
            dependencies: [
                "PassServer", "PassBuild", "PassModel", "WalletTree", "SQLiteRegistrationStore", "TestSupport",
                "PassOffers", "DeviceCheck", "RegistrationStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // Integration: the real `passforge serve` process (SIGTERM, restarts), nginx and Caddy with the
        // shipped configs, Schemathesis, PostgreSQL, push end to end against the APNs mock.
        .testTarget(
            name: "PassServerIntegrationTests",
            dependencies: [
                "PassServer", "RegistrationStore", "SQLiteRegistrationStore", "ConcurrencySupport", "PassBuild",
                "PassModel", "WalletTree", "TestSupport", "passforge", "MockAPNs",
                "PassOffers", "MockDeviceCheck", "PassPublish",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                // openapi.yaml, read to check it against the server's routes.
                .product(name: "Yams", package: "Yams"),
            ]
        ),
    ]
)

// Hummingbird's settings: every existential spelled `any`, and a file sees only the members of the modules it imports.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
        + (target.type == .regular && target.path?.hasPrefix("Tests") != true
            && !["MockAPNs", "MockDeviceCheck"].contains(target.name)
            // Imports are internal unless a file says otherwise (`package import`), as in Hummingbird; the
            // test-support targets, whose API is public for the tests, keep their imports public.
            ? [.enableUpcomingFeature("InternalImportsByDefault")] : [])
}
