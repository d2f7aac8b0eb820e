/*
 * test_recommend.c — the memory-reads facts every type's descriptor
 * carries, and amq_recommend (amq/recommend.h): its rows are sorted by
 * bits per key, have the capabilities the need asks for, spend what the
 * type's curve says, and agree with a plain model (every dynamic type that
 * fits is listed; the first is the fit with the fewest bits); bad input
 * writes nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "type/type.h"

#define MAX_ROWS 64

/* ---- the reads facts ----------------------------------------------------- */

/* Each type sets exactly one form: a fixed count with its wording, or the
 * spec key whose resolved value is the count (a key the type accepts). */
static void test_every_type_has_reads(void) {
    CHECK(amq_filter_type_count() > 0);
    CHECK(amq__type_at(amq_filter_type_count()) == NULL);
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq__type *t = amq__type_at(i);
        CHECK(t != NULL && &t->info == amq_filter_type_at(i));
        if (t == NULL)
            continue;
        const char *name = t->info.name;
        if (t->reads_param != NULL) {
            char key[32];
            snprintf(key, sizeof key, "%s=", t->reads_param);
            CHECK_MSG(t->reads == 0 && t->reads_text == NULL,
                      "%s: reads_param and a fixed count", name);
            CHECK_MSG(strstr(t->info.params, key) != NULL,
                      "%s: reads_param %s is not one of its parameters", name,
                      t->reads_param);
        } else {
            CHECK_MSG(t->reads >= 1 && t->reads_text != NULL &&
                          t->reads_text[0] != 0 &&
                          strlen(t->reads_text) < AMQ_READS_TEXT_MAX,
                      "%s: no memory reads per query", name);
        }
    }
}

/* The counts docs/cli.md and docs/structures.md state for the layouts. */
static void test_reads_pinned(void) {
    static const struct {
        const char *name;
        unsigned reads;
        const char *text;
    } pins[] = {
        {"blocked", 1, "1"},
        {"sbbf", 1, "1"},
        {"prefix", 1, "1"},
        {"qf", 2, "1-2"},
        {"cqf", 2, "1-2"},
        {"ribbon", 2, "1-2"},
        {"morton", 2, "1-2"},
        {"maplet", 2, "1-2"},
        {"smaplet", 2, "1-2"},
        {"cuckoo", 2, "2"},
        {"vacuum", 2, "2 (one chunk)"},
        {"vqf", 2, "2"},
        {"xor8", 3, "3"},
        {"xor16", 3, "3"},
        {"xor32", 3, "3"},
        {"fuse8", 3, "3 (nearby)"},
        {"fuse16", 3, "3 (nearby)"},
        {"fuse32", 3, "3 (nearby)"},
        {"scalable", AMQ_READS_MANY, "k per stage"},
        {"bloom", 0, "k"},
        {"partitioned", 0, "k"},
        {"counting", 1, "1 (layout=classic: k)"},
        {"spectral", 1, "1 (layout=classic: k)"},
        {"compressed", 0, "k"},
        {"dleft", 0, "d"},
        {"cms", 0, "depth"},
    };
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        const amq__type *t = amq__type_by_name(pins[i].name);
        CHECK_MSG(t != NULL, "%s is not registered", pins[i].name);
        if (t == NULL)
            continue;
        if (pins[i].reads == 0)
            CHECK_MSG(t->reads_param != NULL &&
                          strcmp(t->reads_param, pins[i].text) == 0,
                      "%s: reads are not its %s", pins[i].name, pins[i].text);
        else
            CHECK_MSG(t->reads == pins[i].reads && t->reads_text != NULL &&
                          strcmp(t->reads_text, pins[i].text) == 0,
                      "%s: reads %u '%s', expected %u '%s'", pins[i].name,
                      t->reads, t->reads_text ? t->reads_text : "(null)",
                      pins[i].reads, pins[i].text);
    }
}

