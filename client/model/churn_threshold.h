/*
 * churn_threshold.h - a pass/fail rule on one figure of a run ("join_p99<500ms", "errors==0"):
 * read from text, checked against a value, shown in the unit it was written in. The figure
 * itself comes from the report (churn_report_metric).
 */
#ifndef REAP_CLIENT_CHURN_THRESHOLD_H
#define REAP_CLIENT_CHURN_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>

typedef enum client_cmp {
    CLIENT_CMP_LT, CLIENT_CMP_LE, CLIENT_CMP_GT, CLIENT_CMP_GE, CLIENT_CMP_EQ, CLIENT_CMP_NE,
} client_cmp;

typedef struct client_threshold {
    char text[64];                  /* as given */
    char metric[40];
    client_cmp cmp;
    double value;                   /* in the metric's base unit (seconds for times) */
    char unit[4];                   /* as written ("ms", "s", "us", "%" or ""), for display */
    double scale;                   /* base units per written unit (0.001 for ms) */
} client_threshold;

/* Parses "NAME<500ms", "NAME==0", "NAME<=0.5s"... (operators < <= > >= == !=; units ms, s, us,
 * % or none) into t; false with a message naming the text on error. */
bool client_threshold_parse(const char *text, client_threshold *t, char *err, size_t err_size);
/* value (base units) as t was written: "12.5ms". */
void client_threshold_format(const client_threshold *t, double value, char *buf, size_t size);
/* Whether value passes t. */
bool client_threshold_check(const client_threshold *t, double value);
const char *client_cmp_str(client_cmp cmp);

#endif /* REAP_CLIENT_CHURN_THRESHOLD_H */
