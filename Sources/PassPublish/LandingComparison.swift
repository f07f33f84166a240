import WalletTree

/// The landing pages of one side of a publish (`.passforge/landing-pages.txt`, read with the build's own codec,
/// `LandingPageList`): every file of every page, logo and badge, by path, with its ETag and size, so that a
/// publish sends only the files the destination does not have as they are here.
struct LandingComparison: Sendable, Equatable {
    var files: [String: LandingFileRecord] = [:]

    /// No pages: a build with `landingPages: enabled: false`, or a destination published before passforge
    /// carried them.
    init() {}

    init(_ list: LandingPageList) {
        for file in list.allFiles { files[file.path] = file }
    }

    /// The local build's list (no file: no pages). A damaged file is an error: the build wrote it, so the tree
    /// does not match its state.
    init(localOutput directory: String, bytes: [UInt8]?) throws(PublishError) {
        guard let bytes else {
            self.init()
            return
        }
        guard let list = LandingPageList(decoding: bytes) else {
            throw PublishError(
                .localTreeMismatch,
                "\(directory)/\(LandingPageList.path) is damaged (not a landing page list); "
                    + "run passforge build, then publish")
        }
        self.init(list)
    }

    /// The destination's list. A damaged one counts as no pages: every page is sent again, and the landing
    /// files the destination holds but the build does not are still found and deleted (`landingFiles`).
    init(destination bytes: [UInt8]?) {
        self = bytes.flatMap(LandingPageList.init(decoding:)).map(LandingComparison.init) ?? LandingComparison()
    }

    /// The files to send, in the order they must land: images (badges, logos) before the pages that show them.
    func uploads(over destination: LandingComparison) -> [FileUpload] {
        let changed = files.values.filter { destination.files[$0.path] != $0 }
        let ordered = changed.sorted {
            (Self.isPage($0.path) ? 1 : 0, $0.path) < (Self.isPage($1.path) ? 1 : 0, $1.path)
        }
        return ordered.map { FileUpload(path: $0.path, size: $0.size, etag: $0.etag) }
    }

    /// A page (`.html`), as opposed to an image.
    static func isPage(_ path: String) -> Bool { path.hasSuffix(".html") }

    /// A landing file of the tree: a page, logo or badge under `download/` (`download/<name>.html|.png|.svg`),
    /// never a download itself.
    static func isLandingFile(_ path: String) -> Bool {
        TreeLayout.parentFolder(of: path) == TreeLayout.downloadFolder
            && (path.hasSuffix(".html") || path.hasSuffix(".png") || path.hasSuffix(".svg"))
            && TreeLayout.isBuildOwned(path)
    }
}
