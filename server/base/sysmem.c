/*
 * sysmem.c - free memory from /proc/meminfo and the cgroup v2 limit; the process's and the
 * calling thread's use of the CPU.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "sysmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

bool sysmem_parse_meminfo(const char *text, uint64_t *out_bytes)
{
    const char *p = text ? strstr(text, "MemAvailable:") : NULL;
    char *end;
    unsigned long long kb;

    if (p == NULL || (p != text && p[-1] != '\n'))
        return false;
    p += strlen("MemAvailable:");
    errno = 0;
    kb = strtoull(p, &end, 10);
    if (errno != 0 || end == p)
        return false;
    *out_bytes = (uint64_t)kb * 1024u;
    return true;
}

bool sysmem_parse_cgroup_value(const char *text, uint64_t *out_bytes)
{
    char *end;
    unsigned long long v;

    if (text == NULL || text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || (*end != '\0' && *end != '\n'))
        return false;
    *out_bytes = (uint64_t)v;
    return true;
}

double sysmem_free_mb_from(bool have_meminfo, uint64_t mem_available, bool have_limit,
                           uint64_t limit, bool have_usage, uint64_t usage)
{
    double mb = -1;

    if (have_meminfo)
        mb = (double)mem_available / (1024.0 * 1024.0);
    if (have_limit) {
        double cg = have_usage && usage < limit ? (double)(limit - usage) : 0;
        if (!have_usage)
            cg = (double)limit;
        cg /= 1024.0 * 1024.0;
        if (mb < 0 || cg < mb)
            mb = cg;
    }
    return mb;
}

static bool sysmem_read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return false;
    n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0;
}

/* The process's cgroup v2 directory ("/sys/fs/cgroup/<path>"), from /proc/self/cgroup. */
static void sysmem_cgroup_dir(char *dir, size_t size)
{
    char buf[1024];
    const char *line;
    char *nl;

    snprintf(dir, size, "/sys/fs/cgroup");
    if (!sysmem_read_file("/proc/self/cgroup", buf, sizeof buf))
        return;
    line = strstr(buf, "0::");
    if (line == NULL || (line != buf && line[-1] != '\n'))
        return;
    line += 3;
    nl = strchr(line, '\n');
    if (nl != NULL)
        *nl = '\0';
    if (strcmp(line, "/") != 0)
        snprintf(dir, size, "/sys/fs/cgroup%s", line);
}

double sysmem_free_mb(void)
{
    char buf[8192], dir[1200], path[1300];
    uint64_t avail = 0, limit = 0, usage = 0;
    bool have_avail, have_limit, have_usage;

    have_avail = sysmem_read_file("/proc/meminfo", buf, sizeof buf) &&
                 sysmem_parse_meminfo(buf, &avail);
    sysmem_cgroup_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/memory.max", dir);
    have_limit = sysmem_read_file(path, buf, sizeof buf) && sysmem_parse_cgroup_value(buf, &limit);
    snprintf(path, sizeof path, "%s/memory.current", dir);
    have_usage = have_limit && sysmem_read_file(path, buf, sizeof buf) &&
                 sysmem_parse_cgroup_value(buf, &usage);
    return sysmem_free_mb_from(have_avail, avail, have_limit, limit, have_usage, usage);
}

bool sysmem_parse_process_stat(const char *stat_text, long ticks_per_second, long page_size,
                               uint64_t boot_time, sysmem_process *out)
{
    /* The command name is in parentheses and may hold spaces: fields count from its end. */
    const char *p = stat_text != NULL ? strrchr(stat_text, ')') : NULL;
    unsigned long long utime, stime, starttime;
    long long rss;

    if (p == NULL || ticks_per_second <= 0 || page_size <= 0)
        return false;
    /* after ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15) cutime cstime priority nice num_threads itrealvalue starttime(22)
     * vsize rss(24) */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
               "%*d %*d %llu %*u %lld", &utime, &stime, &starttime, &rss) != 4 || rss < 0)
        return false;
    out->resident_bytes = (uint64_t)rss * (uint64_t)page_size;
    out->cpu_seconds = (double)(utime + stime) / (double)ticks_per_second;
    out->start_time_seconds = (double)boot_time + (double)starttime / (double)ticks_per_second;
    return true;
}

bool sysmem_process_read(sysmem_process *out)
{
    char stat_text[1024], proc_stat[8192];
    const char *btime;
    unsigned long long boot = 0;

    if (!sysmem_read_file("/proc/self/stat", stat_text, sizeof stat_text))
        return false;
    if (sysmem_read_file("/proc/stat", proc_stat, sizeof proc_stat) &&
        (btime = strstr(proc_stat, "\nbtime ")) != NULL)
        boot = strtoull(btime + 7, NULL, 10);
    return sysmem_parse_process_stat(stat_text, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE),
                                     (uint64_t)boot, out);
}

bool sysmem_thread_usage_read(sysmem_thread_usage *out)
{
    struct rusage ru;

    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return false;
    out->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    out->preempted = (uint64_t)ru.ru_nivcsw;
    return true;
}
