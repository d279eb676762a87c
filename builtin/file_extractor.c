/*
 * fileExtractor (SMILA's FileExtractorWorker, docs/workers.md): for each
 * compound record of input `compounds` (as crawled by fileCrawler), reads
 * the archive with libarchive, streamed from the file, and writes one
 * element record per regular entry, content in attachment `fileContent`,
 * to output `files`.  Nested archives are spooled to an unlinked temporary
 * file and extracted recursively.  Depth, entry count, expanded bytes,
 * expansion ratio and entry size are limited; a limit that is hit is
 * counted, never fatal.  See docs/workers.md "fileExtractor".
 *
 * The extraction of one compound is compound.c's (sl__bi_extract_fd,
 * builtin_int.h), shared with the webExtractor.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin/builtin_int.h"
#include "text/text.h"

/* ------------------------------------------------------------------------
 * fileExtractor tasks.
 * --------------------------------------------------------------------- */

/* The task of one fileExtractor. */
struct file_task {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output `files`, borrowed */
    struct sl__bi_extract *x;
};

/* Report the compound of record @meta as failed (@reason, @message). */
static void
compound_doc(struct file_task *t,
             const json_t *meta,
             const char *reason,
             const char *message)
{
    sl_task_doc(t->ctx,
                SL_JM_DOC_FAILED,
                json_string_value(json_object_get(meta, "_source")),
                json_string_value(json_object_get(meta, "_recordid")),
                reason,
                message);
}

/* Extract the compound of record @meta (borrowed).  A compound that cannot
 * be read is counted and skipped; the return value is an output error. */
static int
extract_record(struct file_task *t, const json_t *meta)
{
    const json_t *p = json_object_get(meta, sl_task_mapped(t->ctx, "filePath"));
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *esc = json_is_string(p) ? json_string_value(p) : id;
    struct stat st;
    char *raw = NULL;
    int fd = -1;
    int whole = 0;
    int rc = 0;

    if (id == NULL || esc == NULL) {
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        return 0;
    }
    raw = sl_worker_path_unescape(esc);
    fd = open(raw, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
        SL_WARN("fileExtractor: %s: %s", raw, sl_errno_str(errno));
        sl_task_counter_add(t->ctx, "compounds.vanished", 1);
        compound_doc(t, meta, "vanished", sl_errno_str(errno));
        goto out;
    }
    if (fd < 0) {
        /* it exists: the run must not delete its elements' documents */
        SL_WARN("fileExtractor: %s: %s", raw, sl_errno_str(errno));
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        sl_task_set_incomplete(t->ctx, "%s: %s", raw, sl_errno_str(errno));
        compound_doc(t, meta, "unreadable", sl_errno_str(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        SL_WARN("fileExtractor: %s: not a readable regular file", raw);
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        compound_doc(t, meta, "unreadable", "not a readable regular file");
        goto out;
    }
    /* The compound itself is a file of the tree: pass its record on
     * (metadata only; with its content when it is a compressed file and
     * no archive), so it is indexed and its delta state is recorded by
     * the updatePusher like any file's. */
    rc = sl__bi_compound_record(t->x,
                                t->w,
                                meta,
                                sl_task_mapped(t->ctx, "fileContent"),
                                fd,
                                (uint64_t)st.st_size,
                                &whole);
    if (rc != 0 || whole) {
        goto out;
    }
    rc = sl__bi_extract_fd(t->x,
                           t->w,
                           id,
                           json_string_value(json_object_get(meta, "_source")),
                           fd,
                           (uint64_t)st.st_size);

out:
    if (fd >= 0) {
        (void)close(fd);
    }
    sl_free(raw);
    return rc;
}

/* One input record (a callback of sl_task_input_each): an SL_E* failure
 * of extract_record, which has set the task message, retries the task. */
static int
extract_input(void *arg, json_t *meta)
{
    return extract_record(arg, meta) == 0 ? SL_WORKER_OK
                                          : SL_WORKER_RECOVERABLE;
}

static int
extractor_perform(struct sl_task_ctx *ctx)
{
    struct sl_text_archive_names names = {
        sl_task_mapped(ctx, "filePath"),
        sl_task_mapped(ctx, "fileName"),
        sl_task_mapped(ctx, "fileFolder"),
        sl_task_mapped(ctx, "fileExtension"),
        sl_task_mapped(ctx, "fileSize"),
        sl_task_mapped(ctx, "fileLastModified"),
        sl_task_mapped(ctx, "fileContent"),
        0, /* ISO 8601, as the fileCrawler's fileLastModified */
    };
    struct file_task t;
    int res = SL_WORKER_OK;
    int rc = 0;

    memset(&t, 0, sizeof(t));
    t.ctx = ctx;
    if (sl__bi_extract_new(ctx, &names, &t.x) != 0) {
        return SL_WORKER_FATAL;
    }
    rc = sl_task_output_writer(ctx, "files", &t.w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output files: %s", sl_strerror(rc));
        res = rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    } else {
        res = sl_task_input_each(ctx, "compounds", extract_input, &t);
    }
    sl__bi_extract_free(t.x);
    return res;
}

const struct sl_worker_type sl_worker_fileExtractor = {
    SL_WORKER_ABI_VERSION,
    "fileExtractor",
    "{\"name\": \"fileExtractor\","
    " \"parameters\": [" SL__BI_DECL_MAPPING "," SL__BI_DECL_EXTRACT_LIMITS "],"
    " \"input\": [{\"name\": \"compounds\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"files\", \"type\": \"recordBulks\"}]}",
    extractor_perform,
    NULL,
    NULL,
};
