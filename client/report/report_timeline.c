/*
 * report_timeline.c - the timeline's renderings: churn.json rows for tools, timeline.csv (one
 * row a second), and a hand-written SVG chart for people (server objects and connected bots
 * over time, with the server's collections as vertical lines); and the text escapes every
 * writer uses.
 */
#include "report.h"

#include <math.h>
#include <string.h>

#include "client_files.h"

/* ---- JSON -------------------------------------------------------------------------------- */

void churn_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_row(FILE *f, const churn_row *r, uint64_t prev_collections, bool have_prev)
{
    fprintf(f, "{\"t\": %.3f, \"connected\": %u, \"joins\": %u, \"leaves\": %u, "
            "\"leaves_abrupt\": %u, \"spawned\": %u, \"errors\": %u, \"refused\": %u, "
            "\"server_lost\": %s, ", r->t, r->connected, r->joins, r->leaves, r->leaves_abrupt,
            r->spawned, r->errors, r->refused, r->server_lost ? "true" : "false");
    if (r->gen_cpu >= 0)
        fprintf(f, "\"generator_cpu\": %.3f, ", r->gen_cpu);
    else
        fputs("\"generator_cpu\": null, ", f);
    if (r->loop_lag >= 0)
        fprintf(f, "\"loop_lag_ms\": %.3f, ", r->loop_lag * 1e3);
    else
        fputs("\"loop_lag_ms\": null, ", f);
    if (!r->have_server) {
        fputs("\"server_objects\": null, \"server_players\": null, \"collections\": null, "
              "\"collections_delta\": null, \"objects_destroyed\": null, \"gc_interval\": null, "
              "\"time_since_last_purge\": null, \"server_frame\": null}", f);
        return;
    }
    fprintf(f, "\"server_objects\": %u, \"server_players\": %u, \"collections\": %llu, "
            "\"collections_delta\": %llu, \"objects_destroyed\": %llu, \"gc_interval\": %.3f, "
            "\"time_since_last_purge\": %.3f, \"server_frame\": %llu}", r->server_objects,
            r->server_players, (unsigned long long)r->collections,
            (unsigned long long)(have_prev ? r->collections - prev_collections : 0),
            (unsigned long long)r->objects_destroyed, r->gc_interval, r->time_since_last_purge,
            (unsigned long long)r->server_frame);
}
bool churn_timeline_write_json(const churn_timeline *tl, FILE *f)
{
    uint64_t joins = 0, leaves = 0, abrupt = 0, spawned = 0, errors = 0;
    uint32_t peak_connected = 0, o_first, o_last, o_peak, o_collections;
    const churn_row *prev = NULL;

    for (uint32_t i = 0; i < tl->n_rows; i++) {
        const churn_row *r = &tl->rows[i];
        joins += r->joins;
        leaves += r->leaves;
        abrupt += r->leaves_abrupt;
        spawned += r->spawned;
        errors += r->errors;
        if (r->connected > peak_connected)
            peak_connected = r->connected;
    }

    fputs("{\n  \"tool\": \"reap-client churn\",\n  \"server\": ", f);
    churn_json_string(f, tl->server);
    fputs(",\n  \"world\": ", f);
    churn_json_string(f, tl->world);
    fprintf(f, ",\n  \"bots\": %u,\n  \"duration_seconds\": %.3f,\n  \"spawn\": %u,\n"
            "  \"hold_seconds\": %.3f,\n  \"disconnect\": ", tl->bots, tl->duration, tl->spawn,
            tl->hold);
    churn_json_string(f, tl->disconnect != NULL ? tl->disconnect : "");
    fprintf(f, ",\n  \"seed\": %llu,\n", (unsigned long long)tl->seed);
    fprintf(f, "  \"totals\": {\"joins\": %llu, \"leaves\": %llu, \"leaves_abrupt\": %llu, "
            "\"spawned\": %llu, \"errors\": %llu, \"peak_connected\": %u, ",
            (unsigned long long)joins, (unsigned long long)leaves, (unsigned long long)abrupt,
            (unsigned long long)spawned, (unsigned long long)errors, peak_connected);
    if (churn_timeline_objects(tl, &o_first, &o_last, &o_peak, &o_collections))
        fprintf(f, "\"server_objects_first\": %u, \"server_objects_last\": %u, "
                "\"server_objects_peak\": %u, \"collections\": %u},\n", o_first, o_last,
                o_peak, o_collections);
    else
        fputs("\"server_objects_first\": null, \"server_objects_last\": null, "
              "\"server_objects_peak\": null, \"collections\": null},\n", f);
    fputs("  \"gc_times\": [", f);
    for (uint32_t i = 0; i < tl->n_gc; i++)
        fprintf(f, "%s%.3f", i ? ", " : "", tl->gc_times[i]);
    fputs("],\n  \"rows\": [\n", f);
    for (uint32_t i = 0; i < tl->n_rows; i++) {
        fputs("    ", f);
        json_row(f, &tl->rows[i], prev ? prev->collections : 0, prev != NULL);
        fputs(i + 1 < tl->n_rows ? ",\n" : "\n", f);
        if (tl->rows[i].have_server)
            prev = &tl->rows[i];
    }
    fputs("  ]\n}\n", f);
    fflush(f);
    return !ferror(f);
}

