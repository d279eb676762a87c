/*
 * An input bulk passed on unchanged (builtin_int.h): when every record of
 * the task's one input already is what the worker would write (the
 * textExtractor's records that bring their text, the webFetcher's that
 * bring their content), the input becomes the output, shared by the
 * object store instead of copied (sl_task_output_copy_input).
 */
#include "builtin/builtin_int.h"

int
sl__bi_share_input(struct sl_task_ctx *ctx,
                   const char *in,
                   const char *out,
                   int (*ok)(void *arg, const char *name, uint64_t size),
                   void *arg,
                   int alone,
                   const char *counter)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_err err;
    const char *meta = NULL;
    size_t len = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_task_input_count(ctx, in) != 1 ||
        sl_task_input_open(ctx, in, 0, &r) != 0) {
        return 0;
    }
    while ((rc = sl_bulk_reader_next_raw(r, &meta, &len, &err)) == 1) {
        const char *name = NULL;
        uint64_t size = 0;

        if (sl_bulk_reader_attachment_next(r, &name, &size, &err) != 1 ||
            !ok(arg, name, size) ||
            (alone ? sl_bulk_reader_attachment_next(r, &name, &size, &err) != 0
                   : sl_bulk_reader_skip_attachments(r, NULL, &err) != 0)) {
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        rc = sl_task_output_copy_input(ctx, out, r);
        if (rc == 0 && sl_bulk_reader_count(r) > 0) {
            sl_task_counter_add(ctx, counter, (double)sl_bulk_reader_count(r));
            sl_task_counter_add(ctx, "bulks.shared", 1);
        }
        rc = rc == 0 ? 1 : rc == 1 ? 0 : rc;
    } else {
        rc = 0;
    }
    sl_task_input_close(ctx, r);
    return rc;
}
