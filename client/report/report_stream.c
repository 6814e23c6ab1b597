/*
 * report_stream.c - timeline.csv row by row and report.json checkpoints while a run goes
 * (see report_stream.h).
 */
#include "report_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_files.h"
#include "report.h"

/* What an earlier run may have left in the directory (report.json is replaced by the first
 * checkpoint, or removed when there is none). */
static const char *const stream_stale[] = {
    "report.json", "report.dat", "summary.tsv", "churn.json", "report.html", "churn.svg",
};

bool churn_stream_open(churn_stream *st, const char *dir, FILE *errors)
{
    char err[600], path[1100];

    memset(st, 0, sizeof *st);
    snprintf(st->dir, sizeof st->dir, "%s", dir);
    st->errors = errors;
    churn_timeline_init(&st->snap_tl);
    atomic_init(&st->written, false);
    if (!churn_mkdirs(dir, err, sizeof err)) {
        st->csv_failed = true;
        fprintf(errors, "reap-client: %s; the run goes on, its files are tried again at the "
                "end\n", err);
        return false;
    }
    for (size_t i = 0; i < sizeof stream_stale / sizeof *stream_stale; i++)
        if (!churn_remove_file(dir, stream_stale[i], err, sizeof err))
            fprintf(errors, "reap-client: %s\n", err);
    snprintf(path, sizeof path, "%s/timeline.csv", dir);
    st->csv = fopen(path, "w");
    if (st->csv != NULL) {
        churn_timeline_csv_header(st->csv);
        if (fflush(st->csv) == 0)
            return true;
        fclose(st->csv);
        st->csv = NULL;
    }
    st->csv_failed = true;
    fprintf(errors, "reap-client: cannot write '%s': %s; it is tried again at the end\n", path,
            strerror(errno));
    return false;
}

void churn_stream_row(churn_stream *st, const churn_row *row)
{
    if (st->csv == NULL)
        return;
    churn_timeline_csv_row(st->csv, row);
    if (fflush(st->csv) == 0 && !ferror(st->csv)) {
        st->csv_rows++;
        return;
    }
    fprintf(st->errors, "reap-client: cannot write '%s/timeline.csv': %s; it is written whole "
            "at the end\n", st->dir, strerror(errno));
    fclose(st->csv);
    st->csv = NULL;
    st->csv_failed = true;
}

static bool stream_json_fn(const void *r, FILE *f)
{
    return churn_report_write_json(r, f);
}

/* The checkpoint thread: writes its copy of the model, then says it is done. */
static void stream_write_cb(void *arg)
{
    churn_stream *st = arg;

    st->snap_ok = churn_write_file(st->dir, "report.json", stream_json_fn, st->snap,
                                   st->snap_err, sizeof st->snap_err);
    atomic_store_explicit(&st->written, true, memory_order_release);
}

/* The last checkpoint's thread is joined, and a failure said (once until one succeeds). */
static void stream_join(churn_stream *st)
{
    if (!st->writing)
        return;
    uv_thread_join(&st->thread);
    st->writing = false;
    if (!st->snap_ok && !st->said_failed)
        fprintf(st->errors, "reap-client: the checkpoint failed: %s; the run goes on and "
                "tries again\n", st->snap_err);
    st->said_failed = !st->snap_ok;
}

void churn_stream_checkpoint(churn_stream *st, const churn_report *r)
{
    if (st->writing && !atomic_load_explicit(&st->written, memory_order_acquire)) {
        st->skipped++;
        return;
    }
    stream_join(st);
    if (st->snap == NULL && (st->snap = malloc(sizeof *st->snap)) == NULL)
        return;
    if (r->tl != NULL && !churn_timeline_copy(&st->snap_tl, r->tl))
        return; /* out of memory: the next checkpoint tries again */
    *st->snap = *r;
    st->snap->tl = r->tl != NULL ? &st->snap_tl : NULL;
    st->checkpoints++;
    atomic_store_explicit(&st->written, false, memory_order_relaxed);
    if (uv_thread_create(&st->thread, stream_write_cb, st) == 0) {
        st->writing = true;
        return;
    }
    stream_write_cb(st); /* no thread to be had: the loop writes it itself */
    st->writing = false;
    if (!st->snap_ok)
        fprintf(st->errors, "reap-client: the checkpoint failed: %s\n", st->snap_err);
}

bool churn_stream_close(churn_stream *st, uint32_t n_rows)
{
    bool complete;

    stream_join(st);
    if (st->csv != NULL && fclose(st->csv) != 0)
        st->csv_failed = true;
    st->csv = NULL;
    complete = !st->csv_failed && st->csv_rows == n_rows;
    free(st->snap);
    st->snap = NULL;
    churn_timeline_free(&st->snap_tl);
    return complete;
}
