/*
 * report_compare.c - two runs' reports, figure by figure, each with a verdict (better, same,
 * worse) that a CI job can gate on (`reap-client compare`, cli/cli_compare.c).
 *
 * A verdict needs two things: the change is beyond the tolerance, and the two runs' intervals
 * do not overlap. Each figure's interval says what its measurement cannot tell apart:
 * - a latency percentile (client histograms): the distribution-free 95% confidence interval of
 *   a quantile, the order statistics at ranks n*q -/+ 1.96*sqrt(n*q*(1-q)), widened to the
 *   bounds of the buckets that hold them; a rank past the last sample leaves the interval
 *   open above (too few samples: never worse, never better);
 * - a latency mean: mean -/+ 1.96 standard errors (spread from the buckets' midpoints);
 * - a server time (a Prometheus quantile interpolated inside the server's fixed buckets): the
 *   bucket that holds it; a percentile p needs at least 10/(1-p) frames;
 * - a count (collections, errors): Poisson, -/+ 1.96*sqrt(count) (at least 1.96);
 * - a value read exactly (latency max, RSS, bytes per connection, frames/s): itself.
 */
#include "report_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "client_files.h"
#include "report.h"

#define COMPARE_Z 1.96

const char *const churn_verdict_names[CHURN_VERDICT_COUNT] = {
    "same", "better", "worse", "not measured",
};

/* The server's histogram bounds (seconds): the `le` labels of its /metrics histograms. */
static const double compare_server_bounds[] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01,
    0.0125, 0.016, 0.02, 0.025, 0.0333, 0.05, 0.1, 0.25, 1.0,
};

/* ---- intervals ------------------------------------------------------------------------- */

/* The bucket holding rank (1-based) in h. */
static uint32_t compare_rank_bucket(const hist *h, uint64_t rank)
{
    uint64_t cum = 0;

    for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
        cum += h->counts[b];
        if (cum >= rank)
            return b;
    }
    return HIST_BUCKETS - 1;
}

void churn_compare_value_hist(const hist *h, const char *stat, churn_compare_value *out)
{
    memset(out, 0, sizeof *out);
    out->n = h->n;
    if (h->n == 0)
        return;
    out->have = true;
    if (strcmp(stat, "max") == 0) {
        out->v = out->lo = out->hi = (double)h->max / 1e6;
    } else if (strcmp(stat, "mean") == 0) {
        double mean = hist_mean(h), var = 0, se;

        for (uint32_t b = 0; b < HIST_BUCKETS && h->n > 1; b++)
            if (h->counts[b] > 0) {
                double mid = ((double)hist_bucket_low(b) + (double)hist_bucket_high(b)) / 2;
                var += (double)h->counts[b] * (mid - mean) * (mid - mean);
            }
        se = h->n > 1 ? sqrt(var / (double)(h->n - 1) / (double)h->n) : INFINITY;
        out->v = mean / 1e6;
        out->lo = fmax(0, mean - COMPARE_Z * se) / 1e6;
        out->hi = (mean + COMPARE_Z * se) / 1e6;
    } else {
        double p = strtod(stat + 1, NULL), q = p / 100, n = (double)h->n;
        double hw = COMPARE_Z * sqrt(n * q * (1 - q));
        double r_lo = floor(n * q - hw), r_hi = ceil(n * q + hw);

        out->v = (double)hist_percentile(h, p) / 1e6;
        if (r_lo < 1) {
            out->lo = (double)h->min / 1e6;
        } else {
            uint64_t low = hist_bucket_low(compare_rank_bucket(h, (uint64_t)r_lo));
            out->lo = (double)(low > h->min ? low : h->min) / 1e6;
        }
        if (r_hi > n) {
            out->hi = INFINITY; /* the interval reaches past the largest sample */
        } else {
            uint64_t high = hist_bucket_high(compare_rank_bucket(h, (uint64_t)r_hi));
            out->hi = (double)(high < h->max ? high : h->max) / 1e6;
        }
    }
}

