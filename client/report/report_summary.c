/*
 * report_summary.c - what a person reads at the end of a run (or a merge): the latency table,
 * the impairment, the generator's own health, the server's figures, the leak verdict, and the
 * thresholds' verdict.
 */
#include "report.h"

#include <math.h>
#include <string.h>

/* ---- figures by name (thresholds, summary) -------------------------------------------- */

uint32_t churn_report_thresholds(const churn_report *r, FILE *out)
{
    uint32_t failed = 0;

    if (r->n_thresholds == 0)
        return 0;
    fprintf(out, "thresholds:\n");
    for (uint32_t i = 0; i < r->n_thresholds; i++) {
        const client_threshold *th = &r->thresholds[i];
        double v = NAN;
        bool ok;

        churn_report_metric(r, th->metric, &v);
        ok = !isnan(v) && client_threshold_check(th, v);
        failed += !ok;
        if (isnan(v)) {
            fprintf(out, "  %-28s FAIL  (not measured in this run)\n", th->text);
        } else {
            char shown[48];
            client_threshold_format(th, v, shown, sizeof shown);
            fprintf(out, "  %-28s %s  (%s)\n", th->text, ok ? "pass" : "FAIL", shown);
        }
    }
    return failed;
}

/* ---- the summary ----------------------------------------------------------------------- */

static void churn_ms(char *buf, size_t size, double seconds)
{
    if (seconds < 0 || isnan(seconds))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.2f", seconds * 1e3);
}

static void churn_num(char *buf, size_t size, double v, const char *fmt)
{
    if (v < 0 || isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, fmt, v);
}

static void churn_report_print_impairment(const churn_report *r, FILE *out)
{
    const churn_totals *t = &r->totals;

    if (strcmp(r->impairment, "none") == 0 || r->impairment[0] == '\0')
        return;
    fprintf(out, "impairment: %s; %llu datagrams through it, %llu dropped (%.2f%%), %llu "
            "duplicated, %llu reordered\n", r->impairment,
            (unsigned long long)t->impair_datagrams, (unsigned long long)t->impair_dropped,
            t->impair_datagrams ? 100.0 * (double)t->impair_dropped /
                                  (double)t->impair_datagrams : 0.0,
            (unsigned long long)t->impair_duplicated, (unsigned long long)t->impair_reordered);
}

/* When the server did not answer: each stretch, then how much of the run had no server. */
static void churn_report_print_outages(const churn_report *r, FILE *out)
{
    const churn_outages *o = &r->outages;

    if (o->n == 1 && o->list[0].to < 0) {
        fprintf(out, "server lost: the server stopped answering at %.1f s; %.1f s of the run had "
                "no server\n", o->list[0].from, churn_outages_seconds(o, r->elapsed));
        return;
    }
    for (uint32_t i = 0; i < o->n; i++) {
        const churn_outage *x = &o->list[i];

        if (x->to < 0)
            fprintf(out, "server lost: the server stopped answering at %.1f s and had not "
                    "answered again by the end\n", x->from);
        else
            fprintf(out, "server lost: the server stopped answering at %.1f s and answered "
                    "again at %.1f s (%.1f s without it)\n", x->from, x->to, x->to - x->from);
    }
    if (o->n > 0)
        fprintf(out, "server lost: %.1f s of the run had no server\n",
                churn_outages_seconds(o, r->elapsed));
}

/* The generator's own health, and a warning when its figures measure itself too. */
static void churn_report_print_generator(const churn_report *r, FILE *out)
{
    const churn_totals *t = &r->totals;
    const hist *lag = &t->lat[CHURN_LAT_LOOP_LAG];

    if (t->gen_seconds == 0)
        return;
    fprintf(out, "generator: %.2f s CPU over %llu s (%.0f%% of a core%s), loop lag p99 %.1f ms, "
            "max %.1f ms; saturated %llu s\n", (double)t->gen_cpu_us / 1e6,
            (unsigned long long)t->gen_seconds,
            100.0 * (double)t->gen_cpu_us / 1e6 / (double)t->gen_seconds,
            r->shards > 1 ? ", summed over processes" : "",
            lag->n ? (double)hist_percentile(lag, 99) / 1e3 : 0.0,
            lag->n ? (double)lag->max / 1e3 : 0.0, (unsigned long long)t->gen_saturated);
    if (t->gen_saturated > 0)
        fprintf(out, "warning: the load generator was saturated for %llu s of %llu (its CPU at "
                "%.0f%% of a core or more, or a turn of its loop over %.0f ms late): latencies "
                "measured then are suspect; run fewer bots per process (--procs)\n",
                (unsigned long long)t->gen_saturated, (unsigned long long)t->gen_seconds,
                CHURN_SATURATED_CPU * 100, CHURN_SATURATED_LAG * 1e3);
}

/* A row per match: its map, how it began, the players, what the server held after its
 * travel, the bots' travel times, the server's longest frame in it, collections, leaks. */
