#define _GNU_SOURCE
#include <malloc.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "CSystemCalls.h"

/* TMPFS_MAGIC of <linux/magic.h>, spelled here so that no kernel header is needed. */
#define PASSFORGE_TMPFS_MAGIC 0x01021994

int passforge_is_tmpfs(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return info.f_type == PASSFORGE_TMPFS_MAGIC;
}

int passforge_syncfs(int fd) {
    return syncfs(fd);
}

int passforge_set_malloc_thresholds(int trim_threshold, int mmap_threshold) {
    int trim_set = mallopt(M_TRIM_THRESHOLD, trim_threshold);
    int mmap_set = mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    return trim_set && mmap_set;
}

size_t passforge_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/* The commit a build was made from: none here. `make dist` links in one more object with a
 * strong definition of this function returning the commit (scripts/dist.sh), which the linker
 * takes over this weak one: no tracked file is rewritten and nothing is recompiled, only
 * relinked, when the commit changes. */
__attribute__((weak)) const char *passforge_build_commit(void) {
    return "";
}
