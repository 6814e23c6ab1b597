/*
 * churn_timeline.c - the churn run's timeline: rows, collections, object samples and the
 * objects by class, appended as the run goes (report/report_timeline.c draws it).
 */
#include "churn_timeline.h"

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
}

bool churn_timeline_copy(churn_timeline *dst, const churn_timeline *src)
{
    churn_timeline own = *dst;
    bool ok = CLIENT_VEC_RESERVE(own.rows, own.cap_rows, src->n_rows, 64) &&
              CLIENT_VEC_RESERVE(own.gc_times, own.cap_gc, src->n_gc, 64) &&
              CLIENT_VEC_RESERVE(own.samples, own.cap_samples, src->n_samples, 256) &&
              CLIENT_VEC_RESERVE(own.class_samples, own.cap_class_samples,
                                 src->n_class_samples, 64);

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
    return true;
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
