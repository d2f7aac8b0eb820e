/*
 * verbs.h — the amq tool's verbs: one entry point a file (main.c
 * dispatches them), the defaults of the commands that build, and the hook
 * behind `--type auto`. Everything else they share is in tools/common
 * (cli.h); the experiments are a tool of their own, amq-lab (tools/lab).
 */
#ifndef AMQ_TOOLS_VERBS_H
#define AMQ_TOOLS_VERBS_H

#include "cli.h"

/* What `build` and `map build` make when not told: the smallest type that
 * still takes keys one by one (so `amq add` works later) at 1%. */
#define CLI_DEFAULT_TYPE "auto:dynamic"
#define CLI_DEFAULT_FPR 0.01

int cli_cmd_build(int argc, char **argv);
int cli_cmd_query(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_add(int argc, char **argv);    /* update.c */
int cli_cmd_remove(int argc, char **argv); /* update.c */
int cli_cmd_adapt(int argc, char **argv);  /* update.c */
int cli_cmd_merge(int argc, char **argv);
int cli_cmd_count(int argc, char **argv);
int cli_cmd_recommend(int argc, char **argv);
int cli_cmd_cascade(int argc, char **argv); /* cascade.c                   */
int cli_cmd_map(int argc, char **argv);     /* map.c: maplets              */
int cli_cmd_kmer(int argc, char **argv);    /* kmer.c, kmer_index.c        */
int cli_cmd_shard(int argc, char **argv);
int cli_cmd_lsm(int argc, char **argv);   /* lsm.c: plan                     */
int cli_cmd_range(int argc, char **argv); /* range.c: range filters        */
int cli_cmd_parquet(int argc, char **argv); /* parquet.c: Parquet files   */
int cli_cmd_clock(int argc, char **argv);   /* clock.c: logical clocks    */

/* recommend.c: the type `amq recommend` picks for a need (amq_recommend's
 * first: the smallest that meets fpr; the hook behind `--type auto`). The
 * type's canonical name (static storage), or NULL when no type meets the
 * need. need->n may be 0 (keys not counted yet). When why is not NULL, one
 * line saying why is written there. */
const char *cli_recommend_type(const amq_need *need, FILE *why);

#endif
