/*
 * test_core.c — the core layer: status table, version, hashing vectors and
 * the spec-string parser (directly and through amq_filter_new).
 *
 * Hash vectors are the published ones: XXH64 and XXH3 from the xxHash
 * reference implementation's sanity tests, SipHash-2-4 from Appendix A of
 * Aumasson & Bernstein, "SipHash: a fast short-input PRF" (2012): key
 * 00 01 .. 0f, message 00 01 .. 0e (15 bytes), output a129ca6149be45e5.
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/spec.h"

/* ---- status codes ------------------------------------------------------- */

typedef struct status_row {
    amq_status code;
    const char *name;
    const char *msg;
} status_row;

static const status_row status_rows[] = {
#define ROW(name, value, msg) {name, #name, msg},
    AMQ_STATUS_TABLE(ROW)
#undef ROW
};
#define N_STATUS (sizeof status_rows / sizeof status_rows[0])

static bool contains_unknown(const char *s) {
    char low[64];
    size_t i;
    for (i = 0; s[i] != '\0' && i + 1 < sizeof low; i++)
        low[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
    low[i] = '\0';
    return strstr(low, "unknown") != NULL;
}

static void test_status(void) {
    CHECK(AMQ_OK == 0);
    for (size_t i = 0; i < N_STATUS; i++) {
        const status_row *r = &status_rows[i];
        const char *name = amq_status_name(r->code);
        const char *msg = amq_strerror(r->code);
        CHECK(name != NULL && msg != NULL);
        if (name == NULL || msg == NULL)
            continue;
        CHECK_MSG(strcmp(name, r->name) == 0, "name of %d is %s, not %s",
                  (int)r->code, name, r->name);
        CHECK_MSG(strcmp(msg, r->msg) == 0, "message of %s is \"%s\"", r->name,
                  msg);
        CHECK(msg[0] != '\0');
        for (size_t j = 0; j < i; j++) {
            const status_row *q = &status_rows[j];
            CHECK_MSG(q->code != r->code, "%s and %s share a value", q->name,
                      r->name);
            CHECK_MSG(strcmp(amq_status_name(q->code), name) != 0,
                      "duplicate name %s", name);
            CHECK_MSG(strcmp(amq_strerror(q->code), msg) != 0,
                      "%s and %s share the message \"%s\"", q->name, r->name,
                      msg);
        }
    }
    /* Values outside the table: never NULL, and say "unknown". */
    const int outside[] = {-1, (int)N_STATUS + 100, 255, 1 << 20};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        amq_status s = (amq_status)outside[i];
        bool listed = false;
        for (size_t j = 0; j < N_STATUS; j++)
            listed |= status_rows[j].code == s;
        if (listed)
            continue;
        const char *msg = amq_strerror(s);
        const char *name = amq_status_name(s);
        CHECK(msg != NULL && name != NULL);
        if (msg != NULL && name != NULL) {
            CHECK_MSG(contains_unknown(msg), "strerror(%d) = \"%s\"",
                      outside[i], msg);
            CHECK_MSG(contains_unknown(name), "status_name(%d) = \"%s\"",
                      outside[i], name);
        }
    }
}

static void test_version(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", AMQ_VERSION_MAJOR,
             AMQ_VERSION_MINOR, AMQ_VERSION_PATCH);
    CHECK(amq_version() != NULL && strcmp(amq_version(), want) == 0);
    CHECK(amq_version_number() == AMQ_VERSION_NUMBER);
}

/* ---- hashing ------------------------------------------------------------ */

static uint64_t hash_with(amq_hash_kind kind, uint64_t seed, const uint8_t *key,
                          const void *msg, size_t len) {
    amq_hasher h;
    amq_status st = amq_hasher_init(&h, kind, seed, key);
    CHECK_MSG(st == AMQ_OK, "hasher_init(%d): %s", (int)kind,
              amq_status_name(st));
    if (st != AMQ_OK)
        return 0;
    return amq_hash64(&h, msg, len);
}

