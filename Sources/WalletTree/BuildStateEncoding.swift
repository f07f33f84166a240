package import AtomicFiles
import ConcurrencySupport
import PassModel

/// Where the pass records of the state file a build started from are, to
/// write the unchanged ones back without encoding them again. Only the
/// ranges stay in memory; the bytes are read again, in order, while the new
/// state is written (the build lock keeps the file as it was, and its
/// stamp is checked).
package struct PreviousStateFile: Sendable {
    package var path: String
    package var stamp: FileStamp
    /// Each record's key and bytes in the file, in file order.
    package var recordRanges: [(key: String, range: Range<Int>)]
}

/// The bytes of a build state, equal to `BuildState.encoded()`, made on
/// every core and written out in chunks of about a megabyte: each pass's
/// record is encoded on its own (a pass signed in this build brings its
/// bytes along from the worker that signed it, one carried over unchanged
/// is copied from the previous state file), and the records are joined in key order.
package enum BuildStateEncoding {
    /// Records encoded together, on every core, while the state is written.
    package static let encodingBatch = 4096

    package static func encode(_ state: BuildState, jobs: Int) -> [UInt8] {
        var out: [UInt8] = []
        // Cannot fail: nothing is read and the sink does not throw.
        try? write(state, jobs: jobs) { out += $0 }
        return out
    }

    /// Writes the state to `path`, a new file.
    package static func write(
        _ state: BuildState, keys: [String], contentFileKeys: [String]? = nil,
        rewritten: Set<String>, previous: PreviousStateFile?, to path: String, jobs: Int
    ) throws {
        var writer = try BufferedFileWriter(creating: path)
        try write(
            state, keys: keys, contentFileKeys: contentFileKeys, rewritten: rewritten,
            previous: previous, jobs: jobs
        ) { chunk in
            try writer.append(chunk)
        }
        try writer.flush()
    }

    /// - Parameters:
    ///   - keys: the keys of `state.passes`, sorted, when the caller has them.
    ///   - contentFileKeys: the keys of `state.contentFiles`, sorted, when the caller has them.
    ///   - rewritten: keys of records that differ from those in `previous`;
    ///     every other record that `previous` has is copied from it.
    ///   - emit: called with each chunk of the file, in order.
    package static func write(
        _ state: BuildState, keys: [String]? = nil, contentFileKeys: [String]? = nil,
        rewritten: Set<String> = [], previous: PreviousStateFile? = nil, jobs: Int,
        emit: ([UInt8]) throws -> Void
    ) throws {
        let chunkSize = 1 << 20
        let keys = keys ?? state.passes.keys.sorted()
        // The previous file, when it is still the one the build read.
        var source: RegularFile? = nil
        if let previous, !previous.recordRanges.isEmpty, let file = RegularFile(openingForReading: previous.path),
            file.stamp == previous.stamp
        {
            source = consume file
        }
        let copied = copiedRanges(of: keys, in: source == nil ? [] : previous!.recordRanges, rewritten: rewritten)
        let passes = state.passes
        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + 64 * 1024)
        // A window of the previous file: records are read in file order, so one read serves many.
        var window: [UInt8] = []
        var windowStart = 0
        out.append(UInt8(ascii: "{"))
        StateField.version.appendKey(to: &out, first: true)
        out += String(state.version).utf8
        StateField.lastUpdateTag.appendKey(to: &out)
        out += String(state.lastUpdateTag).utf8
        StateField.builtAt.appendKey(to: &out)
        appendString(state.builtAt, to: &out)
        StateField.passes.appendKey(to: &out)
        out.append(UInt8(ascii: "{"))
        // Records not copied are encoded here, a batch at a time on every core, just before they
        // are written: a full build of 100,000 passes would otherwise hold some 70 MB of them at once.
        for batch in stride(from: 0, to: keys.count, by: encodingBatch).map({ $0..<min(keys.count, $0 + encodingBatch) }
        ) {
            let fresh = batch.filter { copied[$0] == nil }
            var freshBytes = ParallelLoop.map(fresh, jobs: fresh.count < 64 ? 1 : jobs) { index in
                passes[keys[index]]!.encodedJSON()
            }[...]
            for index in batch {
                let key = keys[index]
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if let range = copied[index] {
                    if range.lowerBound < windowStart || range.upperBound > windowStart + window.count {
                        windowStart = range.lowerBound
                        guard let read = source!.read(at: windowStart, count: max(range.count, 4 * chunkSize)),
                            read.count >= range.count
                        else {
                            throw BuildError(
                                .unreadable,
                                "cannot read \(previous!.path) again while writing the new build state; build again")
                        }
                        window = read
                    }
                    out += window[(range.lowerBound - windowStart)..<(range.upperBound - windowStart)]
                } else {
                    out += freshBytes.removeFirst()
                }
                if out.count >= chunkSize {
                    try emit(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
        try appendContentFilesAndRemovals(
            of: state, contentFileKeys: contentFileKeys, to: &out, chunkSize: chunkSize,
            emit: emit)
    }

    /// Where each of `keys` is in the previous file (nil: encoded anew). Both lists are in key
    /// order, so they are walked side by side; a dictionary only when they are not.
    static func copiedRanges(
        of keys: [String], in previousRanges: [(key: String, range: Range<Int>)],
        rewritten: Set<String>
    ) -> [Range<Int>?] {
        var copied = [Range<Int>?](repeating: nil, count: keys.count)
        var lookup: [String: Range<Int>]? = nil
        var cursor = 0
        for (index, key) in keys.enumerated() {
            guard !previousRanges.isEmpty, rewritten.isEmpty || !rewritten.contains(key) else { continue }
            while lookup == nil, cursor < previousRanges.count, previousRanges[cursor].key != key {
                if previousRanges[cursor].key > key { break }
                cursor += 1
            }
            if lookup == nil, cursor < previousRanges.count, previousRanges[cursor].key == key {
                copied[index] = previousRanges[cursor].range
                cursor += 1
                continue
            }
            if lookup == nil {
                lookup = Dictionary(previousRanges.map { ($0.key, $0.range) }, uniquingKeysWith: { $1 })
            }
            copied[index] = lookup![key]
        }
        return copied
    }

    /// The state's `contentFiles` and `removedPasses` members and the closing brace, then the last chunk.
    static func appendContentFilesAndRemovals(
        of state: BuildState, contentFileKeys: [String]?, to out: inout [UInt8],
        chunkSize: Int, emit: ([UInt8]) throws -> Void
    ) throws {
        StateField.contentFiles.appendKey(to: &out)
        out.append(UInt8(ascii: "{"))
        for (index, path) in (contentFileKeys ?? state.contentFiles.keys.sorted()).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(path, to: &out)
            out.append(UInt8(ascii: ":"))
            state.contentFiles[path]!.appendJSON(to: &out)
            if out.count >= chunkSize {
                try emit(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out.append(UInt8(ascii: "}"))
        StateField.removedPasses.appendKey(to: &out)
        out.append(UInt8(ascii: "{"))
        for (index, key) in state.removedPasses.keys.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            state.removedPasses[key]!.appendJSON(to: &out)
        }
        out += "}}".utf8
        try emit(out)
    }

    /// The keys of `dictionary`, sorted, from `ordered` (keys mostly in order
    /// already: those of the previous state) and `added` (any others it may
    /// have): at 100,000 keys, checking an order takes a fraction of sorting.
    ///
    /// Given `removed`, the caller vouches that every key of `ordered` but those is in `dictionary`, and
    /// they are not looked up (at 100,000 keys, the lookups take most of the time).
    package static func sortedKeys<Value>(
        of dictionary: [String: Value], ordered: [String], removed: Set<String>? = nil,
        added: [String]
    ) -> [String] {
        var keys: [String] = []
        keys.reserveCapacity(dictionary.count)
        for key in ordered
        where removed.map({ $0.isEmpty || !$0.contains(key) }) ?? (dictionary.index(forKey: key) != nil) {
            if let last = keys.last, !(last < key) { return dictionary.keys.sorted() }
            keys.append(key)
        }
        guard keys.count != dictionary.count || (removed != nil && !added.isEmpty) else { return keys }
        func isKept(_ key: String) -> Bool {
            var (low, high) = (0, keys.count)
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < key { low = middle + 1 } else { high = middle }
            }
            return low < keys.count && keys[low] == key
        }
        var extra: [String] = []
        for key in Set(added).sorted() where dictionary.index(forKey: key) != nil && !isKept(key) { extra.append(key) }
        guard keys.count + extra.count == dictionary.count else { return dictionary.keys.sorted() }
        var merged: [String] = []
        merged.reserveCapacity(dictionary.count)
        var next = extra.makeIterator()
        var pending = next.next()
        for key in keys {
            while let candidate = pending, candidate < key {
                merged.append(candidate)
                pending = next.next()
            }
            merged.append(key)
        }
        while let candidate = pending {
            merged.append(candidate)
            pending = next.next()
        }
        return merged
    }

    /// `JSONValue.string(text).serialized()`, without the detour for the
    /// usual string that needs no escaping.
    package static func appendString(_ text: String, to out: inout [UInt8]) {
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { out += JSONValue.string(text).serialized() }
    }

    /// A JSON array of strings.
    package static func appendStrings(_ texts: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, text) in texts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(text, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension BuildState.ItemRecord {
    /// The record's JSON object, written straight to bytes with the keys of `ItemRecordField`, in its order: a
    /// full build encodes every record while the tree waits for its new state.
    package func encodedJSON() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(640)
        func string(_ field: ItemRecordField, _ value: String) {
            field.appendKey(to: &out, first: field == .typeIdentifier)
            JSONValue.writeString(value, into: &out)
        }
        out.append(UInt8(ascii: "{"))
        string(.typeIdentifier, typeIdentifier)
        string(.identifier, identifier)
        string(.teamIdentifier, teamIdentifier)
        ItemRecordField.updateTag.appendKey(to: &out)
        out += String(updateTag).utf8
        string(.etag, etag)
        ItemRecordField.size.appendKey(to: &out)
        out += String(size).utf8
        string(.fingerprint, fingerprint)
        string(.definitionHash, definitionHash)
        string(.templateName, templateName)
        ItemRecordField.imagePaths.appendKey(to: &out)
        BuildStateEncoding.appendStrings(imagePaths, to: &out)
        string(.sourceFile, sourceFile)
        string(.downloadPath, downloadPath)
        if let tokenHash { string(.tokenHash, tokenHash) }
        if let publicDownloadPath { string(.publicDownloadPath, publicDownloadPath) }
        if let tokenPath { string(.tokenPath, tokenPath) }
        if let offer { string(.offer, offer) }
        if kind != .pass { string(.kind, kind.rawValue) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension BuildState.ContentFileRecord {
    /// The record's JSON object, with the keys of `ContentFileField`.
    func appendJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        ContentFileField.hash.appendKey(to: &out, first: true)
        BuildStateEncoding.appendString(hash, to: &out)
        ContentFileField.passes.appendKey(to: &out)
        BuildStateEncoding.appendStrings(passes, to: &out)
        if let stamp {
            ContentFileField.stamp.appendKey(to: &out)
            BuildStateEncoding.appendString(stamp, to: &out)
        }
        if let entries {
            ContentFileField.entries.appendKey(to: &out)
            BuildStateEncoding.appendString(entries, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension BuildState.RemovedItemRecord {
    /// The record's JSON object, with the keys of `RemovedRecordField` (`kind` only for an order).
    func appendJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        RemovedRecordField.typeIdentifier.appendKey(to: &out, first: true)
        BuildStateEncoding.appendString(typeIdentifier, to: &out)
        RemovedRecordField.identifier.appendKey(to: &out)
        BuildStateEncoding.appendString(identifier, to: &out)
        RemovedRecordField.tokenHash.appendKey(to: &out)
        BuildStateEncoding.appendString(tokenHash, to: &out)
        RemovedRecordField.removedTag.appendKey(to: &out)
        out += String(removedTag).utf8
        RemovedRecordField.files.appendKey(to: &out)
        BuildStateEncoding.appendStrings(files, to: &out)
        if kind != .pass {
            RemovedRecordField.kind.appendKey(to: &out)
            BuildStateEncoding.appendString(kind.rawValue, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
