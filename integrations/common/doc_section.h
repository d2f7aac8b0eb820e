/*
 * doc_section.h — the benchmarks' way of writing their results into the
 * documentation: the text between two marker lines
 *
 *     <!-- BEGIN name -->
 *     ... replaced ...
 *     <!-- END name -->
 *
 * is replaced, the rest of the file kept byte for byte. The file is
 * written to FILE.tmp and renamed, so it is never left half-written.
 */
#ifndef AMQ_DOC_SECTION_H
#define AMQ_DOC_SECTION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 on success; -1 with a message on stderr (file unreadable, markers
 * missing or out of order, write failure: the file is then unchanged). */
int doc_section_replace(const char *path, const char *name, const char *text);

#ifdef __cplusplus
}
#endif
#endif
