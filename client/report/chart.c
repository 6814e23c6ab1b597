/*
 * chart.c - SVG line charts for the load tester's pages: axes with "nice" steps, a grid,
 * dashed markers for collections, one polyline per run of measured points, a legend.
 */
#include "chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

void chart_draw_styled(FILE *f, const chart *ch, uint32_t dashed)
{
    chart_draw_shaded(f, ch, dashed, NULL, 0);
}

void chart_draw_shaded(FILE *f, const chart *ch, uint32_t dashed, const double *bands,
                       uint32_t nb)
{
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0, xstep, ystep;
    uint32_t points = 0;

    for (int i = 0; i < ch->ns; i++)
        for (uint32_t k = 0; k < ch->s[i].n; k++) {
            if (isnan(ch->s[i].y[k]))
                continue;
            xmin = fmin(xmin, ch->s[i].x[k]);
            xmax = fmax(xmax, ch->s[i].x[k]);
            ymax = fmax(ymax, ch->s[i].y[k]);
            points++;
        }
    fprintf(f, "<figure><figcaption>");
    churn_svg_text(f, ch->title);
    fprintf(f, "</figcaption>\n<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", CHART_W, CHART_H, CHART_W,
            CHART_H);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", CHART_L,
            CHART_T, CHART_R - CHART_L, CHART_B - CHART_T);
    if (points == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"muted\">",
                (CHART_L + CHART_R) / 2, (CHART_T + CHART_B) / 2);
        churn_svg_text(f, ch->empty != NULL ? ch->empty : "no data");
        fputs("</text></svg></figure>\n", f);
        return;
    }
    if (ch->logx) {
        xmin = floor(xmin);
        xmax = ceil(xmax);
    } else {
        xmin = fmin(xmin, 0);
    }
    if (!(xmax > xmin))
        xmax = xmin + 1;
    if (!(ymax > 0))
        ymax = 1;
    ystep = churn_nice_step(ymax, 5);
    ymax = ceil(ymax / ystep) * ystep;
    xstep = ch->logx ? 1 : churn_nice_step(xmax - xmin, 5);
#define CX(v) (CHART_L + (CHART_R - CHART_L) * (((v) - xmin) / (xmax - xmin)))
#define CY(v) (CHART_B - (CHART_B - CHART_T) * ((v) / ymax))
    for (double v = 0; v <= ymax + ystep / 2; v += ystep)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/><text "
                "x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", CHART_L, CY(v), CHART_R,
                CY(v), CHART_L - 6, CY(v) + 4, v);
    for (double v = ceil(xmin / xstep) * xstep; v <= xmax + xstep / 2; v += xstep) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/><text "
                "x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", CX(v), CHART_T,
                CX(v), CHART_B, CX(v), CHART_B + 16, ch->logx ? pow(10, v) : v);
    }
    for (uint32_t i = 0; bands != NULL && i < nb; i++) {
        double from = fmax(bands[2 * i], xmin);
        double to = bands[2 * i + 1] < 0 ? xmax : fmin(bands[2 * i + 1], xmax);

        if (to > from)
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                    "class=\"nosrv\"/>\n", CX(from), CHART_T, CX(to) - CX(from),
                    CHART_B - CHART_T);
    }
    for (uint32_t i = 0; ch->matches != NULL && ch->nm > 1 && i < ch->nm; i++) {
        const churn_match *m = &ch->matches[i];
        double from = fmax(m->start, xmin);
        double to = m->end < 0 ? xmax : fmin(m->end, xmax);

        if (!(to > from))
            continue;
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"match m%u\">"
                "<title>match %u: ", CX(from), CHART_T, CX(to) - CX(from), CHART_B - CHART_T,
                i % 2, i + 1);
        churn_svg_text(f, m->map[0] ? m->map : "?");
        fputs("</title></rect>\n", f);
        /* The label only where it fits (about 6.5 px a character): a hundred matches' labels
         * would print over each other; the band's title still names it. */
        if (CX(to) - CX(from) < 6.5 * (snprintf(NULL, 0, "%u ", i + 1) +
                                       strlen(m->map[0] ? m->map : "?")) + 6)
            continue;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"matchtext\">%u ", CX(from) + 3,
                CHART_T + 12, i + 1);
        churn_svg_text(f, m->map[0] ? m->map : "?");
        fputs("</text>\n", f);
    }
    for (uint32_t i = 0; ch->vlines != NULL && i < ch->nv; i++)
        if (ch->vlines[i] >= xmin && ch->vlines[i] <= xmax)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"gc\"/>\n",
                    CX(ch->vlines[i]), CHART_T, CX(ch->vlines[i]), CHART_B);
    for (int i = 0; i < ch->ns; i++) {
        const chart_series *s = &ch->s[i];
        /* one polyline per run of measured points; a lone point is a dot */
        for (uint32_t k = 0; k < s->n;) {
            uint32_t end = k;

            while (end < s->n && !isnan(s->y[end]))
                end++;
            if (end - k == 1)
                fprintf(f, "<circle class=\"series\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                        "fill=\"%s\"/>\n", CX(s->x[k]), CY(s->y[k]), s->color);
            else if (end > k) {
                fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\"%s points=\"", s->color,
                        dashed >> i & 1 ? " stroke-dasharray=\"6 4\"" : "");
                for (uint32_t q = k; q < end; q++)
                    fprintf(f, "%s%.1f,%.1f", q > k ? " " : "", CX(s->x[q]), CY(s->y[q]));
                fputs("\"/>\n", f);
            }
            k = end + 1;
        }
    }
