/*
 * test_cascade_threads.c — the model search trains two models at once
 * with the default allocator and one at a time with a caller's; both give
 * the same cascade, byte for byte. Runs under ThreadSanitizer too.
 */
#include <stdlib.h>
#include <string.h>

#include "cascade_gen.h"
#include "check.h"

static void *plain_alloc(void *ctx, size_t n) {
    (void)ctx;
    return malloc(n);
}
static void *plain_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx;
    (void)old;
    return realloc(p, n);
}
static void plain_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    (void)n;
    free(p);
}

static uint8_t *train_frame(const gen_keys *m, const gen_keys *n,
                            const amq_options *opt, size_t *len) {
    amq_cascade_config cfg;
    amq_cascade_config_init(&cfg);
    cfg.fpr = 0.01;
    cfg.model.epochs = 2;
    cfg.choose &= ~AMQ_CHOOSE_PLAIN; /* the models are what is compared */
    amq_cascade *c = NULL;
    CHECK_OK(amq_cascade_train(&m->k, &n->k, &cfg, opt, &c, NULL));
    if (c == NULL)
        return NULL;
    *len = amq_cascade_save_size(c);
    uint8_t *buf = malloc(*len);
    size_t w;
    CHECK_OK(amq_cascade_save(c, buf, *len, &w));
    amq_cascade_free(c);
    return buf;
}

int main(void) {
    gen_keys m, n;
    gen_hosts(21, check_quick() ? 3000 : 8000, check_quick() ? 9000 : 24000,
              0.1, &m, &n);
    amq_allocator al = {plain_alloc, plain_realloc, plain_free, NULL};
    amq_options one = {.allocator = &al};
    size_t la = 0, lb = 0;
    uint8_t *a = train_frame(&m, &n, NULL, &la); /* two threads */
    uint8_t *b = train_frame(&m, &n, &one, &lb); /* one thread */
    CHECK(a != NULL && b != NULL && la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    gen_free(&m);
    gen_free(&n);
    return check_report("test_cascade_threads");
}
