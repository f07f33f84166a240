import ConcurrencySupport
import Synchronization
import Testing

@testable import PassBuild
@testable import WalletTree

@Suite struct ParallelLoopTests {
    @Test(arguments: [1, 2, 3, 8])
    func mapGivesEveryOutputInItsPlace(jobs: Int) {
        for count in [0, 1, 2, 255, 10_007] {
            let items = (0..<count).map { "item \($0) " + String(repeating: "x", count: $0 % 40) }
            let mapped = ParallelLoop.map(items, jobs: jobs) { $0.uppercased() + "!" }
            #expect(mapped == items.map { $0.uppercased() + "!" }, "\(count) items on \(jobs) threads")
        }
    }

    /// Outputs are written into the result in place: each is made once, none is lost or freed twice.
    @Test func mapMakesAndKeepsEachOutputOnce() {
        let live = Atomic<Int>(0)
        final class Counted: Sendable {
            let value: Int
            private let count: @Sendable (Int) -> Void
            init(_ value: Int, count: @escaping @Sendable (Int) -> Void) {
                self.value = value
                self.count = count
                count(1)
            }
            deinit { count(-1) }
        }
        do {
            let counted = ParallelLoop.map(Array(0..<5_000), jobs: 4) { value in
                Counted(value) { live.add($0, ordering: .relaxed) }
            }
            #expect(counted.map(\.value) == Array(0..<5_000))
            #expect(live.load(ordering: .relaxed) == 5_000)
        }
        #expect(live.load(ordering: .relaxed) == 0)
    }
}
