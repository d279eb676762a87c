/* updatePusher: being written. */
#include "workers/workers.h"

static int
perform(struct sl_task_ctx *ctx)
{
    sl_task_set_message(ctx, "updatePusher: not built yet");
    return SL_WORKER_FATAL;
}

const struct sl_worker_type sl_worker_updatePusher = {
    SL_WORKER_ABI_VERSION,
    "updatePusher",
    "{\"name\": \"updatePusher\", \"input\": [{\"name\": \"in\", \"type\": "
    "\"recordBulks\"}]}",
    perform,
    NULL,
};
