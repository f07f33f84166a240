import Testing

@testable import PassModel

/// A JSON object keeps its keys in the order written, small (found by a scan) or large (found
/// through its index of positions), through changes and removals.
@Suite struct JSONObjectTests {
    /// Keys written, overwritten and removed, checked against a plain list of pairs.
    @Test(arguments: [3, 12, 13, 40])
    func anObjectIsItsPairsInTheOrderWritten(count: Int) {
        var object = JSONObject()
        var expected: [(String, JSONValue)] = []
        for index in 0..<count {
            object["key\(index)"] = .int(index)
            expected.append(("key\(index)", .int(index)))
        }
        object["key1"] = .string("changed")
        expected[1].1 = .string("changed")
        object["key0"] = nil
        expected.removeFirst()
        object["absent"] = nil
        object["key0"] = .bool(true)
        expected.append(("key0", .bool(true)))
        #expect(object.keys == expected.map(\.0))
        #expect(object.map(\.key) == expected.map(\.0))
        #expect(object.map(\.value) == expected.map(\.1))
        for (key, value) in expected { #expect(object[key] == value, "\(key)") }
        #expect(object["key\(count)"] == nil)
        #expect(object.count == expected.count)
        #expect(object == JSONObject(expected))
        #expect(object.hashValue == JSONObject(expected).hashValue)
        // The same pairs in another order are another object, as before (the order is part of it).
        #expect(object != JSONObject(expected.reversed()))
        #expect(
            JSONValue.object(object).serializedString() == JSONValue.object(JSONObject(expected)).serializedString())
    }

    @Test func removingEveryKeyOfALargeObjectLeavesItEmpty() {
        var object = JSONObject((0..<20).map { ("k\($0)", JSONValue.int($0)) })
        for index in (0..<20).shuffled() { object["k\(index)"] = nil }
        #expect(object.isEmpty)
        object["k5"] = .int(5)
        #expect(object.keys == ["k5"] && object["k5"] == .int(5))
    }
}
