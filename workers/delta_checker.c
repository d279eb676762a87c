/* deltaChecker: being written. */
#include "workers/workers.h"

static int
perform(struct sl_task_ctx *ctx)
{
    sl_task_set_message(ctx, "deltaChecker: not built yet");
    return SL_WORKER_FATAL;
}

const struct sl_worker_type sl_worker_deltaChecker = {
    SL_WORKER_ABI_VERSION,
    "deltaChecker",
    "{\"name\": \"deltaChecker\", \"input\": [{\"name\": \"in\", \"type\": "
    "\"recordBulks\"}]}",
    perform,
    NULL,
};
