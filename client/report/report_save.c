/*
 * report_save.c - the run model's files for tools (report_outputs.c writes them, in order of
 * value, with the rest):
 *
 *   report.json   for tools: schema version, run id, start time, host, scenario, where the
 *                 bots' datagrams came from (source_addresses), seed, the counts, latency
 *                 summaries with their histogram buckets, the server's figures, the
 *                 thresholds, the leak verdict, when the server did not answer, whether it is
 *                 a partial checkpoint, and the timeline rows
 *   report.dat    the same data, line by line (kept for older tools; `reap-client merge`
 *                 reads report.json, report_load.c)
 *   summary.tsv   one header line and one row of the headline figures (for scripts)
 *
 * Times are kept in seconds and printed in milliseconds; figures not measured are negative in
 * memory, null in JSON, "-" in text.
 */
#include "report.h"

#include <math.h>
#include <string.h>


/* ---- report.json ----------------------------------------------------------------------- */

static void json_num(FILE *f, double v)
{
    if (v < 0 || isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.9g", v);
}

static void json_hist(FILE *f, const hist *h)
{
    bool first = true;

    fprintf(f, "{\"count\": %llu", (unsigned long long)h->n);
    if (h->n == 0) {
        fputs(", \"p50_ms\": null, \"p95_ms\": null, \"p99_ms\": null, \"max_ms\": null, "
              "\"mean_ms\": null, \"buckets\": []}", f);
        return;
    }
    fprintf(f, ", \"p50_ms\": %.3f, \"p95_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
            "\"min_ms\": %.3f, \"mean_ms\": %.3f, \"min_us\": %llu, \"max_us\": %llu, "
            "\"sum_us\": %llu, \"buckets\": [", hist_percentile(h, 50) / 1e3,
            hist_percentile(h, 95) / 1e3, hist_percentile(h, 99) / 1e3, h->max / 1e3,
            h->min / 1e3, hist_mean(h) / 1e3, (unsigned long long)h->min,
            (unsigned long long)h->max, (unsigned long long)h->sum);
    /* [low_us, high_us, count] for every non-empty bucket: exact, mergeable. */
    for (uint32_t i = 0; i < HIST_BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        fprintf(f, "%s[%llu, %llu, %llu]", first ? "" : ", ",
                (unsigned long long)hist_bucket_low(i), (unsigned long long)hist_bucket_high(i),
                (unsigned long long)h->counts[i]);
        first = false;
    }
    fputs("]}", f);
}

static const char *json_match_mode(uint32_t mode)
{
    return mode == 1 ? "hard" : mode == 2 ? "seamless" : "none";
}

/* The matches: one per map the run saw, from the travel that began it (see churn_match);
 * players and collections come from the rows (and are not read back). */
static void json_matches(FILE *f, const churn_timeline *tl)
{
    fputs("  \"match_seconds\": ", f);
    json_num(f, tl != NULL && tl->match_seconds > 0 ? tl->match_seconds : -1);
    fputs(",\n  \"matches\": [", f);
    for (uint32_t i = 0; tl != NULL && i < tl->n_matches; i++) {
        const churn_match *m = &tl->matches[i];

        fprintf(f, "%s\n    {\"match\": %u, \"frame\": %llu, \"map\": ", i ? "," : "", i + 1,
                (unsigned long long)m->frame);
        churn_json_string(f, m->map);
        fprintf(f, ", \"mode\": \"%s\", \"start_seconds\": %.6f, \"end_seconds\": ",
                json_match_mode(m->mode), m->start);
        json_num(f, m->end);
        fprintf(f, ", \"departed\": %u, \"arrived\": %u, \"players\": %u, \"travel\": ",
                m->departed, m->arrived, churn_match_players(tl, i));
        json_hist(f, &m->travel);
        fprintf(f, ", \"server_sampled\": %s, \"server_travel_seconds\": ",
                m->server_seen ? "true" : "false");
        json_num(f, m->server_seconds);
        fputs(", \"server_longest_frame_ms\": ", f);
        json_num(f, m->longest_frame >= 0 ? m->longest_frame * 1e3 : -1);
        fputs(", \"server_frames_over_budget\": ", f);
        json_num(f, m->frames_over_budget);
        fputs(", \"objects\": ", f);
        json_num(f, m->objects);
        fputs(", \"rss_bytes\": ", f);
        json_num(f, m->rss);
        fputs(", \"leaked_worlds\": ", f);
        json_num(f, m->leaked_worlds);
        fputs(", \"collections\": ", f);
        json_num(f, churn_match_collections(tl, i));
        fputs("}", f);
    }
    fprintf(f, "%s],\n", tl != NULL && tl->n_matches ? "\n  " : "");
}

bool churn_report_write_json(const churn_report *r, FILE *f)
{
    const churn_totals *t = &r->totals;
    const churn_server *s = &r->server_figs;
    char impair[160];

    fprintf(f, "{\n  \"schema_version\": %d,\n  \"tool\": \"reap-client\",\n  \"run_id\": ",
            r->schema);
    churn_json_string(f, r->run_id);
    fputs(",\n  \"start_time\": ", f);
    churn_json_string(f, r->start_time);
    fputs(",\n  \"host\": ", f);
    churn_json_string(f, r->host);
    fputs(",\n  \"scenario\": ", f);
    churn_json_string(f, r->scenario);
    fputs(",\n  \"server\": ", f);
    churn_json_string(f, r->server);
    fputs(",\n  \"impairment\": ", f);
    churn_json_string(f, r->impairment[0] ? r->impairment : "none");
    /* what ran, then what was asked (--source-addresses) */
    fputs(",\n  \"source_addresses\": ", f);
    if (r->source_addresses[0] != '\0')
        churn_json_string(f, r->source_addresses);
    else
        fputs("null", f);
    fputs(",\n  \"source_addresses_option\": ", f);
    if (r->source_option[0] != '\0')
        churn_json_string(f, r->source_option);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"seed\": %llu,\n  \"shard\": %u,\n  \"shards\": %u,\n  \"bots\": %u,\n"
            "  \"duration_seconds\": %.6f,\n  \"elapsed_seconds\": %.6f,\n  \"interrupted\": %s,\n"
            "  \"partial\": %s,\n", (unsigned long long)r->seed, r->shard, r->shards, r->bots,
            r->duration, r->elapsed, r->interrupted ? "true" : "false",
            r->partial ? "true" : "false");
    /* When the server did not answer: [from, to] seconds, to null when it never came back. */
    fprintf(f, "  \"server_outage_seconds\": %.6f,\n  \"server_outages\": [",
            churn_outages_seconds(&r->outages, r->elapsed));
    for (uint32_t i = 0; i < r->outages.n; i++) {
        fprintf(f, "%s{\"from_seconds\": %.6f, \"to_seconds\": ", i ? ", " : "",
                r->outages.list[i].from);
        json_num(f, r->outages.list[i].to);
        fputs("}", f);
    }
    fputs("],\n", f);
    fputs("  \"stages\": [", f);
    for (uint32_t i = 0; i < r->n_stages; i++) {
        const client_stage *st = &r->stages[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        churn_json_string(f, st->name);
        fprintf(f, ", \"duration\": %g, \"bots_from\": %u, \"bots_to\": %u, \"spawn\": %u, "
                "\"moves_per_second\": %g, \"move_pattern\": \"%s\", "
                "\"projectiles_per_second\": %g, \"hold\": %g, \"leave\": \"%s\", "
                "\"impair\": ", st->duration, st->bots_from, st->bots_to, st->spawn, st->move_hz,
                client_move_pattern_name(st->move_pattern), st->projectile_hz, st->hold,
                client_disconnect_name(st->leave));
        client_impair_format(&st->impair, impair, sizeof impair);
        churn_json_string(f, impair);
        fputs(", \"spawn_mix\": ", f);
        client_spawn_mix_format(&st->mix, impair, sizeof impair);
        churn_json_string(f, impair);
        fputs(", \"travel\": ", f);
        if (st->travel_map[0] != '\0') {
            snprintf(impair, sizeof impair, "%s%s%s", st->travel_map,
                     st->travel_mode != CLIENT_TRAVEL_DEFAULT ? " " : "",
                     st->travel_mode != CLIENT_TRAVEL_DEFAULT ?
                     client_travel_mode_name(st->travel_mode) : "");
            churn_json_string(f, impair);
        } else {
            fputs("null", f);
        }
        fputs("}", f);
    }
    fputs("\n  ],\n", f);
    fprintf(f, "  \"counts\": {\"joins\": %llu, \"leaves\": %llu, \"leaves_abrupt\": %llu, "
            "\"spawned\": %llu, \"projectiles\": %llu, \"moves\": %llu, \"checks\": %llu, "
            "\"snapshots\": %llu, \"unknown_destroys\": %llu, \"errors\": %llu, "
            "\"refused\": %llu, \"refused_busy\": %llu, \"travels\": %llu, "
            "\"travel_refused\": %llu},\n",
            (unsigned long long)t->joins, (unsigned long long)t->leaves,
            (unsigned long long)t->leaves_abrupt, (unsigned long long)t->spawned,
            (unsigned long long)t->projectiles, (unsigned long long)t->moves,
            (unsigned long long)t->checks, (unsigned long long)t->snapshots,
            (unsigned long long)t->unknown_destroys,
            (unsigned long long)churn_totals_errors(t), (unsigned long long)t->refused,
            (unsigned long long)t->refused_busy, (unsigned long long)t->travels,
            (unsigned long long)t->travel_refused);
    fprintf(f, "  \"generator\": {\"cpu_seconds\": %.6f, \"seconds\": %llu, "
            "\"saturated_seconds\": %llu, \"saturated\": %s},\n", (double)t->gen_cpu_us / 1e6,
            (unsigned long long)t->gen_seconds, (unsigned long long)t->gen_saturated,
            t->gen_saturated > 0 ? "true" : "false");
    fprintf(f, "  \"impaired\": {\"datagrams\": %llu, \"dropped\": %llu, \"duplicated\": %llu, "
            "\"reordered\": %llu},\n", (unsigned long long)t->impair_datagrams,
            (unsigned long long)t->impair_dropped, (unsigned long long)t->impair_duplicated,
            (unsigned long long)t->impair_reordered);
    fputs("  \"errors\": {", f);
    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", churn_error_keys[i],
                (unsigned long long)t->errors[i]);
    fputs("},\n  \"latency\": {\n", f);
    for (int i = 0; i < CHURN_LAT_COUNT; i++) {
        fprintf(f, "    \"%s\": ", churn_lat_names[i]);
        json_hist(f, &t->lat[i]);
        fputs(i + 1 < CHURN_LAT_COUNT ? ",\n" : "\n", f);
    }
    fprintf(f, "  },\n  \"server_metrics\": {\"sampled\": %s, \"scrapes\": %u, "
            "\"scrape_errors\": %u, \"bytes_sent\": ", s->have ? "true" : "false", s->scrapes,
            s->scrape_errors);
    json_num(f, s->bytes_sent);
    fputs(", \"seconds\": ", f);
    json_num(f, s->have ? s->seconds : -1);
    fputs(", \"frames\": ", f);
    json_num(f, s->have ? s->frames : -1);
    fputs(", \"frames_per_second\": ", f);
    json_num(f, s->have && s->seconds > 0 && s->frames >= 0 ? s->frames / s->seconds : -1);
    fputs(", \"tick_p50_ms\": ", f);
    json_num(f, s->tick_p50 >= 0 ? s->tick_p50 * 1e3 : -1);
    fputs(", \"tick_p99_ms\": ", f);
    json_num(f, s->tick_p99 >= 0 ? s->tick_p99 * 1e3 : -1);
    fputs(", \"tick_max_ms\": ", f);
    json_num(f, s->tick_max >= 0 ? s->tick_max * 1e3 : -1);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++) {
        fprintf(f, ", \"phase_%s_p99_ms\": ", churn_phase_names[i]);
        json_num(f, s->phase_p99[i] >= 0 ? s->phase_p99[i] * 1e3 : -1);
    }
    fputs(", \"collections\": ", f);
    json_num(f, s->collections);
    fputs(", \"gc_frame_work_p99_ms\": ", f);
    json_num(f, s->gc_work_p99 >= 0 ? s->gc_work_p99 * 1e3 : -1);
    fputs(", \"gc_frame_work_max_ms\": ", f);
    json_num(f, s->gc_work_max >= 0 ? s->gc_work_max * 1e3 : -1);
    fputs(", \"gc_frame_work_seconds\": ", f);
    json_num(f, s->gc_work_sum);
    fputs(", \"bytes_per_second_per_connection\": ", f);
    json_num(f, churn_bytes_per_conn(s));
    fputs(", \"players_mean\": ", f);
    json_num(f, s->have ? s->players_mean : -1);
    fputs(", \"cpu_seconds\": ", f);
    json_num(f, s->cpu_seconds);
    fputs(", \"objects_first\": ", f);
    json_num(f, s->objects_first);
    fputs(", \"objects_last\": ", f);
    json_num(f, s->objects_last);
    fputs(", \"objects_peak\": ", f);
    json_num(f, s->objects_peak);
    fputs(", \"rss_peak_bytes\": ", f);
    json_num(f, s->rss_peak);
    fputs(", \"levels_loaded_peak\": ", f);
    json_num(f, s->levels_loaded_peak);
    fputs(", \"level_load_wait_p50_ms\": ", f);
    json_num(f, s->level_load_wait_p50 >= 0 ? s->level_load_wait_p50 * 1e3 : -1);
    fputs(", \"level_load_wait_p99_ms\": ", f);
    json_num(f, s->level_load_wait_p99 >= 0 ? s->level_load_wait_p99 * 1e3 : -1);
    fputs(", \"levels_pending_purge_max\": ", f);
    json_num(f, s->levels_pending_purge_max);
    fputs(", \"level_streams_in\": ", f);
    json_num(f, s->level_streams_in);
    fputs(", \"level_streams_out\": ", f);
    json_num(f, s->level_streams_out);
    fputs(", \"levels_survived\": ", f);
    json_num(f, s->levels_survived);
    fputs(", \"streaming_collections\": ", f);
    json_num(f, s->streaming_collections);
    fputs("},\n  \"thresholds\": [", f);
    for (uint32_t i = 0; i < r->n_thresholds; i++) {
        double v = NAN;
        churn_report_metric(r, r->thresholds[i].metric, &v);
        fprintf(f, "%s\n    {\"threshold\": ", i ? "," : "");
        churn_json_string(f, r->thresholds[i].text);
        fputs(", \"value\": ", f);
        json_num(f, isnan(v) ? -1 : v);
        fprintf(f, ", \"pass\": %s}", !isnan(v) && client_threshold_check(&r->thresholds[i], v) ?
                "true" : "false");
    }
    fprintf(f, "%s],\n  \"leaks\": {\"checked\": %s, \"supported\": %s, \"leaked\": ",
            r->n_thresholds ? "\n  " : "", r->leaks.checked ? "true" : "false",
            r->leaks.supported ? "true" : "false");
    json_num(f, (double)r->leaks.leaked);
    fputs(", \"objects_at_mark\": ", f);
    json_num(f, (double)r->leaks.baseline);
    fputs(", \"objects_after\": ", f);
    json_num(f, (double)r->leaks.after);
    fputs(", \"detail\": ", f);
    churn_json_string(f, r->leaks.detail != NULL ? r->leaks.detail : "");
    fputs("},\n", f);
    json_matches(f, r->tl);
    fputs("  \"timeline\": [\n", f);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_rows; i++) {
        const churn_row *row = &r->tl->rows[i];
        fprintf(f, "    {\"t\": %.6f, \"stage\": %u, \"target\": %u, \"connected\": %u, "
                "\"joins\": %u, \"leaves\": %u, \"leaves_abrupt\": %u, \"spawned\": %u, "
                "\"errors\": %u, \"refused\": %u, \"server_lost\": %s, \"generator_cpu\": ",
                row->t, row->stage, row->target, row->connected, row->joins, row->leaves,
                row->leaves_abrupt, row->spawned, row->errors, row->refused,
                row->server_lost ? "true" : "false");
        json_num(f, row->gen_cpu);
        fputs(", \"loop_lag_ms\": ", f);
        json_num(f, row->loop_lag >= 0 ? row->loop_lag * 1e3 : -1);
        fputs(", \"server\": ", f);
        if (row->have_server)
            fprintf(f, "{\"objects\": %u, \"players\": %u, \"collections_total\": %llu, "
                    "\"objects_destroyed_total\": %llu, \"gc_interval\": %.6f, "
                    "\"time_since_last_purge\": %.6f, \"frame\": %llu}", row->server_objects,
                    row->server_players, (unsigned long long)row->collections,
                    (unsigned long long)row->objects_destroyed, row->gc_interval,
                    row->time_since_last_purge, (unsigned long long)row->server_frame);
        else
            fputs("null", f);
        fprintf(f, ", \"admin\": %s, \"server_objects\": ", row->have_admin ? "true" : "false");
        json_num(f, row->have_server ? (double)row->server_objects : -1.0);
        fputs(", \"tick_p50_ms\": ", f);
        json_num(f, row->have_admin && row->tick_p50 >= 0 ? row->tick_p50 * 1e3 : -1);
        fputs(", \"frames\": ", f);
        json_num(f, row->have_admin ? row->frames : -1);
        fputs(", \"admin_objects\": ", f);
        json_num(f, row->have_admin ? row->admin_objects : -1);
        fputs(", \"tick_p99_ms\": ", f);
        json_num(f, row->have_admin && row->tick_p99 >= 0 ? row->tick_p99 * 1e3 : -1);
        fputs(", \"tick_max_ms\": ", f);
        json_num(f, row->have_admin && row->tick_max >= 0 ? row->tick_max * 1e3 : -1);
        fputs(", \"collections\": ", f);
        json_num(f, row->have_admin ? row->gc_collections : -1);
        fputs(", \"gc_work_max_ms\": ", f);
        json_num(f, row->have_admin && row->gc_work_max >= 0 ? row->gc_work_max * 1e3 : -1);
        fputs(", \"rss_bytes\": ", f);
        json_num(f, row->have_admin ? row->rss_bytes : -1);
        fputs(", \"levels_loaded\": ", f);
        json_num(f, row->have_admin ? row->levels_loaded : -1);
        fputs(", \"levels_pending_purge\": ", f);
        json_num(f, row->have_admin ? row->levels_pending_purge : -1);
        fputs(i + 1 < r->tl->n_rows ? "},\n" : "}\n", f);
    }
    /* The collections' estimated times and every stats reply's object count: the charts'
     * finer lines, and what merge takes from one shard. */
    fputs("  ],\n  \"collection_times\": [", f);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_gc; i++)
        fprintf(f, "%s%.6f", i ? ", " : "", r->tl->gc_times[i]);
    fputs("],\n  \"object_samples\": [", f);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_samples; i++)
        fprintf(f, "%s[%.6f, %u]", i ? ", " : "", r->tl->samples[i].t, r->tl->samples[i].objects);
    /* Live objects of the world profile's classes, one row per /metrics scrape: [t, count of
     * classes[0], ...], -1 where a scrape lacked a class. */
    fputs("],\n  \"objects_by_class\": {\"classes\": [", f);
    for (uint32_t k = 0; r->tl != NULL && k < r->tl->n_classes; k++) {
        fputs(k ? ", " : "", f);
        churn_json_string(f, r->tl->classes[k]);
    }
    fputs("], \"samples\": [", f);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_class_samples; i++) {
        const churn_class_sample *cs = &r->tl->class_samples[i];

        fprintf(f, "%s[%.3f", i ? ", " : "", cs->t);
        for (uint32_t k = 0; k < r->tl->n_classes; k++)
            fprintf(f, ", %.0f", cs->count[k]);
        fputs("]", f);
    }
    fputs("]}\n}\n", f);
    fflush(f);
    return !ferror(f);
}

