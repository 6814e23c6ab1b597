/*
 * report_html.c - report.html: one self-contained page a person opens after a run.
 *
 * Everything is inline (CSS, SVG charts drawn here, a few lines of script that only count
 * what was drawn), so the page works from a file, offline, years later. Sections: the run,
 * the thresholds, the counts and errors, latency percentiles and distributions, the timelines
 * (bots, server objects with collections, frame time percentiles, collector work), the
 * server's figures and the leak verdict.
 */
#include "report.h"

#include "chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void html_cell_ms(FILE *f, double seconds);
static void html_cell_num(FILE *f, double v, const char *fmt);

/* One chart of row figures over time: get(row, series index) gives each series' value. */
typedef double (*chart_row_fn)(const churn_row *row, int series);

static void chart_rows_shaded(FILE *f, chart *ch, const churn_timeline *tl, chart_row_fn get,
                              const double *bands, uint32_t nb)
{
    if (chart_series_alloc(ch, tl != NULL ? tl->n_rows : 0))
        for (uint32_t i = 0; tl != NULL && i < tl->n_rows; i++)
            for (int k = 0; k < ch->ns; k++)
                /* a row's figures are for the second that ends at its t: drawn at that
                 * second's middle, where the collections that happened in it are marked */
                chart_add(&ch->s[k], tl->n_rows, tl->rows[i].t - 0.5, get(&tl->rows[i], k));
    chart_draw_shaded(f, ch, 0, bands, nb);
    chart_free(ch);
}

static void chart_rows(FILE *f, chart *ch, const churn_timeline *tl, chart_row_fn get)
{
    chart_rows_shaded(f, ch, tl, get, NULL, 0);
}

static double row_bots(const churn_row *r, int k)
{
    return k == 0 ? r->connected : r->target;
}

static double row_rates(const churn_row *r, int k)
{
    return k == 0 ? r->joins : k == 1 ? r->leaves : k == 2 ? r->errors : r->refused;
}


static double row_ms(double seconds)
{
    return seconds >= 0 ? seconds * 1e3 : -1;
}

static double row_generator(const churn_row *r, int k)
{
    if (k == 0)
        return r->gen_cpu >= 0 ? r->gen_cpu * 100 : -1;
    return row_ms(r->loop_lag);
}

static double row_levels(const churn_row *r, int k)
{
    if (!r->have_admin)
        return -1;
    return k == 0 ? r->levels_loaded : r->levels_pending_purge;
}

/* Whether any row saw a streaming level loaded: a world of cells (a server without them, or
 * a timeline from before they were sampled, has none). */
static bool html_has_levels(const churn_timeline *tl)
{
    for (uint32_t i = 0; i < tl->n_rows; i++)
        if (tl->rows[i].have_admin && tl->rows[i].levels_loaded > 0)
            return true;
    return false;
}

/* The match cycle's sawtooth: the server's resident memory each second, and after each
 * travel (what the travel's collections left), over the matches' bands. Memory that grows
 * from one match to the next is what a leaked world looks like. */
static void html_rss_chart(FILE *f, const churn_timeline *tl)
{
    chart ch = { "Server resident memory (MiB): each second, and after each travel",
                 "seconds since the start", "MiB", { { "resident", "#999999", 0, 0, 0 },
                 { "after the travel", "#D55E00", 0, 0, 0 } }, 2, NULL, 0, false,
                 "not sampled: run with --admin", tl->matches, tl->n_matches };

    if (chart_series_alloc(&ch, tl->n_rows > tl->n_matches ? tl->n_rows : tl->n_matches)) {
        uint32_t cap = tl->n_rows > tl->n_matches ? tl->n_rows : tl->n_matches;

        for (uint32_t i = 0; i < tl->n_rows; i++) {
            const churn_row *r = &tl->rows[i];
            chart_add(&ch.s[0], cap, r->t - 0.5,
                      r->have_admin && r->rss_bytes >= 0 ? r->rss_bytes / 1048576.0 : -1);
        }
        for (uint32_t i = 0; i < tl->n_matches; i++) {
            const churn_match *m = &tl->matches[i];
            if (m->frame != 0 && m->server_seen && m->rss >= 0)
                chart_add(&ch.s[1], cap, m->start, m->rss / 1048576.0);
        }
    }
    chart_draw_styled(f, &ch, 1u);
    chart_free(&ch);
}

