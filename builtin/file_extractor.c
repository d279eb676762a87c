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
 * The walk over an archive open on a file descriptor is the text
 * library's (sl_text_archive_walk, text/text.h); sl__bi_extract_fd
 * (workers_int.h) runs it for a task, writing the elements to a bulk and
 * counting what it reports, for this worker and the webExtractor
 * (web_crawler.c), which hands it downloaded compounds with its own
 * attribute names.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin/builtin_int.h"
#include "text/text.h"

#define DEFAULT_MAX_DEPTH   5u
#define DEFAULT_MAX_ENTRIES 100000u
#define DEFAULT_MAX_TOTAL   (4ull << 30)
#define DEFAULT_MAX_RATIO   100u
#define DEFAULT_MAX_ENTRY   SL_WORKER_FILE_MAX_SIZE

/* The walk of a task: its elements go to the bulk writer w. */
struct sl__bi_extract {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output of the current compound, borrowed */
    struct sl_text_archive *a;
};

/* ------------------------------------------------------------------------
 * The sink of the walk: element records into the task's bulk, events into
 * its counters.
 * --------------------------------------------------------------------- */

/* The counter of each enum sl_text_archive_event. */
static const char *const events[SL_TEXT_ARC_EVENTS] = {
    [SL_TEXT_ARC_EXTRACTED] = "compounds.extracted",
    [SL_TEXT_ARC_CORRUPT] = "compounds.corrupt",
    [SL_TEXT_ARC_RECORDS] = "elements.records",
    [SL_TEXT_ARC_BYTES] = "elements.bytes",
    [SL_TEXT_ARC_SANITISED] = "entries.sanitised",
    [SL_TEXT_ARC_SKIPPED] = "entries.skipped",
    [SL_TEXT_ARC_UNNAMED] = "entries.unnamed",
    [SL_TEXT_ARC_LIMIT_DEPTH] = "limits.depth",
    [SL_TEXT_ARC_LIMIT_ENTRIES] = "limits.entries",
    [SL_TEXT_ARC_LIMIT_TOTAL] = "limits.totalBytes",
    [SL_TEXT_ARC_LIMIT_RATIO] = "limits.ratio",
    [SL_TEXT_ARC_LIMIT_ENTRY] = "limits.entrySize",
};

/* An output error: the task message says it. */
static int
written(struct sl__bi_extract *x, int rc)
{
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
    }
    return rc;
}

static int
sink_begin(void *arg, const json_t *meta, const char *att, uint64_t size)
{
    struct sl__bi_extract *x = arg;
    int rc = sl_bulk_writer_record_begin(x->w, meta);

    if (rc == 0 && att != NULL) {
        rc = sl_bulk_writer_attachment_begin(x->w, att, size);
    }
    return written(x, rc);
}

static int
sink_write(void *arg, const void *p, size_t n)
{
    struct sl__bi_extract *x = arg;

    return written(x, sl_bulk_writer_attachment_write(x->w, p, n));
}

static int
sink_end(void *arg)
{
    struct sl__bi_extract *x = arg;

    return written(x, sl_bulk_writer_record_end(x->w));
}

static int
sink_canceled(void *arg)
{
    return sl_task_is_canceled(((struct sl__bi_extract *)arg)->ctx);
}

static void
sink_note(void *arg, int event, double n)
{
    struct sl__bi_extract *x = arg;

    sl_task_counter_add(x->ctx, events[event], n);
}

/* ------------------------------------------------------------------------
 * The shared extraction (workers_int.h).
 * --------------------------------------------------------------------- */

int
sl__bi_extract_new(struct sl_task_ctx *ctx,
                   const struct sl_text_archive_names *names,
                   struct sl__bi_extract **out)
{
    static const struct {
        const char *name;
        uint64_t def;
        size_t off;
    } params[] = {
        {"maxNestingDepth",
         DEFAULT_MAX_DEPTH,
         offsetof(struct sl_text_archive_limits, max_depth)},
        {"maxEntries",
         DEFAULT_MAX_ENTRIES,
         offsetof(struct sl_text_archive_limits, max_entries)},
        {"maxTotalBytes",
         DEFAULT_MAX_TOTAL,
         offsetof(struct sl_text_archive_limits, max_total)},
        {"maxRatio",
         DEFAULT_MAX_RATIO,
         offsetof(struct sl_text_archive_limits, max_ratio)},
        {"maxEntrySize",
         DEFAULT_MAX_ENTRY,
         offsetof(struct sl_text_archive_limits, max_entry)},
    };
    struct sl_text_archive_limits lim;
    struct sl_text_archive_sink sink;
    struct sl__bi_extract *x = NULL;
    size_t i = 0;

    *out = NULL;
    memset(&lim, 0, sizeof(lim));
    for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        uint64_t *v = (uint64_t *)(void *)((char *)&lim + params[i].off);

        if (sl_task_param_u64(ctx, params[i].name, params[i].def, v) != 0) {
            sl_task_set_message(ctx, "%s: not a number", params[i].name);
            return SL_EINVAL;
        }
    }
    x = sl_calloc(1, sizeof(*x));
    x->ctx = ctx;
    memset(&sink, 0, sizeof(sink));
    sink.arg = x;
    sink.begin = sink_begin;
    sink.write = sink_write;
    sink.end = sink_end;
    sink.canceled = sink_canceled;
    sink.note = sink_note;
    sink.escape = sl_worker_path_escape;
    sink.is_archive = sl_worker_is_archive_name;
    x->a = sl_text_archive_new(sl_task_worker(ctx), &lim, names, &sink);
    *out = x;
    return 0;
}

void
sl__bi_extract_free(struct sl__bi_extract *x)
{
    if (x != NULL) {
        sl_text_archive_free(x->a);
        sl_free(x);
    }
}

int
sl__bi_extract_fd(struct sl__bi_extract *x,
                  struct sl_bulk_writer *w,
                  const char *id,
                  const char *source,
                  int fd,
                  uint64_t size)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    x->w = w;
    rc = sl_text_archive_walk(x->a, id, source, fd, size, &err);
    if (rc != 0 && err.code != 0) {
        sl_task_set_message(x->ctx, "%s", err.message);
    }
    x->w = NULL;
    return rc;
}

/* ------------------------------------------------------------------------
 * fileExtractor tasks.
 * --------------------------------------------------------------------- */

/* The task of one fileExtractor. */
struct file_task {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output `files`, borrowed */
    struct sl__bi_extract *x;
};

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
        goto out;
    }
    if (fd < 0) {
        /* it exists: the run must not delete its elements' documents */
        SL_WARN("fileExtractor: %s: %s", raw, sl_errno_str(errno));
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        sl_task_set_incomplete(t->ctx, "%s: %s", raw, sl_errno_str(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        SL_WARN("fileExtractor: %s: not a readable regular file", raw);
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        goto out;
    }
    /* The compound itself is a file of the tree: pass its record on
     * (metadata only), so it is indexed and its delta state is recorded
     * by the updatePusher like any file's. */
    rc = sl_bulk_writer_record_begin(t->w, meta);
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(t->w);
    }
    if (rc != 0) {
        sl_task_set_message(t->ctx, "write: %s", sl_strerror(rc));
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