/* A filter of every type (static types built from 1000 hashes) says its
 * reads: never "?", and a parameter resolves to its value. */
static void test_filter_reads(void) {
    enum { N = 1000 };
    static uint64_t h[N];
    uint64_t s = 11;
    check_seed = s;
    for (size_t i = 0; i < N; i++)
        h[i] = check_next(&s);
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq__type *t = amq__type_at(i);
        amq_filter *f = NULL;
        char text[AMQ_READS_TEXT_MAX];
        amq_status st =
            (t->info.caps & AMQ_CAP_STATIC)
                ? amq_filter_build(t->info.name, h, N, 0.01, NULL, &f, NULL)
                : amq_filter_new(t->info.name, N, 0.01, NULL, &f, NULL);
        CHECK_MSG(st == AMQ_OK, "%s: %s", t->info.name, amq_status_name(st));
        if (f == NULL)
            continue;
        unsigned reads = amq_filter_reads(f, text, sizeof text);
        CHECK_MSG(strcmp(text, "?") != 0 && reads >= 1, "%s: reads '%s'",
                  t->info.name, text);
        if (t->reads_param != NULL) {
            char want[AMQ_READS_TEXT_MAX];
            snprintf(want, sizeof want, "%s = %u", t->reads_param, reads);
            CHECK_MSG(strcmp(text, want) == 0 && reads < AMQ_READS_MANY,
                      "%s: '%s', expected '%s'", t->info.name, text, want);
        }
        /* Truncation keeps a NUL; a zero cap writes nothing. */
        char small[3] = {'x', 'x', 'x'};
        CHECK(amq_filter_reads(f, small, 2) == reads && small[1] == 0 &&
              small[2] == 'x');
        CHECK(amq_filter_reads(f, NULL, 0) == reads);
        amq_filter_free(f);
    }
    amq_filter *b = NULL;
    char text[AMQ_READS_TEXT_MAX];
    CHECK_OK(amq_filter_new("bloom:k=5", N, 0.01, NULL, &b, NULL));
    if (b != NULL) {
        CHECK(amq_filter_reads(b, text, sizeof text) == 5);
        CHECK(strcmp(text, "k = 5") == 0);
    }
    amq_filter_free(b);
}

/* ---- the ranking ----------------------------------------------------------- */

static bool fits_model(const amq_need *need, uint32_t caps) {
    /* an adaptive filter's reverse map is not in its bits per key, and a
     * growing one's size depends on the growth it plans for */
    if (caps &
        (AMQ_CAP_SKETCH | AMQ_CAP_FORGETS | AMQ_CAP_ADAPT | AMQ_CAP_GROW))
        return false;
    if ((need->deletes && !(caps & AMQ_CAP_REMOVE)) ||
        (need->counts && !(caps & AMQ_CAP_COUNT)))
        return false;
    return need->allow_static || !(caps & AMQ_CAP_STATIC);
}

static bool row_of(const amq_choice *rows, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].type->name, name) == 0)
            return true;
    return false;
}

/* One row: the need's capabilities, the curve's bits, sensible reads. */
static void check_row(const amq_need *need, const amq_choice *r) {
    const char *name = r->type->name;
    uint32_t caps = r->type->caps;
    double bits = -1.0;
    CHECK_MSG(fits_model(need, caps), "%s: caps 0x%x do not fit", name,
              (unsigned)caps);
    CHECK_MSG(!need->deletes || (caps & AMQ_CAP_REMOVE), "%s", name);
    CHECK_MSG(!need->counts || (caps & AMQ_CAP_COUNT), "%s", name);
    CHECK_MSG(need->allow_static || !(caps & AMQ_CAP_STATIC), "%s", name);
    if (r->fixed) {
        CHECK_MSG((caps & AMQ_CAP_STATIC) && r->fpr < need->fpr, "%s", name);
        CHECK_OK(amq_curve_bits(name, r->fpr, &bits));
    } else {
        CHECK_MSG(r->fpr == need->fpr, "%s: fpr %g", name, r->fpr);
        CHECK_OK(amq_curve_bits(name, need->fpr, &bits));
    }
    CHECK_MSG(r->bits_per_key == bits, "%s: %.6f bits/key, the curve %.6f",
              name, r->bits_per_key, bits);
    CHECK_MSG(r->reads >= 1 && r->reads_text[0] != 0 &&
                  strcmp(r->reads_text, "?") != 0 &&
                  memchr(r->reads_text, 0, sizeof r->reads_text) != NULL,
              "%s: reads %u '%s'", name, r->reads, r->reads_text);
}