void churn_compare_value_server_time(double seconds, double frames, double p,
                                     churn_compare_value *out)
{
    size_t n_bounds = sizeof compare_server_bounds / sizeof compare_server_bounds[0];
    size_t i = 0;

    memset(out, 0, sizeof *out);
    if (seconds < 0 || isnan(seconds))
        return;
    out->have = true;
    out->v = seconds;
    out->n = frames > 0 ? (uint64_t)frames : 0;
    while (i < n_bounds && seconds > compare_server_bounds[i] * (1 + 1e-9))
        i++;
    out->lo = i > 0 ? compare_server_bounds[i - 1] : 0;
    out->hi = i < n_bounds ? compare_server_bounds[i] : INFINITY;
    if (p < 100 && !(frames >= 10 / (1 - p / 100))) {
        out->lo = 0;
        out->hi = INFINITY; /* too few frames for that percentile */
    }
}

void churn_compare_value_count(double count, churn_compare_value *out)
{
    double hw;

    memset(out, 0, sizeof *out);
    if (count < 0 || isnan(count))
        return;
    hw = COMPARE_Z * sqrt(fmax(count, 1));
    out->have = true;
    out->v = count;
    out->n = (uint64_t)count;
    out->lo = fmax(0, count - hw);
    out->hi = count + hw;
}

void churn_compare_value_exact(double v, churn_compare_value *out)
{
    memset(out, 0, sizeof *out);
    if (v < 0 || isnan(v))
        return;
    out->have = true;
    out->v = out->lo = out->hi = v;
}

churn_verdict churn_compare_judge(const churn_compare_value *base, const churn_compare_value *nv,
                                  bool higher_is_better, double tolerance, double *out_change,
                                  const char **out_why)
{
    double change, bad;
    bool apart;

    *out_why = "";
    *out_change = NAN;
    if (!base->have || !nv->have) {
        *out_why = "not measured in both runs";
        return CHURN_VERDICT_UNMEASURED;
    }
    if (base->v != 0)
        change = (nv->v - base->v) / fabs(base->v);
    else
        change = nv->v == 0 ? 0 : nv->v > 0 ? INFINITY : -INFINITY;
    *out_change = change;
    bad = higher_is_better ? -change : change;
    if (fabs(bad) <= tolerance) {
        *out_why = "within tolerance";
        return CHURN_VERDICT_SAME;
    }
    /* Worse for a lower-is-better figure: the new interval lies wholly above the base's. */
    if ((bad > 0) != higher_is_better)
        apart = nv->lo >= base->hi;
    else
        apart = nv->hi <= base->lo;
    if (!apart) {
        *out_why = isinf(base->hi) || isinf(nv->hi) ? "too few samples to tell"
                                                    : "within the measurements' resolution";
        return CHURN_VERDICT_SAME;
    }
    return bad > 0 ? CHURN_VERDICT_WORSE : CHURN_VERDICT_BETTER;
}

/* ---- the figures --------------------------------------------------------------------- */

static const char *const compare_lat_stats[COMPARE_STATS] = { "p50", "p95", "p99", "max",
                                                              "mean" };

static void compare_value_of(const compare_figure *fig, const churn_report *r,
                             churn_compare_value *out)
{
    const churn_server *s = &r->server_figs;
    double v = NAN;

    if (fig->kind == COMPARE_LATENCY) {
        const char *us = strrchr(fig->name, '_');
        for (int i = 0; i < CHURN_LAT_COUNT; i++)
            if (strlen(churn_lat_names[i]) == (size_t)(us - fig->name) &&
                strncmp(fig->name, churn_lat_names[i], (size_t)(us - fig->name)) == 0)
                churn_compare_value_hist(&r->totals.lat[i], us + 1, out);
        return;
    }
    churn_report_metric(r, fig->name, &v);
    if (fig->kind == COMPARE_SERVER_TIME) {
        const char *us = strrchr(fig->name, '_');
        double p = strcmp(us, "_max") == 0 ? 100 : strtod(us + 2, NULL);
        churn_compare_value_server_time(s->have ? v : NAN, s->frames, p, out);
    } else if (fig->kind == COMPARE_COUNT) {
        churn_compare_value_count(v, out);
    } else {
        churn_compare_value_exact(v, out);
    }
}

