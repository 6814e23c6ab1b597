/*
 * test_load_files.h - reading and removing what reap-client's churn generator writes, for the
 * integration tests that run it (test_churn.c, test_load_*.c). Header-only.
 */
#ifndef REAP_TEST_LOAD_FILES_H
#define REAP_TEST_LOAD_FILES_H

#include <dirent.h>

#include "harness.h"

/* Reads a whole (small) file into a malloc'ed string; NULL if it cannot. */
static inline char *read_text_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t len;

    if (f == NULL)
        return NULL;
    buf = calloc(1, HARNESS_LOG_MAX + 1);
    assert_non_null(buf);
    len = fread(buf, 1, HARNESS_LOG_MAX, f);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* A JSON integer field's value ("\"name\": N") in a report, or -1. */
static inline long json_int(const char *json, const char *name)
{
    char key[80];
    const char *p;

    snprintf(key, sizeof key, "\"%s\": ", name);
    p = strstr(json, key);
    return p != NULL ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* Removes the files of an output directory (timeline, report), then the directory. */
static inline void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Runs reap-client to completion (at most timeout seconds) while reading the server's log, so
 * that a busy server never blocks on a full pipe; returns the client's exit status. */
static inline int run_client_beside(harness_server *s, const char *const *args, double timeout,
                                    harness_proc *out_proc)
{
    double deadline = harness_now() + timeout;

    harness_proc_start(out_proc, "reap-client", args);
    while (!out_proc->exited && harness_now() < deadline) {
        harness_proc_pump(out_proc, 20);
        harness_proc_pump(&s->proc, 0);
    }
    harness_proc_pump(out_proc, 0);
    if (!out_proc->exited) {
        harness_proc_kill(out_proc);
        fail_msg("reap-client did not finish within %g s; it printed:\n%s", timeout,
                 out_proc->out);
    }
    return out_proc->status;
}

#endif
