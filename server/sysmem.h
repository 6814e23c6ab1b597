/*
 * sysmem.h - how much memory the process could still get: the smaller of the kernel's
 * MemAvailable and, when the process runs in a cgroup (v2) with a limit, that limit minus the
 * cgroup's current usage. Feeds the low-memory collection interval.
 */
#ifndef REAP_SYSMEM_H
#define REAP_SYSMEM_H

#include <stdbool.h>
#include <stdint.h>

/* Parses /proc/meminfo text; false if it has no MemAvailable line. */
bool sysmem_parse_meminfo(const char *text, uint64_t *out_bytes);
/* Parses cgroup v2 memory.max / memory.current text; false for "max" (no limit) or junk. */
bool sysmem_parse_cgroup_value(const char *text, uint64_t *out_bytes);
/* Combines the two sources; negative when neither is known. */
double sysmem_free_mb_from(bool have_meminfo, uint64_t mem_available, bool have_limit,
                           uint64_t limit, bool have_usage, uint64_t usage);
/* Reads the files now; negative if nothing could be read. */
double sysmem_free_mb(void);

#endif /* REAP_SYSMEM_H */
