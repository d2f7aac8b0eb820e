/*
 * spec.h — parsing NAME[:key=value,...] structure specs.
 *
 * Parsing is strict: names and keys are [a-z0-9_], values are non-empty and
 * have no ',' ':' '=' or spaces, a key appears at most once, and every key
 * must be consumed by the type (amq__spec_finish reports the first unused one
 * as an unknown parameter).
 */
#ifndef AMQ_SRC_CORE_SPEC_H
#define AMQ_SRC_CORE_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "amq/core.h"
#include "core/diag.h"

#define AMQ__SPEC_MAX_KV 12
#define AMQ__SPEC_NAME_MAX 32
#define AMQ__SPEC_KEY_MAX 24
#define AMQ__SPEC_VAL_MAX 48

typedef struct amq__spec_kv {
    char key[AMQ__SPEC_KEY_MAX];
    char val[AMQ__SPEC_VAL_MAX];
    size_t offset; /* of the key in the original string */
    bool used;
} amq__spec_kv;

typedef struct amq__spec {
    char name[AMQ__SPEC_NAME_MAX];
    size_t nkv;
    amq__spec_kv kv[AMQ__SPEC_MAX_KV];
} amq__spec;

amq_status amq__spec_parse(const char *s, amq__spec *out, amq_diag *diag);

/* Look a key up and convert it. *found (may be NULL) tells whether it was
 * present; absent keys leave *out untouched and return AMQ_OK. A present
 * key with a bad value returns AMQ_ERR_SPEC with a diagnostic. */
amq_status amq__spec_u64(amq__spec *s, const char *key, uint64_t lo,
                         uint64_t hi, uint64_t *out, bool *found,
                         amq_diag *diag);
amq_status amq__spec_f64(amq__spec *s, const char *key, double lo, double hi,
                         double *out, bool *found, amq_diag *diag);

/* A key whose value is one of words[] (NULL-terminated): *out its index;
 * absent keys leave *out untouched. Another value returns AMQ_ERR_SPEC
 * listing the words. */
amq_status amq__spec_word(amq__spec *s, const char *key,
                          const char *const *words, unsigned *out,
                          amq_diag *diag);

/* AMQ_ERR_SPEC naming the first key no getter consumed, with the nearest
 * of the type's parameter names when one is close (params: the type's
 * "key=meaning, ..." text, amq_type_info.params; may be NULL). */
amq_status amq__spec_finish(const amq__spec *s, const char *params,
                            amq_diag *diag);

#endif
