/*
 * bench_util.c - clock, statistics, memory readings, JSON in and out, child processes.
 * Nothing here is timed itself; it only has to be correct and out of the way.
 */
#include "bench_util.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- statistics ---------------------------------------------------------------------- */

void bench_runs_add(bench_runs *r, double seconds)
{
    if (r->count < BENCH_MAX_RUNS)
        r->v[r->count++] = seconds;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_runs_median(const bench_runs *r)
{
    double tmp[BENCH_MAX_RUNS];
    size_t n = 0;
    for (unsigned i = 0; i < r->count; i++)
        if (!isnan(r->v[i]))
            tmp[n++] = r->v[i];
    return bench_median(tmp, n);
}

double bench_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t rank = (size_t)ceil(p * (double)n); /* nearest rank, 1-based */
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

void bench_slices_summarise(double *v, size_t n, bench_slices *out)
{
    out->count = (uint32_t)n;
    out->total = 0;
    out->longest = n ? 0 : NAN;
    for (size_t i = 0; i < n; i++) {
        out->total += v[i];
        if (v[i] > out->longest)
            out->longest = v[i];
    }
    out->p99 = bench_percentile(v, n, 0.99);
}

/* ---- memory -------------------------------------------------------------------------- */

double bench_malloc_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (double)mi.uordblks + (double)mi.hblkhd;
#else
    return NAN;
#endif
}

double bench_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return NAN;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return NAN;
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* ---- output -------------------------------------------------------------------------- */

void bench_progress(const char *fmt, ...)
{
    va_list ap;
    fputs("  ... ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

const char *bench_fmt_ms(char *buf, size_t size, double seconds)
{
    if (isnan(seconds))
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.2f", seconds * 1e3);
    return buf;
}

const char *bench_fmt_num(char *buf, size_t size, double v, int decimals)
{
    if (isnan(v))
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.*f", decimals, v);
    return buf;
}

bool bench_is_optimised(void)
{
#ifdef __OPTIMIZE__
    return true;
#else
    return false;
#endif
}

void bench_print_load(const char *when)
{
    char buf[128] = "unknown";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            snprintf(buf, sizeof buf, "unknown");
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
    }
    printf("environment: load average %s: %s (other work on the machine skews 2-thread "
           "figures most)\n", when, buf);
    fflush(stdout);
}

/* Reads one line of a sysfs file into buf (newline dropped); false if it cannot. */
static bool sysfs_line(const char *dir, const char *name, char *buf, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0] != '\0';
}

int bench_caches(bench_cache *out, int max)
{
    int n = 0;
    for (int i = 0; i < 16 && n < max; i++) {
        char dir[96], level[16], type[32];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        if (!sysfs_line(dir, "level", level, sizeof level) ||
            !sysfs_line(dir, "type", type, sizeof type))
            break;
        if (strcmp(type, "Instruction") == 0)
            continue; /* marking is about data */
        bench_cache *c = &out[n];
        snprintf(c->name, sizeof c->name, "L%d%s", atoi(level) % 10,
                 strcmp(type, "Data") == 0 ? "d" : "");
        if (!sysfs_line(dir, "size", c->size, sizeof c->size))
            snprintf(c->size, sizeof c->size, "?");
        if (!sysfs_line(dir, "shared_cpu_list", c->shared, sizeof c->shared))
            snprintf(c->shared, sizeof c->shared, "?");
        n++;
    }
    return n;
}

const char *bench_caches_str(char *buf, size_t size)
{
    bench_cache c[8];
    int n = bench_caches(c, 8);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s %s (cpus %s)", i ? ", " : "",
                                 c[i].name, c[i].size, c[i].shared);
    if (n == 0)
        snprintf(buf, size, "unknown (no /sys/devices/system/cpu/cpu0/cache)");
    return buf;
}

void bench_json_caches(bench_json *j)
{
    bench_cache c[8];
    int n = bench_caches(c, 8);
    bench_json_begin(j, "caches");
    for (int i = 0; i < n; i++)
        bench_json_str(j, c[i].name, c[i].size);
    bench_json_end(j);
}

void bench_print_environment(void)
{
#ifdef __VERSION__
    const char *cc = __VERSION__;
#else
    const char *cc = "unknown compiler";
#endif
    printf("environment: cc %s, %s, %ld cores online\n", cc,
           bench_is_optimised() ? "optimised" : "NOT OPTIMISED (figures meaningless)",
           sysconf(_SC_NPROCESSORS_ONLN));
    char caches[256];
    printf("environment: caches of cpu0 (sysfs): %s\n", bench_caches_str(caches, sizeof caches));
    bench_print_load("at start");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("environment: built with a sanitizer: figures are not comparable\n");
#endif
}

