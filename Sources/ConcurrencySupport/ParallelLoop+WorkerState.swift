extension ParallelLoop {
    /// `map(_:jobs:_:)`, with a value of each thread's own that `transform` can keep things in from one item to
    /// the next (made by `makeState`, once per thread).
    package static func map<Item: Sendable, State, Output: Sendable>(
        _ items: [Item], jobs: Int, workerState makeState: @Sendable () -> State,
        _ transform: @Sendable (Item, inout State) -> Output
    ) -> [Output] {
        guard items.count > 1, jobs > 1 else {
            var state = makeState()
            return items.map { transform($0, &state) }
        }
        let chunk = max(1, min(256, items.count / (jobs * 8)))
        let chunks = (items.count + chunk - 1) / chunk
        return [Output](unsafeUninitializedCapacity: items.count) { buffer, initializedCount in
            // Safe to share: every index is initialized exactly once, by the one thread that took
            // its chunk, and `run` returns only when every thread is done. `transform` cannot throw.
            nonisolated(unsafe) let outputs = buffer
            run(count: chunks, jobs: jobs) { _, next in
                var state = makeState()
                while let index = next() {
                    for offset in index * chunk..<min(items.count, (index + 1) * chunk) {
                        (outputs.baseAddress! + offset).initialize(to: transform(items[offset], &state))
                    }
                }
            }
            initializedCount = items.count
        }
    }
}