static void churn_report_print_matches(const churn_report *r, FILE *out)
{
    const churn_timeline *tl = r->tl;
    char players[16], objects[24], rss[24], p50[24], p99[24], frame[24], coll[24], leaked[16];

    if (tl == NULL || tl->n_matches == 0 || (tl->n_matches == 1 && tl->matches[0].frame == 0 &&
                                             tl->match_seconds <= 0))
        return;
    fprintf(out, "matches: %u (%llu travels followed by bots, %llu requests answered \"between "
            "maps\")%s\n", tl->n_matches, (unsigned long long)r->totals.travels,
            (unsigned long long)r->totals.travel_refused,
            tl->match_seconds > 0 ? "; the scenario expects a rotation" : "");
    if (tl->match_seconds > 0)
        fprintf(out, "  expected match length: %g s (match_seconds)\n", tl->match_seconds);
    fprintf(out, "  %-3s %-12s %-8s %8s %7s %10s %9s %9s %9s %11s %6s %6s\n", "#", "map", "travel",
            "start s", "players", "objects", "RSS MiB", "travel", "p99 ms", "longest ms",
            "colls", "leaked");
    fprintf(out, "  %-3s %-12s %-8s %8s %7s %10s %9s %9s %9s %11s %6s %6s\n", "", "", "", "", "",
            "(after)", "(after)", "p50 ms", "", "(server)", "", "worlds");
    for (uint32_t i = 0; i < tl->n_matches; i++) {
        const churn_match *m = &tl->matches[i];
        const hist *h = &m->travel;

        snprintf(players, sizeof players, "%u", churn_match_players(tl, i));
        churn_num(objects, sizeof objects, m->server_seen ? m->objects : -1, "%.0f");
        churn_num(rss, sizeof rss, m->server_seen && m->rss >= 0 ? m->rss / 1048576.0 : -1,
                  "%.1f");
        churn_num(p50, sizeof p50, h->n ? hist_percentile(h, 50) / 1e3 : -1, "%.1f");
        churn_num(p99, sizeof p99, h->n ? hist_percentile(h, 99) / 1e3 : -1, "%.1f");
        churn_ms(frame, sizeof frame, m->server_seen ? m->longest_frame : -1);
        churn_num(coll, sizeof coll, churn_match_collections(tl, i), "%.0f");
        churn_num(leaked, sizeof leaked, m->server_seen ? m->leaked_worlds : -1, "%.0f");
        fprintf(out, "  %-3u %-12s %-8s %8.1f %7s %10s %9s %9s %9s %11s %6s %6s\n", i + 1,
                m->map[0] ? m->map : "?", m->mode == 1 ? "hard" : m->mode == 2 ? "seamless" :
                "(start)", m->start, players, objects, rss, p50, p99, frame, coll, leaked);
    }
}

void churn_report_print(const churn_report *r, FILE *out)
{
    const churn_server *s = &r->server_figs;
    char a[32], b[32], c[32], d[32];

    if (r->partial)
        fprintf(out, "partial: this report is a checkpoint of a run that did not finish: it "
                "stops at %.1f s of %.1f s\n", r->elapsed, r->duration);
    churn_report_print_outages(r, out);
    fprintf(out, "latency (ms)         count      p50      p95      p99      max\n");
    for (int i = 0; i < CHURN_LAT_COUNT; i++) {
        const hist *h = &r->totals.lat[i];
        if (h->n == 0) {
            fprintf(out, "  %-16s %7s %8s %8s %8s %8s\n", churn_lat_names[i], "0", "-", "-",
                    "-", "-");
            continue;
        }
        fprintf(out, "  %-16s %7llu %8.2f %8.2f %8.2f %8.2f\n", churn_lat_names[i],
                (unsigned long long)h->n, hist_percentile(h, 50) / 1e3,
                hist_percentile(h, 95) / 1e3, hist_percentile(h, 99) / 1e3, h->max / 1e3);
    }
    churn_report_print_impairment(r, out);
    churn_report_print_generator(r, out);
    churn_report_print_matches(r, out);
    if (!s->have) {
        fprintf(out, "server (/metrics): %s\n", r->admin ?
                "fewer than two samples" : "not sampled (no --admin)");
    } else {
        churn_ms(a, sizeof a, s->tick_p50);
        churn_ms(b, sizeof b, s->tick_p99);
        churn_ms(c, sizeof c, s->tick_max);
        fprintf(out, "server: %.1f frames/s over %.1f s, tick p50 %s ms, p99 %s ms, max <= %s "
                "ms\n", s->seconds > 0 ? s->frames / s->seconds : 0, s->seconds, a, b, c);
        churn_ms(a, sizeof a, s->phase_p99[CHURN_PHASE_NET]);
        churn_ms(b, sizeof b, s->phase_p99[CHURN_PHASE_WORLD]);
        churn_ms(c, sizeof c, s->phase_p99[CHURN_PHASE_REPL]);
        churn_ms(d, sizeof d, s->phase_p99[CHURN_PHASE_GC]);
        fprintf(out, "server: phase p99 net %s, world %s, repl %s, gc %s ms\n", a, b, c, d);
        churn_num(a, sizeof a, s->collections, "%.0f");
        churn_ms(b, sizeof b, s->gc_work_max);
        churn_num(c, sizeof c, s->cpu_seconds, "%.2f");
        churn_num(d, sizeof d, churn_bytes_per_conn(s), "%.0f");
        fprintf(out, "server: %s collections, gc frame work max <= %s ms, cpu %s s, %s bytes/s "
                "per connection, %.0f players on average\n", a, b, c, d, s->players_mean);
        if (s->level_streams_in >= 0) {
            churn_ms(a, sizeof a, s->level_load_wait_p50);
            churn_ms(b, sizeof b, s->level_load_wait_p99);
            fprintf(out, "server: streaming levels: %.0f in, %.0f out, at most %.0f loaded and "
                    "%.0f pending purge; load wait p50 %s ms, p99 %s ms; %.0f streaming "
                    "collections, %.0f level(s) survived one\n", s->level_streams_in,
                    s->level_streams_out, s->levels_loaded_peak, s->levels_pending_purge_max, a,
                    b, s->streaming_collections, s->levels_survived);
        }
    }
    if (r->leaks.checked)
        fprintf(out, "leak verdict: %s\n%s", !r->leaks.supported ? "not available" :
                r->leaks.leaked == 0 ? "no object outlived the run" :
                "objects outlived the run", r->leaks.detail != NULL ? r->leaks.detail : "");
}
