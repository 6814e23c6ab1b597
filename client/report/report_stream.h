/*
 * report_stream.h - a run's files while it goes, so that a run killed at any moment (SIGKILL,
 * the OOM killer, a CI timeout, a lost SSH session) leaves them: timeline.csv gets each row
 * as it closes, flushed; report.json a checkpoint of the run so far (marked partial: it stops
 * at its elapsed_seconds), written whole (a temp file, fsync, rename) by a thread of its own
 * from a copy of the model, so that the bots' loop never waits for the disk. The run's hooks
 * (load/churn_run.h) feed it; cli/cli_run.c owns it.
 */
#ifndef REAP_CLIENT_REPORT_STREAM_H
#define REAP_CLIENT_REPORT_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#include "churn_report.h"

typedef struct churn_stream {
    char dir[512];
    FILE *errors;             /* borrowed: where trouble is said */
    FILE *csv;                /* DIR/timeline.csv, appended to; NULL once it failed */
    uint32_t csv_rows;        /* rows it holds, flushed */
    bool csv_failed;          /* a row could not be written: the file is short */
    /* The checkpoint being written: a copy of the model, the thread's alone while it runs. */
    churn_report *snap;       /* owned */
    churn_timeline snap_tl;   /* owned */
    uv_thread_t thread;
    bool writing;             /* the thread was started and not joined yet */
    atomic_bool written;      /* ... and it has finished (the last thing it does) */
    bool snap_ok;             /* its result, and why it failed */
    char snap_err[600];
    bool said_failed;         /* a failed checkpoint was said (once until one succeeds) */
    uint32_t checkpoints;     /* written, or being written */
    uint32_t skipped;         /* due while the last one was still being written */
} churn_stream;

/* Makes dir, removes the files an earlier run left there (so that a run killed early never
 * leaves two runs' files side by side), and starts timeline.csv with its header. False when
 * dir or the CSV cannot be made (said on errors): the run goes on, and its files are tried
 * again when it ends. */
bool churn_stream_open(churn_stream *st, const char *dir, FILE *errors);
/* Appends row to timeline.csv and flushes it. */
void churn_stream_row(churn_stream *st, const churn_row *row);
/* Starts writing a checkpoint of r (copied: r is the caller's again on return), unless the
 * last one is still being written: then this one is skipped. */
void churn_stream_checkpoint(churn_stream *st, const churn_report *r);
/* Waits for a checkpoint still being written, closes timeline.csv and frees what st holds.
 * Returns whether timeline.csv holds all n_rows rows (the final save need not write it). */
bool churn_stream_close(churn_stream *st, uint32_t n_rows);

#endif /* REAP_CLIENT_REPORT_STREAM_H */
