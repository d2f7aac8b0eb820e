/*
 * svg.c — results.svg, drawn directly (no plotting dependency).
 *
 *   +------------------------------------------------------------+
 *   | n = 1e6: negative-query ns/key per structure               |
 *   |   ▇ batch  ▒ scalar   -- batched probe   -- dependent probe |
 *   +------------------------------------------------------------+
 *   | n = 1e8: (same, own scale)                                 |
 *   +------------------------------------------------------------+
 *   | measured FPR (log) vs bits/key, one point per structure    |
 *   | and n, with the lower bound eps = 2^-b and the classic      |
 *   | Bloom optimum eps = 2^(-b ln 2)                             |
 *   +------------------------------------------------------------+
 *
 * Each bar carries a tick at the memory probe of the same byte size, so
 * the distance from bar top to tick is what the query costs beyond its
 * memory reads.
 */
#include <math.h>
#include <string.h>

#include "bench.h"

#define W 1000.0
#define BAR_H 330.0
#define FPR_H 430.0
#define ML 80.0  /* left margin of a plot area   */
#define MR 200.0 /* right margin (legend)        */

typedef struct box {
    double x, y, w, h; /* plot area in SVG coordinates */
} box;

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#9467bd", "#ff7f0e", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f"};
#define NPALETTE (sizeof palette / sizeof palette[0])

/* ---- primitives ---------------------------------------------------------- */

static void text(FILE *f, double x, double y, const char *anchor, int size,
                 const char *s) {
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
            "font-size=\"%d\">",
            x, y, anchor, size);
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
    fputs("</text>\n", f);
}

static void line(FILE *f, double x1, double y1, double x2, double y2,
                 const char *color, double width, const char *dash) {
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s/>\n",
            x1, y1, x2, y2, color, width, dash ? " stroke-dasharray=\"" : "",
            dash ? dash : "", dash ? "\"" : "");
}

static void rect(FILE *f, double x, double y, double w, double h,
                 const char *fill, double opacity) {
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\" fill-opacity=\"%.2f\"/>\n",
            x, y, w, h, fill, opacity);
}

static void frame(FILE *f, const box *b) {
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"none\" stroke=\"#333\"/>\n",
            b->x, b->y, b->w, b->h);
}

/* A "nice" step (1, 2 or 5 times a power of ten) for about 5 ticks. */
static double nice_step(double max) {
    double raw = max / 5, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* ---- bar panel: negative queries at one n ------------------------------ */

static double ymax_for(const bench_results *r, uint64_t n) {
    double m = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        double v[] = {w->neg_batch_ns, w->neg_scalar_ns, w->probe.batch_ns,
                      w->probe.dep_ns};
        for (size_t j = 0; j < 4; j++)
            m = isnan(v[j]) ? m : fmax(m, v[j]);
    }
    return m > 0 ? m * 1.1 : 1;
}

static void y_axis_linear(FILE *f, const box *b, double ymax,
                          const char *label) {
    double step = nice_step(ymax);
    char buf[32];
    for (double v = 0; v <= ymax + 1e-9; v += step) {
        double y = b->y + b->h - v / ymax * b->h;
        line(f, b->x, y, b->x + b->w, y, "#ddd", 1, NULL);
        snprintf(buf, sizeof buf, "%g", v);
        text(f, b->x - 6, y + 4, "end", 11, buf);
    }
    fprintf(f,
            "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" "
            "text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
            b->x - 50, b->y + b->h / 2, label);
}

static void bar_pair(FILE *f, const box *b, const bench_row *w, double x,
                     double bw, double ymax, const char *color) {
    double base = b->y + b->h;
    char buf[32];
    double vals[2] = {w->neg_batch_ns, w->neg_scalar_ns};
    double probes[2] = {w->probe.batch_ns, w->probe.dep_ns};
    for (int j = 0; j < 2; j++) {
        double bx = x + j * bw;
        if (!isnan(vals[j])) {
            double h = vals[j] / ymax * b->h;
            rect(f, bx, base - h, bw - 2, h, color, j == 0 ? 0.9 : 0.35);
            snprintf(buf, sizeof buf, "%.1f", vals[j]);
            text(f, bx + bw / 2, base - h - 3, "middle", 9, buf);
        } else {
            text(f, bx + bw / 2, base - 4, "middle", 9, "no batch");
        }
        if (!isnan(probes[j]) && !isnan(vals[j])) {
            double py = base - probes[j] / ymax * b->h;
            line(f, bx - 2, py, bx + bw, py, j == 0 ? "#000" : "#666", 2,
                 j == 0 ? "4,2" : "1,2");
        }
    }
}