#undef CX
#undef CY
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (CHART_L + CHART_R) / 2,
            CHART_H - 12);
    churn_svg_text(f, ch->xlabel);
    fprintf(f, "</text><text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
            (CHART_T + CHART_B) / 2);
    churn_svg_text(f, ch->ylabel);
    fputs("</text>\n", f);
    for (int i = 0, x = CHART_L; i < ch->ns; i++) {
        if (dashed >> i & 1)
            fprintf(f, "<line x1=\"%d\" y1=\"16\" x2=\"%d\" y2=\"16\" stroke=\"%s\" "
                    "stroke-width=\"3\" stroke-dasharray=\"4 2\"/>", x, x + 14, ch->s[i].color);
        else
            fprintf(f, "<rect x=\"%d\" y=\"14\" width=\"14\" height=\"4\" fill=\"%s\"/>", x,
                    ch->s[i].color);
        fprintf(f, "<text x=\"%d\" y=\"20\">", x + 18);
        churn_svg_text(f, ch->s[i].name);
        fputs("</text>\n", f);
        x += 30 + 7 * (int)strlen(ch->s[i].name);
    }
    if (ch->vlines != NULL && ch->nv > 0)
        fprintf(f, "<text x=\"%d\" y=\"20\" text-anchor=\"end\" class=\"gctext\">| collection "
                "(%u)</text>\n", CHART_R, ch->nv);
    if (bands != NULL && nb > 0)
        fprintf(f, "<text x=\"%d\" y=\"34\" text-anchor=\"end\" class=\"nosrvtext\">shaded: "
                "the server not answering</text>\n", CHART_R);
    fputs("</svg></figure>\n", f);
}

void chart_add(chart_series *s, uint32_t cap, double x, double y)
{
    if (s->n >= cap)
        return;
    if (y < 0 || isnan(y)) {
        if (s->n == 0 || isnan(s->y[s->n - 1]))
            return;
        y = NAN;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
}

bool chart_series_alloc(chart *ch, uint32_t cap)
{
    for (int i = 0; i < ch->ns; i++) {
        ch->s[i].x = malloc((size_t)(cap ? cap : 1) * sizeof(double));
        ch->s[i].y = malloc((size_t)(cap ? cap : 1) * sizeof(double));
        if (ch->s[i].x == NULL || ch->s[i].y == NULL)
            return false;
    }
    return true;
}

void chart_free(chart *ch)
{
    for (int i = 0; i < ch->ns; i++) {
        free(ch->s[i].x);
        free(ch->s[i].y);
    }
}


void chart_draw(FILE *f, const chart *ch)
{
    chart_draw_styled(f, ch, 0);
}
