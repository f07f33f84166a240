extension Sequence where Element: Sendable {
    /// `transform` applied to every element, as child tasks of a task group
    /// with at most `maximumConcurrency` running at once (say, within a
    /// connection pool's size); the results in the sequence's order. The
    /// first error is thrown, and the calls still running are cancelled.
    package func concurrentMap<T: Sendable>(
        maximumConcurrency: Int,
        _ transform: @escaping @Sendable (Element) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: (offset: Int, value: T).self) { group in
            var elements = enumerated().makeIterator()
            var results: [T?] = []
            func startNext() -> Bool {
                guard let (offset, element) = elements.next() else { return false }
                results.append(nil)
                group.addTask { (offset, try await transform(element)) }
                return true
            }
            var started = 0
            while started < Swift.max(1, maximumConcurrency), startNext() { started += 1 }
            while let finished = try await group.next() {
                results[finished.offset] = finished.value
                _ = startNext()
            }
            return results.map { $0! }
        }
    }
}
