/*
 * range_driver.h — a range filter in front of an engine's range scans,
 * the same workload for every engine (range_driver.c): each engine gives
 * the three calls below and its name; the driver writes the keys, builds
 * a range filter over them (grafite, or memento with --type memento),
 * runs the scans with and without it and prints the table of
 * docs/structures.md ("In front of an engine's scans").
 *
 *   PROGRAM [--keys N] [--scans S] [--len L] [--type T] [--dir DIR]
 *   PROGRAM [--type T] --check DIR  (the test: small, results compared)
 *
 * Keys are uniform 64-bit integers with 16-byte values; a scan reads
 * every key in [lo, hi] in order. A scan whose key count differs with the
 * filter (a false negative) fails the run, and under --check so do more
 * false positives among the empty ranges than the bound allows.
 */
#ifndef AMQ_RANGE_DRIVER_H
#define AMQ_RANGE_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct range_engine {
    const char *name;
    /* A fresh database in dir holding keys[0..n) (ascending, distinct),
     * each with the 16-byte value vals + 16 i, written and made durable
     * as the engine stores tables on disk; NULL after printing an error. */
    void *(*fill)(const char *dir, const uint64_t *keys, size_t n,
                  const uint8_t *vals);
    /* Keys in [lo, hi]; *bytes += their values' bytes. */
    uint64_t (*scan)(void *db, uint64_t lo, uint64_t hi, uint64_t *bytes);
    /* Close, and remove the files when `remove`. */
    void (*close)(void *db, const char *dir, int remove);
} range_engine;

int range_driver_main(const range_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
