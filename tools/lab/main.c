/*
 * main.c — entry point of amq-lab, the experiments and evaluations over
 * the amq library: the demo table, the Bloom clock simulator, the LSM
 * filter-tuning laws and the cascade evaluation. The program around them
 * (options, help, messages, the stdout check) is tools/common's, the same
 * as amq's.
 */
#include "lab.h"

static const cli_command commands[] = {
    {"demo", lab_cmd_demo}, {"clock", lab_cmd_clock},
    {"lsm", lab_cmd_lsm},   {"cascade", lab_cmd_cascade},
    {"help", cli_cmd_help}, {NULL, NULL},
};

int main(int argc, char **argv) { return cli_main(argc, argv, commands); }
