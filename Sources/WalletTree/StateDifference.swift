package import Foundation
import PassModel

#if canImport(Glibc)
    import Glibc
#endif

/// The local build's state and a destination's, compared item by item as the bytes of each item's record:
/// what `publish` plans from. The build writes back the bytes of every record it carried over
/// (`BuildStateEncoding`), so after one item changed of 100,000 the two files differ in one record, and only
/// the records that differ are decoded: a publish of one change no longer makes 200,000 records into values.
///
/// The destination is not trusted: each of its records that differs from the local one (or that the local
/// build lacks) is decoded and checked as `BuildState.decodePublished` checks a whole state (key, paths, tags,
/// text), and so are its version, size and update tag. A record equal, byte for byte, to the local record of
/// the same key is the local build's own, which is trusted.
package struct StateDifference: Sendable {
    /// The local build's update tag, every item it removed, and those of its items whose record differs from
    /// the destination's (or that the destination lacks). Not every item: `unchangedCount` are left out.
    package let local: PublishedIndex
    /// The destination's update tag, and those of its items whose record differs from the local one (or that
    /// the local build lacks); its removed items are not read.
    package let destination: PublishedIndex
    /// Items whose records are the same bytes in both states.
    package let unchangedCount: Int

    /// Compares `local`, the bytes of `output`'s state.json, with `destination`, a destination's.
    /// Throws `.unreadable` naming the local file when it is damaged, `.refused` when the destination's state
    /// fails its checks (its message names no place: the caller says where it came from).
    package init(
        local: [UInt8], of output: String, destination: [UInt8], now: Date = Date(),
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(BuildError) {
        guard destination.count <= BuildState.maximumPublishedSize else {
            throw BuildError(
                .refused,
                "state.json is larger than \(BuildState.maximumPublishedSize >> 20) MB (a state of some 300,000 passes)"
            )
        }
        let path = BuildState.path(in: output)
        let greatest = BuildState.greatestTag(at: now)
        self = try local.withUnsafeBufferPointer { localBuffer throws(BuildError) in
            try destination.withUnsafeBufferPointer { destinationBuffer throws(BuildError) in
                let localOutline = try StateOutline.local(localBuffer, path: path)
                if Self.same(localBuffer, destinationBuffer) {
                    // The destination has this build (a publish with nothing new): nothing of it to check.
                    let index = try Self.localIndex(localOutline, [], in: localBuffer, path: path, jobs: jobs)
                    return StateDifference(
                        local: index,
                        destination: PublishedIndex(
                            lastUpdateTag: index.lastUpdateTag, builtAt: index.builtAt, items: [:], removedItems: [:]),
                        unchangedCount: localOutline.items.count)
                }
                let destinationOutline = try StateOutline.published(destinationBuffer, greatestTag: greatest)
                let changes = Self.changedMembers(
                    local: (localOutline, localBuffer), destination: (destinationOutline, destinationBuffer))
                let localIndex = try Self.localIndex(
                    localOutline, changes.local, in: localBuffer, path: path, jobs: jobs)
                let destinationItems = try Self.checkedItems(
                    changes.destination, in: destinationBuffer, greatestTag: greatest, jobs: jobs)
                try Self.checkRemoved(destinationOutline.removed, in: destinationBuffer, greatestTag: greatest)
                return StateDifference(
                    local: localIndex,
                    destination: PublishedIndex(
                        lastUpdateTag: destinationOutline.lastUpdateTag, builtAt: destinationOutline.builtAt,
                        items: destinationItems, removedItems: [:]),
                    unchangedCount: changes.unchanged)
            }
        }
    }

    private init(local: PublishedIndex, destination: PublishedIndex, unchangedCount: Int) {
        (self.local, self.destination, self.unchangedCount) = (local, destination, unchangedCount)
    }

    typealias Member = (key: String, range: Range<Int>)

    private static func same(_ one: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        one.count == other.count && (one.isEmpty || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0)
    }

    /// The members of each side's `passes` whose bytes differ from the other side's member of the same key, or
    /// that the other side lacks; and how many are the same. A key the destination lists twice counts once, as
    /// the decoders read it (the last one).
    private static func changedMembers(
        local: (outline: StateOutline, buffer: UnsafeBufferPointer<UInt8>),
        destination: (outline: StateOutline, buffer: UnsafeBufferPointer<UInt8>)
    ) -> (local: [Member], destination: [Member], unchanged: Int) {
        var remote: [String: Range<Int>] = [:]
        remote.reserveCapacity(destination.outline.items.count)
        for member in destination.outline.items { remote[member.key] = member.range }
        var (changedLocal, changedRemote, unchanged) = ([Member](), [Member](), 0)
        for member in local.outline.items {
            guard let range = remote.removeValue(forKey: member.key) else {
                changedLocal.append(member)
                continue
            }
            if range.count == member.range.count,
                range.isEmpty
                    || memcmp(
                        local.buffer.baseAddress! + member.range.lowerBound,
                        destination.buffer.baseAddress! + range.lowerBound, range.count) == 0
            {
                unchanged += 1
            } else {
                changedLocal.append(member)
                changedRemote.append((member.key, range))
            }
        }
        // What only the destination has, in its file's order.
        for member in destination.outline.items {
            if let range = remote.removeValue(forKey: member.key) { changedRemote.append((member.key, range)) }
        }
        return (changedLocal, changedRemote, unchanged)
    }

    /// The local index of the changed members, with every removed item.
    private static func localIndex(
        _ outline: StateOutline, _ members: [Member], in buffer: UnsafeBufferPointer<UInt8>, path: String, jobs: Int
    ) throws(BuildError) -> PublishedIndex {
        do {
            let chunks = try BuildStateDecoding.decodeMembers(members, in: StateBytes(buffer: buffer), jobs: jobs) {
                scanner, shared throws(BuildStateDecoding.Failure) in
                try PublishedItem(scanner: &scanner, sharing: &shared)
            }
            var items: [ItemKey: PublishedItem] = [:]
            for item in chunks.joined() { items[item.key] = item }
            return PublishedIndex(
                lastUpdateTag: outline.lastUpdateTag, builtAt: outline.builtAt, items: items,
                removedItems: try PublishedIndexDecoding.removedItems(outline.removed, in: buffer))
        } catch {
            throw PublishedIndex.unreadable(error, path: path)
        }
    }

    /// Checks the destination's removed items, which a publish does not use: a state that fails anywhere it is
    /// read is refused whole, as `--state-from` would refuse it.
    private static func checkRemoved(
        _ members: [Member], in buffer: UnsafeBufferPointer<UInt8>, greatestTag: Int64
    ) throws(BuildError) {
        let records: [String: BuildState.RemovedItemRecord]
        do {
            records = try BuildStateDecoding.decodeRemovedRecords(members, in: buffer)
        } catch {
            throw BuildError(.refused, "state.json is not a build state (\(error))")
        }
        for (key, record) in records { try BuildState.check(record, key: key, greatestTag: greatestTag) }
    }

    /// The destination's changed members, decoded whole and checked.
    private static func checkedItems(
        _ members: [Member], in buffer: UnsafeBufferPointer<UInt8>, greatestTag: Int64, jobs: Int
    ) throws(BuildError) -> [ItemKey: PublishedItem] {
        let chunks: [[BuildState.ItemRecord]]
        do {
            chunks = try BuildStateDecoding.decodeMembers(members, in: StateBytes(buffer: buffer), jobs: jobs) {
                scanner, shared throws(BuildStateDecoding.Failure) in
                try BuildState.ItemRecord(scanner: &scanner, sharing: &shared)
            }
        } catch {
            throw BuildError(.refused, "state.json is not a build state (\(error))")
        }
        var items: [ItemKey: PublishedItem] = [:]
        items.reserveCapacity(members.count)
        for (member, record) in zip(members, chunks.joined()) {
            try BuildState.check(record, key: member.key, greatestTag: greatestTag)
            items[record.itemKey] = PublishedItem(record)
        }
        return items
    }
}