static void compare_add(compare_figure *figs, uint32_t *n, const char *name, compare_kind kind,
                        bool higher_is_better, bool seconds)
{
    compare_figure *f = &figs[(*n)++];

    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->kind = kind;
    f->higher_is_better = higher_is_better;
    f->seconds = seconds;
}

uint32_t churn_compare_list(compare_figure *figs)
{
    uint32_t n = 0;
    char name[48];

    for (int i = 0; i < CHURN_LAT_COUNT; i++)
        for (int k = 0; k < COMPARE_STATS; k++) {
            snprintf(name, sizeof name, "%s_%s", churn_lat_names[i], compare_lat_stats[k]);
            compare_add(figs, &n, name, COMPARE_LATENCY, false, true);
        }
    compare_add(figs, &n, "server_tick_p50", COMPARE_SERVER_TIME, false, true);
    compare_add(figs, &n, "server_tick_p99", COMPARE_SERVER_TIME, false, true);
    compare_add(figs, &n, "server_tick_max", COMPARE_SERVER_TIME, false, true);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++) {
        snprintf(name, sizeof name, "server_%s_p99", churn_phase_names[i]);
        compare_add(figs, &n, name, COMPARE_SERVER_TIME, false, true);
    }
    compare_add(figs, &n, "server_gc_work_max", COMPARE_SERVER_TIME, false, true);
    compare_add(figs, &n, "server_collections", COMPARE_COUNT, false, false);
    compare_add(figs, &n, "server_fps", COMPARE_EXACT, true, false);
    compare_add(figs, &n, "server_rss_peak", COMPARE_EXACT, false, false);
    compare_add(figs, &n, "server_bytes_per_connection", COMPARE_EXACT, false, false);
    compare_add(figs, &n, "server_cpu_seconds", COMPARE_EXACT, false, false);
    compare_add(figs, &n, "level_load_wait_p50", COMPARE_SERVER_TIME, false, true);
    compare_add(figs, &n, "level_load_wait_p99", COMPARE_SERVER_TIME, false, true);
    compare_add(figs, &n, "streaming_collections", COMPARE_COUNT, false, false);
    compare_add(figs, &n, "levels_survived", COMPARE_COUNT, false, false);
    compare_add(figs, &n, "joins", COMPARE_COUNT, true, false);
    compare_add(figs, &n, "errors", COMPARE_COUNT, false, false);
    compare_add(figs, &n, "mismatches", COMPARE_COUNT, false, false);
    compare_add(figs, &n, "server_outage_seconds", COMPARE_EXACT, false, false);
    return n;
}

/* ---- output -------------------------------------------------------------------------- */

static void compare_format(char *buf, size_t size, const compare_figure *f, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (isinf(v))
        snprintf(buf, size, "open");
    else if (f->seconds)
        snprintf(buf, size, "%.3f ms", v * 1e3);
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.2f", v);
}

void churn_compare_change(char *buf, size_t size, double change)
{
    if (isnan(change))
        snprintf(buf, size, "-");
    else if (isinf(change))
        snprintf(buf, size, change > 0 ? "from 0" : "to 0");
    else
        snprintf(buf, size, "%+.1f%%", change * 100);
}