static void bar_legend(FILE *f, const box *b) {
    double x = b->x + b->w + 15, y = b->y + 10;
    rect(f, x, y, 14, 10, "#555", 0.9);
    text(f, x + 20, y + 9, "start", 11, "negative query, batch");
    rect(f, x, y + 20, 14, 10, "#555", 0.35);
    text(f, x + 20, y + 29, "start", 11, "negative query, scalar");
    line(f, x, y + 45, x + 14, y + 45, "#000", 2, "4,2");
    text(f, x + 20, y + 49, "start", 11, "probe: batched reads");
    line(f, x, y + 65, x + 14, y + 65, "#666", 2, "1,2");
    text(f, x + 20, y + 69, "start", 11, "probe: dependent reads");
    text(f, x, y + 95, "start", 10, "probe = random 64-byte");
    text(f, x, y + 108, "start", 10, "reads in an array the");
    text(f, x, y + 121, "start", 10, "size of the filter");
}

static void bar_panel(FILE *f, const bench_results *r, uint64_t n, double top) {
    box b = {ML, top + 40, W - ML - MR, BAR_H - 110};
    char title[96], nb[32];
    bench_fmt_n(n, nb, sizeof nb);
    snprintf(title, sizeof title,
             "n = %s: negative-query time per key (lower is better)", nb);
    text(f, W / 2 - MR / 2, top + 25, "middle", 14, title);
    double ymax = ymax_for(r, n);
    y_axis_linear(f, &b, ymax, "ns per key");
    size_t count = 0;
    for (size_t i = 0; i < r->nrows; i++)
        count += r->rows[i].n == n && r->rows[i].ok;
    double slot = count ? b.w / (double)count : b.w, bw = slot * 0.35;
    size_t k = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (w->n != n || !w->ok)
            continue;
        double x = b.x + (double)k * slot + slot * 0.15;
        bar_pair(f, &b, w, x, bw, ymax, palette[k % NPALETTE]);
        fprintf(f,
                "<text transform=\"translate(%.1f,%.1f) rotate(-25)\" "
                "text-anchor=\"end\" font-size=\"11\">%s</text>\n",
                x + bw, b.y + b.h + 16, w->label);
        k++;
    }
    frame(f, &b);
    bar_legend(f, &b);
}

/* ---- FPR panel ----------------------------------------------------------- */

typedef struct fpr_axes {
    box b;
    double x0, x1, ly0, ly1; /* bits/key range, log10 FPR range */
} fpr_axes;

static double px(const fpr_axes *a, double bits) {
    return a->b.x + (bits - a->x0) / (a->x1 - a->x0) * a->b.w;
}

static double py(const fpr_axes *a, double fpr) {
    return a->b.y + a->b.h - (log10(fpr) - a->ly0) / (a->ly1 - a->ly0) * a->b.h;
}

static void fpr_ranges(const bench_cfg *cfg, const bench_results *r,
                       fpr_axes *a) {
    double maxbits = log2(1 / cfg->fpr);
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].ok)
            maxbits = fmax(maxbits, r->rows[i].bits_per_key);
    a->x0 = floor(log2(1 / cfg->fpr)) - 2;
    a->x0 = a->x0 < 0 ? 0 : a->x0;
    a->x1 = ceil(maxbits) + 3;
    a->ly0 = floor(log10(cfg->fpr)) - 1;
    a->ly1 = fmin(0, ceil(log10(cfg->fpr)) + 1);
}

static void fpr_axes_draw(FILE *f, const fpr_axes *a) {
    char buf[32];
    for (double x = ceil(a->x0); x <= a->x1; x += 1) {
        line(f, px(a, x), a->b.y, px(a, x), a->b.y + a->b.h, "#eee", 1, NULL);
        snprintf(buf, sizeof buf, "%g", x);
        text(f, px(a, x), a->b.y + a->b.h + 16, "middle", 11, buf);
    }
    for (double e = a->ly0; e <= a->ly1 + 1e-9; e += 1) {
        double y = py(a, pow(10, e));
        line(f, a->b.x, y, a->b.x + a->b.w, y, "#ddd", 1, NULL);
        snprintf(buf, sizeof buf, "1e%g", e);
        text(f, a->b.x - 6, y + 4, "end", 11, buf);
    }
    text(f, a->b.x + a->b.w / 2, a->b.y + a->b.h + 38, "middle", 12,
         "bits per key");
    fprintf(f,
            "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" "
            "text-anchor=\"middle\" font-size=\"12\">false-positive "
            "rate (log scale)</text>\n",
            a->b.x - 55, a->b.y + a->b.h / 2);
}

/* eps(b) = 2^(-slope * b), drawn where it lies inside the panel. */
static void fpr_curve(FILE *f, const fpr_axes *a, double slope,
                      const char *color, const char *dash) {
    fprintf(f,
            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s "
            "points=\"",
            color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
            dash ? "\"" : "");
    for (int i = 0; i <= 200; i++) {
        double bits = a->x0 + (a->x1 - a->x0) * i / 200.0;
        double l = -slope * bits * log10(2.0);
        if (l >= a->ly0 && l <= a->ly1)
            fprintf(f, "%.1f,%.1f ", px(a, bits), py(a, pow(10, l)));
    }
    fputs("\"/>\n", f);
}