/* Every dynamic type that fits and has a curve is listed (a static one
 * may be left out: it cannot reach the rate); nothing is listed twice. */
static void check_complete(const amq_need *need, const amq_choice *rows,
                           size_t n) {
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        double bits;
        if (!fits_model(need, t->caps) || (t->caps & AMQ_CAP_STATIC) ||
            amq_curve_bits(t->name, need->fpr, &bits) != AMQ_OK)
            continue;
        CHECK_MSG(row_of(rows, n, t->name), "%s fits but is not listed",
                  t->name);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            CHECK_MSG(rows[i].type != rows[j].type, "%s listed twice",
                      rows[i].type->name);
}

static void check_need(const amq_need *need) {
    amq_choice rows[MAX_ROWS];
    size_t n = 0;
    CHECK(amq_filter_type_count() <= MAX_ROWS);
    CHECK_OK(amq_recommend(need, rows, MAX_ROWS, &n));
    CHECK_MSG(n >= 1 && n <= amq_filter_type_count(),
              "fpr %g deletes %d counts %d static %d: %zu rows", need->fpr,
              need->deletes, need->counts, need->allow_static, n);
    if (n > MAX_ROWS)
        return;
    for (size_t i = 0; i < n; i++) {
        check_row(need, &rows[i]);
        if (i > 0)
            CHECK_MSG(rows[i - 1].bits_per_key <= rows[i].bits_per_key,
                      "not sorted: %s %.4f before %s %.4f",
                      rows[i - 1].type->name, rows[i - 1].bits_per_key,
                      rows[i].type->name, rows[i].bits_per_key);
    }
    check_complete(need, rows, n);
}

static void test_ranking(void) {
    static const double rates[] = {0.3, 0.01, 1e-4, 1e-7};
    for (size_t e = 0; e < sizeof rates / sizeof rates[0]; e++)
        for (unsigned m = 0; m < 8; m++) {
            amq_need need = {.n = 1000000,
                             .fpr = rates[e],
                             .deletes = (m & 1) != 0,
                             .counts = (m & 2) != 0,
                             .allow_static = (m & 4) != 0};
            check_need(&need);
        }
}

/* The first dynamic choice for 10^6 keys at 1% is the fit with the fewest
 * bits (the earliest registered on a tie), and it is qf: what `amq build`
 * makes by default (README.md and docs/cli.md show that build). */
static void test_top_dynamic(void) {
    amq_need need = {.n = 1000000, .fpr = 0.01};
    amq_choice top;
    size_t n = 0;
    const char *best = NULL;
    double best_bits = INFINITY, bits;
    memset(&top, 0, sizeof top);
    CHECK_OK(amq_recommend(&need, &top, 1, &n));
    CHECK(n > 1);
    for (size_t i = 0; i < amq_filter_type_count(); i++) {
        const amq_type_info *t = amq_filter_type_at(i);
        if (fits_model(&need, t->caps) &&
            amq_curve_bits(t->name, need.fpr, &bits) == AMQ_OK &&
            bits < best_bits) {
            best = t->name;
            best_bits = bits;
        }
    }
    CHECK(top.type != NULL && best != NULL &&
          strcmp(top.type->name, best) == 0);
    CHECK(top.type != NULL && strcmp(top.type->name, "qf") == 0);
    CHECK(top.bits_per_key == best_bits && !top.fixed);
    CHECK(strcmp(top.reads_text, "1-2") == 0 && top.reads == 2);

    /* With every key known up front: ribbon, and the fixed-width types at
     * their own rate (xor8 gives 2^-8, under 1%). */
    amq_choice rows[MAX_ROWS];
    need.allow_static = true;
    CHECK_OK(amq_recommend(&need, rows, MAX_ROWS, &n));
    CHECK(n >= 1 && strcmp(rows[0].type->name, "ribbon") == 0);
    for (size_t i = 0; i < n && i < MAX_ROWS; i++)
        if (strcmp(rows[i].type->name, "xor8") == 0)
            CHECK(rows[i].fixed && fabs(rows[i].fpr - 1.0 / 256) < 1e-3);
}

