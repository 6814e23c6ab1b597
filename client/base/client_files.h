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

/* Writes dir/name through writer(data, f): to name.tmp first, flushed to the disk (fsync),
 * then renamed over name, so that a reader, or a run killed at any moment, never sees half a
 * file: only the old one or the new one. On failure err names the file and the reason, and
 * the old file is left as it was. */
typedef bool (*churn_write_fn)(const void *data, FILE *f);
bool churn_write_file(const char *dir, const char *name, churn_write_fn writer,
                      const void *data, char *err, size_t err_size);
/* The same for a path: its directory is made first when it has one. */
bool churn_write_path(const char *path, churn_write_fn writer, const void *data, char *err,
                      size_t err_size);
/* Removes dir/name if it is there; false (err says why) when it is there and cannot go. */
bool churn_remove_file(const char *dir, const char *name, char *err, size_t err_size);

#endif /* REAP_CLIENT_FILES_H */