/* A row per match: what the summary prints (report_summary.c), as a table. */
static void html_matches(FILE *f, const churn_report *r)
{
    const churn_timeline *tl = r->tl;

    if (tl == NULL || tl->n_matches < 2)
        return;
    fprintf(f, "<h2>Matches</h2>\n<p>%u matches: %llu travels followed by the bots (Travel "
            "DEPART to the new map's join snapshot), %llu requests answered &ldquo;between "
            "maps&rdquo; (ERROR_CODE_TRAVEL: not errors)%s.</p>\n", tl->n_matches,
            (unsigned long long)r->totals.travels, (unsigned long long)r->totals.travel_refused,
            tl->match_seconds > 0 ? "; the scenario expects the server to rotate" : "");
    if (tl->match_seconds > 0)
        fprintf(f, "<p>Expected match length (<code>match_seconds</code>): %g s.</p>\n",
                tl->match_seconds);
    fputs("<table class=\"matches\"><tr><th>#</th><th>map</th><th>travel</th><th>start (s)</th>"
          "<th>length (s)</th><th>players</th><th>objects after</th><th>RSS after (MiB)</th>"
          "<th>travel p50 (ms)</th><th>travel p99 (ms)</th><th>longest server frame (ms)</th>"
          "<th>collections</th><th>leaked worlds</th></tr>\n", f);
    for (uint32_t i = 0; i < tl->n_matches; i++) {
        const churn_match *m = &tl->matches[i];
        const hist *h = &m->travel;
        double end = m->end >= 0 ? m->end : r->elapsed;

        fprintf(f, "<tr><td>%u</td><td>", i + 1);
        churn_svg_text(f, m->map[0] ? m->map : "?");
        fprintf(f, "</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%u</td>", m->mode == 1 ? "hard" :
                m->mode == 2 ? "seamless" : "(start)", m->start, end - m->start,
                churn_match_players(tl, i));
        html_cell_num(f, m->server_seen ? m->objects : -1, "%.0f");
        html_cell_num(f, m->server_seen && m->rss >= 0 ? m->rss / 1048576.0 : -1, "%.1f");
        html_cell_ms(f, h->n ? hist_percentile(h, 50) / 1e6 : -1);
        html_cell_ms(f, h->n ? hist_percentile(h, 99) / 1e6 : -1);
        html_cell_ms(f, m->server_seen ? m->longest_frame : -1);
        html_cell_num(f, churn_match_collections(tl, i), "%.0f");
        html_cell_num(f, m->server_seen ? m->leaked_worlds : -1, "%.0f");
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static double row_tick(const churn_row *r, int k)
{
    if (!r->have_admin)
        return -1;
    return row_ms(k == 0 ? r->tick_p50 : k == 1 ? r->tick_p99 : r->tick_max);
}

/* The collector's chart: its longest slice per second from /metrics, and the collections per
 * second counted from the same estimated times the other charts mark (one source: a spike
 * and a marker fall in the same second). */
static void chart_gc(FILE *f, chart *ch, const churn_timeline *tl)
{
    uint32_t g = 0;

    ch->vlines = tl->gc_times;
    ch->nv = tl->n_gc;
    if (chart_series_alloc(ch, tl->n_rows))
        for (uint32_t i = 0; i < tl->n_rows; i++) {
            const churn_row *r = &tl->rows[i];
            double n = 0;

            /* the times are in order: those up to this row's end and after the last row's */
            for (; g < tl->n_gc && tl->gc_times[g] <= r->t; g++)
                n++;
            chart_add(&ch->s[0], tl->n_rows, r->t - 0.5,
                      r->have_admin ? row_ms(r->gc_work_max) : -1);
            chart_add(&ch->s[1], tl->n_rows, r->t - 0.5, r->have_server ? n : -1);
        }
    chart_draw(f, ch);
    chart_free(ch);
}

/* The world profile's classes over time (only when the server has a profile). */
static void html_classes_chart(FILE *f, const churn_timeline *tl)
{
    static const char *const colors[CHURN_CLASSES_MAX] = {
        "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    };
    chart ch = { "Live objects by class (world profile; /metrics once a second)",
                 "seconds since the start", "objects", { { 0 } }, 0, tl->gc_times, tl->n_gc,
                 false, "no class counts sampled", NULL, 0 };

    if (tl->n_classes == 0)
        return;
    for (uint32_t k = 0; k < tl->n_classes && k < CHART_SERIES_MAX; k++) {
        ch.s[k].name = tl->classes[k];
        ch.s[k].color = colors[k];
        ch.ns++;
    }
    if (chart_series_alloc(&ch, tl->n_class_samples))
        for (uint32_t i = 0; i < tl->n_class_samples; i++)
            for (int k = 0; k < ch.ns; k++)
                chart_add(&ch.s[k], tl->n_class_samples, tl->class_samples[i].t,
                          tl->class_samples[i].count[k]);
    chart_draw(f, &ch);
    chart_free(&ch);
}

static void html_objects_chart(FILE *f, const churn_timeline *tl, const double *bands,
                               uint32_t nb)
{
    chart ch = { "Server objects (StatsReply samples, collections as dashed purple lines)",
                 "seconds since the start", "objects", { { "objects", "#0072B2", 0, 0, 0 } }, 1,
                 tl->gc_times, tl->n_gc, false, "no stats reply from the server",
                 tl->matches, tl->n_matches };

    if (chart_series_alloc(&ch, tl->n_samples))
        for (uint32_t i = 0; i < tl->n_samples; i++)
            chart_add(&ch.s[0], tl->n_samples, tl->samples[i].t, tl->samples[i].objects);
    chart_draw_shaded(f, &ch, 0, bands, nb);
    chart_free(&ch);
}

/* One colour-blind-safe palette (Okabe-Ito), the same roles as on the server dashboard:
 * p50 blue, p99 orange, max vermillion, collections reddish purple. */
/* Cumulative distributions on a log axis: what fraction of samples took at most x ms. */
static void html_latency_chart(FILE *f, const churn_totals *t)
{
    static const char *const colors[CHURN_LAT_COUNT] = {
        "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999999",
        "#F0E442",
    };
    chart ch = { "Latency distributions (fraction of samples at or below)",
                 "milliseconds (log scale)", "fraction", { { 0 } }, 0, NULL, 0, true,
                 "no latency sample", NULL, 0 };

    for (int i = 0; i < CHURN_LAT_COUNT; i++) {
        ch.s[ch.ns].name = churn_lat_names[i];
        ch.s[ch.ns].color = colors[i];
        ch.ns++;
    }
    if (chart_series_alloc(&ch, HIST_BUCKETS))
        for (int i = 0; i < CHURN_LAT_COUNT; i++) {
            const hist *h = &t->lat[i];
            uint64_t cum = 0;
            for (uint32_t b = 0; b < HIST_BUCKETS && h->n > 0; b++) {
                double ms;
                if (h->counts[b] == 0)
                    continue;
                cum += h->counts[b];
                ms = (double)(hist_bucket_high(b) < h->max ? hist_bucket_high(b) : h->max) / 1e3;
                chart_add(&ch.s[i], HIST_BUCKETS, log10(ms > 0.001 ? ms : 0.001),
                          (double)cum / (double)h->n);
            }
        }
    chart_draw(f, &ch);
    chart_free(&ch);
}

static void html_cell_ms(FILE *f, double seconds)
{
    if (seconds < 0 || isnan(seconds))
        fputs("<td>-</td>", f);
    else
        fprintf(f, "<td>%.2f</td>", seconds * 1e3);
}

static void html_cell_num(FILE *f, double v, const char *fmt)
{
    if (v < 0 || isnan(v)) {
        fputs("<td>-</td>", f);
        return;
    }
    fputs("<td>", f);
    fprintf(f, fmt, v);
    fputs("</td>", f);
}

static void html_head(FILE *f, const churn_report *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>reap load "
          "test: ", f);
    churn_svg_text(f, r->scenario);
    fputs("</title>\n<style>\nbody{font-family:sans-serif;margin:24px;color:#222;max-width:960px}"
          "\ntable{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;"
          "padding:3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,"
          "th:first-child{text-align:left}\n.pass{color:#007a5a;font-weight:bold}.fail{color:"
          "#D55E00;font-weight:bold}\nsvg.chart{font-size:11px;background:#fff}.frame{fill:none;"
          "stroke:#888}.grid{stroke:#eee}.gc{stroke:#CC79A7;stroke-dasharray:3 3;stroke-opacity:"
          ".6}.gctext{fill:#CC79A7}.muted{fill:#888}.nosrv{fill:#D55E00;fill-opacity:.12}"
          ".nosrvtext{fill:#D55E00}.match.m0{fill:#56B4E9;fill-opacity:.10}"
          ".match.m1{fill:#009E73;fill-opacity:.10}.matchtext{fill:#555;font-size:11px}"
          "\nfigure{margin:0 0 18px}figcaption{"
          "font-weight:bold;margin-bottom:4px}pre{background:#f6f6f6;padding:8px;overflow:auto}"
          "\n</style></head>\n<body>\n<h1>reap load test</h1>\n<table>\n", f);
#define HTML_ROW(label, value) do { fputs("<tr><td>" label "</td><td>", f); \
        churn_svg_text(f, value); fputs("</td></tr>\n", f); } while (0)
    HTML_ROW("scenario", r->scenario);
    HTML_ROW("run id", r->run_id);
    HTML_ROW("start time (UTC)", r->start_time);
    HTML_ROW("load generator host", r->host);
    HTML_ROW("server", r->server);
    HTML_ROW("network impairment (in the client)", r->impairment[0] ? r->impairment : "none");
    HTML_ROW("bots' source addresses", strcmp(r->source_addresses, "own") == 0 ?
             "own (each bot its own loopback address)" :
             strcmp(r->source_addresses, "one") == 0 ? "one (the kernel's choice)" :
             r->source_addresses[0] ? r->source_addresses : "?");
#undef HTML_ROW
    fprintf(f, "<tr><td>seed</td><td>%llu</td></tr>\n<tr><td>shards merged</td><td>%u</td></tr>"
            "\n<tr><td>bots (most at once)</td><td>%u</td></tr>\n<tr><td>duration</td><td>%.1f s "
            "(ran %.1f s)</td></tr>\n</table>\n", (unsigned long long)r->seed, r->shards, r->bots,
            r->duration, r->elapsed);
    if (r->partial)
        fprintf(f, "<p class=\"fail\">Partial report: a checkpoint of a run that did not finish "
                "(its process was killed, or is still running). It stops at %.1f s of %.1f s."
                "</p>\n", r->elapsed, r->duration);
    for (uint32_t i = 0; i < r->outages.n; i++) {
        const churn_outage *x = &r->outages.list[i];

        fprintf(f, "<p class=\"fail\">The server stopped answering at %.1f s", x->from);
        if (x->to >= 0)
            fprintf(f, " and answered again at %.1f s (%.1f s without it).</p>\n", x->to,
                    x->to - x->from);
        else
            fputs(" and had not answered again by the end.</p>\n", f);
    }
    if (r->outages.n > 0)
        fprintf(f, "<p class=\"fail\">%.1f s of the run had no server (shaded on the "
                "timelines).</p>\n", churn_outages_seconds(&r->outages, r->elapsed));
}

static void html_thresholds(FILE *f, const churn_report *r)
{

    fputs("<h2>Thresholds</h2>\n", f);
    if (r->n_thresholds == 0) {
        fputs("<p>None given (<code>--threshold 'join_p99&lt;500ms'</code>...).</p>\n", f);
        return;
    }
    fputs("<table><tr><th>threshold</th><th>value</th><th>result</th></tr>\n", f);
    for (uint32_t i = 0; i < r->n_thresholds; i++) {
        double v = NAN;
        bool ok;
        churn_report_metric(r, r->thresholds[i].metric, &v);
        ok = !isnan(v) && client_threshold_check(&r->thresholds[i], v);
        fputs("<tr><td>", f);
        churn_svg_text(f, r->thresholds[i].text);
        if (isnan(v)) {
            fputs("</td><td>not measured", f);
        } else {
            char shown[48];
            client_threshold_format(&r->thresholds[i], v, shown, sizeof shown);
            fprintf(f, "</td><td>%s", shown);
        }
        fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", ok ? "pass" : "fail",
                ok ? "pass" : "FAIL");
    }
    fputs("</table>\n", f);
}