/* ---- SVG --------------------------------------------------------------------------------- */

enum {
    SVG_W = 960,
    SVG_H = 500,
    SVG_LEFT = 90,   /* plot area */
    SVG_RIGHT = 870,
    SVG_TOP = 90,
    SVG_BOTTOM = 420,
};

void churn_svg_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n')
                fputc(*s, f);
        }
    }
}

/* A "nice" step (1, 2 or 5 times a power of ten) that cuts [0, max] into about `ticks`. */
double churn_nice_step(double max, int ticks)
{
    double raw = max / ticks, mag = 1;

    if (!(raw > 0))
        return 1;
    while (mag * 10 <= raw)
        mag *= 10;
    while (mag > raw)
        mag /= 10;
    raw *= 0.99; /* a run that ended a few milliseconds late keeps its round axis */
    if (raw <= mag)
        return mag;
    if (raw <= 2 * mag)
        return 2 * mag;
    if (raw <= 5 * mag)
        return 5 * mag;
    return 10 * mag;
}

/* The axis top: the first multiple of step at or above max (at least one step), give or take
 * one percent. */
static double svg_axis_top(double max, double step)
{
    double top = step;

    while (top < max * 0.99)
        top += step;
    return top;
}

typedef struct svg_scale {
    double t_max, left_max, right_max;
} svg_scale;

static double svg_x(const svg_scale *s, double t)
{
    return SVG_LEFT + (SVG_RIGHT - SVG_LEFT) * (t / s->t_max);
}

static double svg_y(double v, double max)
{
    return SVG_BOTTOM - (SVG_BOTTOM - SVG_TOP) * (v / max);
}

static void svg_axes(FILE *f, const svg_scale *s, double t_step, double l_step, double r_step)
{
    /* horizontal grid and left labels (objects) */
    for (double v = 0; v <= s->left_max + l_step / 2; v += l_step) {
        double y = svg_y(v, s->left_max);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n",
                SVG_LEFT, y, SVG_RIGHT, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#0072B2\">%g</text>\n",
                SVG_LEFT - 8, y + 4, v);
    }
    /* right labels (bots) */
    for (double v = 0; v <= s->right_max + r_step / 2; v += r_step) {
        double y = svg_y(v, s->right_max);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\"/>\n",
                SVG_RIGHT, y, SVG_RIGHT + 5, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"#B36B00\">%g</text>\n", SVG_RIGHT + 8,
                y + 4, v);
    }
    /* time ticks */
    for (double t = 0; t <= s->t_max + t_step / 2; t += t_step) {
        double x = svg_x(s, t);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#555\"/>\n", x,
                SVG_BOTTOM, x, SVG_BOTTOM + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x,
                SVG_BOTTOM + 20, t);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#555\"/>\n", SVG_LEFT, SVG_TOP, SVG_RIGHT - SVG_LEFT, SVG_BOTTOM - SVG_TOP);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since start (s)</text>\n",
            (SVG_LEFT + SVG_RIGHT) / 2, SVG_BOTTOM + 45);
    fprintf(f, "<text transform=\"translate(28 %d) rotate(-90)\" text-anchor=\"middle\" "
            "fill=\"#0072B2\">server objects</text>\n", (SVG_TOP + SVG_BOTTOM) / 2);
    fprintf(f, "<text transform=\"translate(%d %d) rotate(90)\" text-anchor=\"middle\" "
            "fill=\"#B36B00\">connected bots</text>\n", SVG_W - 28, (SVG_TOP + SVG_BOTTOM) / 2);
}