/* ---- summary.tsv ----------------------------------------------------------------------- */

bool churn_report_write_tsv(const churn_report *r, FILE *f)
{
    const churn_server *s = &r->server_figs;
    const hist *join = &r->totals.lat[CHURN_LAT_JOIN];
    double fps = s->have && s->seconds > 0 && s->frames >= 0 ? s->frames / s->seconds : -1;
    double v[] = {
        (double)r->bots, (double)r->totals.joins, (double)churn_totals_errors(&r->totals),
        join->n ? hist_percentile(join, 50) / 1e3 : -1,
        join->n ? hist_percentile(join, 99) / 1e3 : -1,
        s->have ? s->seconds : -1, fps,
        s->tick_p50 >= 0 ? s->tick_p50 * 1e3 : -1, s->tick_p99 >= 0 ? s->tick_p99 * 1e3 : -1,
        s->tick_max >= 0 ? s->tick_max * 1e3 : -1,
        s->phase_p99[0] >= 0 ? s->phase_p99[0] * 1e3 : -1,
        s->phase_p99[1] >= 0 ? s->phase_p99[1] * 1e3 : -1,
        s->phase_p99[2] >= 0 ? s->phase_p99[2] * 1e3 : -1,
        s->phase_p99[3] >= 0 ? s->phase_p99[3] * 1e3 : -1,
        s->collections, s->gc_work_sum >= 0 ? s->gc_work_sum * 1e3 : -1,
        s->gc_work_max >= 0 ? s->gc_work_max * 1e3 : -1, churn_bytes_per_conn(s),
        s->have ? s->players_mean : -1, s->cpu_seconds, s->have ? s->frames : -1,
        (double)r->totals.checks, (double)r->totals.errors[CHURN_ERR_MISMATCH],
    };

    fputs("bots\tjoins\terrors\tjoin_p50_ms\tjoin_p99_ms\tseconds\tfps\ttick_p50_ms\t"
          "tick_p99_ms\ttick_max_ms\tnet_p99_ms\tworld_p99_ms\trepl_p99_ms\tgc_p99_ms\t"
          "collections\tgc_work_ms\tgc_work_max_ms\tbytes_per_conn_s\tplayers_mean\t"
          "cpu_seconds\tframes\tchecks\tmismatches\n", f);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (v[i] < 0 || isnan(v[i]))
            fputs("-", f);
        else
            fprintf(f, "%.6g", v[i]);
        fputc(i + 1 < sizeof v / sizeof v[0] ? '\t' : '\n', f);
    }
    fflush(f);
    return !ferror(f);
}

