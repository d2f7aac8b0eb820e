/* amq/amq.h — umbrella header: everything public in amq. */
#ifndef AMQ_AMQ_H
#define AMQ_AMQ_H
#include "amq/version.h"
#include "amq/status.h"
#include "amq/core.h"
#include "amq/filter.h"
#include "amq/builder.h"
#include "amq/bloom.h"
#include "amq/counting.h"
#include "amq/sketch.h"
#include "amq/cuckoo.h"
#include "amq/quotient.h"
#include "amq/static.h"
#include "amq/maplet.h"
#include "amq/clock.h"
#endif
