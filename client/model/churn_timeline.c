/*
 * churn_timeline.c - the churn run's timeline: rows, collections, object samples and the
 * objects by class, appended as the run goes (report/report_timeline.c draws it).
 */
#include "churn_timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_vec.h"

void churn_timeline_init(churn_timeline *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->disconnect = "graceful";
}

void churn_timeline_free(churn_timeline *tl)
{
    free(tl->rows);
    free(tl->gc_times);
    free(tl->samples);
    free(tl->class_samples);
    free(tl->matches);
    tl->matches = NULL;
    tl->n_matches = tl->cap_matches = 0;
    tl->class_samples = NULL;
    tl->n_classes = tl->n_class_samples = tl->cap_class_samples = 0;
    tl->rows = NULL;
    tl->gc_times = NULL;
    tl->samples = NULL;
    tl->n_rows = tl->cap_rows = tl->n_gc = tl->cap_gc = tl->n_samples = tl->cap_samples = 0;
}

bool churn_timeline_add_row(churn_timeline *tl, const churn_row *row)
{
    if (!CLIENT_VEC_RESERVE(tl->rows, tl->cap_rows, (uint64_t)tl->n_rows + 1, 64))
        return false;
    tl->rows[tl->n_rows++] = *row;
    return true;
}

/* The owned arrays of from, with their capacities, into to (to's other fields untouched). */
static void timeline_take_arrays(churn_timeline *to, const churn_timeline *from)
{
    to->rows = from->rows, to->cap_rows = from->cap_rows;
    to->gc_times = from->gc_times, to->cap_gc = from->cap_gc;
    to->samples = from->samples, to->cap_samples = from->cap_samples;
    to->class_samples = from->class_samples, to->cap_class_samples = from->cap_class_samples;
    to->matches = from->matches, to->cap_matches = from->cap_matches;
}

bool churn_timeline_copy(churn_timeline *dst, const churn_timeline *src)
{
    churn_timeline own = *dst;
    bool ok = CLIENT_VEC_RESERVE(own.rows, own.cap_rows, src->n_rows, 64) &&
              CLIENT_VEC_RESERVE(own.gc_times, own.cap_gc, src->n_gc, 64) &&
              CLIENT_VEC_RESERVE(own.samples, own.cap_samples, src->n_samples, 256) &&
              CLIENT_VEC_RESERVE(own.class_samples, own.cap_class_samples,
                                 src->n_class_samples, 64) &&
              CLIENT_VEC_RESERVE(own.matches, own.cap_matches, src->n_matches, 4);

    if (!ok) {
        timeline_take_arrays(dst, &own); /* what grew is still dst's, freed with it */
        return false;
    }
    *dst = *src; /* the scalars and names; the arrays are made dst's own again */
    timeline_take_arrays(dst, &own);
    if (src->n_rows > 0)
        memcpy(dst->rows, src->rows, src->n_rows * sizeof *src->rows);
    if (src->n_gc > 0)
        memcpy(dst->gc_times, src->gc_times, src->n_gc * sizeof *src->gc_times);
    if (src->n_samples > 0)
        memcpy(dst->samples, src->samples, src->n_samples * sizeof *src->samples);
    if (src->n_class_samples > 0)
        memcpy(dst->class_samples, src->class_samples,
               src->n_class_samples * sizeof *src->class_samples);
    if (src->n_matches > 0)
        memcpy(dst->matches, src->matches, src->n_matches * sizeof *src->matches);
    return true;
}

/* ---- matches ------------------------------------------------------------------------------ */

void churn_match_init(churn_match *m, uint64_t frame, const char *map, uint32_t mode,
                      double start)
{
    memset(m, 0, sizeof *m);
    m->frame = frame;
    snprintf(m->map, sizeof m->map, "%s", map != NULL ? map : "");
    m->mode = mode;
    m->start = start;
    m->end = -1;
    hist_init(&m->travel);
    m->server_seconds = m->longest_frame = m->frames_over_budget = -1;
    m->objects = m->rss = m->leaked_worlds = -1;
}

