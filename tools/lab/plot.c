/*
 * plot.c — see plot.h. One chart per file:
 *
 *   +--------------------------------------------------+
 *   |                     title                        |
 *   |  y  +-----------------------------+  legend     |
 *   |  a  |   o   o                     |  -- a        |
 *   |  x  |        o  ---------         |  o  b        |
 *   |  i  +-----------------------------+              |
 *   |                  x axis                          |
 *   +--------------------------------------------------+
 *
 * Ticks: decades on a log axis, five "nice" steps (1, 2, 5 x 10^k) on a
 * linear one. The file is written beside the target and renamed over it.
 */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define W 760.0
#define H 480.0
#define L 80.0 /* plot area: left, top, width, height */
#define T 40.0
#define PW 470.0
#define PH 370.0

static const char *const colors[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
    "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#aec7e8"};

void plot_init(plot *p, const char *title, const char *xlabel,
               const char *ylabel, bool logx, bool logy) {
    memset(p, 0, sizeof *p);
    p->title = title;
    p->xlabel = xlabel;
    p->ylabel = ylabel;
    p->logx = logx;
    p->logy = logy;
    p->xmin = p->xmax = p->ymin = p->ymax = NAN;
}

plot_series *plot_add(plot *p, const char *label, const double *x,
                      const double *y, size_t n, bool line, bool points) {
    if (p->nseries >= PLOT_MAX_SERIES)
        return NULL;
    plot_series *s = &p->s[p->nseries++];
    *s = (plot_series){label, x, y, n, line, points, false};
    return s;
}

static bool drawable(double v, bool log_axis) {
    return isfinite(v) && (!log_axis || v > 0);
}

static double axis_val(double v, bool log_axis) {
    return log_axis ? log10(v) : v;
}

/* Data range of one axis over every series, in axis units. */
static void data_range(const plot *p, bool is_x, double *lo, double *hi) {
    bool lg = is_x ? p->logx : p->logy;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t k = 0; k < p->nseries; k++)
        for (size_t i = 0; i < p->s[k].n; i++) {
            double x = p->s[k].x[i], y = p->s[k].y[i];
            if (!drawable(x, p->logx) || !drawable(y, p->logy))
                continue;
            double v = axis_val(is_x ? x : y, lg);
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    double fixed_lo = is_x ? p->xmin : p->ymin,
           fixed_hi = is_x ? p->xmax : p->ymax;
    if (!isnan(fixed_lo))
        *lo = axis_val(fixed_lo, lg);
    if (!isnan(fixed_hi))
        *hi = axis_val(fixed_hi, lg);
    if (!(*lo < *hi)) { /* empty or flat: a unit range around it */
        double c = isfinite(*lo) ? *lo : 0;
        *lo = c - 0.5;
        *hi = c + 0.5;
    }
    if (lg) { /* whole decades */
        *lo = floor(*lo);
        *hi = ceil(*hi);
    } else { /* a margin, unless the caller fixed the end */
        double pad = 0.04 * (*hi - *lo);
        *lo -= isnan(fixed_lo) ? pad : 0;
        *hi += isnan(fixed_hi) ? pad : 0;
    }
}

static double nice_step(double span) {
    double raw = span / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

static void text(FILE *f, double x, double y, const char *anchor,
                 const char *extra, const char *s) {
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='%s'%s>", x, y, anchor,
            extra);
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '\'')
            fputs("&apos;", f);
        else
            fputc(*s, f);
    }
    fputs("</text>\n", f);
}

typedef struct frame {
    double x0, x1, y0, y1; /* axis units */
    bool logx, logy;
} frame;

static double px(const frame *fr, double v) {
    return L + (axis_val(v, fr->logx) - fr->x0) / (fr->x1 - fr->x0) * PW;
}

static double py(const frame *fr, double v) {
    return T + PH - (axis_val(v, fr->logy) - fr->y0) / (fr->y1 - fr->y0) * PH;
}

