import PassModel

/// The bytes of a build state, equal to `BuildState.encoded()`, made on
/// every core: each pass's record is encoded on its own (a pass signed in
/// this build brings its bytes along from the worker that signed it), and
/// the records are joined in key order.
enum BuildStateEncoding {
    /// - Parameter encodedPasses: records already encoded, by key; the others are encoded here.
    static func encode(_ state: BuildState, encodedPasses: [String: [UInt8]] = [:], jobs: Int) -> [UInt8] {
        let keys = state.passes.keys.sorted()
        let passes = state.passes
        let records = ParallelLoop.map(keys, jobs: jobs) { key in
            encodedPasses[key] ?? passes[key]!.json.serialized()
        }
        var rest = state
        rest.passes = [:]
        let skeleton = rest.json
        var out: [UInt8] = []
        out.reserveCapacity(records.reduce(256) { $0 + $1.count + 64 })
        out += #"{"version":"#.utf8
        out += String(state.version).utf8
        out += #","lastUpdateTag":"#.utf8
        out += String(state.lastUpdateTag).utf8
        out += #","builtAt":"#.utf8
        out += JSONValue.string(state.builtAt).serialized()
        out += #","passes":{"#.utf8
        for (index, (key, record)) in zip(keys, records).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += JSONValue.string(key).serialized()
            out.append(UInt8(ascii: ":"))
            out += record
        }
        out += #"},"contentFiles":"#.utf8
        out += (skeleton["contentFiles"] ?? .object(JSONObject())).serialized()
        out += #","removedPasses":"#.utf8
        out += (skeleton["removedPasses"] ?? .object(JSONObject())).serialized()
        out.append(UInt8(ascii: "}"))
        return out
    }
}
