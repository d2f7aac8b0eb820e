/*
 * status.c — names and messages for amq_status, generated from the one
 * X-macro table in amq/status.h, plus the library version.
 */
#include "amq/status.h"

const char *amq_strerror(amq_status status) {
    switch (status) {
#define AMQ__STATUS_MSG(name, value, msg)                                      \
    case name: return msg;
        AMQ_STATUS_TABLE(AMQ__STATUS_MSG)
#undef AMQ__STATUS_MSG
    }
    return "unknown status";
}

const char *amq_status_name(amq_status status) {
    switch (status) {
#define AMQ__STATUS_NAME(name, value, msg)                                     \
    case name: return #name;
        AMQ_STATUS_TABLE(AMQ__STATUS_NAME)
#undef AMQ__STATUS_NAME
    }
    return "unknown status";
}

#define AMQ__STR2(x) #x
#define AMQ__STR(x) AMQ__STR2(x)

const char *amq_version(void) {
    return AMQ__STR(AMQ_VERSION_MAJOR) "." AMQ__STR(
        AMQ_VERSION_MINOR) "." AMQ__STR(AMQ_VERSION_PATCH);
}

int amq_version_number(void) { return AMQ_VERSION_NUMBER; }
