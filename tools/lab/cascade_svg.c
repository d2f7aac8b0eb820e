/*
 * cascade_svg.c — the evaluation's plot: measured false-positive rate
 * (log scale) against bits per key, one polyline and marker set per
 * method, a legend, decade grid lines. Plain SVG 1.1, no scripts.
 */
#include <math.h>
#include <stdio.h>

#include "lab.h"

#define W 720.0
#define H 440.0
#define L 70.0
#define R 170.0
#define T 40.0
#define B 50.0

static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                      "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#000000"};

typedef struct frame {
    double x0, x1, y0, y1; /* data ranges; y in log10 */
} frame;

static double px(const frame *f, double x) {
    return L + (x - f->x0) / (f->x1 - f->x0) * (W - L - R);
}
static double py(const frame *f, double y) {
    return T + (f->y1 - log10(y)) / (f->y1 - f->y0) * (H - T - B);
}

static frame ranges(const cpoint (*pts)[CSVG_MAX_POINTS], int ns, size_t np) {
    frame f = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (int s = 0; s < ns; s++)
        for (size_t i = 0; i < np; i++) {
            const cpoint *p = &pts[s][i];
            if (!isfinite(p->bits) || !(p->fpr > 0))
                continue;
            f.x0 = fmin(f.x0, p->bits);
            f.x1 = fmax(f.x1, p->bits);
            f.y0 = fmin(f.y0, floor(log10(p->fpr)));
            f.y1 = fmax(f.y1, ceil(log10(p->fpr)));
        }
    if (!(f.x1 > f.x0)) {
        f.x0 = 0;
        f.x1 = 1;
    }
    if (!(f.y1 > f.y0)) {
        f.y0 = -4;
        f.y1 = 0;
    }
    return f;
}

static void axes(FILE *fp, const frame *f, const char *title) {
    fprintf(
        fp,
        "<text x='%.0f' y='24' font-size='16'>%s: measured FPR vs bits per key"
        " (all memory, model included)</text>\n",
        L, title);
    for (double d = f->y0; d <= f->y1; d += 1) {
        double y = py(f, pow(10, d));
        fprintf(
            fp,
            "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n"
            "<text x='%.1f' y='%.1f' font-size='11' "
            "text-anchor='end'>1e%g</text>\n",
            L, y, W - R, y, L - 6, y + 4, d);
    }
    for (double x = ceil(f->x0); x <= f->x1; x += 1)
        fprintf(fp,
                "<text x='%.1f' y='%.1f' font-size='11' "
                "text-anchor='middle'>%g</text>\n",
                px(f, x), H - B + 16, x);
    fprintf(fp,
            "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>bits "
            "per key</text>\n"
            "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' "
            "stroke='#444'/>\n",
            (L + W - R) / 2, H - 12, L, T, W - L - R, H - T - B);
}

static void series(FILE *fp, const frame *f, const cpoint *p, size_t np,
                   const char *colour, const char *label, int k) {
    fprintf(fp, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='",
            colour);
    for (size_t i = 0; i < np; i++)
        if (isfinite(p[i].bits) && p[i].fpr > 0)
            fprintf(fp, "%.1f,%.1f ", px(f, p[i].bits), py(f, p[i].fpr));
    fprintf(fp, "'/>\n");
    for (size_t i = 0; i < np; i++)
        if (isfinite(p[i].bits) && p[i].fpr > 0)
            fprintf(fp, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='%s'/>\n",
                    px(f, p[i].bits), py(f, p[i].fpr), colour);
    double ly = T + 16 + 18 * k;
    fprintf(fp,
            "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='%s' "
            "stroke-width='2'/>"
            "<text x='%.0f' y='%.0f' font-size='12'>%s</text>\n",
            W - R + 12, ly, W - R + 36, ly, colour, W - R + 42, ly + 4, label);
}

bool csvg_fpr_plot(const char *path, const char *title,
                   const char *const *labels, int nseries,
                   const cpoint (*pts)[CSVG_MAX_POINTS], size_t npts) {
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        cli_error("%s: cannot write", path);
        return false;
    }
    frame f = ranges(pts, nseries, npts);
    fprintf(
        fp,
        "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
        "font-family='sans-serif'>\n<rect width='100%%' height='100%%' "
        "fill='white'/>\n",
        W, H);
    axes(fp, &f, title);
    for (int s = 0; s < nseries; s++)
        series(fp, &f, pts[s], npts, colours[s % 8], labels[s], s);
    fprintf(fp, "</svg>\n");
    return fclose(fp) == 0;
}
