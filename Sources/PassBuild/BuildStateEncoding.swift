import AtomicFiles
import PassModel

/// Where the pass records of the state file a build started from are, to
/// write the unchanged ones back without encoding them again. Only the
/// ranges stay in memory; the bytes are read again, in order, while the new
/// state is written (the build lock keeps the file as it was, and its
/// identity is checked).
struct PreviousStateFile: Sendable {
    var path: String
    var identity: FileIdentity
    /// Each record's key and bytes in the file, in file order.
    var recordRanges: [(key: String, range: Range<Int>)]
}

/// The bytes of a build state, equal to `BuildState.encoded()`, made on
/// every core and written out in chunks of about a megabyte: each pass's
/// record is encoded on its own (a pass signed in this build brings its
/// bytes along from the worker that signed it, one carried over unchanged
/// is copied from the previous state file), and the records are joined in key order.
enum BuildStateEncoding {
    static func encode(_ state: BuildState, encodedPasses: [String: [UInt8]] = [:], jobs: Int) -> [UInt8] {
        var out: [UInt8] = []
        // Cannot fail: nothing is read and the sink does not throw.
        try? write(state, encodedPasses: encodedPasses, jobs: jobs) { out += $0 }
        return out
    }

    /// Writes the state to `path`, a new file.
    static func write(_ state: BuildState, keys: [String], encodedPasses: [String: [UInt8]], carried: Set<String>, previous: PreviousStateFile?,
                      to path: String, jobs: Int) throws {
        var writer = try BufferedFileWriter(creating: path)
        try write(state, keys: keys, encodedPasses: encodedPasses, carried: carried, previous: previous, jobs: jobs) { chunk in
            try writer.append(chunk)
        }
        try writer.flush()
    }

    /// - Parameters:
    ///   - keys: the keys of `state.passes`, sorted, when the caller has them.
    ///   - encodedPasses: records already encoded, by key.
    ///   - carried: keys of records that are as in `previous`, copied from it.
    ///   - emit: called with each chunk of the file, in order.
    static func write(_ state: BuildState, keys: [String]? = nil, encodedPasses: [String: [UInt8]], carried: Set<String> = [],
                      previous: PreviousStateFile? = nil, jobs: Int, emit: ([UInt8]) throws -> Void) throws {
        let chunkSize = 1 << 20
        // The previous file, when it is still the one the build read.
        var source: RegularFile? = nil
        var ranges: [String: Range<Int>] = [:]
        if let previous, !carried.isEmpty, let file = RegularFile(openingForReading: previous.path), file.identity == previous.identity {
            source = consume file
            ranges = Dictionary(previous.recordRanges, uniquingKeysWith: { $1 })
        }
        let keys = keys ?? state.passes.keys.sorted()
        let passes = state.passes
        // Records to encode here; the others are copied.
        let fresh = keys.filter { encodedPasses[$0] == nil && !(carried.contains($0) && ranges[$0] != nil) }
        let freshBytes = ParallelLoop.map(fresh, jobs: jobs) { key in passes[key]!.json.serialized() }
        var encoded = encodedPasses
        for (key, bytes) in zip(fresh, freshBytes) { encoded[key] = bytes }

        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + 64 * 1024)
        // A window of the previous file: records are read in file order, so one read serves many.
        var window: [UInt8] = [], windowStart = 0
        out += #"{"version":"#.utf8
        out += String(state.version).utf8
        out += #","lastUpdateTag":"#.utf8
        out += String(state.lastUpdateTag).utf8
        out += #","builtAt":"#.utf8
        out += JSONValue.string(state.builtAt).serialized()
        out += #","passes":{"#.utf8
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            if let bytes = encoded[key] {
                out += bytes
            } else {
                let range = ranges[key]!
                if range.lowerBound < windowStart || range.upperBound > windowStart + window.count {
                    windowStart = range.lowerBound
                    guard let read = source!.read(at: windowStart, count: max(range.count, 4 * chunkSize)),
                          read.count >= range.count else {
                        throw BuildError.message("cannot read \(previous!.path) again while writing the new build state; build again")
                    }
                    window = read
                }
                out += window[(range.lowerBound - windowStart)..<(range.upperBound - windowStart)]
            }
            if out.count >= chunkSize {
                try emit(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out += #"},"contentFiles":{"#.utf8
        for (index, path) in state.contentFiles.keys.sorted().enumerated() {
            let file = state.contentFiles[path]!
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(path, to: &out)
            out += #":{"hash":"#.utf8
            appendString(file.hash, to: &out)
            out += #","passes":["#.utf8
            for (position, key) in file.passes.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                appendString(key, to: &out)
            }
            out.append(UInt8(ascii: "]"))
            if let identity = file.identity {
                out += #","identity":"#.utf8
                appendString(identity, to: &out)
            }
            if let entries = file.entries {
                out += #","entries":"#.utf8
                appendString(entries, to: &out)
            }
            out.append(UInt8(ascii: "}"))
            if out.count >= chunkSize {
                try emit(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out += #"},"removedPasses":"#.utf8
        var rest = BuildState()
        rest.removedPasses = state.removedPasses
        out += (rest.json["removedPasses"] ?? .object(JSONObject())).serialized()
        out.append(UInt8(ascii: "}"))
        try emit(out)
    }

    /// `JSONValue.string(text).serialized()`, without the detour for the
    /// usual string that needs no escaping.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { out += JSONValue.string(text).serialized() }
    }
}
