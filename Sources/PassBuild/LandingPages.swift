import AtomicFiles
import ConcurrencySupport
package import Foundation
import PassContent
package import PassModel
import PassPackage
package import PassRender
import Synchronization
import WalletTree

/// The landing page beside every download link, made by the build like its bundles: staged, moved into place
/// by the journal, recorded in `.passforge/landing-pages.txt`. An item's pages are made again only when its
/// bytes (its ETag) change, when it expires, or when the pages' configuration changes: an unchanged pass
/// keeps its pages' bytes.
enum LandingPages {
    struct Update: Sendable {
        var operations: [OutputTree.Operation] = []
        var made = 0
        var notes: [String] = []
    }

    /// The list of the last build; nil when there is none (or a damaged one: every page is then made again).
    static func load(from output: String) -> LandingPageList? {
        AtomicFileSystem.readFile(TreeLayout.path(LandingPageList.path, in: output)).flatMap(
            LandingPageList.init(decoding:))
    }

    /// Whether a build that changed no item still has pages to write: the configuration changed, a page
    /// offers an item that has expired since, or there are items and no list (or a list and no maker).
    /// Reads only the list's first line (`LandingPageList.Header`): a no-op build of 100,000 items stays a no-op.
    static func needsWork(maker: (any LandingPageMaking)?, output: String, itemCount: Int, now: Date) -> Bool {
        let header = LandingPageList.header(in: output)
        guard let maker else { return header != nil }
        guard let header else { return itemCount > 0 }
        if header.configuration != maker.configurationHash { return true }
        return header.nextExpiry.map { $0 <= Int64(now.timeIntervalSince1970 * 1000) } ?? false
    }

    /// The items of the new build: passes, orders and bundles, by key.
    static func items(passes: [String: BuildState.ItemRecord], bundles: [String: BundleRecord])
        -> [String: (etag: String, item: LandingItem, sources: [String])]
    {
        var items: [String: (etag: String, item: LandingItem, sources: [String])] = [:]
        for (key, record) in passes {
            guard let capability = TreeLayout.capability(ofDownloadPath: record.downloadPath) else { continue }
            items[key] = (
                record.etag,
                LandingItem(
                    key: key, kind: record.kind, isBundle: false, downloadPath: record.downloadPath,
                    capability: String(capability), packages: []), [key]
            )
        }
        for (name, bundle) in bundles {
            guard let capability = TreeLayout.capability(ofDownloadPath: bundle.downloadPath) else { continue }
            items["bundle/\(name)"] = (
                bundle.etag,
                LandingItem(
                    key: "bundle/\(name)", kind: .pass, isBundle: true,
                    downloadPath: bundle.downloadPath, capability: String(capability),
                    packages: []), bundle.members
            )
        }
        return items
    }

    /// Makes the pages that changed, stages them, and returns the journal's operations (moves, removals, the list).
    static func update(
        maker: (any LandingPageMaking)?, previous: LandingPageList?, passes: [String: BuildState.ItemRecord],
        bundles: [String: BundleRecord], stagedPaths: [String: String], tree: OutputTree, now: Date,
        jobs: Int
    ) throws -> Update {
        var update = Update()
        guard let maker else {
            // Pages switched off: every file of the last list goes.
            update.operations = (previous?.allFiles ?? []).map { .init(kind: .remove, path: $0.path) }
            if previous != nil { update.operations.append(.init(kind: .remove, path: LandingPageList.path)) }
            return update
        }
        let folder = "\(TreeLayout.stagingFolder)/landing"
        try AtomicFileSystem.createDirectory(tree.path(folder))
        var list = LandingPageList(configuration: maker.configurationHash, baseURL: maker.baseURL)
        let sameConfiguration = previous?.configuration == maker.configurationHash
        list.badges = try stageBadges(
            maker.badges, prefix: "badge", previous: previous?.badges ?? [:], folder: folder,
            tree: tree, into: &update)
        list.orderBadges = try stageBadges(
            maker.orderBadges, prefix: "order-badge", previous: previous?.orderBadges ?? [:],
            folder: folder, tree: tree, into: &update)
        let milliseconds = Int64(now.timeIntervalSince1970 * 1000)
        var work: [(etag: String, item: LandingItem, sources: [String])] = []
        for (key, entry) in items(passes: passes, bundles: bundles).sorted(by: { $0.key < $1.key }) {
            if let old = previous?.pages[key], sameConfiguration, old.sourceETag == entry.etag,
                old.unavailable || !(old.expiresAt.map { $0 <= milliseconds } ?? false)
            {
                list.pages[key] = old
                continue
            }
            work.append(entry)
        }
        let made = try make(
            work, maker: maker, passes: passes, stagedPaths: stagedPaths, tree: tree, now: now, jobs: jobs,
            folder: folder, previous: previous)
        var notMade = 0
        for (key, result) in made {
            switch result {
            case .made(let record, let moves):
                list.pages[key] = record
                update.operations += moves
                update.made += 1
            case .unavailable:
                if let old = previous?.pages[key] { list.pages[key] = old }
                notMade += 1
            }
        }
        if notMade > 0 {
            // One note, not one per item: a fresh clone building from a published state (--state-from) has only
            // the items it signs; a build with the whole output tree makes the others' pages.
            update.notes.append(
                "\(notMade) landing page\(notMade == 1 ? "" : "s") not made: the item is only at the published destination (--state-from); a build with the whole output tree makes them"
            )
        }
        let newPaths = Set(list.allFiles.map(\.path))
        for old in (previous?.allFiles ?? []) where !newPaths.contains(old.path) {
            update.operations.append(.init(kind: .remove, path: old.path))
        }
        if list != previous {
            let staged = try tree.stage(list.encoded, name: "landing-pages.txt")
            update.operations.append(.init(kind: .move, path: LandingPageList.path, source: staged))
        }
        return update
    }

