/*
 * The sluice command dispatcher (cli.h): `sluice` and the test binary
 * `sluice-test` share it, so they differ only in the extra worker types
 * they hand to sl_cli_set_extra_workers before calling sl_cli_main.
 */
#include <stdio.h>
#include <string.h>

#include "builtin/builtin.h"
#include "cli/cli.h"
#include "workers/workers.h"

static const struct sl_worker_type *const *extra_types;
static size_t n_extra;
static const struct sl_worker_type **all_types; /* builtin + extra */
static size_t n_all;

void
sl_cli_set_extra_workers(const struct sl_worker_type *const *types, size_t n)
{
    extra_types = types;
    n_extra = n;
}

const struct sl_worker_type *const *
sl_cli_worker_types(size_t *n)
{
    const struct sl_worker_type *const *builtin = NULL;
    size_t nb = 0;
    size_t i = 0;

    if (all_types == NULL) {
        builtin = sl_builtin_workers(&nb);
        all_types = sl_calloc(nb + n_extra + 1, sizeof(*all_types));
        for (i = 0; i < nb; i++) {
            all_types[n_all++] = builtin[i];
        }
        for (i = 0; i < n_extra; i++) {
            all_types[n_all++] = extra_types[i];
        }
    }
    *n = n_all;
    return all_types;
}

/* The commands: one row each, for dispatch and for the usage text. */
static const struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"serve", sl_cli_serve_main, "run the server"},
    {"bulk", sl_cli_bulk_main, "inspect and build record bulks"},
    {"worker", sl_cli_worker_main, "run a worker against a server"},
    {"job",
     sl_cli_job_main,
     "define, list, start, follow and cancel jobs, show their runs and "
     "documents"},
    {"workflow", sl_cli_workflow_main, "list, define or delete workflows"},
    {"index", sl_cli_index_main, "list or delete the indexes of a server"},
    {"search", sl_cli_search_main, "query an index of a running server"},
    {"source",
     sl_cli_source_main,
     "show a data source's delta entries, or purge it from the index"},
};

static void
usage(FILE *out)
{
    size_t i = 0;

    fprintf(out, "usage: sluice <command> [options]\n\ncommands:\n");
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        fprintf(out,
                "  %-12s %s (sluice %s --help)\n",
                commands[i].name,
                commands[i].summary,
                commands[i].name);
    }
    fprintf(out,
            "\n"
            "options:\n"
            "  -h, --help     this help\n"
            "  -V, --version  print the version\n");
}

int
sl_cli_main(int argc, char **argv)
{
    size_t i = 0;

    json_set_alloc_funcs(sl_malloc, sl_free);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("sluice %s\n", SL_VERSION);
        return 0;
    }
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].main(argc - 1, argv + 1);

            /* a failure to reach the server has its own status */
            return rc == 1 && sl_cli_unreachable() ? SL_CLI_EXIT_UNREACHABLE
                                                   : rc;
        }
    }
    fprintf(stderr, "sluice: unknown command '%s' (sluice --help)\n", argv[1]);
    return 2;
}
