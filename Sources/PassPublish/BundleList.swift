import Foundation

/// The `.pkpasses` bundles a build lists in `.passforge/bundles.json`, as a
/// publish compares them: each bundle's download path, ETag and size, by name.
/// (The build's record holds more, to know when to make a bundle again; a
/// publish needs only what says whether the destination has the same file.)
struct BundleList: Sendable, Equatable {
    static let path = ".passforge/bundles.json"

    struct Bundle: Sendable, Equatable, Decodable {
        var name: String
        /// `download/<capability>.pkpasses`.
        var downloadPath: String
        var etag: String
        var size: Int
    }

    private struct File: Decodable {
        var bundles: [Bundle]
    }

    var bundles: [String: Bundle] = [:]

    /// No bundles: a build without any, or a destination published before passforge carried them.
    init() {}

    /// Decodes bundles.json; nil when the bytes are not a bundle list.
    init?(decoding bytes: [UInt8]) {
        guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)) else { return nil }
        bundles = Dictionary(file.bundles.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The local build's list (no file: no bundles). A damaged file is an
    /// error: the build wrote it, so the tree does not match its state.
    init(localOutput directory: String, bytes: [UInt8]?) throws(PublishError) {
        guard let bytes else { return }
        guard let list = BundleList(decoding: bytes) else {
            throw PublishError("\(directory)/\(Self.path) is damaged (not a bundle list); run passforge build, then publish")
        }
        self = list
    }

    /// The destination's list. A damaged one counts as no bundles: every
    /// bundle is sent again, and the bundle files the destination holds but
    /// the build does not are still found and deleted (`bundleFiles`).
    init(destination bytes: [UInt8]?) {
        self = bytes.flatMap(BundleList.init(decoding:)) ?? BundleList()
    }

    var downloadPaths: Set<String> { Set(bundles.values.map(\.downloadPath)) }
}
