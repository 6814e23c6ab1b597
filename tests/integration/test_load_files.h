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

#endif
