/*
 * sluice-test: the real sluice command line plus the test workers, which
 * `serve` runs in-process and `worker` runs as an external worker.
 */
#include "cli/cli.h"
#include "tests/workers/test_workers.h"

int
main(int argc, char **argv)
{
    size_t n = 0;
    const struct sl_worker_type *const *types = sl_test_workers(&n);

    sl_cli_set_extra_workers(types, n);
    return sl_cli_main(argc, argv);
}
