/*
 * test_sketch_frame.c — frames of the typed sketches (amq_cms_save/load,
 * amq_topk_save/load): the bytes are the generic filter's frame (they open
 * with amq_filter_load and answer the same), a loaded sketch saves back to
 * identical bytes and continues exactly where the saved one stopped, and
 * every refusal (short buffer, flipped byte, truncation, other type, NULL)
 * leaves nothing allocated.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "amq/amq.h"

static uint8_t *save_cms(const amq_cms *c, const amq_hasher *h, size_t *len) {
    *len = amq_cms_serialized_size(c);
    uint8_t *buf = malloc(*len);
    size_t w = 0;
    CHECK_STATUS(amq_cms_save(c, h, buf, *len - 1, &w), AMQ_ERR_BUFFER);
    CHECK(w == 0);
    CHECK_OK(amq_cms_save(c, h, buf, *len, &w));
    CHECK(w == *len);
    return buf;
}

static void test_cms(void) {
    amq_cms *c = NULL, *d = NULL;
    amq_hasher h, back;
    amq_filter *f = NULL;
    size_t len, len2;
    CHECK_OK(amq_hasher_init(&h, AMQ_HASH_XXH64, 77, NULL));
    CHECK_OK(amq_cms_new(500, 4, 32, false, NULL, &c));
    for (uint64_t i = 0; i < 300; i++)
        amq_cms_incr(c, amq_hash64(&h, &i, sizeof i), 1 + i % 7);
    uint8_t *buf = save_cms(c, &h, &len);
    CHECK_OK(amq_cms_load(buf, len, NULL, &d, &back, NULL));
    CHECK(back.kind == AMQ_HASH_XXH64 && back.seed == 77);
    CHECK_OK(amq_filter_load(buf, len, NULL, &f, NULL));
    for (uint64_t i = 0; i < 400; i++) {
        uint64_t x = amq_hash64(&h, &i, sizeof i), n = 0;
        CHECK(amq_cms_query(d, x) == amq_cms_query(c, x));
        CHECK_OK(amq_filter_count_hash(f, x, &n));
        CHECK(n == amq_cms_query(c, x));
    }
    uint8_t *again = save_cms(d, &back, &len2);
    CHECK(len2 == len && memcmp(again, buf, len) == 0);
    /* the generic filter writes the same frame */
    size_t w = 0;
    CHECK_OK(amq_filter_save(f, again, len2, &w));
    CHECK(w == len && memcmp(again, buf, len) == 0);
    amq_cms *bad = (amq_cms *)1;
    buf[len / 2] ^= 0x10;
    CHECK_STATUS(amq_cms_load(buf, len, NULL, &bad, NULL, NULL),
                 AMQ_ERR_CHECKSUM);
    CHECK(bad == NULL);
    buf[len / 2] ^= 0x10;
    CHECK(amq_cms_load(buf, len - 8, NULL, &bad, NULL, NULL) != AMQ_OK);
    CHECK_STATUS(amq_cms_save(c, NULL, buf, len, NULL), AMQ_ERR_INVALID);
    CHECK_STATUS(amq_cms_load(NULL, len, NULL, &bad, NULL, NULL),
                 AMQ_ERR_INVALID);
    free(again);
    free(buf);
    amq_filter_free(f);
    amq_cms_free(c);
    amq_cms_free(d);
}

static uint8_t *save_topk(const amq_topk *t, size_t *len) {
    *len = amq_topk_serialized_size(t);
    uint8_t *buf = malloc(*len);
    CHECK_OK(amq_topk_save(t, buf, *len, NULL));
    return buf;
}

static void feed_topk(amq_topk *t, uint64_t from, uint64_t to) {
    char key[32];
    for (uint64_t i = from; i < to; i++) {
        int n = snprintf(key, sizeof key, "item-%llu",
                         (unsigned long long)(i % 13 == 0 ? 1 : i % 97));
        CHECK_OK(amq_topk_add_key(t, key, (size_t)n, NULL, NULL));
    }
}

static void test_topk(void) {
    amq_topk *t = NULL, *u = NULL;
    amq_cms *wrong = NULL;
    size_t len, len2;
    CHECK_OK(amq_topk_new(5, 0, 0, 1.08, 64, NULL, &t));
    feed_topk(t, 0, 3000);
    uint8_t *buf = save_topk(t, &len);
    CHECK_OK(amq_topk_load(buf, len, NULL, &u, NULL));
    CHECK_STATUS(amq_cms_load(buf, len, NULL, &wrong, NULL, NULL),
                 AMQ_ERR_INCOMPATIBLE);
    CHECK(wrong == NULL);
    amq_topk_item a[5], b[5];
    size_t na = amq_topk_list(t, a, 5), nb = amq_topk_list(u, b, 5);
    CHECK(na == nb && na == 5);
    for (size_t i = 0; i < na && i < nb; i++)
        CHECK(a[i].hash == b[i].hash && a[i].count == b[i].count &&
              a[i].key_stored == b[i].key_stored &&
              memcmp(a[i].key, b[i].key, a[i].key_stored) == 0);
    CHECK(amq_topk_hash(u, "item-1", 6) == amq_topk_hash(t, "item-1", 6));
    /* the loaded sketch continues exactly as the original (decay draws) */
    feed_topk(t, 3000, 6000);
    feed_topk(u, 3000, 6000);
    free(buf);
    buf = save_topk(t, &len);
    uint8_t *b2 = save_topk(u, &len2);
    CHECK(len == len2 && memcmp(buf, b2, len) == 0);
    free(b2);
    free(buf);
    amq_topk_free(t);
    amq_topk_free(u);
}

int main(void) {
    test_cms();
    test_topk();
    return check_report("sketch_frame");
}
