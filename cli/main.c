/*
 * The sluice binary: the built-in worker types only (cli.h).
 */
#include "cli/cli.h"

int
main(int argc, char **argv)
{
    return sl_cli_main(argc, argv);
}