churn_match *churn_timeline_match(churn_timeline *tl, uint64_t frame, const char *map,
                                  uint32_t mode, double t)
{
    churn_match *m;

    for (uint32_t i = 0; i < tl->n_matches; i++)
        if (tl->matches[i].frame == frame) {
            m = &tl->matches[i];
            if (m->map[0] == '\0' && map != NULL)
                snprintf(m->map, sizeof m->map, "%s", map);
            return m;
        }
    if (!CLIENT_VEC_RESERVE(tl->matches, tl->cap_matches, (uint64_t)tl->n_matches + 1, 4))
        return NULL;
    /* In order of start: a shard's match may begin before the last one merged. */
    uint32_t at = tl->n_matches;
    while (at > 0 && tl->matches[at - 1].start > t)
        at--;
    memmove(&tl->matches[at + 1], &tl->matches[at], (tl->n_matches - at) * sizeof *tl->matches);
    m = &tl->matches[at];
    churn_match_init(m, frame, map, mode, t);
    tl->n_matches++;
    for (uint32_t i = 0; i + 1 < tl->n_matches; i++)
        tl->matches[i].end = tl->matches[i + 1].start;
    tl->matches[tl->n_matches - 1].end = -1;
    return m;
}

churn_match *churn_timeline_current_match(churn_timeline *tl)
{
    return tl->n_matches > 0 ? &tl->matches[tl->n_matches - 1] : NULL;
}

bool churn_timeline_merge_matches(churn_timeline *dst, const churn_timeline *src)
{
    for (uint32_t i = 0; i < src->n_matches; i++) {
        const churn_match *s = &src->matches[i];
        bool fresh = true;
        churn_match *d;

        for (uint32_t k = 0; k < dst->n_matches; k++)
            fresh &= dst->matches[k].frame != s->frame;
        if ((d = churn_timeline_match(dst, s->frame, s->map, s->mode, s->start)) == NULL)
            return false;
        if (fresh) {
            double end = d->end;
            *d = *s;
            d->end = end;
            continue;
        }
        if (s->start < d->start)
            d->start = s->start;
        d->departed += s->departed;
        d->arrived += s->arrived;
        hist_merge(&d->travel, &s->travel);
        if (!d->server_seen && s->server_seen) {
            d->server_seen = true;
            d->server_seconds = s->server_seconds;
            d->longest_frame = s->longest_frame;
            d->frames_over_budget = s->frames_over_budget;
            d->objects = s->objects;
            d->rss = s->rss;
            d->leaked_worlds = s->leaked_worlds;
        }
    }
    for (uint32_t i = 0; i + 1 < dst->n_matches; i++)
        dst->matches[i].end = dst->matches[i + 1].start;
    if (src->match_seconds > 0)
        dst->match_seconds = src->match_seconds;
    return true;
}

/* Whether row r's second (its middle) is in match i. */
static bool match_has_row(const churn_timeline *tl, uint32_t i, const churn_row *r)
{
    const churn_match *m = &tl->matches[i];
    double mid = r->t - 0.5;

    return mid >= m->start && (m->end < 0 || mid < m->end);
}

uint32_t churn_match_players(const churn_timeline *tl, uint32_t i)
{
    uint32_t most = 0;

    for (uint32_t k = 0; k < tl->n_rows; k++)
        if (match_has_row(tl, i, &tl->rows[k]) && tl->rows[k].connected > most)
            most = tl->rows[k].connected;
    return most;
}

double churn_match_collections(const churn_timeline *tl, uint32_t i)
{
    double sum = -1;

    for (uint32_t k = 0; k < tl->n_rows; k++) {
        const churn_row *r = &tl->rows[k];

        if (match_has_row(tl, i, r) && r->have_admin && r->gc_collections >= 0)
            sum = (sum < 0 ? 0 : sum) + r->gc_collections;
    }
    return sum;
}

double churn_timeline_rss_growth_per_match(const churn_timeline *tl)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;

    for (uint32_t i = 0; i < tl->n_matches; i++) {
        const churn_match *m = &tl->matches[i];
        double x = (double)i;

        if (m->frame == 0 || !m->server_seen || m->rss < 0)
            continue;
        n++;
        sx += x;
        sy += m->rss;
        sxx += x * x;
        sxy += x * m->rss;
    }
    if (n < 2 || n * sxx - sx * sx <= 0)
        return NAN;
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

