/// Spelling distance, to suggest the key or value someone probably meant.
enum Spelling {
    /// Optimal-string-alignment distance (Levenshtein plus adjacent
    /// transpositions), ignoring case: "serialNumbr" → "serialNumber" is 1,
    /// "lable" → "label" is 1.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased())
        let b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            previousPrevious = previous
            previous = current
        }
        return previous[b.count]
    }

    /// The candidate closest to `word`, if it is close enough to be a typo:
    /// at most 2 edits, or 1 for words of 4 letters or fewer (so "row" does
    /// not suggest "key").
    static func nearest(to word: String, in candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let limit = min(word.count, candidate.count) <= 4 ? 1 : 2
            let d = distance(word, candidate)
            guard d <= limit else { continue }
            if best == nil || d < best!.distance { best = (candidate, d) }
        }
        return best?.candidate
    }
}
