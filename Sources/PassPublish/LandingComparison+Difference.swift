import WalletTree

#if canImport(Glibc)
    import Glibc
#endif

extension LandingComparison {
    /// The two sides of a publish: the local list (`local`, the bytes of landing-pages.txt in `localOutput`) and
    /// the destination's, compared line by line before either is read. A list has one line per item's pages
    /// (and per badge), and a build writes the same line for an item whose pages it kept, so after one change of
    /// 100,000 the two lists differ in a line or two: each side is read as its header and the lines the other
    /// side lacks (`isPartial`), and the whole local list only by `whole`, when something may be deleted.
    ///
    /// Without a list on either side, or when the destination's changed lines are not a list, both are read
    /// whole, as before (a damaged destination list counts as none: every page is sent again).
    static func difference(local: [UInt8]?, destination: [UInt8]?, localOutput: String) throws(PublishError)
        -> (local: LandingComparison, destination: LandingComparison, isPartial: Bool)
    {
        let whole = { () throws(PublishError) in try LandingComparison(localOutput: localOutput, bytes: local) }
        guard let local, let destination else {
            return (try whole(), LandingComparison(destination: destination), false)
        }
        if local == destination { return (LandingComparison(), LandingComparison(), true) }
        let lines = changedLines(local, destination)
        guard let theirs = LandingPageList(decoding: lines.destination) else {
            return (try whole(), LandingComparison(), false)
        }
        return (try LandingComparison(localOutput: localOutput, bytes: lines.local), LandingComparison(theirs), true)
    }

    /// Each list cut to its first line (the header) and the lines the other list does not have, byte for byte.
    static func changedLines(_ local: [UInt8], _ destination: [UInt8]) -> (local: [UInt8], destination: [UInt8]) {
        local.withUnsafeBufferPointer { ours in
            destination.withUnsafeBufferPointer { theirs in
                let (ourLines, theirLines) = (Line.lines(of: ours), Line.lines(of: theirs))
                let (ourSet, theirSet) = (Set(ourLines.dropFirst()), Set(theirLines.dropFirst()))
                func list(_ lines: [Line], without other: Set<Line>) -> [UInt8] {
                    var bytes: [UInt8] = []
                    for (index, line) in lines.enumerated() where index == 0 || !other.contains(line) {
                        bytes.append(contentsOf: UnsafeBufferPointer(start: line.start, count: line.count))
                        bytes.append(UInt8(ascii: "\n"))
                    }
                    return bytes
                }
                return (list(ourLines, without: theirSet), list(theirLines, without: ourSet))
            }
        }
    }

    /// One line of a list, its bytes compared and hashed in place (valid while the list's buffer is).
    private struct Line: Hashable {
        let start: UnsafePointer<UInt8>
        let count: Int

        /// The lines of `buffer` that are not empty, in order.
        static func lines(of buffer: UnsafeBufferPointer<UInt8>) -> [Line] {
            guard let base = buffer.baseAddress else { return [] }
            var lines: [Line] = []
            var start = 0
            while start < buffer.count {
                let rest = buffer.count - start
                let end =
                    memchr(base + start, Int32(UInt8(ascii: "\n")), rest).map {
                        UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
                    } ?? buffer.count
                if end > start { lines.append(Line(start: base + start, count: end - start)) }
                start = end + 1
            }
            return lines
        }

        static func == (lhs: Line, rhs: Line) -> Bool {
            lhs.count == rhs.count && memcmp(lhs.start, rhs.start, lhs.count) == 0
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes: UnsafeRawBufferPointer(start: start, count: count))
        }
    }
}
