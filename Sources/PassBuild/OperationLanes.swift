import Synchronization

/// Links and moves of a build, cut into chunks and handed to threads so that
/// two threads seldom wait on one kernel lock.
///
/// The kernel makes one folder's entries one at a time (each link or
/// rename holds the folder's lock), and every rename from one folder to
/// another on a file system holds that file system's rename mutex
/// (`lock_rename` in the Linux kernel's fs/namei.c). So a chunk's *lanes* are its
/// folder, and for moves also the rename mutex; a thread takes a chunk whose
/// lanes no other thread is in, from the lane with the most work left, and
/// only shares a lane when nothing else is left. A build's links into
/// `download/` and `by-token/` then run beside its moves into `v1/passes/`,
/// instead of after them.
final class OperationLanes: Sendable {
    private struct Chunk: Sendable {
        var operations: ArraySlice<OutputTree.Operation>
        /// Indices into `laneNames`.
        var lanes: [Int]
    }

    private struct Queue {
        /// Chunks not yet handed out, per group of chunks with the same lanes.
        var pending: [[Int]]
        var remainingOperations: [Int]
        /// Threads in each lane now.
        var busy: [Int]
        var isAbandoned = false
    }

    /// The folders the operations write into, relative to the output folder.
    let folders: [String]
    private let chunks: [Chunk]
    private let groupLanes: [[Int]]
    private let queue: Mutex<Queue>

    init(_ operations: ArraySlice<OutputTree.Operation>, chunkSize: Int = 256) {
        var laneByName: [String: Int] = [:]
        func lane(_ name: String) -> Int {
            if let index = laneByName[name] { return index }
            laneByName[name] = laneByName.count
            return laneByName.count - 1
        }
        let renameLane = lane("\u{0}rename")  // not a folder name
        // Groups: one per folder and kind, in order of first appearance.
        var groupByKey: [String: Int] = [:]
        var groupOperations: [[OutputTree.Operation]] = []
        var lanesOfGroup: [[Int]] = []
        var folders: [String] = []
        for operation in operations {
            let folder = operation.path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let key = "\(operation.kind.rawValue) \(folder)"
            if let group = groupByKey[key] {
                groupOperations[group].append(operation)
                continue
            }
            if laneByName[folder] == nil { folders.append(folder) }
            groupByKey[key] = groupOperations.count
            groupOperations.append([operation])
            lanesOfGroup.append(operation.kind == .move ? [lane(folder), renameLane] : [lane(folder)])
        }
        var chunks: [Chunk] = []
        var pending: [[Int]] = []
        for (group, list) in groupOperations.enumerated() {
            var indices: [Int] = []
            for start in stride(from: 0, to: list.count, by: chunkSize) {
                indices.append(chunks.count)
                chunks.append(Chunk(operations: list[start..<min(list.count, start + chunkSize)], lanes: lanesOfGroup[group]))
            }
            // The groups of one build name the same files in the same order (a pass's download link, token
            // link and move), and a link or rename locks the file's inode: each group starts at a different
            // place, so that two threads do not take turns on the same files.
            let offset = indices.count * group / max(1, groupOperations.count)
            pending.append(Array((indices[offset...] + indices[..<offset]).reversed()))
        }
        self.folders = folders
        self.chunks = chunks
        self.groupLanes = lanesOfGroup
        queue = Mutex(Queue(pending: pending, remainingOperations: groupOperations.map(\.count),
                            busy: Array(repeating: 0, count: laneByName.count)))
    }

    var chunkCount: Int { chunks.count }

    func operations(of chunk: Int) -> ArraySlice<OutputTree.Operation> { chunks[chunk].operations }

    /// The next chunk for a thread that has just finished `finished` (nil at
    /// first); nil when every chunk is handed out.
    func next(finishing finished: Int?) -> Int? {
        queue.withLock { queue in
            if let finished {
                for lane in chunks[finished].lanes { queue.busy[lane] -= 1 }
            }
            guard !queue.isAbandoned else { return nil }
            // The group with the most work left whose lanes are free; else the one with the most work left.
            var best: Int?, bestFree = false
            for group in queue.pending.indices where !queue.pending[group].isEmpty {
                let free = groupLanes[group].allSatisfy { queue.busy[$0] == 0 }
                if best == nil || (free && !bestFree)
                    || (free == bestFree && queue.remainingOperations[group] > queue.remainingOperations[best!]) {
                    (best, bestFree) = (group, free)
                }
            }
            guard let group = best, let chunk = queue.pending[group].popLast() else { return nil }
            queue.remainingOperations[group] -= chunks[chunk].operations.count
            for lane in chunks[chunk].lanes { queue.busy[lane] += 1 }
            return chunk
        }
    }

    /// Hands out nothing more: an operation failed.
    func abandon() { queue.withLock { $0.isAbandoned = true } }
}