static void test_hash_vectors(void) {
    /* XXH64, seed 0. */
    CHECK(hash_with(AMQ_HASH_XXH64, 0, NULL, NULL, 0) == 0xEF46DB3751D8E999ULL);
    CHECK(hash_with(AMQ_HASH_XXH64, 0, NULL, "", 0) == 0xEF46DB3751D8E999ULL);
    CHECK(hash_with(AMQ_HASH_XXH64, 0, NULL, "a", 1) == 0xD24EC4F1A98C6E5BULL);
    CHECK(hash_with(AMQ_HASH_XXH64, 0, NULL, "abc", 3) ==
          0x44BC2CF5AD770999ULL);
    /* XXH3-64, seed 0. */
    CHECK(hash_with(AMQ_HASH_XXH3, 0, NULL, "", 0) == 0x2D06800538D394C2ULL);
    /* SipHash-2-4, paper Appendix A. */
    uint8_t key[16], msg[15];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 15; i++)
        msg[i] = (uint8_t)i;
    CHECK(hash_with(AMQ_HASH_SIPHASH, 0, key, msg, 15) ==
          0xa129ca6149be45e5ULL);
}

static void test_hash_props(void) {
    static const amq_hash_kind seeded[] = {AMQ_HASH_XXH3, AMQ_HASH_XXH64};
    const char *msg = "the quick brown fox";
    size_t len = strlen(msg);
    for (size_t i = 0; i < 2; i++) {
        uint64_t a = hash_with(seeded[i], 1, NULL, msg, len);
        uint64_t b = hash_with(seeded[i], 2, NULL, msg, len);
        uint64_t a2 = hash_with(seeded[i], 1, NULL, msg, len);
        CHECK_MSG(a != b, "kind %d: seeds 1 and 2 collide", (int)seeded[i]);
        CHECK(a == a2);
        /* One changed byte changes the hash. */
        CHECK(hash_with(seeded[i], 1, NULL, "the quick brown fOx", len) != a);
    }
    uint8_t k1[16] = {0}, k2[16] = {0};
    k2[15] = 1;
    CHECK(hash_with(AMQ_HASH_SIPHASH, 0, k1, msg, len) !=
          hash_with(AMQ_HASH_SIPHASH, 0, k2, msg, len));
    /* Different kinds give different values on the same input. */
    CHECK(hash_with(AMQ_HASH_XXH3, 0, NULL, msg, len) !=
          hash_with(AMQ_HASH_XXH64, 0, NULL, msg, len));

    /* 128-bit: deterministic, halves not trivially equal, seeds matter. */
    amq_hasher h;
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH3, 7, NULL));
    uint64_t o1[2], o2[2];
    amq_hash128(&h, msg, len, o1);
    amq_hash128(&h, msg, len, o2);
    CHECK(o1[0] == o2[0] && o1[1] == o2[1]);
    CHECK(o1[0] != o1[1]);
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH3, 8, NULL));
    amq_hash128(&h, msg, len, o2);
    CHECK(o1[0] != o2[0] || o1[1] != o2[1]);

    /* Init errors. */
    CHECK_STATUS(amq_hasher_init(&h, AMQ_HASH_DEFAULT, 0, NULL), AMQ_ERR_HASH);
    CHECK_STATUS(amq_hasher_init(&h, AMQ_HASH_SIPHASH, 0, NULL), AMQ_ERR_HASH);
    CHECK_STATUS(amq_hasher_init(&h, AMQ_HASH_KIND_COUNT_, 0, NULL),
                 AMQ_ERR_HASH);
    CHECK_STATUS(amq_hasher_init(&h, (amq_hash_kind)99, 0, NULL), AMQ_ERR_HASH);

    /* Kind names: non-empty and distinct. */
    for (int i = AMQ_HASH_XXH3; i < AMQ_HASH_KIND_COUNT_; i++) {
        const char *ni = amq_hash_kind_name((amq_hash_kind)i);
        CHECK(ni != NULL && ni[0] != '\0');
        for (int j = AMQ_HASH_XXH3; j < i && ni != NULL; j++) {
            const char *nj = amq_hash_kind_name((amq_hash_kind)j);
            CHECK(nj != NULL && strcmp(ni, nj) != 0);
        }
    }

    /* Random bytes: two 32-byte draws differ. */
    uint8_t r1[32], r2[32];
    amq_random_bytes(r1, sizeof r1);
    amq_random_bytes(r2, sizeof r2);
    CHECK(memcmp(r1, r2, sizeof r1) != 0);
}

/* Bit avalanche: flipping one input bit flips about half the output bits.
 * A gross wiring error (hashing a pointer, truncating the key) fails this. */
