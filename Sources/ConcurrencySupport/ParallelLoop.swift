import Dispatch
import Synchronization

/// Work spread over a fixed number of threads that take the next item as
/// they finish one, so a slow item never holds the others up.
package enum ParallelLoop {
    /// Runs `body` once on each of `min(jobs, count)` threads (at least one).
    /// Each call gets its worker number and `next`, which hands out every
    /// index in `0..<count` exactly once over all threads, then nil.
    package static func run(count: Int, jobs: Int, _ body: @Sendable (_ worker: Int, _ next: () -> Int?) -> Void) {
        let counter = Counter()
        let next: @Sendable () -> Int? = {
            let index = counter.increment() - 1
            return index < count ? index : nil
        }
        let workers = max(1, min(jobs, count))
        if workers == 1 {
            body(0, next)
        } else {
            DispatchQueue.concurrentPerform(iterations: workers) { worker in body(worker, next) }
        }
    }

    /// `items.map(transform)`, on `jobs` threads. Items are handed out in
    /// chunks, so cheap transforms of many items do not contend; each output is
    /// written straight into its place in the result (at 100,000 items of a few
    /// hundred bytes, a second array to copy from would be tens of MB).
    package static func map<Item: Sendable, Output: Sendable>(
        _ items: [Item], jobs: Int, _ transform: @Sendable (Item) -> Output
    ) -> [Output] {
        map(items, jobs: jobs, workerState: {}) { item, _ in transform(item) }
    }
}
