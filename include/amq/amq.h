/* amq/amq.h — umbrella header: everything public in amq. */
#ifndef AMQ_AMQ_H
#define AMQ_AMQ_H
#include "amq/version.h"
#include "amq/status.h"
#include "amq/core.h"
#include "amq/filter.h"
#include "amq/bloom.h"
#endif
