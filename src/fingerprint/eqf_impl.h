/*
 * eqf_impl.h — the expandable quotient table (eqf.c) for the types built
 * on it: "eqf" itself and the Memento range filter (range/memento.c).
 *
 * A qf table whose w-bit slots hold a variable-length code (eqf.c) in
 * their top w - pb bits and pb payload bits below it, sorted as slots of
 * a qf run are. The payload rides along unchanged through doublings and
 * widenings; only the code gives bits to the address. With pb = 0 it is
 * the eqf's table. Lookups take a payload range [plo, phi]: an entry
 * answers when its code matches the key's and its payload lies in it.
 *
 * by_len[l] is the bound's count of length-l codes: every entry when
 * `groups` is false (eqf), or every distinct code of a run when it is
 * true (memento: the entries of one prefix share one code, and a stranger
 * matching it is one event however many payloads follow it).
 */
#ifndef AMQ_SRC_FINGERPRINT_EQF_IMPL_H
#define AMQ_SRC_FINGERPRINT_EQF_IMPL_H

#include "fingerprint/qf_impl.h"

#define AMQ__EQF_DEFAULT_GROWTH 10u
#define AMQ__EQF_MAX_GROWTH 40u
#define AMQ__EQF_MAX_W 56u /* the qf's fast slot paths */

/* Fingerprint lengths: l0 for the first table's keys, l1 for those added
 * after doublings 1..growth, then l1 + e(K) (l1 >= l0; a filter made
 * from a target has l1 = l0, one made from a full qf its remainder
 * length as l0). */
typedef struct amq__eqf_plan {
    unsigned l0, l1, growth;
} amq__eqf_plan;

typedef struct amq_eqf {
    amq__obj o; /* o.items: keys held (added minus removed) */
    amq_qf *t;
    uint64_t base; /* N0 */
    amq__eqf_plan plan;
    unsigned k;          /* doublings so far */
    unsigned pb;         /* payload bits under each code */
    bool groups;         /* by_len counts a run's distinct codes */
    uint64_t by_len[64]; /* codes of each length (see above) */
} amq_eqf;

/* L0 for a target: the least l whose bound after *growth doublings at
 * 95% load stays under fpr, *growth then raised to what l covers. */
unsigned amq__eqf_l0_for(double fpr, unsigned *growth);

/* The spec's growth= (0..40, default 10), and the first table from q= or
 * slots= and l= (the key of length bits, from fpr when not given: then
 * with the growth it covers), for capacity keys; name for messages. */
amq_status amq__eqf_shape(struct amq__spec *spec, uint64_t capacity, double fpr,
                          const char *name, uint64_t *slots, unsigned *l,
                          unsigned *growth, amq_diag *diag);

/* An empty table of `slots` home slots for l-bit fingerprints with pb
 * payload bits, in an object of `size` bytes (>= sizeof(amq_eqf): the
 * type's own fields follow). AMQ_ERR_OVERFLOW when l + 1 + pb > 56. */
amq_status amq__eqf_new(size_t size, uint64_t slots, unsigned l,
                        unsigned growth, unsigned pb, bool groups,
                        const amq_options *opt, amq_eqf **out, amq_diag *diag);
void amq__eqf_destroy(amq__obj *o);

/* One key of hash h with payload pay (< 2^pb), doubling first when the
 * table is full; AMQ_ERR_OVERFLOW when the next width passes 56 bits. */
amq_status amq__eqf_put(amq_eqf *e, uint64_t h, uint64_t pay);
/* Remove the longest entry matching h with payload pay;
 * AMQ_ERR_NOT_FOUND when none does. */
amq_status amq__eqf_take(amq_eqf *e, uint64_t h, uint64_t pay);
/* The entries matching h with a payload in [plo, phi]: whether any (the
 * slot-by-slot reference), and how many. */
bool amq__eqf_any(const amq_eqf *e, uint64_t h, uint64_t plo, uint64_t phi);
/* Whether some code matches h, whatever the payloads, from a word-wide
 * test of h's run: AMQ__EQF_NO, AMQ__EQF_YES, or AMQ__EQF_MAYBE when the
 * run does not fit one word (and always under AMQ_OPT_SCALAR): the
 * entries must then be read. */
enum { AMQ__EQF_NO, AMQ__EQF_YES, AMQ__EQF_MAYBE };
int amq__eqf_probe(const amq_eqf *e, uint64_t h);
uint64_t amq__eqf_matches(const amq_eqf *e, uint64_t h, uint64_t plo,
                          uint64_t phi);
/* Each entry matching h, longest first is not promised: fn(ctx, slot,
 * length, payload) in slot order until it returns false. The slot is
 * valid until the next update. */
typedef bool (*amq__eqf_visit_fn)(void *ctx, uint64_t slot, unsigned len,
                                  uint64_t pay);
void amq__eqf_visit(const amq_eqf *e, uint64_t h, amq__eqf_visit_fn fn,
                    void *ctx);
/* The entry at `slot` (from a visit) with its payload replaced by pay
 * (< 2^pb): the code, so the run's order, is unchanged. */
void amq__eqf_set_payload(amq_eqf *e, uint64_t slot, uint64_t pay);

/* Ask for h's block ahead of an update (batches overlap their misses);
 * how far ahead a batch asks. */
void amq__eqf_prefetch(const amq_eqf *e, uint64_t h);
#define AMQ__EQF_AHEAD 8

/* The chance a stranger's hash matches some code: sum of by_len[l] 2^-l
 * over N, and 2^-64 a slot. */
double amq__eqf_bound(const amq_eqf *e);

/* The curve of a table as built, at 95% load: fixed + l bits a slot
 * (fixed: the delimiter, payload and metadata bits), rate scale 0.95
 * 2^-l, l taken as real; x bits a key -> the rate, or (inverse) x = the
 * rate -> bits a key. */
double amq__eqf_curve(double fixed, double scale, double x, bool inverse);

/* Frame: the qf's 24-byte block, then first slots N0 u64 | keys u64 |
 * L0 u8 | H u8 | K u8 | L1 u8 | payload bits u8 | tail blocks u24 (64
 * slots each beyond the qf's default tail: a run that reached the
 * table's end lengthened it, eqf.c); the payload is the qf table. load
 * reads that block at rd (a type's own fields may follow) and the table,
 * validates both (payload bits at most pb_max) and returns the table in
 * an object of `size` bytes. */
#define AMQ__EQF_PARAMS_LEN (AMQ__QF_PARAMS_LEN + 24)
/* The type callbacks every type on the core shares (o is an amq_eqf or
 * begins with one): the payload (the qf table) and its bytes. */
size_t amq__eqf_payload_size(const amq__obj *o);
void amq__eqf_payload_write(const amq__obj *o, uint8_t *dst);
void amq__eqf_params_write(const amq_eqf *e, amq__wr *w);
amq_status amq__eqf_load(amq__rd *rd, const char *name, const uint8_t *payload,
                         size_t len, bool view, unsigned pb_max, bool groups,
                         size_t size, const amq_options *opt, amq_eqf **out);

#endif
