/*
 * The HTML text extractor (workers/text_extractor.c) in its two uses:
 * the textExtractor task, in-process over a filesystem object store
 * under $TMPDIR, and the webCrawler's one parse of a page for its links
 * and its text (sl_web_links with the sl_text_html tap).  The first
 * input byte is a mode, the rest the content:
 *   bits 0-2: the record's mimeType (none, which lets libmagic decide,
 *             text/html, text/plain, application/xml, ...);
 *   bits 3-5: its httpCharset (none, utf-8, iso-8859-1, ..., unknown);
 *   bit 6:    maxTextBytes 64 instead of the default;
 *   bit 7:    the task reads its input 1 to 13 bytes at a time.
 * Checks: the task succeeds with one record whose text is valid UTF-8
 * within maxTextBytes; the webCrawler's parse, fed in chunks, gives the
 * same text, title and charset as the task for an HTML page, as
 * workers_int.h promises (both parse the page in the same blocks, of
 * 256 bytes in the fuzz build: web/web.h).
 */
#include <unistd.h>

#include "core/sl.h"
#include "builtin/builtin.h"
#include "text/text.h"
#include "web/web.h"
#include "workers/workers_int.h"

#include "fuzz.h"
#include "text_extractor_fixture.h"
#include "tmpdir.h"

#define URL_EXT   "http://example.com/dir/page.html"
#define URL_PLAIN "http://example.com/dir/page"

static const char *const mimes[] = {
    NULL,
    "text/html",
    "text/plain",
    "application/xml",
    "application/xhtml+xml",
    "text/html; charset=iso-8859-1",
    "application/json",
    "image/svg+xml",
};
static const char *const charsets[] = {
    NULL,
    "utf-8",
    "iso-8859-1",
    "windows-1252",
    "shift_jis",
    "utf-16",
    "koi8-r",
    "x-no-such-charset",
};

static char dir[512];
static struct sl_obj *store;
static struct sl__wk_backend *backend;
static struct sl__wk_ops chunky_ops;
static struct uchardet *ud; /* the webCrawler's detector, kept */

static void
cleanup(void)
{
    sl__wk_local_free(backend);
    sl_obj_close(store);
    (void)tmpdir_remove(dir);
    sl_text_ud_free(ud);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    int rc = 0;

    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    SL_FUZZ_CHECK(
        tmpdir_make(dir, sizeof(dir), "fuzz_text.") != NULL, "mkdtemp %s", dir);
    rc = sl_obj_open_fs(dir, SL_DURABILITY_PROCESS, &store, NULL);
    SL_FUZZ_CHECK(rc == 0, "object store: %s", sl_err_name(rc));
    rc = sl_obj_store_create(store, "s", NULL, NULL);
    SL_FUZZ_CHECK(rc == 0, "store: %s", sl_err_name(rc));
    backend = sl__wk_local_new(NULL, store);
    chunky_ops_init(&chunky_ops, backend->ops);
    (void)atexit(cleanup);
    return 0;
}

/* ------------------------------------------------------------------------
 * The textExtractor task.
 * --------------------------------------------------------------------- */

struct result {
    json_t *meta;       /* the output record's metadata, or NULL */
    struct sl_buf text; /* its attachment `text` */
};

static void
put_input(const char *mime, const char *charset, const uint8_t *p, size_t n)
{
    struct sl_record *rec = sl_record_new(mime != NULL ? URL_EXT : URL_PLAIN);
    struct sl_obj_writer *ow = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    int rc = 0;

    if (mime != NULL) {
        (void)json_object_set_new(
            sl_record_meta(rec), "mimeType", json_string(mime));
    }
    if (charset != NULL) {
        (void)json_object_set_new(
            sl_record_meta(rec), "httpCharset", json_string(charset));
    }
    rc = sl_record_attachment_set(rec, "fileContent", p, n);
    SL_FUZZ_CHECK(rc == 0, "attachment");
    rc = sl_obj_writer_open(store, "s", "in", &ow, NULL);
    SL_FUZZ_CHECK(rc == 0, "writer: %s", sl_err_name(rc));
    sl_obj_writer_sink(ow, &sink);
    rc = sl_bulk_writer_new(&sink, &w);
    if (rc == 0) {
        rc = sl_bulk_writer_add(w, rec);
    }
    if (rc == 0) {
        rc = sl_bulk_writer_finish(w);
    }
    if (rc == 0) {
        rc = sl_obj_writer_commit(ow, NULL, NULL);
    }
    SL_FUZZ_CHECK(rc == 0, "input bulk: %s", sl_err_name(rc));
    sl_bulk_writer_free(w);
    sl_obj_writer_free(ow);
    sl_record_free(rec);
}