static void test_hash_avalanche(void) {
    static const amq_hash_kind kinds[] = {AMQ_HASH_XXH3, AMQ_HASH_XXH64,
                                          AMQ_HASH_SIPHASH};
    uint8_t key[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(0xA5 ^ i);
    check_seed = 11;
    for (size_t k = 0; k < 3; k++) {
        amq_hasher h;
        CHECK_OK(amq_hasher_init(&h, kinds[k], 3, key));
        uint64_t s = check_seed, flips = 0, trials = 0;
        for (int t = 0; t < 200; t++) {
            uint8_t buf[24];
            for (int i = 0; i < 24; i += 8) {
                uint64_t v = check_next(&s);
                memcpy(buf + i, &v, 8);
            }
            size_t len = 1 + (size_t)(check_next(&s) % 24);
            uint64_t base = amq_hash64(&h, buf, len);
            size_t bit = (size_t)(check_next(&s) % (len * 8));
            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            flips +=
                (uint64_t)__builtin_popcountll(base ^ amq_hash64(&h, buf, len));
            trials++;
        }
        double mean = (double)flips / (double)trials;
        /* sd of the mean is 4/sqrt(200) ~ 0.28 bits */
        CHECK_MSG(mean > 30.0 && mean < 34.0, "kind %d: %.2f bits flip",
                  (int)kinds[k], mean);
    }
}

/* ---- spec parsing ------------------------------------------------------- */

static void spec_rejected(const char *spec) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    d.offset = (size_t)-1;
    amq_status st = amq_filter_new(spec, 1000, 0.01, NULL, &f, &d);
    CHECK_MSG(st == AMQ_ERR_SPEC, "\"%s\": %s", spec, amq_status_name(st));
    CHECK_MSG(d.message[0] != '\0', "\"%s\": empty diagnostic", spec);
    CHECK_MSG(d.offset <= strlen(spec), "\"%s\": diag offset %zu", spec,
              d.offset);
    if (st == AMQ_OK)
        amq_filter_free(f);

    /* The curve entry point parses specs the same way. */
    double x;
    CHECK_MSG(amq_curve_fpr(spec, 8.0, &x) == AMQ_ERR_SPEC, "curve_fpr(\"%s\")",
              spec);
}

static void spec_accepted(const char *spec) {
    amq_filter *f = NULL;
    amq_status st = amq_filter_new(spec, 1000, 0.01, NULL, &f, NULL);
    CHECK_MSG(st == AMQ_OK, "\"%s\": %s", spec, amq_status_name(st));
    amq_filter_free(f);
}

