/*
 * report_outputs.c - what a run or a merge leaves behind, written in order of value: the data
 * the tools read first (report.json, report.dat, summary.tsv, the JUnit verdict), then the
 * timeline (timeline.csv, churn.json), then the pages and pictures (report.html, churn.svg).
 * A file that cannot be written is named and the rest are still tried, so a disk with little
 * room left still gets the report the tools need.
 */
#include "report.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static bool outputs_json_fn(const void *r, FILE *f)
{
    return churn_report_write_json(r, f);
}

static bool outputs_dat_fn(const void *r, FILE *f)
{
    return churn_report_write_dat(r, f);
}

static bool outputs_tsv_fn(const void *r, FILE *f)
{
    return churn_report_write_tsv(r, f);
}

static bool outputs_html_fn(const void *r, FILE *f)
{
    return churn_report_write_html(r, f);
}

static bool outputs_csv_fn(const void *tl, FILE *f)
{
    return churn_timeline_write_csv(tl, f);
}

static bool outputs_timeline_json_fn(const void *tl, FILE *f)
{
    return churn_timeline_write_json(tl, f);
}

static bool outputs_svg_fn(const void *tl, FILE *f)
{
    return churn_timeline_write_svg(tl, f);
}

static void outputs_add(churn_output *out, uint32_t *n, const char *name, const char *path,
                        churn_write_fn write, const void *data, bool make_room)
{
    churn_output *o = &out[(*n)++];

    o->name = name;
    o->path = path;
    o->write = write;
    o->data = data;
    o->make_room = make_room;
}

uint32_t churn_outputs_list(const churn_report *r, const churn_timeline *tl, bool csv_written,
                            const char *junit_path, churn_output *out)
{
    uint32_t n = 0;

    /* report.json may replace a checkpoint of itself that leaves no room beside it */
    outputs_add(out, &n, "report.json", NULL, outputs_json_fn, r, true);
    outputs_add(out, &n, "report.dat", NULL, outputs_dat_fn, r, false);
    outputs_add(out, &n, "summary.tsv", NULL, outputs_tsv_fn, r, false);
    if (junit_path != NULL && junit_path[0] != '\0')
        outputs_add(out, &n, junit_path, junit_path, churn_report_junit_writer, r, false);
    if (tl != NULL && !csv_written)
        outputs_add(out, &n, "timeline.csv", NULL, outputs_csv_fn, tl, false);
    if (tl != NULL)
        outputs_add(out, &n, "churn.json", NULL, outputs_timeline_json_fn, tl, false);
    outputs_add(out, &n, "report.html", NULL, outputs_html_fn, r, false);
    if (tl != NULL)
        outputs_add(out, &n, "churn.svg", NULL, outputs_svg_fn, tl, false);
    return n;
}

/* Writes one output; an old copy that leaves no room for the new one beside it goes first
 * when the output allows it (the new one is still written whole, or not at all). */
static bool outputs_write_one(const char *dir, const churn_output *o, char *err, size_t size)
{
    char path[1100], ignored[300];
    struct stat st;

    if (o->path != NULL)
        return churn_write_path(o->path, o->write, o->data, err, size);
    if (churn_write_file(dir, o->name, o->write, o->data, err, size))
        return true;
    snprintf(path, sizeof path, "%s/%s", dir, o->name);
    if (!o->make_room || stat(path, &st) != 0 ||
        !churn_remove_file(dir, o->name, ignored, sizeof ignored))
        return false;
    return churn_write_file(dir, o->name, o->write, o->data, err, size);
}

uint32_t churn_outputs_write(const char *dir, const churn_output *outs, uint32_t n,
                             FILE *errors, const char *who, char *failed, size_t failed_size)
{
    char err[600];
    uint32_t not_written = 0;
    size_t used = 0;
    bool have_dir = churn_mkdirs(dir, err, sizeof err);

    if (!have_dir)
        fprintf(errors, "%s: %s\n", who, err);
    if (failed_size > 0)
        failed[0] = '\0';
    for (uint32_t i = 0; i < n; i++) {
        if ((have_dir || outs[i].path != NULL) &&
            outputs_write_one(dir, &outs[i], err, sizeof err))
            continue;
        if (have_dir || outs[i].path != NULL)
            fprintf(errors, "%s: %s\n", who, err);
        not_written++;
        if (used < failed_size)
            used += (size_t)snprintf(failed + used, failed_size - used, "%s%s",
                                     used > 0 ? ", " : "", outs[i].name);
    }
    return not_written;
}

bool churn_report_save(const churn_report *r, const char *dir, char *err, size_t err_size)
{
    churn_output outs[CHURN_OUTPUTS_MAX];
    uint32_t n = churn_outputs_list(r, NULL, false, NULL, outs);
    char one[600];
    bool ok = true;

    if (!churn_mkdirs(dir, err, err_size))
        return false;
    for (uint32_t i = 0; i < n; i++) /* every file is tried; err names the first that failed */
        if (!outputs_write_one(dir, &outs[i], one, sizeof one)) {
            if (ok)
                snprintf(err, err_size, "%s", one);
            ok = false;
        }
    return ok;
}
