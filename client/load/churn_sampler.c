/*
 * churn_sampler.c - the server's figures from its /metrics: a page a second (churn_admin.c
 * fetches it), folded into the run's server figures (the deltas between the first and the
 * last page) and into each timeline row (the deltas over its second).
 */
#include "churn_sampler.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void churn_sampler_init(churn_sampler *s, churn_admin *admin)
{
    memset(s, 0, sizeof *s);
    s->admin = admin;
    s->travels = -1;
    churn_server_init(&s->server);
}

void churn_sampler_free(churn_sampler *s)
{
    churn_scrape_free(&s->fresh);
    churn_scrape_free(&s->first);
    churn_scrape_free(&s->last);
    churn_scrape_free(&s->row);
}

static double churn_nan_to(double v, double dflt)
{
    return isnan(v) ? dflt : v;
}

static double churn_delta(const churn_scrape *a, const churn_scrape *b, const char *name)
{
    double d = churn_scrape_sum(b, name) - churn_scrape_sum(a, name);

    return isnan(d) ? -1 : d;
}

/* The same for one labelled series, key exactly as exported. */
static double churn_delta_key(const churn_scrape *a, const churn_scrape *b, const char *key)
{
    double d = churn_scrape_get(b, key) - churn_scrape_get(a, key);

    return isnan(d) ? -1 : d;
}

/* Streaming levels in state (reap_world_levels{world,state}, every world), without the
 * persistent levels (counted as loaded); NAN when the server exports none. */
static double churn_levels(const churn_scrape *s, const char *state, bool persistent_counted)
{
    char suffix[48];
    double sum = NAN;
    uint32_t worlds = 0;

    snprintf(suffix, sizeof suffix, "state=\"%s\"}", state);
    for (uint32_t i = 0; i < s->n; i++) {
        const char *k = s->metrics[i].key;
        size_t kl = strlen(k), sl = strlen(suffix);

        if (strncmp(k, "reap_world_levels{", 18) != 0 || kl < sl ||
            strcmp(k + kl - sl, suffix) != 0)
            continue;
        sum = (isnan(sum) ? 0 : sum) + s->metrics[i].value;
        worlds++;
    }
    return persistent_counted && !isnan(sum) ? sum - worlds : sum;
}

/* The longest frame between two scrapes: exact when the server's running maximum
 * (reap_tick_max_seconds) rose in between, else the upper bound of the highest tick bucket
 * that gained a frame (no more than the running maximum). -1 when unknown. */
static double churn_tick_max(const churn_scrape *a, const churn_scrape *b)
{
    double bound = churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 100);
    double before = churn_scrape_sum(a, "reap_tick_max_seconds");
    double after = churn_scrape_sum(b, "reap_tick_max_seconds");

    if (!isnan(after) && !isnan(before) && after > before)
        return after;
    if (!isnan(after) && !isnan(bound) && after < bound)
        return after;
    return churn_nan_to(bound, -1);
}

/* Interpolated percentiles can overshoot the exact maximum inside its bucket. */
static void churn_clamp_to_max(double *p50, double *p99, double max)
{
    if (max < 0)
        return;
    if (*p50 > max)
        *p50 = max;
    if (*p99 > max)
        *p99 = max;
}

/* The travels the server finished since the last page: their figures go to the matches they
 * began, oldest first (a match the bots saw begin; else one of its own, named by its frame
 * when no bot was there to see it: frame 2^63 + the travel's number). When two travels fell
 * between pages, both get the last one's figures. */
static void sampler_travels(churn_sampler *sm, churn_timeline *tl, const churn_scrape *p)
{
    double travels = churn_scrape_sum(p, "reap_travels_total");

    if (isnan(travels))
        return;
    for (double k = sm->travels + 1; sm->travels >= 0 && k <= travels; k++) {
        churn_match *m = NULL;

        for (uint32_t i = 0; i < tl->n_matches && m == NULL; i++)
            if (tl->matches[i].frame != 0 && !tl->matches[i].server_seen)
                m = &tl->matches[i];
        if (m == NULL)
            m = churn_timeline_match(tl, (1ull << 63) + (uint64_t)k, NULL, 0, p->t);
        if (m == NULL)
            break;
        m->server_seen = true;
        m->server_seconds = churn_nan_to(churn_scrape_sum(p, "reap_travel_last_seconds"), -1);
        m->longest_frame = churn_nan_to(
            churn_scrape_sum(p, "reap_travel_last_longest_frame_seconds"), -1);
        m->frames_over_budget = churn_nan_to(
            churn_scrape_sum(p, "reap_travel_last_frames_over_budget"), -1);
        m->objects = churn_nan_to(churn_scrape_sum(p, "reap_gc_objects"), -1);
        m->rss = churn_nan_to(churn_scrape_sum(p, "process_resident_memory_bytes"), -1);
        m->leaked_worlds = churn_nan_to(churn_scrape_sum(p, "reap_world_leaked_worlds"), -1);
    }
    sm->travels = travels;
}