void churn_compare_print(const compare_figure *figs, uint32_t n, FILE *out)
{
    uint32_t counts[CHURN_VERDICT_COUNT] = { 0 };

    fprintf(out, "%-30s %14s %14s %9s  %s\n", "figure", "base", "new", "change", "verdict");
    for (uint32_t i = 0; i < n; i++) {
        const compare_figure *f = &figs[i];
        char b[32], v[32], c[32];

        counts[f->verdict]++;
        if (!f->base.have && !f->nv.have)
            continue;
        compare_format(b, sizeof b, f, f->base.have ? f->base.v : NAN);
        compare_format(v, sizeof v, f, f->nv.have ? f->nv.v : NAN);
        churn_compare_change(c, sizeof c, f->change);
        fprintf(out, "%-30s %14s %14s %9s  %s%s%s%s\n", f->name, b, v, c,
                churn_verdict_names[f->verdict], f->why[0] && f->verdict == CHURN_VERDICT_SAME
                ? " (" : "", f->verdict == CHURN_VERDICT_SAME ? f->why : "",
                f->why[0] && f->verdict == CHURN_VERDICT_SAME ? ")" : "");
    }
    fprintf(out, "verdicts: %u better, %u same, %u worse, %u not measured in both runs\n",
            counts[CHURN_VERDICT_BETTER], counts[CHURN_VERDICT_SAME],
            counts[CHURN_VERDICT_WORSE], counts[CHURN_VERDICT_UNMEASURED]);
}

typedef struct compare_page {
    const compare_run *base, *nv;
    const compare_figure *figs;
    uint32_t n;
    double tolerance;
} compare_page;

static bool compare_tsv_fn(const void *data, FILE *f)
{
    const compare_page *pg = data;

    fputs("figure\tunit\tbase\tbase_low\tbase_high\tnew\tnew_low\tnew_high\tchange\tverdict"
          "\tgated\n", f);
    for (uint32_t i = 0; i < pg->n; i++) {
        const compare_figure *fig = &pg->figs[i];
        const churn_compare_value *v[2] = { &fig->base, &fig->nv };

        fprintf(f, "%s\t%s", fig->name, fig->seconds ? "s" : "");
        for (int k = 0; k < 2; k++)
            if (v[k]->have)
                fprintf(f, "\t%.9g\t%.9g\t%.9g", v[k]->v, v[k]->lo, v[k]->hi);
            else
                fputs("\t\t\t", f);
        if (isnan(fig->change))
            fputs("\t", f);
        else
            fprintf(f, "\t%.6g", fig->change);
        fprintf(f, "\t%s\t%s\n", churn_verdict_names[fig->verdict], fig->gated ? "yes" : "no");
    }
    return !ferror(f);
}

static void compare_html_run(FILE *f, const char *label, const compare_run *run)
{
    const churn_report *r = &run->r;

    fprintf(f, "<tr><td>%s</td><td>", label);
    churn_svg_text(f, run->dir);
    fputs("</td><td>", f);
    churn_svg_text(f, r->run_id);
    fputs("</td><td>", f);
    churn_svg_text(f, r->scenario);
    fprintf(f, "</td><td>%u</td><td>%.1f%s</td><td>", r->bots, r->elapsed,
            r->partial ? " (partial: the run did not finish)" : "");
    churn_svg_text(f, r->start_time);
    fputs("</td></tr>\n", f);
}

static void compare_html_latency(FILE *f, const compare_run *a, const compare_run *b, int lat)
{
    const hist *h[2] = { &a->r.totals.lat[lat], &b->r.totals.lat[lat] };
    char title[96];
    chart ch = { NULL, "milliseconds (log scale)", "fraction at or below",
                 { { "base", "#0072B2", 0, 0, 0 }, { "new", "#D55E00", 0, 0, 0 } }, 2, NULL,
                 0, true, "no sample in either run", NULL, 0 };

    snprintf(title, sizeof title, "%s latency distribution", churn_lat_names[lat]);
    ch.title = title;
    if (chart_series_alloc(&ch, HIST_BUCKETS))
        for (int k = 0; k < 2; k++) {
            uint64_t cum = 0;
            for (uint32_t bk = 0; bk < HIST_BUCKETS && h[k]->n > 0; bk++) {
                double ms;
                if (h[k]->counts[bk] == 0)
                    continue;
                cum += h[k]->counts[bk];
                ms = (double)(hist_bucket_high(bk) < h[k]->max ? hist_bucket_high(bk)
                                                                 : h[k]->max) / 1e3;
                chart_add(&ch.s[k], HIST_BUCKETS, log10(ms > 0.001 ? ms : 0.001),
                          (double)cum / (double)h[k]->n);
            }
        }
    chart_draw_styled(f, &ch, 2);
    chart_free(&ch);
}