static void
read_output(struct result *res)
{
    struct sl_obj_reader *rd = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_obj_reader_open(store, "s", "out", &rd, NULL);
    SL_FUZZ_CHECK(rc == 0, "no output: %s", sl_err_name(rc));
    sl_obj_reader_source(rd, &src);
    rc = sl_bulk_reader_new(&src, NULL, &br, &err);
    SL_FUZZ_CHECK(rc == 0, "output: %s", err.message);
    while ((rc = sl_bulk_reader_next(br, &rec, &err)) == 1) {
        const void *data = NULL;
        size_t len = 0;

        SL_FUZZ_CHECK(res->meta == NULL, "more than one output record");
        res->meta = json_incref(sl_record_meta(rec));
        if (sl_record_attachment_get(rec, "text", &data, &len) == 0 &&
            len > 0) {
            (void)sl_buf_append(&res->text, data, len);
        }
        sl_record_free(rec);
    }
    SL_FUZZ_CHECK(rc == 0, "output: %s", err.message);
    SL_FUZZ_CHECK(res->meta != NULL, "no output record");
    sl_bulk_reader_free(br);
    sl_obj_reader_free(rd);
    (void)sl_obj_delete(store, "s", "out", NULL);
    (void)sl_obj_delete(store, "s", "in", NULL);
}

static void
run_task(const char *mime,
         const char *charset,
         uint64_t max_text,
         int chunky,
         const uint8_t *p,
         size_t n,
         struct result *res)
{
    struct sl__wk_backend b = *backend;
    struct sl_task_ctx *ctx = NULL;
    json_t *result = NULL;
    json_t *task = NULL;
    const char *status = NULL;

    put_input(mime, charset, p, n);
    task = json_pack("{s:s, s:{s:I}, s:{s:i},"
                     " s:{s:[{s:s, s:s, s:s}]}, s:{s:[{s:s, s:s, s:s}]}}",
                     "taskId",
                     "t",
                     "parameters",
                     "maxTextBytes",
                     (json_int_t)max_text,
                     "properties",
                     "retries",
                     0,
                     "input",
                     "recordsToExtract",
                     "bucket",
                     "b",
                     "store",
                     "s",
                     "id",
                     "in",
                     "output",
                     "extractedRecords",
                     "bucket",
                     "b",
                     "store",
                     "s",
                     "id",
                     "out");
    SL_FUZZ_CHECK(task != NULL, "task JSON");
    if (chunky) {
        b.ops = &chunky_ops;
    }
    ctx = sl__task_ctx_new(&b, b.impl, &sl_worker_textExtractor, 0, task);
    result = sl__task_ctx_run(ctx);
    status = json_string_value(json_object_get(result, "status"));
    SL_FUZZ_CHECK(status != NULL && strcmp(status, "SUCCESSFUL") == 0,
                  "task: %s",
                  json_dumps(result, JSON_COMPACT));
    sl__task_ctx_free(ctx);
    json_decref(result);
    json_decref(task);
    read_output(res);
}

/* ------------------------------------------------------------------------
 * The webCrawler's parse (workers/web_crawler.c parse_page).
 * --------------------------------------------------------------------- */

static int
on_link(void *ctx, const char *url, enum sl_web_link_kind kind)
{
    (void)ctx;
    (void)url;
    (void)kind;
    return 0;
}

/* The text of page @p (@n bytes, HTTP charset @cs) fed in chunks of
 * @chunk, compared with the task's @res. */
