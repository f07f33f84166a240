import Testing
@testable import PassModel
@Test func smoke() { #expect(KeyPath.root.isEmpty) }
