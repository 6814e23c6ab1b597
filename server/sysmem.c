/*
 * sysmem.c - free memory from /proc/meminfo and the cgroup v2 limit.
 */
#include "sysmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
