/*
 * chart.h - the load tester's SVG line charts, drawn inline into its HTML pages (report.html,
 * compare.html): no script, no external file, so a page works offline years later.
 */
#ifndef REAP_CLIENT_CHART_H
#define REAP_CLIENT_CHART_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "churn_timeline.h"

enum {
    CHART_W = 900,
    CHART_H = 300,
    CHART_L = 70,     /* plot area */
    CHART_R = 880,
    CHART_T = 40,
    CHART_B = 250,
    CHART_SERIES_MAX = 10,
};

typedef struct chart_series {
    const char *name;
    const char *color;
    double *x, *y;     /* owned by the caller */
    uint32_t n;
} chart_series;

typedef struct chart {
    const char *title, *xlabel, *ylabel;
    chart_series s[CHART_SERIES_MAX];
    int ns;
    const double *vlines;   /* x positions of collections, or NULL */
    uint32_t nv;
    bool logx;              /* x is log10 of the value; ticks are labelled with the value */
    const char *empty;      /* what to say when there is nothing to draw */
    /* The run's matches, drawn as bands behind the lines (alternately tinted, each labelled
     * with its number and map) when there are two or more; NULL: none. */
    const churn_match *matches;
    uint32_t nm;
} chart;

/* Draws ch as one <figure> with an <svg class="chart">; a chart without a point says ch->empty.
 * Series whose bit is set in dashed (bit i: series i) are drawn dashed. */
void chart_draw_styled(FILE *f, const chart *ch, uint32_t dashed);
/* ... with nb x ranges shaded behind the lines: bands holds [from, to] pairs (the server not
 * answering; a to < 0 reaches the right edge). */
void chart_draw_shaded(FILE *f, const chart *ch, uint32_t dashed, const double *bands,
                       uint32_t nb);
void chart_draw(FILE *f, const chart *ch);
/* Appends (x, y) to a series of capacity cap; a value not measured (< 0 or NAN) is a gap the
 * line breaks at, never a line drawn across it. */
void chart_add(chart_series *s, uint32_t cap, double x, double y);
/* Allocates x and y of cap points for each of ch's ns series; false on allocation failure
 * (chart_free still frees what was allocated). */
bool chart_series_alloc(chart *ch, uint32_t cap);
void chart_free(chart *ch);

#endif
