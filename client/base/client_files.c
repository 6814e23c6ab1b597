/*
 * client_files.c - directories made as needed, files replaced whole (see client_files.h).
 */
#include "client_files.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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

    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, err_size, "cannot write '%s': %s", tmp, strerror(errno));
        return false;
    }
    ok = writer(data, f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
        remove(tmp);
        return false;
    }
    return true;
}