static void html_counts(FILE *f, const churn_report *r)
{
    const churn_totals *t = &r->totals;

    fprintf(f, "<h2>Bots</h2>\n<table><tr><th>joins</th><th>leaves</th><th>abrupt</th>"
            "<th>props</th><th>projectiles</th><th>moves</th><th>checks</th><th>errors</th>"
            "<th>refused (full or busy)</th><th>of which busy</th><th>unknown destroys</th></tr>\n"
            "<tr><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td>"
            "<td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td></tr></table>\n",
            (unsigned long long)t->joins,
            (unsigned long long)t->leaves, (unsigned long long)t->leaves_abrupt,
            (unsigned long long)t->spawned, (unsigned long long)t->projectiles,
            (unsigned long long)t->moves, (unsigned long long)t->checks,
            (unsigned long long)churn_totals_errors(t), (unsigned long long)t->refused,
            (unsigned long long)t->refused_busy, (unsigned long long)t->unknown_destroys);
    if (t->gen_seconds > 0)
        fprintf(f, "<p class=\"%s\">The load generator used %.0f%% of a core on average%s and "
                "was saturated for %llu s of %llu%s</p>\n", t->gen_saturated ? "fail" : "pass",
                100.0 * (double)t->gen_cpu_us / 1e6 / (double)t->gen_seconds,
                r->shards > 1 ? " (summed over processes)" : "",
                (unsigned long long)t->gen_saturated, (unsigned long long)t->gen_seconds,
                t->gen_saturated ? ": latencies measured then are suspect." : ".");
    fputs("<table><tr><th>error</th><th>count</th></tr>\n", f);
    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        fprintf(f, "<tr><td>%s</td><td>%llu</td></tr>\n", churn_error_names[i],
                (unsigned long long)t->errors[i]);
    fputs("</table>\n<h2>Latencies</h2>\n<table><tr><th>latency (ms)</th><th>count</th>"
          "<th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n", f);
    for (int i = 0; i < CHURN_LAT_COUNT; i++) {
        const hist *h = &t->lat[i];
        fprintf(f, "<tr><td>%s</td><td>%llu</td>", churn_lat_names[i], (unsigned long long)h->n);
        html_cell_ms(f, h->n ? hist_percentile(h, 50) / 1e6 : -1);
        html_cell_ms(f, h->n ? hist_percentile(h, 95) / 1e6 : -1);
        html_cell_ms(f, h->n ? hist_percentile(h, 99) / 1e6 : -1);
        html_cell_ms(f, h->n ? h->max / 1e6 : -1);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    html_latency_chart(f, t);
}

static void html_server(FILE *f, const churn_report *r)
{
    const churn_server *s = &r->server_figs;

    fputs("<h2>Server (from its /metrics)</h2>\n", f);
    if (!s->have) {
        fputs("<p>Not sampled: run with <code>--admin http://HOST:PORT</code>.</p>\n", f);
        return;
    }
    fputs("<table><tr><th>frames/s</th><th>tick p50</th><th>p99</th><th>max &le;</th>"
          "<th>net p99</th><th>world p99</th><th>repl p99</th><th>gc p99</th><th>collections"
          "</th><th>gc work max &le;</th><th>cpu s</th><th>bytes/s per conn</th></tr>\n<tr>", f);
    html_cell_num(f, s->seconds > 0 ? s->frames / s->seconds : -1, "%.2f");
    html_cell_ms(f, s->tick_p50);
    html_cell_ms(f, s->tick_p99);
    html_cell_ms(f, s->tick_max);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++)
        html_cell_ms(f, s->phase_p99[i]);
    html_cell_num(f, s->collections, "%.0f");
    html_cell_ms(f, s->gc_work_max);
    html_cell_num(f, s->cpu_seconds, "%.2f");
    html_cell_num(f, s->bytes_sent >= 0 && s->seconds > 0 && s->players_mean > 0 ?
                  s->bytes_sent / s->seconds / s->players_mean : -1, "%.0f");
    fputs("</tr></table>\n<p>Times in milliseconds. Percentiles come from the server's "
          "histogram buckets (interpolated); a maximum is the upper bound of its bucket.</p>\n",
          f);
    if (s->level_streams_in < 0)
        return;
    fputs("<h3>Streaming levels</h3>\n<table><tr><th>streamed in</th><th>out</th>"
          "<th>loaded at most</th><th>pending purge at most</th><th>load wait p50</th>"
          "<th>p99</th><th>streaming collections</th><th>survived a collection</th></tr>\n<tr>",
          f);
    html_cell_num(f, s->level_streams_in, "%.0f");
    html_cell_num(f, s->level_streams_out, "%.0f");
    html_cell_num(f, s->levels_loaded_peak, "%.0f");
    html_cell_num(f, s->levels_pending_purge_max, "%.0f");
    html_cell_ms(f, s->level_load_wait_p50);
    html_cell_ms(f, s->level_load_wait_p99);
    html_cell_num(f, s->streaming_collections, "%.0f");
    html_cell_num(f, s->levels_survived, "%.0f");
    fputs("</tr></table>\n<p>Load waits are exact, over the server's last 4096 loads: from a "
          "pawn coming within range to the level being visible.</p>\n", f);
}