/* One row above the plot, so that it never hides a line. */
static void svg_legend(FILE *f, uint32_t collections)
{
    int x = SVG_LEFT, y = SVG_TOP - 16;

    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#0072B2\" "
            "stroke-width=\"2.5\"/><text x=\"%d\" y=\"%d\">server objects</text>\n",
            x, y, x + 30, y, x + 38, y + 4);
    x += 170;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#E69F00\" "
            "stroke-width=\"2.5\"/><text x=\"%d\" y=\"%d\">connected bots</text>\n",
            x, y, x + 30, y, x + 38, y + 4);
    x += 170;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#CC79A7\" "
            "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%d\">GC collection (%u)</text>\n",
            x, y, x + 30, y, x + 38, y + 4, collections);
}

bool churn_timeline_write_svg(const churn_timeline *tl, FILE *f)
{
    svg_scale s = { tl->duration, 0, tl->bots };
    double t_step, l_step, r_step;
    uint32_t plotted = 0;

    for (uint32_t i = 0; i < tl->n_rows; i++) {
        const churn_row *r = &tl->rows[i];
        if (r->t > s.t_max)
            s.t_max = r->t;
        if (r->have_server && r->server_objects > s.left_max)
            s.left_max = r->server_objects;
        if (r->connected > s.right_max)
            s.right_max = r->connected;
    }
    for (uint32_t i = 0; i < tl->n_gc; i++)
        if (tl->gc_times[i] > s.t_max)
            s.t_max = tl->gc_times[i];
    for (uint32_t i = 0; i < tl->n_samples; i++) {
        if (tl->samples[i].t > s.t_max)
            s.t_max = tl->samples[i].t;
        if (tl->samples[i].objects > s.left_max)
            s.left_max = tl->samples[i].objects;
    }
    if (!(s.t_max > 0))
        s.t_max = 1;
    t_step = churn_nice_step(s.t_max, 10);
    s.t_max = svg_axis_top(s.t_max, t_step);
    l_step = churn_nice_step(s.left_max > 0 ? s.left_max : 1, 5);
    s.left_max = svg_axis_top(s.left_max, l_step);
    r_step = churn_nice_step(s.right_max > 0 ? s.right_max : 1, 5);
    if (r_step < 1)
        r_step = 1;
    s.right_max = svg_axis_top(s.right_max, r_step);

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", SVG_W, SVG_H,
            SVG_W, SVG_H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);
    fputs("<text x=\"480\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" "
          "font-weight=\"bold\">reap churn: ", f);
    fprintf(f, "%u bots against ", tl->bots);
    churn_svg_text(f, tl->server);
    if (tl->world[0] != '\0') {
        fputs(" (", f);
        churn_svg_text(f, tl->world);
        fputc(')', f);
    }
    fprintf(f, " for %g s</text>\n", tl->duration);
    fprintf(f, "<text x=\"480\" y=\"46\" text-anchor=\"middle\" fill=\"#555\">each visit "
            "spawns %u props and holds ~%g s; disconnect %s; seed %llu</text>\n", tl->spawn,
            tl->hold, tl->disconnect != NULL ? tl->disconnect : "?",
            (unsigned long long)tl->seed);
    svg_axes(f, &s, t_step, l_step, r_step);

    for (uint32_t i = 0; i < tl->n_gc; i++) {
        double x = svg_x(&s, tl->gc_times[i]);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#CC79A7\" "
                "stroke-dasharray=\"4 3\" stroke-opacity=\"0.75\"><title>collection at %.2f s"
                "</title></line>\n", x, SVG_TOP, x, SVG_BOTTOM, tl->gc_times[i]);
    }

    fputs("<polyline fill=\"none\" stroke=\"#E69F00\" stroke-width=\"2\" "
          "stroke-linejoin=\"round\" points=\"", f);
    fprintf(f, "%.1f,%.1f", svg_x(&s, 0), svg_y(0, s.right_max));
    for (uint32_t i = 0; i < tl->n_rows; i++)
        fprintf(f, " %.1f,%.1f", svg_x(&s, tl->rows[i].t),
                svg_y(tl->rows[i].connected, s.right_max));
    fputs("\"/>\n", f);

    /* Objects: every stats reply when there are samples (the sawtooth of the collections
     * shows), else the rows, dotted. */
    fputs("<polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"2\" "
          "stroke-linejoin=\"round\" points=\"", f);
    for (uint32_t i = 0; i < tl->n_samples; i++)
        fprintf(f, "%s%.1f,%.1f", plotted++ ? " " : "", svg_x(&s, tl->samples[i].t),
                svg_y(tl->samples[i].objects, s.left_max));
    for (uint32_t i = 0; i < tl->n_rows && tl->n_samples == 0; i++) {
        const churn_row *r = &tl->rows[i];
        if (!r->have_server)
            continue;
        fprintf(f, "%s%.1f,%.1f", plotted++ ? " " : "", svg_x(&s, r->t),
                svg_y(r->server_objects, s.left_max));
    }
    fputs("\"/>\n", f);
    for (uint32_t i = 0; i < tl->n_rows && tl->n_samples == 0; i++) {
        const churn_row *r = &tl->rows[i];
        if (!r->have_server)
            continue;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#0072B2\"><title>%.1f s: "
                "%u objects, %u bots connected, %llu collections</title></circle>\n",
                svg_x(&s, r->t), svg_y(r->server_objects, s.left_max), r->t, r->server_objects,
                r->connected, (unsigned long long)r->collections);
    }
    if (plotted == 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#888\">no stats "
                "reply from the server</text>\n", (SVG_LEFT + SVG_RIGHT) / 2,
                (SVG_TOP + SVG_BOTTOM) / 2);
    svg_legend(f, tl->n_gc);
    fputs("</svg>\n", f);
    fflush(f);
    return !ferror(f);
}
static bool churn_json_writer(const void *tl, FILE *f)
{
    return churn_timeline_write_json(tl, f);
}