static void marker(FILE *f, double x, double y, size_t shape,
                   const char *color) {
    if (shape % 2 == 0)
        fprintf(f,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" "
                "stroke=\"#000\" stroke-width=\"0.5\"/>\n",
                x, y, color);
    else
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
                "fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\"/>\n",
                x - 4.5, y - 4.5, color);
}

/* Colour index of a label: its position among the distinct labels of the
 * rows that are not a second path (inline). */
static size_t label_index(const bench_results *r, const char *label) {
    size_t k = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (bench_second_path(w->path) || w->n != r->rows[0].n)
            continue;
        if (strcmp(w->label, label) == 0)
            return k;
        k++;
    }
    return k;
}

static void fpr_points(FILE *f, const bench_cfg *cfg, const bench_results *r,
                       const fpr_axes *a) {
    for (size_t i = 0; i < r->nrows; i++) {
        const bench_row *w = &r->rows[i];
        if (!w->ok || bench_second_path(w->path) || w->fpr_meas <= 0)
            continue;
        size_t s = 0;
        while (s < cfg->nsizes && cfg->sizes[s] != w->n)
            s++;
        double l = fmax(a->ly0, fmin(a->ly1, log10(w->fpr_meas)));
        marker(f, px(a, w->bits_per_key), py(a, pow(10, l)), s,
               palette[label_index(r, w->label) % NPALETTE]);
    }
}

static void fpr_legend(FILE *f, const bench_cfg *cfg, const bench_results *r,
                       const fpr_axes *a) {
    double x = a->b.x + a->b.w + 15, y = a->b.y + 10;
    line(f, x, y, x + 18, y, "#000", 2, NULL);
    text(f, x + 24, y + 4, "start", 11, "lower bound 2^-b");
    line(f, x, y + 18, x + 18, y + 18, "#888", 2, "6,3");
    text(f, x + 24, y + 22, "start", 11, "classic Bloom optimum");
    line(f, x, y + 36, x + 18, y + 36, "#c00", 1, "2,2");
    text(f, x + 24, y + 40, "start", 11, "target ε");
    y += 62;
    for (size_t i = 0; i < r->nrows && r->rows[i].n == r->rows[0].n; i++) {
        const bench_row *w = &r->rows[i];
        if (bench_second_path(w->path))
            continue;
        marker(f, x + 9, y, 0, palette[label_index(r, w->label) % NPALETTE]);
        text(f, x + 24, y + 4, "start", 11, w->label);
        y += 18;
    }
    for (size_t s = 0; s < cfg->nsizes && s < 2; s++) {
        char nb[32], lab[48];
        bench_fmt_n(cfg->sizes[s], nb, sizeof nb);
        snprintf(lab, sizeof lab, "n = %s", nb);
        marker(f, x + 9, y + 6, s, "#fff");
        text(f, x + 24, y + 10, "start", 11, lab);
        y += 18;
    }
}

static void fpr_panel(FILE *f, const bench_cfg *cfg, const bench_results *r,
                      double top) {
    fpr_axes a;
    a.b = (box){ML, top + 40, W - ML - MR, FPR_H - 100};
    fpr_ranges(cfg, r, &a);
    text(f, W / 2 - MR / 2, top + 25, "middle", 14,
         "Space vs accuracy: measured false-positive rate");
    fpr_axes_draw(f, &a);
    fpr_curve(f, &a, 1.0, "#000", NULL);
    fpr_curve(f, &a, log(2.0), "#888", "6,3");
    double ty = py(&a, cfg->fpr), lb = log2(1 / cfg->fpr);
    char buf[48];
    line(f, a.b.x, ty, a.b.x + a.b.w, ty, "#c00", 1, "2,2");
    snprintf(buf, sizeof buf, "log2(1/ε) = %.2f", lb);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#000\"/>\n",
            px(&a, lb), ty);
    text(f, px(&a, lb) - 6, ty - 8, "end", 11, buf);
    fpr_points(f, cfg, r, &a);
    frame(f, &a.b);
    fpr_legend(f, cfg, r, &a);
}

void bench_write_svg(FILE *f, const bench_cfg *cfg, const bench_results *r) {
    double h = 50 + (double)cfg->nsizes * BAR_H + FPR_H;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"sans-serif\">\n",
            W, h, W, h);
    rect(f, 0, 0, W, h, "#fff", 1);
    text(f, W / 2, 28, "middle", 17, "amq benchmark (pre-hashed keys)");
    for (size_t s = 0; s < cfg->nsizes; s++)
        bar_panel(f, r, cfg->sizes[s], 40 + (double)s * BAR_H);
    if (r->nrows > 0)
        fpr_panel(f, cfg, r, 40 + (double)cfg->nsizes * BAR_H);
    fputs("</svg>\n", f);
}
