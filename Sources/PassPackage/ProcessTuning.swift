import CSystemCalls

/// Process-wide settings that make bulk pass packaging faster.
public enum ProcessTuning {
    /// Stops glibc from returning freed heap memory to the kernel after
    /// every pass.
    ///
    /// Why: libzip gives every deflated entry a fresh zlib stream, whose
    /// ~300 KB of state glibc frees and, being above the default 128 KiB
    /// `M_TRIM_THRESHOLD`, at once trims from the heap; the next pass grows
    /// the heap again and page-faults it back in (mallopt(3),
    /// "M_TRIM_THRESHOLD"). Measured on the build machine, zipping a typical
    /// pass took ≈0.33 ms with the churn and ≈0.05 ms without.
    ///
    /// Setting `M_TRIM_THRESHOLD` turns off glibc's dynamic mmap threshold,
    /// so `M_MMAP_THRESHOLD` is fixed well above zlib's largest allocation,
    /// which then stays on the heap.
    ///
    /// It is process-wide, so it is opt-in: call it once at the start of a
    /// large build.
    public static func reduceHeapTrimming() {
        _ = passforge_set_malloc_thresholds(64 << 20, 4 << 20)
    }
}