static void test_spec_parser_direct(void) {
    amq__spec p;
    CHECK_OK(amq__spec_parse("bloom", &p, NULL));
    CHECK(strcmp(p.name, "bloom") == 0 && p.nkv == 0);

    CHECK_OK(amq__spec_parse("bloom:m=8000,k=6", &p, NULL));
    CHECK(strcmp(p.name, "bloom") == 0 && p.nkv == 2);
    if (p.nkv == 2) {
        CHECK(strcmp(p.kv[0].key, "m") == 0 &&
              strcmp(p.kv[0].val, "8000") == 0);
        CHECK(strcmp(p.kv[1].key, "k") == 0 && strcmp(p.kv[1].val, "6") == 0);
        CHECK(p.kv[0].offset == 6 && p.kv[1].offset == 13);
    }
    uint64_t v = 0;
    bool found = false;
    CHECK_OK(amq__spec_u64(&p, "k", 1, 64, &v, &found, NULL));
    CHECK(found && v == 6);
    /* Unconsumed "m" is reported by finish. */
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq__spec_finish(&p, NULL, &d), AMQ_ERR_SPEC);
    CHECK(d.message[0] != '\0' && d.offset == 6);
    CHECK_OK(amq__spec_u64(&p, "m", 1, UINT64_MAX, &v, NULL, NULL));
    CHECK(v == 8000);
    CHECK_OK(amq__spec_finish(&p, NULL, NULL));

    /* An unknown key is matched against the type's parameter text, whose
     * commas inside parentheses do not start a name. */
    CHECK_OK(amq__spec_parse("bloom:kk=6", &p, NULL));
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq__spec_finish(&p, "k=HASHES (1-64, m=no), m=BITS", &d),
                 AMQ_ERR_SPEC);
    CHECK(strstr(d.message, "did you mean 'k'?") != NULL);
    CHECK_OK(amq__spec_parse("bloom:zzz=6", &p, NULL));
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq__spec_finish(&p, "k=HASHES (1-64, zzy=no), m=BITS", &d),
                 AMQ_ERR_SPEC);
    CHECK(strstr(d.message, "did you mean") == NULL);

    /* Absent keys leave the output untouched. */
    v = 12345;
    found = true;
    CHECK_OK(amq__spec_u64(&p, "zz", 0, 10, &v, &found, NULL));
    CHECK(!found && v == 12345);

    /* Range and syntax errors on values. */
    CHECK_OK(amq__spec_parse("x:a=65,b=abc,c=-1,d=1.5,e=0.25,f=nan,g=1e400", &p,
                             NULL));
    CHECK_STATUS(amq__spec_u64(&p, "a", 1, 64, &v, NULL, NULL), AMQ_ERR_SPEC);
    CHECK_STATUS(amq__spec_u64(&p, "b", 0, 100, &v, NULL, NULL), AMQ_ERR_SPEC);
    CHECK_STATUS(amq__spec_u64(&p, "c", 0, 100, &v, NULL, NULL), AMQ_ERR_SPEC);
    CHECK_STATUS(amq__spec_u64(&p, "d", 0, 100, &v, NULL, NULL), AMQ_ERR_SPEC);
    double x = -1;
    CHECK_OK(amq__spec_f64(&p, "e", 0.0, 1.0, &x, NULL, NULL));
    CHECK(x == 0.25);
    CHECK_STATUS(amq__spec_f64(&p, "f", 0.0, 1.0, &x, NULL, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq__spec_f64(&p, "g", 0.0, 1e300, &x, NULL, NULL),
                 AMQ_ERR_SPEC);
    CHECK_STATUS(amq__spec_f64(&p, "d", 0.0, 1.0, &x, NULL, NULL),
                 AMQ_ERR_SPEC);

    /* Limits: longest legal name/key/value parse, one longer does not. */
    char buf[256];
    memset(buf, 'a', AMQ__SPEC_NAME_MAX - 1);
    buf[AMQ__SPEC_NAME_MAX - 1] = '\0';
    CHECK_OK(amq__spec_parse(buf, &p, NULL));
    memset(buf, 'a', AMQ__SPEC_NAME_MAX);
    buf[AMQ__SPEC_NAME_MAX] = '\0';
    CHECK_STATUS(amq__spec_parse(buf, &p, NULL), AMQ_ERR_SPEC);

    int n = snprintf(buf, sizeof buf, "b:");
    memset(buf + n, 'k', AMQ__SPEC_KEY_MAX - 1);
    snprintf(buf + n + AMQ__SPEC_KEY_MAX - 1, 8, "=1");
    CHECK_OK(amq__spec_parse(buf, &p, NULL));
    memset(buf + n, 'k', AMQ__SPEC_KEY_MAX);
    snprintf(buf + n + AMQ__SPEC_KEY_MAX, 8, "=1");
    CHECK_STATUS(amq__spec_parse(buf, &p, NULL), AMQ_ERR_SPEC);

    n = snprintf(buf, sizeof buf, "b:k=");
    memset(buf + n, '7', AMQ__SPEC_VAL_MAX - 1);
    buf[n + AMQ__SPEC_VAL_MAX - 1] = '\0';
    CHECK_OK(amq__spec_parse(buf, &p, NULL));
    memset(buf + n, '7', AMQ__SPEC_VAL_MAX);
    buf[n + AMQ__SPEC_VAL_MAX] = '\0';
    CHECK_STATUS(amq__spec_parse(buf, &p, NULL), AMQ_ERR_SPEC);

    /* At most AMQ__SPEC_MAX_KV pairs. */
    n = snprintf(buf, sizeof buf, "b:");
    for (int i = 0; i < AMQ__SPEC_MAX_KV; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%sk%d=1", i ? "," : "",
                      i);
    CHECK_OK(amq__spec_parse(buf, &p, NULL));
    CHECK(p.nkv == AMQ__SPEC_MAX_KV);
    snprintf(buf + n, sizeof buf - (size_t)n, ",zz=1");
    CHECK_STATUS(amq__spec_parse(buf, &p, NULL), AMQ_ERR_SPEC);
}

