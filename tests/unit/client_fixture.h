/*
 * client_fixture.h - what the load tester's report tests share (test_client_report.c,
 * test_client_matches.c, test_client_faults.c): what the report's writers print, as text a
 * test can search (a churn_report's summary, report.json or report.html written into memory,
 * and how often a needle stands in it), and two shards' reports merged as `reap-client merge`
 * does. Header-only: each test executable includes it once.
 */
#ifndef REAP_TEST_CLIENT_FIXTURE_H
#define REAP_TEST_CLIENT_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"
#include "report_merge.h"

/* The text of one writer over r; the writer's failure fails the test. Gives ownership: the
 * caller frees it. (Through a temporary file, not open_memstream: inlined, a buffer pointer
 * whose address the stream holds reads to GCC as a pointer to that local.) */
static inline char *report_text(bool (*write)(const churn_report *, FILE *),
                                const churn_report *r)
{
    FILE *f = tmpfile();
    char *text;
    long len;

    assert_non_null(f);
    assert_true(write(r, f));
    assert_int_equal(fflush(f), 0);
    assert_true((len = ftell(f)) >= 0);
    rewind(f);
    assert_non_null(text = malloc((size_t)len + 1));
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    assert_int_equal(fclose(f), 0);
    return text;
}

static inline bool report_text_print_cb(const churn_report *r, FILE *f)
{
    churn_report_print(r, f);
    return true;
}

/* The summary a run prints at its end (churn_report_print). */
static inline char *report_summary_text(const churn_report *r)
{
    return report_text(report_text_print_cb, r);
}

/* report.html (churn_report_write_html). */
static inline char *report_page_text(const churn_report *r)
{
    return report_text(churn_report_write_html, r);
}

/* report.json (churn_report_write_json). */
static inline char *report_json_text(const churn_report *r)
{
    return report_text(churn_report_write_json, r);
}

/* How many times needle stands in hay, overlaps counted. */
static inline int text_count(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Merges shards a and b, in that order, into merged (its timeline tl, initialised here). */
static inline void report_merge_shards(churn_report *merged, churn_timeline *tl,
                                       const churn_report *a, const churn_report *b)
{
    churn_merge m;

    churn_timeline_init(tl);
    memset(merged, 0, sizeof *merged);
    merged->tl = tl;
    churn_merge_begin(&m, merged);
    churn_merge_add(&m, a);
    churn_merge_add(&m, b);
}

#endif /* REAP_TEST_CLIENT_FIXTURE_H */