double churn_timeline_travel_frame_max(const churn_timeline *tl)
{
    double worst = NAN;

    for (uint32_t i = 0; i < tl->n_matches; i++) {
        const churn_match *m = &tl->matches[i];

        if (m->frame != 0 && m->server_seen && m->longest_frame >= 0 &&
            (isnan(worst) || m->longest_frame > worst))
            worst = m->longest_frame;
    }
    return worst;
}

double churn_timeline_leaked_worlds(const churn_timeline *tl)
{
    for (uint32_t i = tl->n_matches; i-- > 0;) {
        const churn_match *m = &tl->matches[i];

        if (m->frame != 0 && m->server_seen && m->leaked_worlds >= 0)
            return m->leaked_worlds;
    }
    return NAN;
}

bool churn_timeline_add_gc(churn_timeline *tl, double t)
{
    if (!CLIENT_VEC_RESERVE(tl->gc_times, tl->cap_gc, (uint64_t)tl->n_gc + 1, 64))
        return false;
    tl->gc_times[tl->n_gc++] = t;
    return true;
}

bool churn_timeline_add_sample(churn_timeline *tl, double t, uint32_t objects)
{
    if (!CLIENT_VEC_RESERVE(tl->samples, tl->cap_samples, (uint64_t)tl->n_samples + 1, 256))
        return false;
    tl->samples[tl->n_samples].t = t;
    tl->samples[tl->n_samples].objects = objects;
    tl->n_samples++;
    return true;
}


bool churn_timeline_objects(const churn_timeline *tl, uint32_t *out_first, uint32_t *out_last,
                            uint32_t *out_peak, uint32_t *out_collections)
{
    uint32_t peak = 0;

    if (tl->n_samples == 0)
        return false;
    for (uint32_t i = 0; i < tl->n_samples; i++)
        if (tl->samples[i].objects > peak)
            peak = tl->samples[i].objects;
    *out_first = tl->samples[0].objects;
    *out_last = tl->samples[tl->n_samples - 1].objects;
    *out_peak = peak;
    *out_collections = tl->n_gc;
    return true;
}




bool churn_timeline_add_classes(churn_timeline *tl, double t, const char *const *keys,
                                const double *values, uint32_t n)
{
    static const char prefix[] = "reap_world_objects_by_class{class=\"";
    churn_class_sample cs;
    bool any = false;

    cs.t = t;
    for (uint32_t k = 0; k < CHURN_CLASSES_MAX; k++)
        cs.count[k] = -1;
    for (uint32_t i = 0; i < n; i++) {
        const char *name = keys[i], *end;
        size_t len;
        uint32_t k;

        if (strncmp(name, prefix, sizeof prefix - 1) != 0)
            continue;
        name += sizeof prefix - 1;
        end = strchr(name, '"');
        len = end != NULL ? (size_t)(end - name) : 0;
        if (len == 0 || len >= CHURN_CLASS_NAME_MAX)
            continue;
        for (k = 0; k < tl->n_classes; k++)
            if (strlen(tl->classes[k]) == len && memcmp(tl->classes[k], name, len) == 0)
                break;
        if (k == tl->n_classes) {
            if (k >= CHURN_CLASSES_MAX)
                continue;
            memcpy(tl->classes[k], name, len);
            tl->classes[k][len] = '\0';
            tl->n_classes++;
        }
        cs.count[k] = values[i];
        any = true;
    }
    if (!any)
        return true;
    if (!CLIENT_VEC_RESERVE(tl->class_samples, tl->cap_class_samples, tl->n_class_samples + 1,
                            64))
        return false;
    tl->class_samples[tl->n_class_samples++] = cs;
    return true;
}

bool churn_row_saturated(const churn_row *row)
{
    return row->gen_cpu >= CHURN_SATURATED_CPU || row->loop_lag > CHURN_SATURATED_LAG;
}