static bool same_choice(const amq_choice *a, const amq_choice *b) {
    return a->type == b->type && a->bits_per_key == b->bits_per_key &&
           a->fpr == b->fpr && a->reads == b->reads &&
           strcmp(a->reads_text, b->reads_text) == 0 && a->fixed == b->fixed;
}

/* cap cuts the rows, not the count; n changes nothing. */
static void test_cap_and_count(void) {
    amq_need need = {.n = 1000000, .fpr = 0.01, .deletes = true};
    amq_choice all[MAX_ROWS], two[3], again[MAX_ROWS];
    size_t n = 0, m = 0, k = 0;
    CHECK_OK(amq_recommend(&need, all, MAX_ROWS, &n));
    CHECK_OK(amq_recommend(&need, NULL, 0, &m));
    CHECK(m == n);
    CHECK_OK(amq_recommend(&need, NULL, 0, NULL));
    memset(two, 0xa5, sizeof two);
    CHECK_OK(amq_recommend(&need, two, 2, &k));
    CHECK(k == n && n >= 3);
    CHECK(same_choice(&two[0], &all[0]) && same_choice(&two[1], &all[1]));
    uint8_t untouched[sizeof two[2]];
    memset(untouched, 0xa5, sizeof untouched);
    CHECK(memcmp(&two[2], untouched, sizeof untouched) == 0);

    need.n = 1;
    CHECK_OK(amq_recommend(&need, again, MAX_ROWS, &k));
    CHECK(k == n);
    for (size_t i = 0; i < k && i < n && i < MAX_ROWS; i++)
        CHECK_MSG(same_choice(&again[i], &all[i]), "row %zu: %s, %s", i,
                  again[i].type->name, all[i].type->name);
}

static void test_invalid(void) {
    static const double bad_fpr[] = {0.0, 1.0, -0.5, 1.5, NAN, INFINITY};
    amq_need ok = {.n = 1000, .fpr = 0.01};
    amq_choice row;
    size_t count = 12345;
    memset(&row, 0x5a, sizeof row);
    amq_choice before = row;
    CHECK_STATUS(amq_recommend(NULL, &row, 1, &count), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_recommend(&ok, NULL, 1, &count), AMQ_ERR_INVALID);
    amq_need zero = ok;
    zero.n = 0;
    CHECK_STATUS(amq_recommend(&zero, &row, 1, &count), AMQ_ERR_INVALID);
    for (size_t i = 0; i < sizeof bad_fpr / sizeof bad_fpr[0]; i++) {
        amq_need bad = ok;
        bad.fpr = bad_fpr[i];
        CHECK_STATUS(amq_recommend(&bad, &row, 1, &count), AMQ_ERR_INVALID);
    }
    CHECK(count == 12345 && memcmp(&row, &before, sizeof row) == 0);
}

int main(void) {
    test_every_type_has_reads();
    test_reads_pinned();
    test_filter_reads();
    test_ranking();
    test_top_dynamic();
    test_cap_and_count();
    test_invalid();
    return check_report("test_recommend");
}
