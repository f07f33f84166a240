import CSystemCalls

/// Process-wide settings that make bulk pass packaging faster.
package enum ProcessTuning {
    /// Stops glibc from returning freed heap memory to the kernel after
    /// every pass.
    ///
    /// Why: a build allocates and frees a few large buffers per pass (zlib
    /// streams, the archive, OpenSSL's big-number scratch space); glibc
    /// trims the top of the heap when more than the default 128 KiB
    /// `M_TRIM_THRESHOLD` is free, and the next pass grows it again and
    /// page-faults it back in (mallopt(3), "M_TRIM_THRESHOLD"). With libzip,
    /// which gave every entry a 300 KB zlib stream, zipping a pass took
    /// ≈0.33 ms with the churn and ≈0.05 ms without.
    ///
    /// Setting `M_TRIM_THRESHOLD` turns off glibc's dynamic mmap threshold,
    /// so `M_MMAP_THRESHOLD` is fixed well above zlib's largest allocation,
    /// which then stays on the heap.
    ///
    /// It is process-wide, so it is opt-in: call it once at the start of a
    /// large build.
    package static func reduceHeapTrimming() {
        _ = passforge_set_malloc_thresholds(64 << 20, 4 << 20)
    }

    /// Bytes allocated and not yet freed, for the build's phase report.
    package static var heapInUse: Int { Int(passforge_heap_in_use()) }
}