bool churn_report_write_html(const churn_report *r, FILE *f)
{
    const churn_timeline *tl = r->tl;
    chart bots = { "Bots taking part", "seconds since the start", "bots",
                   { { "joined", "#E69F00", 0, 0, 0 }, { "wanted by the stage", "#999999", 0,
                     0, 0 } }, 2, NULL, 0, false, NULL, NULL, 0 };
    chart rates = { "Joins, leaves, errors and refusals (server full or busy) per second",
                    "seconds since the start", "per second", { { "joins", "#009E73", 0, 0, 0 },
                    { "leaves", "#56B4E9", 0, 0, 0 }, { "errors", "#D55E00", 0, 0, 0 },
                    { "refused", "#999999", 0, 0, 0 } }, 4, NULL, 0, false, NULL, NULL, 0 };
    chart gen = { "The load generator: CPU (% of a core) and loop lag (ms) per second",
                  "seconds since the start", "% / ms", { { "cpu %", "#0072B2", 0, 0, 0 },
                  { "loop lag max (ms)", "#E69F00", 0, 0, 0 } }, 2, NULL, 0, false,
                  "not measured", NULL, 0 };
    chart tick = { "Server frame time per second (ms)", "seconds since the start",
                   "milliseconds", { { "p50", "#0072B2", 0, 0, 0 }, { "p99", "#E69F00", 0, 0,
                   0 }, { "max (bucket bound)", "#D55E00", 0, 0, 0 } }, 3, NULL, 0, false,
                   "not sampled: run with --admin", NULL, 0 };
    chart gc = { "Collector: longest frame slice per second (ms) and collections per second",
                 "seconds since the start", "ms / count", { { "gc work max (ms)", "#009E73", 0,
                 0, 0 }, { "collections", "#CC79A7", 0, 0, 0 } }, 2, NULL, 0, false,
                 "not sampled: run with --admin", NULL, 0 };
    chart levels = { "Streaming levels: loaded, and streamed out waiting for a collection",
                     "seconds since the start", "levels", { { "loaded", "#0072B2", 0, 0, 0 },
                     { "pending purge", "#D55E00", 0, 0, 0 } }, 2, NULL, 0, false,
                     "not sampled: run with --admin", NULL, 0 };

    double bands[2 * CHURN_OUTAGES_MAX];

    for (uint32_t i = 0; i < r->outages.n; i++) {
        bands[2 * i] = r->outages.list[i].from;
        bands[2 * i + 1] = r->outages.list[i].to;
    }
    html_head(f, r);
    html_thresholds(f, r);
    html_counts(f, r);
    fputs("<h2>Timeline</h2>\n", f);
    if (tl != NULL) {
        bots.vlines = tick.vlines = tl->gc_times;
        bots.nv = tick.nv = tl->n_gc;
        bots.matches = rates.matches = tick.matches = gc.matches = tl->matches;
        bots.nm = rates.nm = tick.nm = gc.nm = tl->n_matches;
        chart_rows_shaded(f, &bots, tl, row_bots, bands, r->outages.n);
        chart_rows_shaded(f, &rates, tl, row_rates, bands, r->outages.n);
        html_objects_chart(f, tl, bands, r->outages.n);
        html_classes_chart(f, tl);
        chart_rows(f, &tick, tl, row_tick);
        chart_gc(f, &gc, tl);
        if (html_has_levels(tl)) {
            levels.vlines = tl->gc_times;
            levels.nv = tl->n_gc;
            chart_rows(f, &levels, tl, row_levels);
        }
        if (tl->n_matches > 1)
            html_rss_chart(f, tl);
        chart_rows(f, &gen, tl, row_generator);
    }
    html_matches(f, r);
    html_server(f, r);
    fputs("<h2>Leak verdict</h2>\n", f);
    if (!r->leaks.checked) {
        fputs("<p>Not asked for (<code>--leak-check</code> with <code>--admin</code>, or a "
              "<code>leaked</code> threshold).</p>\n", f);
    } else {
        fprintf(f, "<p class=\"%s\">%s</p>\n<pre>", r->leaks.leaked == 0 ? "pass" : "fail",
                !r->leaks.supported ? "No verdict." : r->leaks.leaked == 0 ?
                "No object created during the run outlived it." :
                "Objects created during the run outlived it:");
        churn_svg_text(f, r->leaks.detail != NULL ? r->leaks.detail : "");
        fputs("</pre>\n", f);
    }
    /* The only script: it counts the charts that drew a line into an attribute, for tests
     * (people see the charts themselves). */
    fputs("<script>\n(function () {\n"
          "  var charts = document.querySelectorAll('svg.chart');\n  var drawn = 0;\n"
          "  charts.forEach(function (c) {\n"
          "    if (c.querySelector('polyline.series')) drawn++;\n  });\n"
          "  document.body.setAttribute('data-charts-drawn', String(drawn));\n})();\n"
          "</script>\n</body></html>\n", f);
    fflush(f);
    return !ferror(f);
}
