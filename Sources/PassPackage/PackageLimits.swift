/// The bounds on one Wallet package (a `.pkpass`, later an `.order`), in one
/// place: the build refuses what `inspect` would refuse, and `inspect`
/// refuses what a device would never be handed by this build.
///
/// Apple caps a `.pkpasses` bundle of up to 10 passes at 150 MB ("Distributing
/// and updating a pass"); one pass is far smaller, so 64 MB is generous.
package enum PackageLimits {
    /// The most files one package may hold.
    package static let maximumFileCount = 1_000
    /// The most bytes all files of one package may hold, uncompressed; also
    /// the largest package file `inspect` reads.
    package static let maximumTotalSize = 64 << 20
    /// Of `maximumTotalSize`, the bytes the build keeps for what it adds to a pass's own files:
    /// manifest.json (a SHA-1 per file) and the CMS signature (a few KB with its chain).
    package static let signingReserve = 256 << 10
    // The bounds on one image (pixels a side, bytes a file) are PassModel's `ImageLimits`, applied
    // by `ImageRules` wherever images are checked.
    /// A `.pkpasses` bundle: at most 10 passes and 150 MB (Apple, above);
    /// also the largest bundle file `inspect` reads.
    package static let maximumBundlePassCount = 10
    package static let maximumBundleSize = 150 << 20
}
