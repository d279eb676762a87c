/*
 * textExtractor: placeholder, being written (docs/workers.md).
 */
#include "workers/workers.h"

static int
text_perform(struct sl_task_ctx *ctx)
{
    sl_task_set_message(ctx, "textExtractor: not built yet");
    return SL_WORKER_FATAL;
}

const struct sl_worker_type sl_worker_textExtractor = {
    SL_WORKER_ABI_VERSION,
    "textExtractor",
    "{\"name\": \"textExtractor\","
    " \"parameters\": [{\"name\": \"contentAttachment\", \"optional\": true},"
    "  {\"name\": \"maxTextBytes\", \"optional\": true},"
    "  {\"name\": \"maxContentBytes\", \"optional\": true}],"
    " \"input\": [{\"name\": \"recordsToExtract\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"extractedRecords\", \"type\": "
    "\"recordBulks\"}]}",
    text_perform,
    NULL,
};
