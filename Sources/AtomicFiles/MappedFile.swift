#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of an open regular file mapped into memory, read-only, for as long as the value lives.
///
/// Reading a large file whole this way costs no copy and no fresh memory to fill: the pages are those the
/// kernel already caches. The file must not shrink while mapped (reading past its new end would stop the
/// process): build outputs are only ever replaced by renaming a new file into place, which leaves the
/// mapped version whole.
package struct MappedFile: ~Copyable {
    private let start: UnsafeRawPointer?
    private let count: Int

    /// The whole of `file` (`identity.size` bytes); nil when it cannot be mapped.
    package init?(_ file: borrowing RegularFile) {
        count = Int(file.stamp.size)
        guard count > 0 else {
            start = nil
            return
        }
        let address = mmap(nil, count, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file.descriptor, 0)
        guard let address, address != MAP_FAILED else { return nil }
        start = UnsafeRawPointer(address)
    }

    deinit {
        if let start { munmap(UnsafeMutableRawPointer(mutating: start), count) }
    }

    /// Calls `body` with the file's bytes, valid only during the call.
    package func withBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        guard let start else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: count))
    }
}
