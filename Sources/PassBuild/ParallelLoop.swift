import AtomicFiles
import Dispatch
import Synchronization

/// Work spread over a fixed number of threads that take the next item as
/// they finish one, so a slow item never holds the others up.
enum ParallelLoop {
    /// Runs `body` once on each of `min(jobs, count)` threads (at least one).
    /// Each call gets its worker number and `next`, which hands out every
    /// index in `0..<count` exactly once over all threads, then nil.
    static func run(count: Int, jobs: Int, _ body: @Sendable (_ worker: Int, _ next: () -> Int?) -> Void) {
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
    /// chunks, so cheap transforms of many items do not contend.
    static func map<Item: Sendable, Output: Sendable>(
        _ items: [Item], jobs: Int, _ transform: @Sendable (Item) -> Output
    ) -> [Output] {
        guard items.count > 1, jobs > 1 else { return items.map(transform) }
        let chunk = max(1, min(256, items.count / (jobs * 8)))
        let chunks = (items.count + chunk - 1) / chunk
        let results = Mutex([Output?](repeating: nil, count: items.count))
        run(count: chunks, jobs: jobs) { _, next in
            while let index = next() {
                let range = index * chunk..<min(items.count, (index + 1) * chunk)
                let outputs = range.map { transform(items[$0]) }
                results.withLock { slots in
                    for (offset, output) in zip(range, outputs) { slots[offset] = output }
                }
            }
        }
        return results.withLock { $0.map { $0! } }
    }
}