    private enum Made: Sendable {
        case made(LandingPageRecord, [OutputTree.Operation])
        case unavailable(String)
    }

    /// Renders the items on `jobs` threads and stages their files (`folder`/<index>-<n>).
    private static func make(
        _ work: [(etag: String, item: LandingItem, sources: [String])], maker: any LandingPageMaking,
        passes: [String: BuildState.ItemRecord], stagedPaths: [String: String], tree: OutputTree,
        now: Date, jobs: Int, folder: String, previous: LandingPageList?
    ) throws -> [(String, Made)] {
        let results = Mutex<[(String, Made)]>([])
        let failure = Mutex<(any Error)?>(nil)
        ParallelLoop.run(count: work.count, jobs: jobs) { _, next in
            while let index = next() {
                do {
                    let result = try makeOne(
                        work[index], index: index, maker: maker, passes: passes, stagedPaths: stagedPaths,
                        tree: tree, now: now, folder: folder, previous: previous?.pages[work[index].item.key])
                    results.withLock { $0.append((work[index].item.key, result)) }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                    return
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return results.withLock { $0 }.sorted { $0.0 < $1.0 }
    }

    /// A signed package's files, read back from its zip for the landing page's renderer.
    private static func packageFiles(_ bytes: [UInt8]) throws -> [PackageFile] {
        do {
            return try ZipArchive.read(bytes).map { PackageFile(name: $0.name, bytes: $0.bytes, source: $0.name) }
        } catch {
            throw BuildError(.refused, "a signed package cannot be read back for its landing page: \(error)")
        }
    }

    private static func makeOne(
        _ entry: (etag: String, item: LandingItem, sources: [String]), index: Int, maker: any LandingPageMaking,
        passes: [String: BuildState.ItemRecord], stagedPaths: [String: String], tree: OutputTree,
        now: Date, folder: String, previous: LandingPageRecord?
    ) throws -> Made {
        var item = entry.item
        for key in entry.sources {
            guard let record = passes[key] else { continue }
            let relative = stagedPaths[key] ?? record.path
            guard let bytes = AtomicFileSystem.readFile(tree.path(relative)) else { return .unavailable(record.path) }
            item.packages.append(try packageFiles(bytes))
        }
        let output = try maker.pages(for: item, now: now)
        var files: [LandingFileRecord] = []
        var moves: [OutputTree.Operation] = []
        let oldFiles = Dictionary(
            (previous?.files ?? []).map { ($0.path, $0.etag) }, uniquingKeysWith: { first, _ in first })
        for (number, file) in output.files.enumerated() {
            guard TreeLayout.isBuildOwned(file.path), file.path.hasPrefix("\(TreeLayout.downloadFolder)/") else {
                throw BuildError(
                    .refused,
                    "the landing page renderer named \(BuildState.quoted(file.path)), which is not a landing file of download/"
                )
            }
            let record = LandingFileRecord(
                path: file.path, etag: BuildState.etag(of: file.bytes), size: file.bytes.count)
            files.append(record)
            // Bytes that did not change stay as they are, with their modification time.
            if oldFiles[file.path] == record.etag { continue }
            let staged = "\(folder)/\(index)-\(number)"
            try AtomicFileSystem.writeFile(file.bytes, to: tree.path(staged), sync: false)
            moves.append(.init(kind: .move, path: file.path, source: staged))
        }
        let expiresAt = output.unavailable ? nil : output.expiresAt.map { Int64($0.timeIntervalSince1970 * 1000) }
        return .made(
            LandingPageRecord(
                key: item.key, sourceETag: entry.etag, files: files, expiresAt: expiresAt,
                unavailable: output.unavailable), moves)
    }

    /// The badge files: staged when new or changed; returns their records.
    private static func stageBadges(
        _ badges: [String: (path: String, bytes: [UInt8])], prefix: String,
        previous: [String: LandingFileRecord], folder: String, tree: OutputTree,
        into update: inout Update
    ) throws -> [String: LandingFileRecord] {
        var records: [String: LandingFileRecord] = [:]
        for (language, badge) in badges.sorted(by: { $0.key < $1.key }) {
            let record = LandingFileRecord(
                path: badge.path, etag: BuildState.etag(of: badge.bytes), size: badge.bytes.count)
            records[language] = record
            if previous[language] == record { continue }
            let staged = "\(folder)/\(prefix)-\(language)"
            try AtomicFileSystem.writeFile(badge.bytes, to: tree.path(staged), sync: false)
            update.operations.append(.init(kind: .move, path: badge.path, source: staged))
        }
        return records
    }
}
