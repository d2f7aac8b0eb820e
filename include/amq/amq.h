/*
 * amq/amq.h — umbrella header: everything public in amq.
 *
 * Start here: amq/filter.h is the one interface most programs need. Create
 * a filter from a spec string and a target (amq_filter_new("blocked",
 * capacity, fpr, NULL, &f, &diag)), add keys, query them, and save it with
 * amq_filter_save_file / reopen it with amq_filter_open_file. When the
 * number of keys is not known in advance, or for the static types (xor,
 * fuse, ribbon), which are built once from all keys, amq/builder.h takes
 * the keys and builds the filter sized for them (amq_builder_new, _add,
 * _finish); amq/recommend.h says which type to build for a need
 * (amq_recommend). Every fallible call returns an amq_status
 * (amq/status.h; amq_strerror names it). The other headers are the typed
 * APIs of each family (bloom.h, counting.h, cuckoo.h, quotient.h,
 * static.h, sketch.h), the Bloom clocks (clock.h) and the queries compiled
 * into the caller's loop (query.h, with the formats' arithmetic in
 * mix.h); core.h has the options, allocator hooks and hashing every
 * object shares. `amq help types` lists every spec name with its
 * parameters.
 */
#ifndef AMQ_AMQ_H
#define AMQ_AMQ_H
#include "amq/version.h"
#include "amq/status.h"
#include "amq/core.h"
#include "amq/filter.h"
#include "amq/builder.h"
#include "amq/recommend.h"
#include "amq/bloom.h"
#include "amq/counting.h"
#include "amq/sketch.h"
#include "amq/cuckoo.h"
#include "amq/quotient.h"
#include "amq/static.h"
#include "amq/mix.h"
#include "amq/query.h"
#include "amq/dynamic.h"
#include "amq/maplet.h"
#include "amq/clock.h"
#include "amq/alloc.h"
#include "amq/shard.h"
#include "amq/cascade.h"
#include "amq/lsm.h"
#include "amq/window.h"
#include "amq/range.h"
#endif
