/*
 * client_files.h - the files a run leaves behind are written whole or not at all.
 */
#ifndef REAP_CLIENT_FILES_H
#define REAP_CLIENT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* mkdir -p; on failure err names the directory. */
bool churn_mkdirs(const char *path, char *err, size_t err_size);

/* Writes dir/name through writer(data, f): to name.tmp first, then renamed, so a reader never
 * sees half a file. On failure err names the file. */
typedef bool (*churn_write_fn)(const void *data, FILE *f);
bool churn_write_file(const char *dir, const char *name, churn_write_fn writer,
                      const void *data, char *err, size_t err_size);

#endif /* REAP_CLIENT_FILES_H */