/* ---- report.dat (what merge reads) ------------------------------------------------------ */

#define CHURN_DAT_MAGIC "reap-client-report"

bool churn_report_write_dat(const churn_report *r, FILE *f)
{
    const churn_totals *t = &r->totals;
    const churn_server *s = &r->server_figs;

    fprintf(f, "%s %d\nrun_id %s\nstart_time %s\nhost %s\nscenario %s\nserver %s\n"
            "seed %llu\nshards %u\nbots %u\nduration %.6f\nelapsed %.6f\n", CHURN_DAT_MAGIC,
            r->schema, r->run_id, r->start_time, r->host, r->scenario, r->server,
            (unsigned long long)r->seed, r->shards, r->bots, r->duration, r->elapsed);
    fprintf(f, "counts %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
            (unsigned long long)t->joins, (unsigned long long)t->leaves,
            (unsigned long long)t->leaves_abrupt, (unsigned long long)t->spawned,
            (unsigned long long)t->projectiles, (unsigned long long)t->moves,
            (unsigned long long)t->checks, (unsigned long long)t->snapshots,
            (unsigned long long)t->unknown_destroys);
    fputs("errors", f);
    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        fprintf(f, " %llu", (unsigned long long)t->errors[i]);
    fprintf(f, "\nrefused %llu\nrefused_busy %llu\npartial %d\ngenerator %llu %llu %llu\n"
            "impaired %llu %llu %llu %llu\nimpairment %s\n", (unsigned long long)t->refused,
            (unsigned long long)t->refused_busy, r->partial,
            (unsigned long long)t->gen_cpu_us, (unsigned long long)t->gen_seconds,
            (unsigned long long)t->gen_saturated, (unsigned long long)t->impair_datagrams,
            (unsigned long long)t->impair_dropped, (unsigned long long)t->impair_duplicated,
            (unsigned long long)t->impair_reordered, r->impairment[0] ? r->impairment : "none");
    for (int i = 0; i < CHURN_LAT_COUNT; i++) {
        fprintf(f, "hist %s ", churn_lat_names[i]);
        hist_write_line(&t->lat[i], f);
        fputc('\n', f);
    }
    fprintf(f, "server_figures %d %u %u %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g "
            "%.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", s->have, s->scrapes, s->scrape_errors,
            s->seconds, s->frames, s->tick_p50, s->tick_p99, s->tick_max, s->phase_p99[0],
            s->phase_p99[1], s->phase_p99[2], s->phase_p99[3], s->collections, s->gc_work_p99,
            s->gc_work_max, s->gc_work_sum, s->bytes_sent, s->players_mean, s->cpu_seconds,
            s->objects_first, s->objects_last, s->objects_peak, s->rss_peak);
    fprintf(f, "leaks %d %d %ld %ld %ld\n", r->leaks.checked, r->leaks.supported,
            r->leaks.baseline, r->leaks.after, r->leaks.leaked);
    for (uint32_t i = 0; i < r->outages.n; i++)
        fprintf(f, "outage %.6f %.6f\n", r->outages.list[i].from, r->outages.list[i].to);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_rows; i++) {
        const churn_row *w = &r->tl->rows[i];
        fprintf(f, "row %.6f %u %u %u %u %u %u %u %u %d %u %u %llu %llu %.6f %.6f %llu %d %.9g "
                "%.9g %.9g %.9g %.9g %.9g %.9g %.9g %u %.9g %.9g\n", w->t, w->connected, w->target,
                w->stage,
                w->joins, w->leaves, w->leaves_abrupt, w->spawned, w->errors, w->have_server,
                w->server_objects, w->server_players, (unsigned long long)w->collections,
                (unsigned long long)w->objects_destroyed, w->gc_interval,
                w->time_since_last_purge, (unsigned long long)w->server_frame, w->have_admin,
                w->tick_p50, w->tick_p99, w->tick_max, w->gc_collections, w->gc_work_max,
                w->admin_objects, w->rss_bytes, w->frames, w->refused, w->gen_cpu, w->loop_lag);
    }
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_gc; i++)
        fprintf(f, "gc %.6f\n", r->tl->gc_times[i]);
    for (uint32_t i = 0; r->tl != NULL && i < r->tl->n_samples; i++)
        fprintf(f, "sample %.6f %u\n", r->tl->samples[i].t, r->tl->samples[i].objects);
    fflush(f);
    return !ferror(f);
}
