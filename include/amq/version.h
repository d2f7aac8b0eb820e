/* amq/version.h — version macros and the symbol-export macro. */
#ifndef AMQ_VERSION_H
#define AMQ_VERSION_H

#define AMQ_VERSION_MAJOR 0
#define AMQ_VERSION_MINOR 1
#define AMQ_VERSION_PATCH 0
#define AMQ_VERSION_NUMBER                                                     \
    (AMQ_VERSION_MAJOR * 10000 + AMQ_VERSION_MINOR * 100 + AMQ_VERSION_PATCH)

#if defined(AMQ_STATIC_DEFINE)
#define AMQ_API
#elif defined(__GNUC__)
#define AMQ_API __attribute__((visibility("default")))
#else
#define AMQ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* "MAJOR.MINOR.PATCH" of the linked library (may differ from the macros). */
AMQ_API const char *amq_version(void);
AMQ_API int amq_version_number(void);
#ifdef __cplusplus
}
#endif
#endif
