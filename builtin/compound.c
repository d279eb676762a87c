/*
 * Compounds (builtin.h, builtin_int.h): which names are archives (the one
 * list the fileCrawler and the webCrawler mark compounds by), and their
 * extraction for a task, shared by the fileExtractor and the
 * webExtractor (docs/workers.md "fileExtractor").
 *
 * The walk over an archive open on a file descriptor is the text
 * library's (sl_text_archive_walk, text/text.h); sl__bi_extract_fd runs
 * it for a task, writing the elements to a bulk and counting what it
 * reports: for the fileExtractor, and for the webExtractor, which hands
 * it downloaded compounds with its own attribute names.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "builtin/builtin_int.h"
#include "text/text.h"

#define COPY_BUF ((size_t)64 << 10) /* a compressed file into its record */

int
sl_worker_is_archive_name(const char *name)
{
    static const char *const ext[] = {".zip",
                                      ".tar",
                                      ".tgz",
                                      ".tar.gz",
                                      ".tar.bz2",
                                      ".tar.xz",
                                      ".7z",
                                      ".jar",
                                      ".cpio",
                                      ".iso",
                                      ".eml",
                                      ".mbox",
                                      ".mbx"};
    size_t n = strlen(name);
    size_t i = 0;

    for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        size_t m = strlen(ext[i]);

        if (n > m && strcasecmp(name + n - m, ext[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

#define DEFAULT_MAX_DEPTH   5u
#define DEFAULT_MAX_ENTRIES 100000u
#define DEFAULT_MAX_TOTAL   (4ull << 30)
#define DEFAULT_MAX_RATIO   100u
#define DEFAULT_MAX_ENTRY   SL_WORKER_FILE_MAX_SIZE

/* The walk of a task: its elements go to the bulk writer w. */
struct sl__bi_extract {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output of the current compound, borrowed */
    const char *source;       /* its _source or NULL, borrowed */
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
    [SL_TEXT_ARC_NOT_ARCHIVE] = "compounds.notArchive",
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

/* The events that concern one document, for the run's document history:
 * its state, the rule (the parameter) and what became of it. */
static const struct {
    const char *reason;
    const char *message;
    int failed;
} docs[SL_TEXT_ARC_EVENTS] = {
    [SL_TEXT_ARC_CORRUPT] = {"corrupt",
                             "the archive is corrupt or truncated: the "
                             "entries after the damage are missing",
                             1},
    [SL_TEXT_ARC_SKIPPED] = {"notRegularFile",
                             "a link, device or other entry that is no "
                             "regular file: not indexed",
                             0},
    [SL_TEXT_ARC_LIMIT_DEPTH] = {"maxNestingDepth",
                                 "a nested archive: indexed as a file, "
                                 "its entries not opened",
                                 0},
    [SL_TEXT_ARC_LIMIT_ENTRIES] = {"maxEntries",
                                   "more entries than maxEntries: the rest "
                                   "of the archive is not indexed",
                                   0},
    [SL_TEXT_ARC_LIMIT_TOTAL] = {"maxTotalBytes",
                                 "expands to more than maxTotalBytes: the "
                                 "rest of the compound is not indexed",
                                 0},
    [SL_TEXT_ARC_LIMIT_RATIO] = {"maxRatio",
                                 "expands more than maxRatio times its "
                                 "size: the rest of the compound is not "
                                 "indexed",
                                 0},
    [SL_TEXT_ARC_LIMIT_ENTRY] = {"maxEntrySize",
                                 "bigger than maxEntrySize: indexed "
                                 "without its content",
                                 0},
};

static void
sink_note(void *arg, int event, double n, const char *id)
{
    struct sl__bi_extract *x = arg;

    sl_task_counter_add(x->ctx, events[event], n);
    if (id != NULL && docs[event].reason != NULL) {
        sl_task_doc(x->ctx,
                    docs[event].failed ? SL_JM_DOC_FAILED : SL_JM_DOC_SKIPPED,
                    x->source,
                    id,
                    docs[event].reason,
                    docs[event].message);
    }
}

/* ------------------------------------------------------------------------
 * The shared extraction (builtin_int.h).
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
    x->source = source;
    rc = sl_text_archive_walk(x->a, id, source, fd, size, &err);
    if (rc != 0 && err.code != 0) {
        sl_task_set_message(x->ctx, "%s", err.message);
    }
    x->w = NULL;
    x->source = NULL;
    return rc;
}

/* Copy @size bytes of @fd into the current attachment of @w. */
static int
copy_fd(struct sl__bi_extract *x,
        struct sl_bulk_writer *w,
        int fd,
        uint64_t size)
{
    char *buf = sl_malloc(COPY_BUF);
    int rc = 0;

    while (rc == 0 && size > 0) {
        ssize_t n = read(fd, buf, size < COPY_BUF ? (size_t)size : COPY_BUF);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            sl_task_set_message(x->ctx,
                                "compound: %s",
                                n < 0 ? sl_errno_str(errno) : "ends early");
            rc = SL_EIO;
            break;
        }
        rc = written(x, sl_bulk_writer_attachment_write(w, buf, (size_t)n));
        size -= (uint64_t)n;
    }
    sl_free(buf);
    return rc;
}

int
sl__bi_compound_record(struct sl__bi_extract *x,
                       struct sl_bulk_writer *w,
                       const json_t *meta,
                       const char *att,
                       int fd,
                       uint64_t size,
                       int *whole)
{
    int kind = sl_text_archive_probe(fd);
    int content =
        kind == SL_TEXT_PROBE_COMPRESSED || kind == SL_TEXT_PROBE_MESSAGE;
    int rc = 0;

    *whole = kind == SL_TEXT_PROBE_COMPRESSED;
    rc = written(x, sl_bulk_writer_record_begin(w, meta));
    if (*whole) {
        sl_task_counter_add(x->ctx, "compounds.notArchive", 1);
    }
    if (rc == 0 && content) {
        rc = written(x, sl_bulk_writer_attachment_begin(w, att, size));
        if (rc == 0) {
            rc = copy_fd(x, w, fd, size);
        }
        if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0) {
            sl_task_set_message(x->ctx, "compound: %s", sl_errno_str(errno));
            rc = SL_EIO;
        }
    }
    if (rc == 0) {
        rc = written(x, sl_bulk_writer_record_end(w));
    }
    return rc;
}
