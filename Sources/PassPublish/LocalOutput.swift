import AtomicFiles
import Foundation
import WalletTree

/// The local output tree, as publish and `--state-from` use it: under the
/// build's own lock, so no build changes it meanwhile.
struct LocalOutput: Sendable {
    var directory: String

    var stateDirectory: String { TreeLayout.path(TreeLayout.stateFolder, in: directory) }

    /// Takes the build lock (the one `passforge build` holds) and finishes a
    /// build that was interrupted, so that the tree matches its state.
    func lock(purpose: String) throws -> FileLock {
        let path = TreeLayout.path(TreeLayout.buildLockPath, in: directory)
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(path, blocking: false)
        } catch {
            throw PublishError(.fileSystem, error.description, underlying: error)
        }
        guard let lock else {
            throw PublishError(
                .locked,
                "a passforge build is running on \(directory) (\(path) is locked); \(purpose) when it has finished")
        }
        do {
            _ = try OutputTree(directory: directory).rollForward()
        } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// The local state (`localState`, the bytes of this output's state.json) and a destination's, compared
    /// record by record (`StateDifference`): the destination's state and bundle list are checked in memory, only
    /// as far as the records that differ, and are refused with one error naming the destination.
    func compare(localState: [UInt8], with files: PublishedBuild, from destination: PublishDestination)
        throws(PublishError) -> StateDifference
    {
        do throws(BuildError) {
            if let bundles = files.bundlesJSON {
                guard bundles.count <= BuildState.maximumPublishedListSize else {
                    throw BuildError(
                        .refused, "bundles.json is larger than \(BuildState.maximumPublishedListSize >> 20) MB")
                }
                _ = try BundleList.records(decoding: bundles, greatestTag: BuildState.greatestTag(at: Date()))
            }
            return try StateDifference(local: localState, of: directory, destination: files.state)
        } catch  where error.kind == .refused {
            throw PublishError(
                .invalidPublishedState,
                "the build state at \(destination) is refused, and nothing was taken from it: \(error). Check who can write there; to start over, remove its .passforge/ and build with --initial"
            )
        } catch {
            throw PublishError(.localTreeMismatch, error.description, underlying: error)
        }
    }

    /// Every item of the local build, as `PublishPlan` needs them to keep every name the build uses.
    func allItems(localState: [UInt8]) throws(PublishError) -> PublishedIndex {
        do {
            return try PublishedIndex.decode(localState, of: directory)
        } catch {
            throw PublishError(.localTreeMismatch, "\(error)", underlying: error)
        }
    }

    /// Decodes and checks, in memory, the state and bundle list that came from a destination: one error,
    /// naming the destination and what is wrong, when anything fails.
    func decodePublished(_ files: PublishedBuild, from destination: PublishDestination) throws(PublishError)
        -> BuildState.Published
    {
        do {
            return try BuildState.decodePublished(files.state, bundlesJSON: files.bundlesJSON)
        } catch {
            throw PublishError(
                .invalidPublishedState,
                "the build state at \(destination) is refused, and nothing was taken from it: \(error). Check who can write there; to start over, remove its .passforge/ and build with --initial"
            )
        }
    }
}
