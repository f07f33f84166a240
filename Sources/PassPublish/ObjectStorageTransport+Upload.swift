import AtomicFiles
import ConcurrencySupport
import Foundation
import ObjectStorage
import WalletTree

extension ObjectStorageTransport {
    /// One object to store: `name` gets the bytes of the local file `source`.
    struct Put: Sendable, Equatable {
        var source: String
        var name: String
    }

    /// The puts of a publish in three waves, each wholly stored before the
    /// next starts: item files and their token names (which a device
    /// fetches after a push), then the download links and bundles (which
    /// people are sent to), then the landing pages that link those downloads. Device indices (`v1/devices/`)
    /// are never among them: the server that takes registrations owns those.
    static func waves(_ files: [FileUpload]) -> [[Put]] {
        var items: [Put] = []
        var downloads: [Put] = []
        var landing: [Put] = []
        for upload in files {
            for name in [upload.path] + upload.links {
                let put = Put(source: upload.path, name: name)
                if LandingComparison.isLandingFile(name) {
                    landing.append(put)
                } else if name.hasPrefix("\(TreeLayout.downloadFolder)/") {
                    downloads.append(put)
                } else {
                    items.append(put)
                }
            }
        }
        return [items, downloads, landing]
    }

    /// Stores every name of every file, `concurrency` requests in flight.
    /// Progress is told at most ten times a second (`BlockingBridge`).
    func upload(_ files: [FileUpload], from localRoot: String, progress: @Sendable (Int) -> Void) throws {
        var landed = 0
        for (index, wave) in Self.waves(files).enumerated() where !wave.isEmpty {
            landed = try store(wave, from: localRoot, landedBefore: landed, progress: progress)
            if index == 0 { checkpoints.reached(PublishCheckpoint.itemsUploaded) }
        }
    }

    private func store(
        _ wave: [Put], from localRoot: String, landedBefore: Int,
        progress: (Int) -> Void
    ) throws -> Int {
        let (client, prefix, concurrency) = (client, prefix, concurrency)
        return try bridge.run(progress: progress) { advance in
            try await withThrowingTaskGroup(of: Void.self) { group in
                var (next, landed) = (0, landedBefore)
                func startNext() {
                    let put = wave[next]
                    next += 1
                    group.addTask { try await Self.store(put, client: client, prefix: prefix, localRoot: localRoot) }
                }
                while next < min(concurrency, wave.count) { startNext() }
                while try await group.next() != nil {
                    landed += 1
                    advance(landed)
                    if next < wave.count { startNext() }
                }
                return landed
            }
        }
    }

    private static func store(_ put: Put, client: S3Client, prefix: String, localRoot: String) async throws {
        let path = "\(localRoot)/\(put.source)"
        guard let bytes = AtomicFileSystem.readFile(path) else {
            throw PublishError(.localTreeMismatch, "cannot read \(path); run passforge build first")
        }
        let key = prefix.isEmpty ? put.name : "\(prefix)/\(put.name)"
        _ = try await client.put(
            key, body: bytes, contentType: contentType(of: put.name, itemPath: put.source),
            cacheControl: cacheControl)
    }
}
