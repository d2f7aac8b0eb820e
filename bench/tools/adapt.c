/*
 * adapt.c — the adaptive quotient filter against the plain one, same shape,
 * same keys, one run (docs/structures.md, "Adaptive quotient filter"):
 *
 *   qf   the quotient filter sized for --keys at --fpr;
 *   aqf  the same table with extension records and a reverse map, told of
 *        each false positive as it happens (as a store behind it would,
 *        after a lookup that found nothing).
 *
 * The stream: --queries absent keys drawn Zipf(--zipf) from a universe of
 * --universe keys, so hot keys come back again and again. Reported per
 * filter: false positives, how many were a repeat (a key that was a
 * false positive before), the stream's rate, the query bytes (the table
 * and, for aqf, the records), the reverse map, and ns per operation:
 * insert, a fresh absent key, a member, and the stream itself (aqf's
 * includes its reports).
 *
 *   amq_adapt [--keys N] [--universe U] [--queries Q] [--zipf S] [--fpr E]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"
#include "tool.h"

typedef struct row {
    uint64_t fps, repeats;
    double insert_ns, stream_ns, absent_ns, member_ns;
    size_t bytes, map_bytes;
    uint64_t records;
} row;

/* Zipf(s) rank in [0, u) by inverting the continuous CDF of k^-s. */
static uint64_t zipf(uint64_t *rng, uint64_t u, double s) {
    double x = (double)(tool_splitmix(rng) >> 11) * 0x1p-53;
    double a = 1.0 - s, top = pow((double)u + 1.0, a) - 1.0;
    uint64_t r = (uint64_t)pow(1.0 + x * top, 1.0 / a);
    return r >= 1 && r <= u ? r - 1 : u - 1;
}

static uint64_t absent_key(uint64_t rank) {
    uint64_t s = rank ^ 0xa5a5a5a5a5a5a5a5ULL;
    return tool_splitmix(&s);
}

static int run(const char *spec, const uint64_t *members, uint64_t n,
               const uint64_t *stream, uint64_t q, uint64_t u, double fpr,
               row *out) {
    amq_filter *f = NULL;
    amq_status st = amq_filter_new(spec, n, fpr, NULL, &f, NULL);
    if (st != AMQ_OK) {
        fprintf(stderr, "amq_adapt: %s: %s\n", spec, amq_strerror(st));
        return 1;
    }
    bool adaptive = (amq_filter_caps(f) & AMQ_CAP_ADAPT) != 0;
    memset(out, 0, sizeof *out);
    double t0 = tool_now();
    for (uint64_t i = 0; i < n; i++)
        if (amq_filter_add_hash(f, members[i]) != AMQ_OK) {
            fprintf(stderr, "amq_adapt: %s: add failed\n", spec);
            amq_filter_free(f);
            return 1;
        }
    out->insert_ns = (tool_now() - t0) * 1e9 / (double)n;
    uint8_t *seen = calloc(u, 1);
    if (seen == NULL) {
        amq_filter_free(f);
        return 1;
    }
    t0 = tool_now();
    for (uint64_t i = 0; i < q; i++) {
        uint64_t r = stream[i];
        if (!amq_filter_contains_hash(f, absent_key(r)))
            continue;
        out->fps++;
        out->repeats += seen[r];
        seen[r] = 1;
        if (adaptive)
            (void)amq_filter_report_fp_hash(f, absent_key(r), NULL);
    }
    out->stream_ns = (tool_now() - t0) * 1e9 / (double)q;
    free(seen);
    /* fresh absent keys (outside the universe) and members */
    uint64_t sink = 0, m = n < 1000000 ? n : 1000000;
    t0 = tool_now();
    for (uint64_t i = 0; i < m; i++)
        sink += amq_filter_contains_hash(f, absent_key(u + 1 + i));
    out->absent_ns = (tool_now() - t0) * 1e9 / (double)m;
    t0 = tool_now();
    for (uint64_t i = 0; i < m; i++)
        sink += amq_filter_contains_hash(f, members[(i * 7919) % n]);
    out->member_ns = (tool_now() - t0) * 1e9 / (double)m;
    if (sink == 0)
        fprintf(stderr, "amq_adapt: no member found\n");
    out->bytes = amq_filter_size_bytes(f);
    amq_adapt_stats s;
    if (amq_filter_adapt_stats(f, &s) == AMQ_OK) {
        out->map_bytes = s.map_bytes;
        out->records = s.records;
    }
    amq_filter_free(f);
    return 0;
}

