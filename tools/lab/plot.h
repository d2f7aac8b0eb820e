/*
 * plot.h — small SVG charts for the tool's simulations: a few series of
 * points and lines on linear or logarithmic axes, drawn directly (no
 * plotting dependency), written atomically (a temporary file renamed).
 */
#ifndef AMQ_TOOLS_PLOT_H
#define AMQ_TOOLS_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#define PLOT_MAX_SERIES 12

typedef struct plot_series {
    const char *label;
    const double *x, *y;
    size_t n;
    bool line;   /* join the points                                     */
    bool points; /* mark the points                                     */
    bool dashed;
} plot_series;

typedef struct plot {
    const char *title, *xlabel, *ylabel;
    bool logx, logy;
    /* axis ranges; NaN: from the data */
    double xmin, xmax, ymin, ymax;
    size_t nseries;
    plot_series s[PLOT_MAX_SERIES];
} plot;

/* A plot with automatic ranges and no series. */
void plot_init(plot *p, const char *title, const char *xlabel,
               const char *ylabel, bool logx, bool logy);
/* Append a series (ignored past PLOT_MAX_SERIES); returns it for tweaks. */
plot_series *plot_add(plot *p, const char *label, const double *x,
                      const double *y, size_t n, bool line, bool points);
/* Write the SVG to path; false after printing an error. Points that
 * cannot be drawn (NaN, or <= 0 on a log axis) are skipped. */
bool plot_write(const plot *p, const char *path);

#endif