static void test_spec_via_filter_new(void) {
    static const char *bad[] = {
        "",
        ":",
        "bloom:",
        "bloom:k",
        "bloom:k=",
        "bloom:=3",
        "bloom:k=3,",
        "bloom:,k=3",
        "bloom:k=3,k=4",
        "BLOOM",
        "Bloom",
        "bloom:K=3",
        " bloom",
        "bloom ",
        "bloom:k=3 ",
        "bloom:k= 3",
        "bloom::k=3",
        "bloom:k==3",
        "bloom:k=3=4",
        "bloom:k=3:m=64",
        "no_such_filter",
        "bloom:nosuchkey=1",
        "bloom:k=abc",
        "bloom:k=0",
        "bloom:k=-1",
        "bloom:k=3x",
        "bloom:k=99999999999999999999999",
        "blo-om",
        "bloom\t",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        spec_rejected(bad[i]);

    char buf[300];
    memset(buf, 'b', sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    spec_rejected(buf); /* overly long name */
    int n = snprintf(buf, sizeof buf, "bloom:k=");
    memset(buf + n, '3', sizeof buf - (size_t)n - 1);
    spec_rejected(buf); /* overly long value */
    n = snprintf(buf, sizeof buf, "bloom:");
    memset(buf + n, 'k', 200);
    snprintf(buf + n + 200, 8, "=3");
    spec_rejected(buf); /* overly long key */

    spec_accepted("bloom");
    spec_accepted("bloom:k=3");
    spec_accepted("bloom:m=8000,k=6");

    /* Explicit parameters need no target. */
    amq_filter *f = NULL;
    CHECK_OK(amq_filter_new("bloom:m=8000,k=6", 0, 0.0, NULL, &f, NULL));
    if (f != NULL) {
        char d[128];
        amq_filter_describe(f, d, sizeof d);
        CHECK_MSG(strncmp(d, "bloom:", 6) == 0, "describe: %s", d);
        CHECK(amq_filter_capacity(f) == 0 && amq_filter_target_fpr(f) == 0.0);
    }
    amq_filter_free(f);

    /* Type lookup ignores parameters and rejects unknown names. */
    const amq_type_info *ti = amq_filter_type_find("bloom:k=3");
    CHECK(ti != NULL && strcmp(ti->name, "bloom") == 0);
    CHECK(amq_filter_type_find("no_such_filter") == NULL);
    CHECK(amq_filter_type_find("") == NULL);
}

/* The diagnostic of a spec amq_filter_new refuses. */
static void refused_with(const char *spec, const char *want) {
    amq_filter *f = NULL;
    amq_diag d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(amq_filter_new(spec, 1000, 0.01, NULL, &f, &d), AMQ_ERR_SPEC);
    CHECK_MSG(strstr(d.message, want) != NULL, "%s: '%s' lacks '%s'", spec,
              d.message, want);
    amq_filter_free(f);
}

static void test_suggest(void) {
    static const char *const words[] = {"build", "query",   NULL,
                                        "bloom", "blocked", "info"};
    size_t n = sizeof words / sizeof words[0];
    CHECK(amq_suggest("buidl", words, n) == words[0]); /* swap */
    CHECK(amq_suggest("quer", words, n) == words[1]);  /* delete */
    CHECK(amq_suggest("blom", words, n) == words[3]);  /* insert */
    CHECK(amq_suggest("Bloom", words, n) == words[3]); /* case */
    CHECK(amq_suggest("BLOCKED", words, n) == words[4]);
    CHECK(amq_suggest("inof", words, n) == words[5]);
    CHECK(amq_suggest("frobnicate", words, n) == NULL); /* nothing close */
    CHECK(amq_suggest("xyz", words, n) == NULL);
    CHECK(amq_suggest("", words, n) == NULL);
    CHECK(amq_suggest(NULL, words, n) == NULL);
    CHECK(amq_suggest("build", NULL, 0) == NULL);
    char longw[100];
    memset(longw, 'a', sizeof longw - 1);
    longw[sizeof longw - 1] = '\0';
    CHECK(amq_suggest(longw, words, n) == NULL);

    refused_with("blom", "did you mean 'bloom'?");
    refused_with("Bloom", "did you mean 'bloom'?");
    refused_with("SBBF:blocks=4", "did you mean 'sbbf'?");
    refused_with("cukoo", "did you mean 'cuckoo'?");
    refused_with("frobnicate", "see amq help types");
    refused_with("bloom:kk=5", "did you mean 'k'?");
    refused_with("cuckoo:fpp=12", "did you mean 'fp'?");
    refused_with("bloom:k=", "missing value");
}

int main(void) {
    test_status();
    test_suggest();
    test_version();
    test_hash_vectors();
    test_hash_props();
    test_hash_avalanche();
    test_spec_parser_direct();
    test_spec_via_filter_new();
    return check_report("test_core");
}
