import Foundation
import WalletTree

/// The `.pkpasses` bundles of one side of a publish, by name, read with the
/// build's own codec (`BundleList`): a publish needs each bundle's download
/// path, ETag and size to say whether the destination has the same file.
struct BundleComparison: Sendable, Equatable {
    var bundles: [String: BundleRecord] = [:]

    /// No bundles: a build without any, or a destination published before passforge carried them.
    init() {}

    /// Decodes bundles.json; nil when the bytes are not a sound bundle list.
    init?(decoding bytes: [UInt8], greatestTag: Int64) {
        guard let records = try? BundleList.records(decoding: bytes, greatestTag: greatestTag) else { return nil }
        bundles = records
    }

    /// The local build's list (no file: no bundles). A damaged file is an
    /// error: the build wrote it, so the tree does not match its state.
    init(localOutput directory: String, bytes: [UInt8]?) throws(PublishError) {
        guard let bytes else { return }
        guard let list = BundleComparison(decoding: bytes, greatestTag: BuildState.greatestLocalTag) else {
            throw PublishError(
                .localTreeMismatch,
                "\(directory)/\(BundleList.path) is damaged (not a bundle list); run passforge build, then publish")
        }
        self = list
    }

    /// The destination's list. A damaged one counts as no bundles: every
    /// bundle is sent again, and the bundle files the destination holds but
    /// the build does not are still found and deleted (`bundleFiles`).
    init(destination bytes: [UInt8]?) {
        self =
            bytes.flatMap { BundleComparison(decoding: $0, greatestTag: BuildState.greatestTag(at: Date())) }
            ?? BundleComparison()
    }

    var downloadPaths: Set<String> { Set(bundles.values.map(\.downloadPath)) }
}
