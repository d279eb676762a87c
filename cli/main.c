/*
 * The sluice binary: dispatches to sub-commands (cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: sluice <command> [options]\n"
            "\n"
            "commands:\n"
            "  serve        run the server (sluice serve --help)\n"
            "  bulk         inspect and build record bulks (sluice bulk "
            "--help)\n"
            "\n"
            "options:\n"
            "  -h, --help     this help\n"
            "  -V, --version  print the version\n");
}

int
main(int argc, char **argv)
{
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
    if (strcmp(argv[1], "serve") == 0) {
        return sl_cli_serve_main(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "bulk") == 0) {
        return sl_cli_bulk_main(argc - 1, argv + 1);
    }
    fprintf(stderr, "sluice: unknown command '%s' (sluice --help)\n", argv[1]);
    return 2;
}
