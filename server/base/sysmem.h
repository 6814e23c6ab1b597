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

/* The process as Prometheus' process_* series describe it. */
typedef struct sysmem_process {
    uint64_t resident_bytes;     /* RSS */
    double cpu_seconds;          /* user + system */
    double start_time_seconds;   /* since the Unix epoch */
} sysmem_process;

/* Parses /proc/self/stat text (the fields after the command name matter), with the clock-tick
 * rate, the page size and /proc/stat's btime; false on junk. */
bool sysmem_parse_process_stat(const char *stat_text, long ticks_per_second, long page_size,
                               uint64_t boot_time, sysmem_process *out);
/* Reads /proc/self/stat and /proc/stat now; false if they cannot be read. */
bool sysmem_process_read(sysmem_process *out);

/* The calling thread's use of the CPU: what a frame that ran long did with its time. */
typedef struct sysmem_thread_usage {
    double cpu_seconds;  /* user + system */
    uint64_t preempted;  /* involuntary context switches: the kernel gave its CPU away */
} sysmem_thread_usage;

/* Reads the calling thread's usage now (one system call); false if it cannot be read. */
bool sysmem_thread_usage_read(sysmem_thread_usage *out);

#endif /* REAP_SYSMEM_H */