static void
crawler_text(const char *mime,
             const char *cs,
             uint64_t max_text,
             size_t chunk,
             const uint8_t *p,
             size_t n,
             const struct result *res)
{
    char text_mime[SL_TEXT_MIME_MAX];
    size_t head = n < SL_TEXT_CHUNK ? n : SL_TEXT_CHUNK;
    struct sl_text_html *ht = NULL;
    struct sl_web_links *lx = NULL;
    struct sl_web_tap tap;
    const char *text = NULL;
    const char *title = NULL;
    const char *tcs = NULL;
    const char *want = NULL;
    size_t len = 0;
    size_t off = 0;
    int rc = 0;

    if (!sl_text_html_applies(mime, (const char *)p, head, text_mime)) {
        return;
    }
    want = json_string_value(json_object_get(res->meta, "mimeType"));
    if (want == NULL || strcmp(want, text_mime) != 0) {
        return; /* libmagic overruled the record's type: not a page */
    }
    rc = sl_web_links_begin(URL_EXT, NULL, 0, on_link, NULL, &lx);
    SL_FUZZ_CHECK(rc == 0, "links_begin: %s", sl_err_name(rc));
    ht = sl_text_html_new(max_text);
    sl_text_html_begin(
        ht, sl_web_links_parser(lx), (const char *)p, head, cs, &ud, &tap);
    sl_web_links_tap(lx, &tap);
    while (rc == 0 && off < n) {
        size_t k = n - off < chunk ? n - off : chunk;

        rc = sl_web_links_feed(lx, (const char *)p + off, k);
        off += k;
    }
    rc = sl_web_links_end(lx, NULL);
    SL_FUZZ_CHECK(rc == 0, "links_end: %s", sl_err_name(rc));
    (void)sl_text_html_end(ht, &text, &len, &title, &tcs);
    SL_FUZZ_CHECK(len == 0 || sl_utf8_valid(text, len),
                  "crawler text is not UTF-8");
    SL_FUZZ_CHECK(len == res->text.len &&
                      (len == 0 || memcmp(text, res->text.data, len) == 0),
                  "text differs: crawler (chunks of %zu) '%.*s', "
                  "textExtractor '%s'",
                  chunk,
                  (int)len,
                  text,
                  res->text.len > 0 ? res->text.data : "");
    if (title[0] != '\0') {
        const char *t = json_string_value(json_object_get(res->meta, "title"));

        SL_FUZZ_CHECK(t != NULL && strcmp(t, title) == 0,
                      "title: crawler '%s', textExtractor '%s'",
                      title,
                      t != NULL ? t : "(none)");
    }
    {
        const char *c =
            json_string_value(json_object_get(res->meta, "charset"));

        SL_FUZZ_CHECK(strcmp(c != NULL ? c : "", tcs) == 0,
                      "charset: crawler '%s', textExtractor '%s'",
                      tcs,
                      c != NULL ? c : "");
    }
    sl_text_html_free(ht);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct result res;
    const char *mime = NULL;
    const char *cs = NULL;
    uint64_t max_text = 0;
    const json_t *t = NULL;

    if (size < 1) {
        return 0;
    }
    mime = mimes[data[0] & 7u];
    cs = charsets[(data[0] >> 3) & 7u];
    max_text = (data[0] & 0x40u) ? 64 : SL_TEXT_MAX_DEFAULT;
    memset(&res, 0, sizeof(res));
    sl_buf_init(&res.text, SL_TEXT_MAX_LIMIT);
    run_task(mime, cs, max_text, data[0] & 0x80u, data + 1, size - 1, &res);
    SL_FUZZ_CHECK(res.text.len <= max_text, "%zu bytes of text", res.text.len);
    SL_FUZZ_CHECK(res.text.len == 0 ||
                      sl_utf8_valid(res.text.data, res.text.len),
                  "text is not UTF-8");
    t = json_object_get(res.meta, "mimeType");
    SL_FUZZ_CHECK(json_is_string(t), "no mimeType");
    if (mime != NULL) {
        crawler_text(
            mime, cs, max_text, 1 + (size % 61), data + 1, size - 1, &res);
    }
    json_decref(res.meta);
    sl_buf_free(&res.text);
    return 0;
}