int main(int argc, char **argv) {
    uint64_t n = 10000000, u = 1000000, q = 10000000;
    double s = 1.1, fpr = 0.01;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--keys") == 0)
            n = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--universe") == 0)
            u = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--queries") == 0)
            q = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--zipf") == 0)
            s = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--fpr") == 0)
            fpr = strtod(argv[i + 1], NULL);
        else {
            fprintf(stderr, "usage: amq_adapt [--keys N] [--universe U] "
                            "[--queries Q] [--zipf S] [--fpr E]\n");
            return 2;
        }
    }
    if (n == 0 || u == 0 || q == 0 || !(s > 1.0) || !(fpr > 0 && fpr < 1)) {
        fprintf(stderr, "amq_adapt: keys, universe, queries > 0, zipf > 1, "
                        "0 < fpr < 1\n");
        return 2;
    }
    uint64_t *members = malloc(n * sizeof *members);
    uint64_t *stream = malloc(q * sizeof *stream);
    if (members == NULL || stream == NULL)
        return 1;
    uint64_t seed = 1, zs = 2, distinct = 0;
    for (uint64_t i = 0; i < n; i++)
        members[i] = tool_splitmix(&seed);
    uint8_t *hit = calloc(u, 1);
    for (uint64_t i = 0; i < q; i++) {
        stream[i] = zipf(&zs, u, s);
        if (hit != NULL && !hit[stream[i]]) {
            hit[stream[i]] = 1;
            distinct++;
        }
    }
    free(hit);
    printf("%llu members, fpr %g; stream of %llu absent keys, Zipf(%g) over "
           "%llu (%llu distinct)\n",
           (unsigned long long)n, fpr, (unsigned long long)q, s,
           (unsigned long long)u, (unsigned long long)distinct);
    row r[2];
    static const char *const specs[2] = {"qf", "aqf"};
    for (int i = 0; i < 2; i++)
        if (run(specs[i], members, n, stream, q, u, fpr, &r[i]) != 0)
            return 1;
    printf("%-4s %10s %8s %9s %12s %10s %8s %8s %8s %8s %8s\n", "", "fps",
           "repeats", "rate", "query bytes", "map bytes", "records", "ins ns",
           "stream", "absent", "member");
    for (int i = 0; i < 2; i++)
        printf("%-4s %10llu %8llu %9.2e %12zu %10zu %8llu %8.1f %8.1f %8.1f "
               "%8.1f\n",
               specs[i], (unsigned long long)r[i].fps,
               (unsigned long long)r[i].repeats, (double)r[i].fps / (double)q,
               r[i].bytes, r[i].map_bytes, (unsigned long long)r[i].records,
               r[i].insert_ns, r[i].stream_ns, r[i].absent_ns, r[i].member_ns);
    printf("aqf/qf: rate %.3f, query bytes %.4f, insert %.2f, absent %.2f, "
           "member %.2f\n",
           r[0].fps ? (double)r[1].fps / (double)r[0].fps : 0.0,
           (double)r[1].bytes / (double)r[0].bytes,
           r[1].insert_ns / r[0].insert_ns, r[1].absent_ns / r[0].absent_ns,
           r[1].member_ns / r[0].member_ns);
    free(members);
    free(stream);
    return 0;
}