static void ticks(FILE *f, const frame *fr, bool is_x) {
    double lo = is_x ? fr->x0 : fr->y0, hi = is_x ? fr->x1 : fr->y1;
    bool lg = is_x ? fr->logx : fr->logy;
    double step = lg ? fmax(1, ceil((hi - lo) / 8)) : nice_step(hi - lo);
    for (double v = ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step;
         v += step) {
        char lab[32];
        if (lg)
            snprintf(lab, sizeof lab, "1e%d", (int)lround(v));
        else
            snprintf(lab, sizeof lab, "%g", fabs(v) < 1e-12 ? 0.0 : v);
        double val = lg ? pow(10, v) : v;
        if (is_x) {
            double x = px(fr, val);
            fprintf(f,
                    "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                    "stroke='#ddd'/>\n",
                    x, T, x, T + PH);
            text(f, x, T + PH + 16, "middle", "", lab);
        } else {
            double y = py(fr, val);
            fprintf(f,
                    "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                    "stroke='#ddd'/>\n",
                    L, y, L + PW, y);
            text(f, L - 6, y + 4, "end", "", lab);
        }
    }
}

static void series(FILE *f, const frame *fr, const plot_series *s,
                   const char *color) {
    if (s->line) {
        fprintf(f,
                "<polyline fill='none' stroke='%s' stroke-width='1.6'%s "
                "points='",
                color, s->dashed ? " stroke-dasharray='6,4'" : "");
        for (size_t i = 0; i < s->n; i++)
            if (drawable(s->x[i], fr->logx) && drawable(s->y[i], fr->logy))
                fprintf(f, "%.1f,%.1f ", px(fr, s->x[i]), py(fr, s->y[i]));
        fputs("'/>\n", f);
    }
    for (size_t i = 0; s->points && i < s->n; i++)
        if (drawable(s->x[i], fr->logx) && drawable(s->y[i], fr->logy))
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                    px(fr, s->x[i]), py(fr, s->y[i]), color);
}

static void legend(FILE *f, const plot_series *s, const char *color,
                   size_t idx) {
    double ly = T + 14 + 18.0 * (double)idx;
    if (s->line)
        fprintf(f,
                "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                "stroke='%s' stroke-width='1.6'%s/>\n",
                L + PW + 14, ly - 4, L + PW + 36, ly - 4, color,
                s->dashed ? " stroke-dasharray='6,4'" : "");
    if (s->points)
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                L + PW + 25, ly - 4, color);
    text(f, L + PW + 42, ly, "start", " font-size='11'", s->label);
}

static void render(FILE *f, const plot *p) {
    frame fr = {.logx = p->logx, .logy = p->logy};
    data_range(p, true, &fr.x0, &fr.x1);
    data_range(p, false, &fr.y0, &fr.y1);
    fprintf(f,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
            "height='%.0f' font-family='sans-serif' font-size='12'>\n"
            "<rect width='100%%' height='100%%' fill='white'/>\n",
            W, H);
    ticks(f, &fr, true);
    ticks(f, &fr, false);
    fprintf(f,
            "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
            "fill='none' stroke='black'/>\n",
            L, T, PW, PH);
    text(f, L + PW / 2, 24, "middle", " font-size='14'", p->title);
    text(f, L + PW / 2, T + PH + 38, "middle", "", p->xlabel);
    char rot[64];
    snprintf(rot, sizeof rot, " transform='rotate(-90 18 %.0f)'", T + PH / 2);
    text(f, 18, T + PH / 2, "middle", rot, p->ylabel);
    fprintf(f,
            "<clipPath id='area'><rect x='%.1f' y='%.1f' width='%.1f' "
            "height='%.1f'/></clipPath>\n<g clip-path='url(#area)'>\n",
            L, T, PW, PH);
    for (size_t k = 0; k < p->nseries; k++)
        series(f, &fr, &p->s[k], colors[k % 12]);
    fputs("</g>\n", f);
    for (size_t k = 0; k < p->nseries; k++) /* legends outside the clip */
        legend(f, &p->s[k], colors[k % 12], k);
    fputs("</svg>\n", f);
}

/* The SVG goes to PATH.tmp, then replaces PATH: a failed write leaves an
 * earlier plot as it was. */
bool plot_write(const plot *p, const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        cli_error("%s: path too long", path);
        return false;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        cli_error("%s: cannot write: %s", tmp, strerror(errno));
        return false;
    }
    render(f, p);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok && rename(tmp, path) == 0;
    if (!ok) {
        cli_error("%s: cannot write the plot: %s", path, strerror(errno));
        remove(tmp);
    }
    return ok;
}