typedef double (*compare_row_fn)(const churn_row *row);

static double compare_row_connected(const churn_row *r)
{
    return r->connected;
}

static double compare_row_tick_p99(const churn_row *r)
{
    return r->have_admin && r->tick_p99 >= 0 ? r->tick_p99 * 1e3 : -1;
}

static double compare_row_gc_work(const churn_row *r)
{
    return r->have_admin && r->gc_work_max >= 0 ? r->gc_work_max * 1e3 : -1;
}

static double compare_row_rss(const churn_row *r)
{
    return r->have_admin && r->rss_bytes >= 0 ? r->rss_bytes / 1048576 : -1;
}

static double compare_row_objects(const churn_row *r)
{
    return r->have_server ? (double)r->server_objects : -1;
}

static void compare_html_rows(FILE *f, const compare_run *a, const compare_run *b,
                              const char *title, const char *ylabel, compare_row_fn get)
{
    const churn_timeline *tl[2] = { &a->tl, &b->tl };
    uint32_t cap = a->tl.n_rows > b->tl.n_rows ? a->tl.n_rows : b->tl.n_rows;
    chart ch = { title, "seconds since the start", ylabel,
                 { { "base", "#0072B2", 0, 0, 0 }, { "new", "#D55E00", 0, 0, 0 } }, 2, NULL,
                 0, false, "not measured in either run (run with --admin)", NULL, 0 };

    if (chart_series_alloc(&ch, cap))
        for (int k = 0; k < 2; k++)
            for (uint32_t i = 0; i < tl[k]->n_rows; i++)
                chart_add(&ch.s[k], cap, tl[k]->rows[i].t - 0.5, get(&tl[k]->rows[i]));
    chart_draw_styled(f, &ch, 2);
    chart_free(&ch);
}

