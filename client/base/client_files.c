/*
 * client_files.c - directories made as needed, files replaced whole (see client_files.h).
 */
#include "client_files.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: every missing component of path. */
bool churn_mkdirs(const char *path, char *err, size_t err_size)
{
    char buf[1024];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof buf) {
        snprintf(err, err_size, "bad output directory '%s'", path);
        return false;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            snprintf(err, err_size, "cannot create directory '%s': %s", buf, strerror(errno));
            return false;
        }
        buf[i] = saved;
    }
    return true;
}

bool churn_write_file(const char *dir, const char *name, churn_write_fn writer,
                      const void *data, char *err, size_t err_size)
{
    char path[1100], tmp[1110];
    FILE *f;
    bool ok;
    int saved;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, err_size, "cannot write '%s': %s", tmp, strerror(errno));
        return false;
    }
    errno = 0;
    ok = writer(data, f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
    saved = errno;
    ok = fclose(f) == 0 && ok;
    if (saved == 0)
        saved = errno;
    if (ok && rename(tmp, path) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        snprintf(err, err_size, "cannot write '%s': %s", path,
                 saved != 0 ? strerror(saved) : "the writer failed");
        remove(tmp);
        return false;
    }
    return true;
}

bool churn_write_path(const char *path, churn_write_fn writer, const void *data, char *err,
                      size_t err_size)
{
    char dir[1024];
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return churn_write_file(".", path, writer, data, err, err_size);
    if ((size_t)(slash - path) >= sizeof dir) {
        snprintf(err, err_size, "cannot write '%s': the path is too long", path);
        return false;
    }
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    if (dir[0] == '\0')
        return churn_write_file("/", slash + 1, writer, data, err, err_size);
    return churn_mkdirs(dir, err, err_size) &&
           churn_write_file(dir, slash + 1, writer, data, err, err_size);
}

bool churn_remove_file(const char *dir, const char *name, char *err, size_t err_size)
{
    char path[1100];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (remove(path) == 0 || errno == ENOENT)
        return true;
    snprintf(err, err_size, "cannot remove '%s': %s", path, strerror(errno));
    return false;
}