/* A scrape arrived: fold it into the run's figures and remember it for the row. */
static void sampler_on_scrape(churn_sampler *sm, churn_timeline *tl, churn_scrape *fresh)
{
    churn_server *s = &sm->server;
    double objects = churn_scrape_sum(fresh, "reap_gc_objects");
    double rss = churn_scrape_sum(fresh, "process_resident_memory_bytes");
    const char *class_keys[128];
    double class_values[128];
    uint32_t n_classes = 0;

    /* A world profile's classes (reap_world_objects_by_class): the report's chart by class. */
    for (uint32_t i = 0; i < fresh->n && n_classes < 128; i++) {
        if (strncmp(fresh->metrics[i].key, "reap_world_objects_by_class{", 28) != 0)
            continue;
        class_keys[n_classes] = fresh->metrics[i].key;
        class_values[n_classes++] = fresh->metrics[i].value;
    }
    if (n_classes > 0)
        churn_timeline_add_classes(tl, fresh->t, class_keys, class_values, n_classes);
    sampler_travels(sm, tl, fresh);
    s->scrapes++;
    sm->players_sum += churn_nan_to(churn_scrape_sum(fresh, "reap_players_connected"), 0);
    if (!isnan(objects)) {
        if (s->scrapes == 1)
            s->objects_first = objects;
        s->objects_last = objects;
        if (objects > s->objects_peak)
            s->objects_peak = objects;
    }
    if (!isnan(rss) && rss > s->rss_peak)
        s->rss_peak = rss;
    {
        double loaded = churn_levels(fresh, "loaded", true);

        if (!isnan(loaded) && loaded > s->levels_loaded_peak)
            s->levels_loaded_peak = loaded;
    }
    if (!sm->have_first) {
        sm->first = *fresh;
        sm->have_first = true;
        memset(fresh, 0, sizeof *fresh);
        return;
    }
    churn_scrape_free(&sm->last);
    sm->last = *fresh;
    memset(fresh, 0, sizeof *fresh);
}

void churn_sampler_finish(churn_sampler *sm)
{
    churn_server *s = &sm->server;
    const churn_scrape *a = &sm->first, *b = &sm->last;
    double frames;

    if (!sm->have_first || b->n == 0)
        return;
    s->have = true;
    s->seconds = b->t - a->t;
    frames = churn_delta(a, b, "reap_frames_total");
    s->frames = frames >= 0 ? frames : churn_delta(a, b, "reap_frame");
    s->tick_p50 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 50), -1);
    s->tick_p99 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 99), -1);
    s->tick_max = churn_tick_max(a, b);
    churn_clamp_to_max(&s->tick_p50, &s->tick_p99, s->tick_max);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++) {
        char label[32];
        snprintf(label, sizeof label, "phase=\"%s\"", churn_phase_names[i]);
        s->phase_p99[i] = churn_nan_to(
            churn_scrape_quantile(a, b, "reap_frame_phase_seconds", label, 99), -1);
    }
    s->collections = churn_delta(a, b, "reap_gc_collections_total");
    s->gc_work_p99 = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 99), -1);
    s->gc_work_max = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 100), -1);
    s->gc_work_sum = churn_delta(a, b, "reap_gc_frame_work_seconds_sum");
    s->bytes_sent = churn_delta(a, b, "reap_net_bytes_sent_total");
    s->cpu_seconds = churn_delta(a, b, "process_cpu_seconds_total");
    s->players_mean = s->scrapes ? sm->players_sum / s->scrapes : 0;
    s->level_load_wait_p50 = churn_nan_to(
        churn_scrape_get(b, "reap_world_level_load_wait_recent_seconds{quantile=\"0.5\"}"), -1);
    s->level_load_wait_p99 = churn_nan_to(
        churn_scrape_get(b, "reap_world_level_load_wait_recent_seconds{quantile=\"0.99\"}"), -1);
    s->levels_pending_purge_max =
        churn_nan_to(churn_scrape_get(b, "reap_world_levels_pending_purge_max"), -1);
    s->level_streams_in =
        churn_delta_key(a, b, "reap_world_level_streams_total{direction=\"in\"}");
    s->level_streams_out =
        churn_delta_key(a, b, "reap_world_level_streams_total{direction=\"out\"}");
    s->levels_survived = churn_delta(a, b, "reap_world_levels_survived_total");
    {
        double st = churn_delta_key(a, b, "reap_gc_collections_by_reason_total{reason=\"streaming\"}");
        double pp = churn_delta_key(a, b,
                                    "reap_gc_collections_by_reason_total{reason=\"pending_purge\"}");

        s->streaming_collections = st >= 0 && pp >= 0 ? st + pp : -1;
    }
}

void churn_sampler_row(churn_sampler *sm, churn_row *row)
{
    const churn_scrape *a = sm->have_row ? &sm->row : &sm->first;
    const churn_scrape *b = &sm->last;

    if (!sm->have_first || b->n == 0 || b->t <= a->t)
        return;
    row->have_admin = true;
    row->tick_p50 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 50), -1);
    row->tick_p99 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 99), -1);
    row->tick_max = churn_tick_max(a, b);
    churn_clamp_to_max(&row->tick_p50, &row->tick_p99, row->tick_max);
    row->gc_collections = churn_delta(a, b, "reap_gc_collections_total");
    row->gc_work_max = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 100), -1);
    row->admin_objects = churn_nan_to(churn_scrape_sum(b, "reap_gc_objects"), -1);
    row->rss_bytes = churn_nan_to(churn_scrape_sum(b, "process_resident_memory_bytes"), -1);
    row->frames = churn_delta(a, b, "reap_frame");
    row->levels_loaded = churn_nan_to(churn_levels(b, "loaded", true), -1);
    row->levels_pending_purge = churn_nan_to(churn_levels(b, "pending_purge", false), -1);
    /* The next row starts from this scrape: keep a copy of its histogram lines. */
    churn_scrape_free(&sm->row);
    sm->have_row = churn_scrape_copy(&sm->row, b);
}

void churn_sampler_poll(churn_sampler *s, churn_timeline *tl, double now)
{
    if (s->admin != NULL && churn_admin_poll(s->admin, now, &s->fresh))
        sampler_on_scrape(s, tl, &s->fresh);
}