static bool churn_svg_writer(const void *tl, FILE *f)
{
    return churn_timeline_write_svg(tl, f);
}

static void csv_num(FILE *f, bool have, double v, double scale)
{
    if (have && v >= 0 && !isnan(v))
        fprintf(f, ",%.6g", v * scale);
    else
        fputs(",", f);
}

void churn_timeline_csv_header(FILE *f)
{
    fputs("t,stage,target,connected,joins,leaves,leaves_abrupt,spawned,errors,refused,"
          "server_objects,server_players,collections,gc_interval_s,tick_p50_ms,tick_p99_ms,"
          "tick_max_ms,gc_collections,gc_work_max_ms,frames,rss_bytes,generator_cpu,"
          "loop_lag_ms,levels_loaded,levels_pending_purge,server_lost\n", f);
}

void churn_timeline_csv_row(FILE *f, const churn_row *r)
{
    fprintf(f, "%.3f,%u,%u,%u,%u,%u,%u,%u,%u,%u", r->t, r->stage, r->target, r->connected,
            r->joins, r->leaves, r->leaves_abrupt, r->spawned, r->errors, r->refused);
    csv_num(f, r->have_server, r->server_objects, 1);
    csv_num(f, r->have_server, r->server_players, 1);
    csv_num(f, r->have_server, (double)r->collections, 1);
    csv_num(f, r->have_server, r->gc_interval, 1);
    csv_num(f, r->have_admin, r->tick_p50, 1e3);
    csv_num(f, r->have_admin, r->tick_p99, 1e3);
    csv_num(f, r->have_admin, r->tick_max, 1e3);
    csv_num(f, r->have_admin, r->gc_collections, 1);
    csv_num(f, r->have_admin, r->gc_work_max, 1e3);
    csv_num(f, r->have_admin, r->frames, 1);
    csv_num(f, r->have_admin, r->rss_bytes, 1);
    csv_num(f, true, r->gen_cpu, 1);
    csv_num(f, true, r->loop_lag, 1e3);
    csv_num(f, r->have_admin, r->levels_loaded, 1);
    csv_num(f, r->have_admin, r->levels_pending_purge, 1);
    fprintf(f, ",%d\n", r->server_lost ? 1 : 0);
}

bool churn_timeline_write_csv(const churn_timeline *tl, FILE *f)
{
    churn_timeline_csv_header(f);
    for (uint32_t i = 0; i < tl->n_rows; i++)
        churn_timeline_csv_row(f, &tl->rows[i]);
    fflush(f);
    return !ferror(f);
}

static bool churn_csv_writer(const void *tl, FILE *f)
{
    return churn_timeline_write_csv(tl, f);
}

bool churn_timeline_save(const churn_timeline *tl, const char *dir, char *err, size_t err_size)
{
    return churn_mkdirs(dir, err, err_size) &&
           churn_write_file(dir, "timeline.csv", churn_csv_writer, tl, err, err_size) &&
           churn_write_file(dir, "churn.json", churn_json_writer, tl, err, err_size) &&
           churn_write_file(dir, "churn.svg", churn_svg_writer, tl, err, err_size);
}