/* ---- JSON writer --------------------------------------------------------------------- */

static void json_key(bench_json *j, const char *key)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
    if (key)
        fprintf(j->f, "\"%s\": ", key);
    j->need_comma[j->depth] = true;
}

/* mkdir -p */
static void dir_create(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0777);
            *p = '/';
        }
    mkdir(path, 0777);
}

bool bench_json_open(bench_json *j, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    memset(j, 0, sizeof *j);
    dir_create(dir);
    j->f = fopen(path, "w");
    if (!j->f) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    fputc('{', j->f);
    j->depth = 1;
    return true;
}

bool bench_json_close(bench_json *j)
{
    if (!j->f)
        return false;
    while (j->depth > 1)
        bench_json_end(j);
    fputs("\n}\n", j->f);
    bool ok = !ferror(j->f);
    ok = fclose(j->f) == 0 && ok;
    j->f = NULL;
    if (!ok)
        fprintf(stderr, "bench: error writing a JSON file\n");
    return ok;
}

void bench_json_begin(bench_json *j, const char *key)
{
    json_key(j, key);
    fputc('{', j->f);
    if (j->depth < 15)
        j->depth++;
    j->need_comma[j->depth] = false;
}

void bench_json_end(bench_json *j)
{
    if (j->depth > 1)
        j->depth--;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
    fputc('}', j->f);
}

void bench_json_num(bench_json *j, const char *key, double v)
{
    json_key(j, key);
    if (isnan(v) || isinf(v))
        fputs("null", j->f);
    else
        fprintf(j->f, "%.6g", v);
}

void bench_json_ms(bench_json *j, const char *key, double seconds)
{
    bench_json_num(j, key, seconds * 1e3);
}

void bench_json_int(bench_json *j, const char *key, long long v)
{
    json_key(j, key);
    fprintf(j->f, "%lld", v);
}

void bench_json_str(bench_json *j, const char *key, const char *s)
{
    json_key(j, key);
    fputc('"', j->f);
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', j->f);
        if ((unsigned char)*p >= 0x20)
            fputc(*p, j->f);
    }
    fputc('"', j->f);
}

void bench_json_bool(bench_json *j, const char *key, bool v)
{
    json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}

void bench_json_runs_ms(bench_json *j, const char *key, const bench_runs *r)
{
    json_key(j, key);
    fputc('[', j->f);
    for (unsigned i = 0; i < r->count; i++) {
        if (i)
            fputs(", ", j->f);
        if (isnan(r->v[i]))
            fputs("null", j->f);
        else
            fprintf(j->f, "%.4f", r->v[i] * 1e3);
    }
    fputc(']', j->f);
}

/* ---- JSON reader --------------------------------------------------------------------- */

char *bench_file_read(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

double bench_json_lookup(const char *text, const char *const *keys, size_t nkeys)
{
    const char *p = text;
    char quoted[256];
    if (!p)
        return NAN;
    for (size_t i = 0; i < nkeys; i++) {
        snprintf(quoted, sizeof quoted, "\"%s\":", keys[i]);
        p = strstr(p, quoted);
        if (!p)
            return NAN;
        p += strlen(quoted);
    }
    while (*p == ' ')
        p++;
    if (strncmp(p, "null", 4) == 0)
        return NAN;
    char *end;
    double v = strtod(p, &end);
    return end == p ? NAN : v;
}

/* ---- child processes ----------------------------------------------------------------- */

bool bench_run_child(const char *what, bench_child_fn fn, void *arg, void *shared,
                     size_t shared_size)
{
    void *block = mmap(NULL, shared_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
    if (block == MAP_FAILED) {
        fprintf(stderr, "bench: mmap for %s: %s\n", what, strerror(errno));
        return false;
    }
    memset(block, 0, shared_size);
    fflush(NULL); /* or buffered output would be printed twice */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bench: fork for %s: %s\n", what, strerror(errno));
        munmap(block, shared_size);
        return false;
    }
    if (pid == 0) {
        int rc = fn(arg, block);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        if (WIFSIGNALED(status))
            printf("  !! %s: child killed by signal %d; its figures are n/a\n", what,
                   WTERMSIG(status));
        else
            printf("  !! %s: child exited with status %d; its figures are n/a\n", what,
                   WEXITSTATUS(status));
    }
    memcpy(shared, block, shared_size);
    munmap(block, shared_size);
    return ok;
}
