#ifndef PASSFORGE_CSYSTEMCALLS_H
#define PASSFORGE_CSYSTEMCALLS_H

#include <stddef.h>

/* The few glibc calls Swift's Glibc module does not export: syncfs(2) is
 * declared only with _GNU_SOURCE, mallopt(3) lives in <malloc.h>, fstatfs(2)
 * in <sys/vfs.h>. And the
 * commit a release was built from, which `make dist` links in. */

/* Flushes every written file of the file system holding the open file `fd`.
 * Returns 0, or -1 with errno set. */
int passforge_syncfs(int fd);

/* Whether the open file or folder `fd` is on tmpfs (statfs(2)'s f_type is
 * TMPFS_MAGIC, <linux/magic.h>): 1, 0, or -1 with errno set. */
int passforge_is_tmpfs(int fd);

/* Keeps freed heap memory in the process (M_TRIM_THRESHOLD) and serves
 * allocations below `mmap_threshold` bytes from the heap (M_MMAP_THRESHOLD).
 * Returns 1 when both were set. */
int passforge_set_malloc_thresholds(int trim_threshold, int mmap_threshold);

/* Bytes the program has allocated and not freed (mallinfo2(3): uordblks +
 * hblkhd): the resident size less what glibc keeps free. */
size_t passforge_heap_in_use(void);

/* The git commit the binary was built from ("884a15a2b3c4", "884a15a2b3c4-dirty"),
 * or "" when the build was not given one (a plain `swift build`). */
const char *passforge_build_commit(void);

#endif
