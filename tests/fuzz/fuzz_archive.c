/*
 * The archive walk of the fileExtractor and webExtractor
 * (builtin/compound.c, sl__bi_extract_fd): libarchive over every
 * archive format and filter it reads, mailboxes and messages (GMime),
 * nested archives, the limits.  The first
 * input byte is a mode (bit 0: small limits; bit 1: the webExtractor's
 * attribute names and HTTP dates), the rest the compound, read from a
 * memory file.  The element records go to a bulk in memory, which is
 * read back.  Checks: the walk ends without an error (a corrupt archive
 * is counted, not an error), the bulk is valid, every element id is
 * "<compound>!/<path>" with no empty, "." or ".." segment, names its
 * compound, and the content written stays within maxTotalBytes.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "core/sl.h"
#include "builtin/builtin_int.h"
#include "text/text.h"
#include "workers/workers_int.h"

#include "fuzz.h"

#define TOP "file:///data/top.zip"

static struct sl__wk_backend *backend;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    backend = sl__wk_local_new(NULL, NULL);
    return 0;
}

static int
buf_write(void *ctx, const void *data, size_t len)
{
    return sl_buf_append(ctx, data, len);
}

struct bsrc {
    const char *p;
    size_t len;
    size_t pos;
};

static int
bsrc_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    struct bsrc *s = ctx;
    size_t k = s->len - s->pos < cap ? s->len - s->pos : cap;

    if (k > 0) {
        memcpy(buf, s->p + s->pos, k);
    }
    s->pos += k;
    *n = k;
    return 0;
}

/* The path of element @id below the compound: plain segments only. */
static void
check_id(const char *id)
{
    const char *p = id + sizeof(TOP "!/") - 1;

    SL_FUZZ_CHECK(strncmp(id, TOP "!/", sizeof(TOP "!/") - 1) == 0,
                  "element id '%s'",
                  id);
    for (;;) {
        size_t n = strcspn(p, "/");

        SL_FUZZ_CHECK(n > 0 && !(n == 1 && p[0] == '.') &&
                          !(n == 2 && p[0] == '.' && p[1] == '.'),
                      "element id '%s': segment '%.*s'",
                      id,
                      (int)n,
                      p);
        if (p[n] == '\0') {
            break;
        }
        p += n + 1;
    }
}

/* Read the elements back: each checked, their content summed. */
static void
check_bulk(const struct sl_buf *out, const char *content, uint64_t max_total)
{
    struct bsrc s = {out->data, out->len, 0};
    struct sl_source src = {bsrc_read, &s};
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    struct sl_err err;
    uint64_t total = 0;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_bulk_reader_new(&src, NULL, &r, &err);
    SL_FUZZ_CHECK(rc == 0, "output bulk: %s", err.message);
    while ((rc = sl_bulk_reader_next(r, &rec, &err)) == 1) {
        const json_t *meta = sl_record_meta(rec);
        const void *data = NULL;
        size_t len = 0;
        const char *top =
            json_string_value(json_object_get(meta, "_compoundRecordId"));

        check_id(sl_record_id(rec));
        SL_FUZZ_CHECK(top != NULL && strcmp(top, TOP) == 0,
                      "element '%s' of another compound",
                      sl_record_id(rec));
        SL_FUZZ_CHECK(sl_record_attachment_count(rec) <= 1,
                      "element '%s' with %zu attachments",
                      sl_record_id(rec),
                      sl_record_attachment_count(rec));
        if (sl_record_attachment_get(rec, content, &data, &len) == 0) {
            total += len;
        }
        sl_record_free(rec);
    }
    SL_FUZZ_CHECK(rc == 0, "output bulk: %s", err.message);
    SL_FUZZ_CHECK(total <= max_total,
                  "%llu content bytes over maxTotalBytes %llu",
                  (unsigned long long)total,
                  (unsigned long long)max_total);
    sl_bulk_reader_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct sl_text_archive_names file_names = {
        "filePath",
        "fileName",
        "fileFolder",
        "fileExtension",
        "fileSize",
        "fileLastModified",
        "fileContent",
        0,
    };
    static const struct sl_text_archive_names web_names = {
        "httpUrl",
        NULL,
        NULL,
        NULL,
        "httpSize",
        "httpLastModified",
        "httpContent",
        1,
    };
    const struct sl_text_archive_names *names = NULL;
    struct sl__bi_extract *x = NULL;
    struct sl_task_ctx *ctx = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    struct sl_buf out;
    json_t *task = NULL;
    uint64_t max_total = 0;
    int fd = -1;
    int rc = 0;

    if (size < 1) {
        return 0;
    }
    names = (data[0] & 2) ? &web_names : &file_names;
    max_total = (data[0] & 1) ? 256u << 10 : 8u << 20;
    if (data[0] & 1) {
        task = json_pack("{s:s, s:{s:i, s:i, s:I, s:i, s:i}}",
                         "taskId",
                         "t",
                         "parameters",
                         "maxNestingDepth",
                         2,
                         "maxEntries",
                         8,
                         "maxTotalBytes",
                         (json_int_t)max_total,
                         "maxRatio",
                         10,
                         "maxEntrySize",
                         64 << 10);
    } else {
        task = json_pack("{s:s, s:{s:I}}",
                         "taskId",
                         "t",
                         "parameters",
                         "maxTotalBytes",
                         (json_int_t)max_total);
    }
    SL_FUZZ_CHECK(task != NULL, "task JSON");
    ctx = sl__task_ctx_new(
        backend, backend->impl, &sl_worker_fileExtractor, 0, task);
    rc = sl__bi_extract_new(ctx, names, &x);
    SL_FUZZ_CHECK(rc == 0, "extract_new: %s", sl_err_name(rc));
    fd = memfd_create("fuzz_archive", MFD_CLOEXEC);
    SL_FUZZ_CHECK(fd >= 0, "memfd_create");
    SL_FUZZ_CHECK(size == 1 || sl_write_all(fd, data + 1, size - 1) == 0,
                  "write");
    SL_FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    sl_buf_init(&out, 64u << 20);
    sink.write = buf_write;
    sink.ctx = &out;
    rc = sl_bulk_writer_new(&sink, &w);
    SL_FUZZ_CHECK(rc == 0, "writer: %s", sl_err_name(rc));
    rc = sl__bi_extract_fd(x, w, TOP, "file", fd, size - 1);
    SL_FUZZ_CHECK(rc == 0, "extract: %s", sl_err_name(rc));
    rc = sl_bulk_writer_finish(w);
    SL_FUZZ_CHECK(rc == 0, "finish: %s", sl_err_name(rc));
    check_bulk(&out, names->content, max_total);
    sl_bulk_writer_free(w);
    sl_buf_free(&out);
    (void)close(fd);
    sl__bi_extract_free(x);
    sl__task_ctx_free(ctx);
    json_decref(task);
    return 0;
}