static bool compare_html_fn(const void *data, FILE *f)
{
    const compare_page *pg = data;

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>reap load "
          "test comparison</title>\n<style>\nbody{font-family:sans-serif;margin:24px;color:#222;"
          "max-width:960px}\ntable{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px "
          "solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,"
          "th:first-child{text-align:left}\n.better{color:#007a5a;font-weight:bold}.worse{color:"
          "#D55E00;font-weight:bold}.muted{color:#888;fill:#888}\nsvg.chart{font-size:11px;"
          "background:#fff}.frame{fill:none;stroke:#888}.grid{stroke:#eee}.gc{stroke:#CC79A7;"
          "stroke-dasharray:3 3}\nfigure{margin:0 0 18px}figcaption{font-weight:bold;"
          "margin-bottom:4px}\n</style></head>\n<body>\n<h1>reap load test comparison</h1>\n"
          "<table>\n<tr><th>run</th><th>report</th><th>run id</th><th>scenario</th><th>bots</th>"
          "<th>seconds</th><th>start (UTC)</th></tr>\n", f);
    compare_html_run(f, "base", pg->base);
    compare_html_run(f, "new (dashed)", pg->nv);
    fprintf(f, "</table>\n<p>A figure is better or worse only when it changed by more than "
            "%.3g%% and the two runs' intervals (histogram buckets, the samples' 95%% "
            "confidence interval, Poisson noise for counts) do not overlap.</p>\n<h2>Figures"
            "</h2>\n<table>\n<tr><th>figure</th><th>base</th><th>new</th><th>change</th>"
            "<th>verdict</th><th>gated</th></tr>\n", pg->tolerance * 100);
    for (uint32_t i = 0; i < pg->n; i++) {
        const compare_figure *fig = &pg->figs[i];
        char b[32], v[32], c[32];

        if (!fig->base.have && !fig->nv.have)
            continue;
        compare_format(b, sizeof b, fig, fig->base.have ? fig->base.v : NAN);
        compare_format(v, sizeof v, fig, fig->nv.have ? fig->nv.v : NAN);
        churn_compare_change(c, sizeof c, fig->change);
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"%s\" "
                "title=\"%s\">%s</td><td>%s</td></tr>\n", fig->name, b, v, c,
                fig->verdict == CHURN_VERDICT_BETTER ? "better" :
                fig->verdict == CHURN_VERDICT_WORSE ? "worse" : "muted", fig->why,
                churn_verdict_names[fig->verdict], fig->gated ? "yes" : "");
    }
    fputs("</table>\n<h2>Latency distributions</h2>\n", f);
    for (int i = 0; i < CHURN_LAT_COUNT; i++)
        if (pg->base->r.totals.lat[i].n > 0 || pg->nv->r.totals.lat[i].n > 0)
            compare_html_latency(f, pg->base, pg->nv, i);
    fputs("<h2>Timelines</h2>\n", f);
    compare_html_rows(f, pg->base, pg->nv, "Bots joined", "bots", compare_row_connected);
    compare_html_rows(f, pg->base, pg->nv, "Server objects", "objects", compare_row_objects);
    compare_html_rows(f, pg->base, pg->nv, "Server frame time p99 per second (ms)",
                      "milliseconds", compare_row_tick_p99);
    compare_html_rows(f, pg->base, pg->nv, "Collector: longest frame slice per second (ms)",
                      "milliseconds", compare_row_gc_work);
    compare_html_rows(f, pg->base, pg->nv, "Server resident memory (MiB)", "MiB",
                      compare_row_rss);
    /* The only script: counts the charts and those that drew a line, for tests. */
    fputs("<script>\n(function () {\n"
          "  var charts = document.querySelectorAll('svg.chart');\n  var drawn = 0;\n"
          "  charts.forEach(function (c) {\n"
          "    if (c.querySelector('.series')) drawn++;\n  });\n"
          "  document.body.setAttribute('data-charts', String(charts.length));\n"
          "  document.body.setAttribute('data-charts-drawn', String(drawn));\n})();\n"
          "</script>\n</body></html>\n", f);
    return !ferror(f);
}

bool churn_compare_tolerance_parse(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);

    if (end == text || isnan(v))
        return false;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end != '\0' || v < 0 || v > 100)
        return false;
    *out = v;
    return true;
}

bool churn_compare_known(const compare_figure *figs, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(figs[i].name, name) == 0)
            return true;
    return false;
}

void churn_compare_figures(compare_figure *figs, uint32_t n, const churn_report *base,
                           const churn_report *nv, double tolerance)
{
    for (uint32_t i = 0; i < n; i++) {
        compare_figure *f = &figs[i];

        compare_value_of(f, base, &f->base);
        compare_value_of(f, nv, &f->nv);
        f->verdict = churn_compare_judge(&f->base, &f->nv, f->higher_is_better, tolerance,
                                         &f->change, &f->why);
    }
}

bool churn_compare_save(const char *out_dir, const compare_run *base, const compare_run *nv,
                        const compare_figure *figs, uint32_t n, double tolerance, char *err,
                        size_t err_size)
{
    compare_page pg = { base, nv, figs, n, tolerance };

    return churn_mkdirs(out_dir, err, err_size) &&
           churn_write_file(out_dir, "compare.tsv", compare_tsv_fn, &pg, err, err_size) &&
           churn_write_file(out_dir, "compare.html", compare_html_fn, &pg, err, err_size);
}
