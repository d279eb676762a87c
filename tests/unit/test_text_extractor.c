/*
 * Unit tests of the built-in textExtractor over the in-process task
 * context with a real filesystem object store (no jobmanager).  Input
 * bulks are written here record by record; the output records are read
 * back and their attributes and the task counters checked.  A wrapping
 * backend serves the input bulk 1 to 13 bytes per read, so that every
 * extractor is also fed in many small chunks (the push parser path, UTF-8
 * and UTF-16 sequences split between chunks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <iconv.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "builtin/builtin.h"
#include "text/text.h"
#include "web/web.h"
#include "workers/workers_int.h"
#include "text_extractor_fixture.h"
#include "wk_fixture.h"

struct fixture {
    char dir[512];
    struct sl_obj *store;
    struct sl__wk_backend *b;
    struct sl__wk_ops chunky_ops; /* b's ops, inputs served in small reads */
    unsigned tasks;               /* object ids */
};

/* One input record: @meta (JSON object text, may be NULL) is merged into
 * {"_recordid": id}; @data (@len bytes) becomes `fileContent` unless it
 * is NULL (or the attachment named by the meta's "@att", which is not
 * written). */
struct rec {
    const char *id;
    const char *meta;
    const char *data;
    size_t len;
};

/* The result of one task. */
struct result {
    json_t *result;          /* the finish request: status, counters, message */
    json_t *records;         /* _recordid -> metadata, in output order */
    size_t text_attachments; /* records whose text came as attachment */
};

/* ------------------------------------------------------------------------
 * Fixture and helpers.
 * --------------------------------------------------------------------- */

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));

    wk_env_open(
        f->dir, sizeof(f->dir), "test_text_extractor", &f->store, &f->b);
    chunky_ops_init(&f->chunky_ops, f->b->ops);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    wk_env_close(f->dir, f->store, f->b);
    sl_free(f);
    return 0;
}

static int
buf_sink_write(void *ctx, const void *data, size_t len)
{
    return sl_buf_append(ctx, data, len);
}

/* Encode records @r into a bulk in @out (caller frees with sl_buf_free). */
static void
encode_bulk(const struct rec *r, size_t n, struct sl_buf *out)
{
    struct sl_sink sink = {buf_sink_write, out};
    struct sl_bulk_writer *w = NULL;
    size_t i = 0;

    sl_buf_init(out, 256u << 20);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    for (i = 0; i < n; i++) {
        struct sl_record *rec = sl_record_new(r[i].id);

        const char *att = "fileContent";
        json_t *m = NULL;

        if (r[i].meta != NULL) {
            m = json_loads(r[i].meta, 0, NULL);
            assert_non_null(m);
            if (json_is_string(json_object_get(m, "@att"))) {
                att = json_string_value(json_object_get(m, "@att"));
            }
            assert_int_equal(json_object_update(sl_record_meta(rec), m), 0);
            (void)json_object_del(sl_record_meta(rec), "@att");
        }
        if (r[i].data != NULL) {
            assert_int_equal(
                sl_record_attachment_set(rec, att, r[i].data, r[i].len), 0);
        }
        json_decref(m);
        assert_int_equal(sl_bulk_writer_add(w, rec), 0);
        sl_record_free(rec);
    }
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    sl_bulk_writer_free(w);
}

/* Store @len bytes @data as object @id. */
static void
put_object(struct fixture *f, const char *id, const void *data, size_t len)
{
    struct sl_obj_writer *w = NULL;

    assert_int_equal(sl_obj_writer_open(f->store, "s", id, &w, NULL), 0);
    assert_int_equal(sl_obj_writer_write(w, data, len, NULL), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, NULL), 0);
    sl_obj_writer_free(w);
}

static json_t *
slot(const char *id)
{
    return json_pack(
        "[{s:s, s:s, s:s}]", "bucket", "b", "store", "s", "id", id);
}

/* Records of object @id into @res.  The extracted text arrives as the one
 * attachment "text" (default textOutput); it is put into the record's
 * "text" attribute here, which must not be set as well. */
static void
read_bulk(struct fixture *f, const char *id, struct result *res)
{
    struct sl_obj_reader *rd = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    int rc = 0;

    if (sl_obj_reader_open(f->store, "s", id, &rd, NULL) != 0) {
        return; /* no record: the bulk was not committed */
    }
    sl_obj_reader_source(rd, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &br, NULL), 0);
    for (;;) {
        rc = sl_bulk_reader_next(br, &rec, NULL);
        if (rc != 1) {
            break;
        }
        assert_true(sl_record_attachment_count(rec) <= 1);
        if (sl_record_attachment_count(rec) == 1) {
            const void *data = NULL;
            size_t len = 0;
            json_t *text = NULL;

            assert_int_equal(sl_record_attachment_get(rec, "text", &data, &len),
                             0);
            text = json_stringn(len > 0 ? data : "", len);
            assert_non_null(text); /* valid UTF-8 */
            assert_null(json_object_get(sl_record_meta(rec), "text"));
            (void)json_object_set_new(sl_record_meta(rec), "text", text);
            res->text_attachments++;
        }
        (void)json_object_set(
            res->records, sl_record_id(rec), sl_record_meta(rec));
        sl_record_free(rec);
    }
    assert_int_equal(rc, 0);
    sl_bulk_reader_free(br);
    sl_obj_reader_free(rd);
}

/* Run textExtractor with @params (JSON text) and converters @conv (JSON
 * text or NULL) on the raw bulk @bulk; @chunky serves it in small reads. */
static struct result
run_raw(struct fixture *f,
        const char *params,
        const char *conv,
        int chunky,
        const struct sl_buf *bulk)
{
    struct result res = {NULL, json_object(), 0};
    char *in = sl_asprintf("in/%u", f->tasks);
    char *out = sl_asprintf("out/%u", f->tasks++);
    json_t *converters = conv != NULL ? json_loads(conv, 0, NULL) : NULL;
    json_t *task = json_pack("{s:s, s:o, s:{s:i}, s:{s:o}, s:{s:o}}",
                             "taskId",
                             "t",
                             "parameters",
                             json_loads(params, 0, NULL),
                             "properties",
                             "retries",
                             0,
                             "input",
                             "recordsToExtract",
                             slot(in),
                             "output",
                             "extractedRecords",
                             slot(out));
    struct sl__wk_backend b = *f->b;
    struct sl_task_ctx *ctx = NULL;

    assert_non_null(task);
    assert_true(conv == NULL || converters != NULL);
    put_object(f, in, bulk->data, bulk->len);
    b.services.converters = converters;
    if (chunky) {
        b.ops = &f->chunky_ops;
    }
    ctx = sl__task_ctx_new(&b, b.impl, &sl_worker_textExtractor, 0, task);
    res.result = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    read_bulk(f, out, &res);
    json_decref(task);
    json_decref(converters);
    sl_free(in);
    sl_free(out);
    return res;
}

/* Run on records @r; the task must succeed. */
static struct result
run(struct fixture *f,
    const char *params,
    const char *conv,
    int chunky,
    const struct rec *r,
    size_t n)
{
    struct sl_buf bulk;
    struct result res;

    encode_bulk(r, n, &bulk);
    res = run_raw(f, params, conv, chunky, &bulk);
    sl_buf_free(&bulk);
    assert_string_equal(
        json_string_value(json_object_get(res.result, "status")), "SUCCESSFUL");
    return res;
}

static void
result_free(struct result *res)
{
    json_decref(res->result);
    json_decref(res->records);
}

static double
counter(const struct result *res, const char *name)
{
    return json_number_value(
        json_object_get(json_object_get(res->result, "counters"), name));
}

static const char *
attr(const struct result *res, const char *id, const char *name)
{
    return json_string_value(
        json_object_get(json_object_get(res->records, id), name));
}

/* @s converted from UTF-8 to @charset; *len set; caller frees. */
static char *
encode(const char *s, const char *charset, size_t *len)
{
    iconv_t cd = iconv_open(charset, "UTF-8");
    size_t left = strlen(s);
    size_t room = 4 * left + 8;
    char *out = sl_malloc(room);
    char *in = (char *)(uintptr_t)s;
    char *o = out;

    assert_true(cd != (iconv_t)-1);
    assert_int_not_equal(iconv(cd, &in, &left, &o, &room), (size_t)-1);
    (void)iconv_close(cd);
    *len = (size_t)(o - out);
    return out;
}

/* Spool files of converters left under $TMPDIR. */
static int
spool_files_left(void)
{
    const char *tmp = getenv("TMPDIR");
    DIR *dir = opendir(tmp != NULL ? tmp : "/tmp");
    struct dirent *e = NULL;
    int n = 0;

    assert_non_null(dir);
    while ((e = readdir(dir)) != NULL) {
        n += strncmp(e->d_name, "sluice-text.", 12) == 0;
    }
    (void)closedir(dir);
    return n;
}

/* Open file descriptors of this process. */
static int
open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int n = 0;

    assert_non_null(dir);
    while (readdir(dir) != NULL) {
        n++;
    }
    (void)closedir(dir);
    return n;
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

#define UTF8_TEXT                                                              \
    "Gr\xc3\xbc\xc3\x9f"                                                       \
    "e aus K\xc3\xb6ln \xe2\x80\x93 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "     \
    "\xf0\x9f\x98\x80\nline two\r\n\ttabbed\n"

/* UTF-8 text passes unchanged; attributes are kept, attachments are not
 * copied; the title is the file name. */
static void
test_text_utf8(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/gruss.txt",
         "{\"fileName\": \"gruss.txt\", \"fileExtension\": \"txt\","
         " \"_source\": \"src\", \"custom\": 42}",
         UTF8_TEXT,
         sizeof(UTF8_TEXT) - 1},
        {"/d/sub/noname.txt", NULL, "plain", 5},
    };
    struct result res = run(f, "{}", NULL, 0, r, 2);
    const json_t *m = json_object_get(res.records, "/d/gruss.txt");

    assert_int_equal(json_object_size(res.records), 2);
    assert_string_equal(attr(&res, "/d/gruss.txt", "text"), UTF8_TEXT);
    assert_string_equal(attr(&res, "/d/gruss.txt", "mimeType"), "text/plain");
    assert_string_equal(attr(&res, "/d/gruss.txt", "charset"), "UTF-8");
    assert_string_equal(attr(&res, "/d/gruss.txt", "title"), "gruss.txt");
    assert_string_equal(attr(&res, "/d/gruss.txt", "_source"), "src");
    assert_int_equal(json_integer_value(json_object_get(m, "custom")), 42);
    assert_string_equal(attr(&res, "/d/sub/noname.txt", "title"), "noname.txt");
    assert_string_equal(attr(&res, "/d/sub/noname.txt", "text"), "plain");
    assert_int_equal(counter(&res, "records.extracted"), 2);
    assert_int_equal(counter(&res, "mime.text"), 2);
    assert_int_equal(counter(&res, "records.noText"), 0);
    assert_int_equal(counter(&res, "records.truncated"), 0);
    assert_int_equal(counter(&res, "output.extractedRecords.recordCount"), 2);
    result_free(&res);
}

/* textOutput: the text as attachment (default) or as attribute; another
 * value is a fatal task error that names the parameter. */
static void
test_text_output(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {{"/d/a.txt", NULL, "alpha beta", 10}};
    struct result res = run(f, "{}", NULL, 0, r, 1);
    struct sl_buf bulk;

    assert_int_equal(res.text_attachments, 1);
    assert_string_equal(attr(&res, "/d/a.txt", "text"), "alpha beta");
    result_free(&res);
    res = run(f, "{\"textOutput\": \"attribute\"}", NULL, 0, r, 1);
    assert_int_equal(res.text_attachments, 0);
    assert_string_equal(attr(&res, "/d/a.txt", "text"), "alpha beta");
    result_free(&res);
    encode_bulk(r, 1, &bulk);
    res = run_raw(f, "{\"textOutput\": \"inline\"}", NULL, 0, &bulk);
    sl_buf_free(&bulk);
    assert_string_equal(
        json_string_value(json_object_get(res.result, "status")),
        "FATAL_ERROR");
    assert_non_null(
        strstr(json_string_value(json_object_get(res.result, "errorMessage")),
               "textOutput"));
    result_free(&res);
}

#define LATIN1_UTF8                                                            \
    "caf\xc3\xa9 au lait, tr\xc3\xa8s bien, \xc3\xa0 la fran\xc3\xa7"          \
    "aise, na\xc3\xafve gar\xc3\xa7on, \xc3\xa9t\xc3\xa9 \xc3\xa0 "            \
    "No\xc3\xabl\n"

/* ISO-8859-1 is detected and converted; so is UTF-16 with a byte order
 * mark, also when its code units are split between chunks. */
static void
test_text_latin1_utf16(void **state)
{
    struct fixture *f = *state;
    size_t l1 = 0;
    size_t l16 = 0;
    char *latin1 = encode(LATIN1_UTF8, "ISO-8859-1", &l1);
    char *utf16 = encode(UTF8_TEXT LATIN1_UTF8, "UTF-16", &l16);
    const struct rec r[] = {
        {"/d/latin1.txt", "{\"fileName\": \"latin1.txt\"}", latin1, l1},
        {"/d/short.txt", NULL, "caf\xe9", 4},
        {"/d/utf16.txt", NULL, utf16, l16},
    };
    int chunky = 0;

    for (chunky = 0; chunky < 2; chunky++) {
        struct result res = run(f, "{}", NULL, chunky, r, 3);
        const char *cs = attr(&res, "/d/latin1.txt", "charset");

        assert_string_equal(attr(&res, "/d/latin1.txt", "text"), LATIN1_UTF8);
        assert_non_null(cs);
        assert_true(strcmp(cs, "ISO-8859-1") == 0 ||
                    strcmp(cs, "WINDOWS-1252") == 0);
        /* Too short to be sure of the charset, but valid UTF-8. */
        assert_int_equal(strncmp(attr(&res, "/d/short.txt", "text"), "caf", 3),
                         0);
        assert_string_equal(attr(&res, "/d/utf16.txt", "text"),
                            UTF8_TEXT LATIN1_UTF8);
        assert_string_equal(attr(&res, "/d/utf16.txt", "charset"), "UTF-16");
        assert_int_equal(counter(&res, "records.extracted"), 3);
        result_free(&res);
    }
    sl_free(latin1);
    sl_free(utf16);
}

#define HTML_DOC                                                               \
    "<!DOCTYPE html><html><head><title> Fish &amp;\n Chips </title>"           \
    "<style>p { color: red }</style>"                                          \
    "<script>var secret = \"SCRIPTTEXT\"; if (a < b) {}</script></head>"       \
    "<body><div><p>Hello <b>wor</b>ld</p><ul><li>one</li><li>two</li></ul>"    \
    "<p>caf&eacute; &lt;tag&gt; &#8364;5</p><!-- hidden comment -->"           \
    "<noscript>NOSCRIPT</noscript><template><p>TEMPLATE</p></template>"        \
    "<table><tr><td>c1</td><td>c2</td></tr></table>"                           \
    "<pre>a  b\nc</pre>tail&nbsp;end<div><div>deep</div>er</div></div>"        \
    "</body></html>"
#define HTML_TEXT                                                              \
    "Hello world\none\ntwo\ncaf\xc3\xa9 <tag> \xe2\x82\xac"                    \
    "5\nc1 c2\na  b\nc\ntail end\ndeep\ner"

/* HTML: title, visible text only, entities, blocks and white space. */
static void
test_text_html(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/page.html", NULL, HTML_DOC, sizeof(HTML_DOC) - 1},
        {"/d/frag.htm",
         "{\"fileName\": \"frag.htm\"}",
         "<p>no <i>title</i></p>",
         22},
    };
    struct result res = run(f, "{}", NULL, 0, r, 2);
    const char *text = attr(&res, "/d/page.html", "text");

    assert_string_equal(attr(&res, "/d/page.html", "mimeType"), "text/html");
    assert_string_equal(attr(&res, "/d/page.html", "title"), "Fish & Chips");
    assert_string_equal(text, HTML_TEXT);
    assert_null(strstr(text, "SCRIPTTEXT"));
    assert_null(strstr(text, "color"));
    assert_null(strstr(text, "hidden"));
    assert_null(strstr(text, "NOSCRIPT"));
    assert_null(strstr(text, "TEMPLATE"));
    assert_string_equal(attr(&res, "/d/page.html", "charset"), "UTF-8");
    /* libmagic says text/plain: the extension makes it HTML. */
    assert_string_equal(attr(&res, "/d/frag.htm", "mimeType"), "text/html");
    assert_string_equal(attr(&res, "/d/frag.htm", "text"), "no title");
    assert_string_equal(attr(&res, "/d/frag.htm", "title"), "frag.htm");
    assert_int_equal(counter(&res, "mime.html"), 2);
    assert_int_equal(counter(&res, "records.extracted"), 2);
    result_free(&res);
}

/*
 * Collapsed white space and the maxTextBytes cut: for every cap the text
 * is the collapsed text cut to the cap, never ending in a space (prose
 * is appended in runs that include single spaces; the runs are cut too).
 */
static void
test_text_collapse_cap(void **state)
{
    struct fixture *f = *state;
    static const char page[] =
        "<p> one two  three\tfour\nfive s\xc3\xa9x <b>seven</b>eight</p>"
        "<p>nine ten</p>";
    static const char full[] = "one two three four five s\xc3\xa9x seveneight"
                               "\nnine ten";
    const struct rec r[] = {{"/d/p.html", NULL, page, sizeof(page) - 1}};
    size_t cap = 0;

    for (cap = 1; cap <= sizeof(full) + 1; cap++) {
        char params[64];
        char want[sizeof(full)];
        size_t n = cap < sizeof(full) - 1 ? cap : sizeof(full) - 1;
        struct result res;

        while (n > 0 && ((unsigned char)full[n] & 0xc0) == 0x80) {
            n--; /* cut between characters */
        }
        while (n > 0 && (full[n - 1] == ' ' || full[n - 1] == '\n')) {
            n--;
        }
        memcpy(want, full, n);
        want[n] = '\0';
        (void)snprintf(params, sizeof(params), "{\"maxTextBytes\": %zu}", cap);
        res = run(f, params, NULL, 0, r, 1);
        if (strcmp(attr(&res, "/d/p.html", "text"), want) != 0) {
            fail_msg("cap %zu: \"%s\", want \"%s\"",
                     cap,
                     attr(&res, "/d/p.html", "text"),
                     want);
        }
        result_free(&res);
    }
}

/*
 * Prose goes through the extractor eight bytes at a time: words and white
 * space of every length at every offset, a text that starts and ends with
 * white space, non-ASCII letters next to spaces.  Collapsed (HTML) it is
 * the words joined by single spaces; as plain text it is unchanged.
 */
static void
test_text_prose_runs(void **state)
{
    struct fixture *f = *state;
    static const char *const seps[] = {" ", "  ", "\t", "\n ", " \r\n", "   "};
    static const char *const words[] = {"a",
                                        "bc",
                                        "def",
                                        "ghij",
                                        "klmno",
                                        "pqrstu",
                                        "vwxyz01",
                                        "23456789",
                                        "t\xc3\xa9",
                                        "\xc3\xa9t\xc3\xa9",
                                        "x!y",
                                        "~"};
    struct sl_buf doc;
    struct sl_buf want;
    struct sl_buf html;
    unsigned seed = 7;
    size_t i = 0;
    struct result res;

    sl_buf_init(&doc, 1 << 20);
    sl_buf_init(&want, 1 << 20);
    sl_buf_init(&html, 1 << 20);
    assert_int_equal(sl_buf_append(&doc, " ", 1), 0);
    for (i = 0; i < 900; i++) {
        const char *w = words[(seed = seed * 1103515245u + 12345u) >> 16 & 7];
        const char *sep = seps[(i * 7 + (seed >> 20)) % 6];

        if (i % 13 == 5) {
            w = words[8 + i % 4];
        }
        if (want.len > 0) {
            assert_int_equal(sl_buf_append(&want, " ", 1), 0);
        }
        assert_int_equal(sl_buf_append(&want, w, strlen(w)), 0);
        assert_int_equal(sl_buf_append(&doc, w, strlen(w)), 0);
        assert_int_equal(sl_buf_append(&doc, sep, strlen(sep)), 0);
    }
    assert_int_equal(sl_buf_append(&html, "<p>", 3), 0);
    assert_int_equal(sl_buf_append(&html, doc.data, doc.len), 0);
    assert_int_equal(sl_buf_append(&html, "</p>", 4), 0);
    {
        const struct rec r[] = {
            {"/d/prose.html", NULL, html.data, html.len},
            {"/d/prose.txt", NULL, doc.data, doc.len},
        };

        res = run(f, "{}", NULL, 0, r, 2);
    }
    assert_string_equal(attr(&res, "/d/prose.html", "text"), want.data);
    assert_string_equal(attr(&res, "/d/prose.txt", "text"), doc.data);
    result_free(&res);
    sl_buf_free(&doc);
    sl_buf_free(&want);
    sl_buf_free(&html);
}

/* A document bigger than the 64 KiB head, whose tail is fed to the push
 * parser in 1 to 13 byte chunks, gives the same text as in one piece. */
static void
test_text_html_chunks(void **state)
{
    struct fixture *f = *state;
    struct sl_buf doc;
    struct rec r = {"/d/big.html", NULL, NULL, 0};
    struct result one;
    struct result many;
    static const char start[] = "Paragraph 0 & caf\xc3\xa9 \xe6\x97\xa5\xe6"
                                "\x9c\xac\nParagraph 1 &";
    const char *text = NULL;
    unsigned i = 0;

    sl_buf_init(&doc, 1u << 20);
    assert_int_equal(
        sl_buf_appendf(&doc,
                       "%s",
                       "<html><head><meta charset=\"utf-8\">"
                       "<title>Gro\xc3\x9f &amp; klein</title></head><body>"),
        0);
    for (i = 0; i < 3000; i++) {
        assert_int_equal(sl_buf_appendf(&doc,
                                        "<p>Paragraph %u &amp; caf\xc3\xa9 "
                                        "\xe6\x97\xa5\xe6\x9c\xac</p>\n",
                                        i),
                         0);
    }
    assert_int_equal(
        sl_buf_appendf(&doc,
                       "%s",
                       "<script>if (a < b) { document.write(\"<p>SCRIPTTEXT"
                       "</p>\"); }</script><style>.x { color: red }</style>"
                       "<div>na&iuml;ve&nbsp;caf\xc3\xa9 <span>\xe6\x97\xa5"
                       "</span>\xe6\x9c\xac &euro;<!-- a -- comment --></div>"
                       "</body></html>"),
        0);
    assert_true(doc.len > 100000);
    r.data = doc.data;
    r.len = doc.len;
    one = run(f, "{}", NULL, 0, &r, 1);
    many = run(f, "{}", NULL, 1, &r, 1);
    text = attr(&many, "/d/big.html", "text");
    assert_string_equal(text, attr(&one, "/d/big.html", "text"));
    assert_string_equal(attr(&many, "/d/big.html", "title"),
                        "Gro\xc3\x9f & klein");
    assert_string_equal(attr(&one, "/d/big.html", "title"),
                        "Gro\xc3\x9f & klein");
    assert_string_equal(attr(&many, "/d/big.html", "charset"), "UTF-8");
    assert_int_equal(strncmp(text, start, sizeof(start) - 1), 0);
    assert_non_null(strstr(text,
                           "\nParagraph 2999 & caf\xc3\xa9 \xe6\x97\xa5\xe6"
                           "\x9c\xac\n"));
    assert_non_null(strstr(text,
                           "na\xc3\xafve caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"
                           " \xe2\x82\xac"));
    assert_null(strstr(text, "SCRIPTTEXT"));
    assert_null(strstr(text, "color"));
    assert_null(strstr(text, "comment"));
    result_free(&one);
    result_free(&many);
    sl_buf_free(&doc);
}

#define HTML_LATIN1                                                            \
    "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; "      \
    "charset=windows-1252\"><title>Caf\xe9</title></head><body><p>tr\xe8s "    \
    "\x80</p></body></html>"
/* upper case, after a <meta> without a charset and a "<" that starts no
 * tag: the declaration is found wherever the search for it resumes */
#define HTML_UPPER                                                             \
    "<HTML><HEAD><META NAME=\"x\" CONTENT=\"a<b\"><Meta HTTP-EQUIV=\"Content-" \
    "Type\" CONTENT=\"text/html; "                                             \
    "CHARSET=ISO-8859-1\"><TITLE>Gar\xe7on</TITLE>"                            \
    "</HEAD><BODY>\xe9t\xe9</BODY></HTML>"
#define HTML_UNDECLARED                                                        \
    "<html><head><title>Caf\xe9 au lait</title></head><body><p>tr\xe8s bien, " \
    "\xe0 la fran\xe7"                                                         \
    "aise, na\xefve gar\xe7on, \xe9t\xe9 \xe0 No\xebl</p></body></html>"

/* HTML charsets: a declared one is honoured, an undeclared one detected. */
static void
test_text_html_charsets(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/decl.html", NULL, HTML_LATIN1, sizeof(HTML_LATIN1) - 1},
        {"/d/undecl.html", NULL, HTML_UNDECLARED, sizeof(HTML_UNDECLARED) - 1},
        {"/d/upper.html", NULL, HTML_UPPER, sizeof(HTML_UPPER) - 1},
    };
    struct result res = run(f, "{}", NULL, 1, r, 3);

    assert_string_equal(attr(&res, "/d/decl.html", "charset"), "WINDOWS-1252");
    assert_string_equal(attr(&res, "/d/decl.html", "title"), "Caf\xc3\xa9");
    assert_string_equal(attr(&res, "/d/decl.html", "text"),
                        "tr\xc3\xa8s \xe2\x82\xac");
    assert_string_equal(attr(&res, "/d/undecl.html", "title"),
                        "Caf\xc3\xa9 au lait");
    assert_int_equal(
        strncmp(attr(&res, "/d/undecl.html", "text"), "tr\xc3\xa8s bien", 10),
        0);
    assert_string_equal(attr(&res, "/d/upper.html", "charset"), "ISO-8859-1");
    assert_string_equal(attr(&res, "/d/upper.html", "title"), "Gar\xc3\xa7on");
    assert_string_equal(attr(&res, "/d/upper.html", "text"),
                        "\xc3\xa9t\xc3\xa9");
    result_free(&res);
}

#define XML_DOC                                                                \
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"                        \
    "<!DOCTYPE doc [<!ENTITY who \"World\">]>\n"                               \
    "<doc xmlns:x=\"urn:x\">\n  <title>T\xe9</title>\n"                        \
    "  <p>alpha <b>beta</b>gamma &who; &amp; &#233;</p>\n"                     \
    "  <x:c><![CDATA[<cdata>]]></x:c><!-- no --><?pi no?>\n</doc>\n"
#define XML_BOMB                                                               \
    "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"lol\">"                  \
    "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"                           \
    "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"                           \
    "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">"                           \
    "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">"                           \
    "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">"                           \
    "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">"                           \
    "<!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\">"                           \
    "<!ENTITY i \"&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;\">]><l>&i;</l>"
#define XML_EXTERNAL                                                           \
    "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY x SYSTEM "                   \
    "\"file:///etc/passwd\">]><a>before &x; after</a>"

/* XML: character data of all elements; malformed XML keeps the text so
 * far; no entity bomb, no external entity. */
static void
test_text_xml(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/doc.xml", NULL, XML_DOC, sizeof(XML_DOC) - 1},
        {"/d/bad.xml",
         "{\"fileName\": \"bad.xml\"}",
         "<a><b>kept text</a> lost",
         24},
        {"/d/cut.xml", NULL, "<a><b>cut short", 15},
        {"/d/bomb.xml", NULL, XML_BOMB, sizeof(XML_BOMB) - 1},
        {"/d/ext.xml", NULL, XML_EXTERNAL, sizeof(XML_EXTERNAL) - 1},
    };
    int chunky = 0;

    for (chunky = 0; chunky < 2; chunky++) {
        struct result res = run(f, "{}", NULL, chunky, r, 5);
        const char *bomb = attr(&res, "/d/bomb.xml", "text");

        assert_string_equal(attr(&res, "/d/doc.xml", "text"),
                            "T\xc3\xa9 alpha beta gamma World & \xc3\xa9 "
                            "<cdata>");
        assert_string_equal(attr(&res, "/d/doc.xml", "charset"), "ISO-8859-1");
        assert_string_equal(attr(&res, "/d/doc.xml", "title"), "doc.xml");
        assert_string_equal(attr(&res, "/d/bad.xml", "text"), "kept text");
        assert_string_equal(attr(&res, "/d/cut.xml", "text"), "cut short");
        assert_non_null(bomb);
        assert_true(strlen(bomb) < 100000);
        assert_null(strstr(attr(&res, "/d/ext.xml", "text"), "root:"));
        assert_int_equal(counter(&res, "mime.xml"), 5);
        assert_int_equal(counter(&res, "records.malformed"), 3);
        assert_int_equal(counter(&res, "records.extracted"), 5);
        result_free(&res);
    }
}

/* Binary content without a converter: text "" (an empty attachment); a
 * record without content: no text at all; both counted as noText. */
static void
test_text_no_text(void **state)
{
    struct fixture *f = *state;
    char bin[4096];
    const struct rec r[] = {
        {"/d/x.bin", "{\"fileName\": \"x.bin\"}", bin, sizeof(bin)},
        {"/d/big.pdf",
         "{\"fileName\": \"big.pdf\", \"mimeType\": \"application/pdf\"}",
         NULL,
         0},
        {"/d/big.txt", "{\"fileName\": \"big.txt\"}", NULL, 0},
        /* pushed as JSON with its own text: kept */
        {"note-1",
         "{\"title\": \"Heron\", \"text\": \"a grey heron\"}",
         NULL,
         0},
    };
    struct result res;
    size_t i = 0;

    for (i = 0; i < sizeof(bin); i++) {
        bin[i] = (char)((i * 7919u + 13u) >> 3 ^ i);
    }
    bin[0] = 0;
    bin[1] = (char)0xff;
    res = run(f, "{}", NULL, 0, r, 4);
    assert_string_equal(attr(&res, "note-1", "text"), "a grey heron");
    assert_string_equal(attr(&res, "note-1", "title"), "Heron");
    assert_string_equal(attr(&res, "note-1", "mimeType"), "text/plain");
    assert_int_equal(counter(&res, "records.textGiven"), 1);
    assert_string_equal(attr(&res, "/d/x.bin", "mimeType"),
                        "application/octet-stream");
    assert_string_equal(attr(&res, "/d/x.bin", "text"), "");
    assert_string_equal(attr(&res, "/d/x.bin", "title"), "x.bin");
    assert_null(attr(&res, "/d/big.pdf", "text"));
    assert_string_equal(attr(&res, "/d/big.pdf", "title"), "big.pdf");
    assert_string_equal(attr(&res, "/d/big.pdf", "mimeType"),
                        "application/pdf");
    assert_string_equal(attr(&res, "/d/big.txt", "mimeType"), "text/plain");
    assert_int_equal(counter(&res, "records.noText"), 3);
    assert_int_equal(counter(&res, "mime.other"), 1);
    assert_int_equal(counter(&res, "records.extracted"), 0);
    result_free(&res);
}

#define CONVERTERS                                                             \
    "{\"text/x-upper\": {\"command\": [\"tr\", \"a-z\", \"A-Z\"]},"            \
    " \"application/octet-stream\": {\"command\": [\"cat\", \"{file}\"],"      \
    "  \"timeoutSeconds\": 5, \"maxMemoryMB\": 256},"                          \
    " \"text/x-slow\": {\"command\": [\"sleep\", \"10\"],"                     \
    "  \"timeoutSeconds\": 1},"                                                \
    " \"text/x-false\": {\"command\": [\"false\"]},"                           \
    " \"text/x-missing\": {\"command\": [\"/nonexistent/converter\"]},"        \
    " \"text/x-flood\": {\"command\": [\"yes\", \"flood\"],"                   \
    "  \"timeoutSeconds\": 30},"                                               \
    " \"text/x-bad\": {\"command\": \"tr a-z A-Z\"}}"

/* External converters: content on stdin (also much more than a pipe
 * buffer, both ways), or as a {file}; invalid output bytes replaced. */
static void
test_text_converter(void **state)
{
    struct fixture *f = *state;
    size_t big_len = 3u << 20;
    char *big = sl_malloc(big_len);
    const char bin[] = "\x01\x02\x03hello \xff\xfe binary\x00 world";
    const struct rec r[] = {
        {"/d/up", "{\"mimeType\": \"text/x-upper\"}", "hello converter\n", 16},
        {"/d/big",
         "{\"mimeType\": \"text/x-upper; charset=us-ascii\"}",
         big,
         big_len},
        {"/d/bin", "{\"fileName\": \"bin\"}", bin, sizeof(bin) - 1},
    };
    struct result res;
    const char *text = NULL;
    int fds = open_fds();
    size_t i = 0;

    for (i = 0; i < big_len; i++) {
        big[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
    }
    res = run(f, "{}", CONVERTERS, 0, r, 3);
    assert_int_equal(open_fds(), fds);
    assert_string_equal(attr(&res, "/d/up", "text"), "HELLO CONVERTER\n");
    assert_string_equal(attr(&res, "/d/up", "mimeType"), "text/x-upper");
    text = attr(&res, "/d/big", "text");
    assert_int_equal(strlen(text), big_len);
    for (i = 0; i < big_len; i++) {
        if (text[i] != (i % 64 == 63 ? '\n' : (char)('A' + i % 26))) {
            fail_msg("byte %zu differs", i);
        }
    }
    assert_string_equal(attr(&res, "/d/bin", "mimeType"),
                        "application/octet-stream");
    assert_string_equal(attr(&res, "/d/bin", "text"),
                        "hello \xef\xbf\xbd\xef\xbf\xbd binary world");
    assert_int_equal(counter(&res, "records.extracted"), 3);
    assert_int_equal(counter(&res, "converter.failed"), 0);
    assert_int_equal(spool_files_left(), 0);
    result_free(&res);
    sl_free(big);
}

/* Converters that time out, fail, are not installed or are misconfigured
 * are counted, the records pass with empty text and the task succeeds; one
 * that writes without end is stopped once the text is full, which stays. */
static void
test_text_converter_failures(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/slow", "{\"mimeType\": \"text/x-slow\"}", "zzz", 3},
        {"/d/false", "{\"mimeType\": \"text/x-false\"}", "zzz", 3},
        {"/d/missing", "{\"mimeType\": \"text/x-missing\"}", "zzz", 3},
        {"/d/bad", "{\"mimeType\": \"text/x-bad\"}", "zzz", 3},
        {"/d/ok", "{\"mimeType\": \"text/x-upper\"}", "zzz", 3},
        {"/d/flood", "{\"mimeType\": \"text/x-flood\"}", "zzz", 3},
    };
    int fds = open_fds();
    int64_t t0 = sl_mono_ms();
    struct result res =
        run(f, "{\"maxTextBytes\": 65536}", CONVERTERS, 0, r, 6);
    const char *flood = NULL;
    int64_t ms = sl_mono_ms() - t0;

    assert_int_equal(open_fds(), fds);

    assert_true(ms >= 900);
    assert_true(ms < 5000);
    assert_int_equal(counter(&res, "converter.timeout"), 1);
    assert_int_equal(counter(&res, "converter.failed"), 2);
    /* a program that is not installed is not run, and not a failure */
    assert_int_equal(counter(&res, "converter.missing"), 1);
    /* a converter writing without end is stopped once the text is full,
     * which is kept (it does not wait for the 30 s timeout) */
    assert_int_equal(counter(&res, "records.extracted"), 2);
    flood = attr(&res, "/d/flood", "text");
    assert_true(strlen(flood) > 60000 && strlen(flood) <= 65536);
    assert_memory_equal(flood, "flood\nflood\n", 12);
    assert_int_equal(counter(&res, "records.truncated"), 1);
    assert_string_equal(attr(&res, "/d/slow", "text"), "");
    assert_string_equal(attr(&res, "/d/false", "text"), "");
    assert_string_equal(attr(&res, "/d/missing", "text"), "");
    assert_string_equal(attr(&res, "/d/bad", "text"), "");
    assert_string_equal(attr(&res, "/d/ok", "text"), "ZZZ");
    assert_int_equal(json_object_size(res.records), 6);
    result_free(&res);
}

struct cancel_run {
    struct sl_task_ctx *ctx;
    json_t *result;
};

static void *
cancel_thread(void *arg)
{
    struct cancel_run *c = arg;

    c->result = sl__task_ctx_run(c->ctx);
    return NULL;
}

/* A canceled task stops soon, also while a converter runs (it is
 * killed), and reports a recoverable error. */
static void
test_text_cancel(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/slow", "{\"mimeType\": \"text/x-slow\"}", "zzz", 3},
        {"/d/next", NULL, "next", 4},
    };
    json_t *conv = json_loads("{\"text/x-slow\": {\"command\": [\"sleep\", "
                              "\"30\"], \"timeoutSeconds\": 60}}",
                              0,
                              NULL);
    json_t *task = json_pack("{s:s, s:{}, s:{s:i}, s:{s:o}, s:{s:o}}",
                             "taskId",
                             "t",
                             "parameters",
                             "properties",
                             "retries",
                             0,
                             "input",
                             "recordsToExtract",
                             slot("in/c"),
                             "output",
                             "extractedRecords",
                             slot("out/c"));
    struct sl__wk_backend b = *f->b;
    struct cancel_run c = {NULL, NULL};
    struct sl_buf bulk;
    pthread_t th;
    int64_t t0 = 0;

    encode_bulk(r, 2, &bulk);
    put_object(f, "in/c", bulk.data, bulk.len);
    sl_buf_free(&bulk);
    b.services.converters = conv;
    c.ctx = sl__task_ctx_new(&b, b.impl, &sl_worker_textExtractor, 0, task);
    t0 = sl_mono_ms();
    assert_int_equal(pthread_create(&th, NULL, cancel_thread, &c), 0);
    (void)poll(NULL, 0, 300);
    sl__task_ctx_cancel(c.ctx);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(sl_mono_ms() - t0 < 5000);
    assert_string_equal(json_string_value(json_object_get(c.result, "status")),
                        "RECOVERABLE_ERROR");
    json_decref(c.result);
    sl__task_ctx_free(c.ctx);
    json_decref(task);
    json_decref(conv);
}

/* maxTextBytes cuts between UTF-8 characters; maxContentBytes parses only
 * the start of the content; both count records.truncated. */
static void
test_text_limits(void **state)
{
    struct fixture *f = *state;
    size_t big_len = 200000;
    char *big = sl_malloc(big_len);
    const struct rec r[] = {
        {"/d/e.txt", NULL, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10},
        {"/d/emoji.txt",
         NULL,
         "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80",
         12},
        {"/d/fits.txt", NULL, "123456789", 9},
        {"/d/big.txt", NULL, big, big_len},
        {"/d/conv", "{\"mimeType\": \"text/x-upper\"}", "abcdefghijkl", 12},
    };
    struct result res;
    struct result res2;

    memset(big, 'x', big_len);
    res = run(f, "{\"maxTextBytes\": 9}", CONVERTERS, 1, r, 5);
    assert_string_equal(attr(&res, "/d/e.txt", "text"),
                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    assert_string_equal(attr(&res, "/d/emoji.txt", "text"),
                        "\xf0\x9f\x98\x80\xf0\x9f\x98\x80");
    assert_string_equal(attr(&res, "/d/fits.txt", "text"), "123456789");
    assert_string_equal(attr(&res, "/d/big.txt", "text"), "xxxxxxxxx");
    assert_string_equal(attr(&res, "/d/conv", "text"), "ABCDEFGHI");
    assert_int_equal(counter(&res, "records.truncated"), 4);
    assert_int_equal(counter(&res, "records.extracted"), 5);

    res2 = run(f, "{\"maxContentBytes\": \"1000\"}", NULL, 0, r + 3, 1);
    assert_int_equal(strlen(attr(&res2, "/d/big.txt", "text")), 1000);
    assert_int_equal(counter(&res2, "records.truncated"), 1);
    result_free(&res);
    result_free(&res2);
    sl_free(big);
}

/* A record's mimeType stands unless libmagic disagrees strongly; another
 * content attachment name; bad parameters are fatal. */
static void
test_text_mime_and_params(void **state)
{
    struct fixture *f = *state;
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1"
                              "\x08\x02\0\0\0\x90wS\xde";
    const struct rec r[] = {
        {"/d/md", "{\"mimeType\": \"Text/Markdown\"}", "# Head\n", 7},
        {"/d/fake.html", "{\"mimeType\": \"text/html\"}", png, sizeof(png) - 1},
    };
    struct sl_buf bulk;
    struct result res = run(f, "{}", NULL, 0, r, 2);

    assert_string_equal(attr(&res, "/d/md", "mimeType"), "text/markdown");
    assert_string_equal(attr(&res, "/d/md", "text"), "# Head\n");
    assert_string_equal(attr(&res, "/d/fake.html", "mimeType"), "image/png");
    assert_string_equal(attr(&res, "/d/fake.html", "text"), "");
    result_free(&res);

    /* The content is looked for under another name: none here, so no
     * text. */
    res = run(f, "{\"contentAttachment\": \"body\"}", NULL, 0, r, 1);
    assert_null(attr(&res, "/d/md", "text"));
    assert_int_equal(counter(&res, "records.noText"), 1);
    result_free(&res);

    encode_bulk(r, 1, &bulk);
    res = run_raw(f, "{\"maxTextBytes\": \"lots\"}", NULL, 0, &bulk);
    assert_string_equal(
        json_string_value(json_object_get(res.result, "status")),
        "FATAL_ERROR");
    result_free(&res);
    res = run_raw(f, "{\"maxTextBytes\": 999999999}", NULL, 0, &bulk);
    assert_string_equal(
        json_string_value(json_object_get(res.result, "status")),
        "FATAL_ERROR");
    result_free(&res);
    sl_buf_free(&bulk);
}

/* A corrupt input bulk fails the task (fatal) with a message. */
static void
test_text_corrupt_input(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"/d/a.txt", NULL, "first record", 12},
        {"/d/b.txt", NULL, "second record content", 21},
    };
    struct sl_buf bulk;
    struct result res;
    char *p = NULL;

    encode_bulk(r, 2, &bulk);
    p = memmem(bulk.data, bulk.len, "second record", 13);
    assert_non_null(p);
    p[3] = 'X'; /* the record checksum no longer matches */
    res = run_raw(f, "{}", NULL, 0, &bulk);
    assert_string_equal(
        json_string_value(json_object_get(res.result, "status")),
        "FATAL_ERROR");
    assert_non_null(
        strstr(json_string_value(json_object_get(res.result, "errorMessage")),
               "input 0"));
    assert_int_equal(json_object_size(res.records), 0);
    result_free(&res);
    sl_buf_free(&bulk);
}

/* The bytes of file @name of tests/docs; *@len set; caller frees. */
static char *
doc_file(const char *name, size_t *len)
{
    char path[1024];
    char *buf = sl_malloc(1 << 20);
    FILE *fp = NULL;

    (void)snprintf(path, sizeof(path), "%s/%s", SL_TEST_DOCS, name);
    fp = fopen(path, "rb");
    assert_non_null(fp);
    *len = fread(buf, 1, 1 << 20, fp);
    assert_true(*len > 0 && *len < (1 << 20));
    (void)fclose(fp);
    return buf;
}

/* Office documents and EPUB are read in-process: their text, and their
 * metadata as attributes author, created, modified, pageCount (only
 * those the document has); a plain text has none of them. */
static void
test_text_office(void **state)
{
    struct fixture *f = *state;
    size_t docx_len = 0;
    size_t odt_len = 0;
    char *docx = doc_file("sample.docx", &docx_len);
    char *odt = doc_file("sample.odt", &odt_len);
    const struct rec r[] = {
        {"/d/sample.docx", NULL, docx, docx_len},
        {"/d/sample.odt", NULL, odt, odt_len},
        {"/d/a.txt", NULL, "plain", 5},
    };
    struct result res = run(f, "{}", NULL, 1, r, 3);
    const json_t *m = json_object_get(res.records, "/d/sample.docx");

    assert_string_equal(
        attr(&res, "/d/sample.docx", "mimeType"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml."
        "document");
    assert_non_null(strstr(attr(&res, "/d/sample.docx", "text"),
                           "\nThe quick sluice gate opens at dawn"));
    assert_string_equal(attr(&res, "/d/sample.docx", "title"),
                        "Sluice Sample Report");
    assert_string_equal(attr(&res, "/d/sample.docx", "author"), "Ada Lovelace");
    assert_int_equal(strncmp(attr(&res, "/d/sample.docx", "created"), "20", 2),
                     0);
    assert_non_null(attr(&res, "/d/sample.docx", "modified"));
    assert_int_equal(json_integer_value(json_object_get(m, "pageCount")), 1);
    assert_string_equal(attr(&res, "/d/sample.odt", "mimeType"),
                        "application/vnd.oasis.opendocument.text");
    assert_non_null(strstr(attr(&res, "/d/sample.odt", "text"),
                           "Café crème, naïve façade, Straße, 東京."));
    assert_string_equal(attr(&res, "/d/sample.odt", "author"), "Ada Lovelace");
    assert_null(json_object_get(json_object_get(res.records, "/d/sample.odt"),
                                "pageCount"));
    assert_null(attr(&res, "/d/a.txt", "author"));
    assert_null(attr(&res, "/d/a.txt", "created"));
    assert_int_equal(counter(&res, "records.extracted"), 3);
    assert_int_equal(counter(&res, "records.corrupt"), 0);
    result_free(&res);
    sl_free(docx);
    sl_free(odt);
}

/* A record that brings its text as attachment `text` (the webCrawler's
 * extractText, or this worker's own output) keeps its text, title, MIME
 * type and charset: copied as stored, or with textOutput "attribute" or a
 * text over maxTextBytes written anew (cut between characters). */
static void
test_text_given_attachment(void **state)
{
    struct fixture *f = *state;
    static const char given[] = "d\xc3\xa9j\xc3\xa0 extracted text";
    const struct rec r[] = {
        {"http://h/a.html",
         "{\"mimeType\": \"text/html\", \"charset\": \"ISO-8859-1\","
         " \"title\": \"Given\", \"httpStatus\": 200, \"@att\": \"text\"}",
         given,
         sizeof(given) - 1},
        {"/d/b.txt", NULL, "plain content", 13},
    };
    int chunky = 0;

    for (chunky = 0; chunky < 2; chunky++) {
        struct result res = run(f, "{}", NULL, chunky, r, 2);

        assert_string_equal(attr(&res, "http://h/a.html", "text"), given);
        assert_string_equal(attr(&res, "http://h/a.html", "title"), "Given");
        assert_string_equal(attr(&res, "http://h/a.html", "mimeType"),
                            "text/html");
        assert_string_equal(attr(&res, "http://h/a.html", "charset"),
                            "ISO-8859-1");
        assert_string_equal(attr(&res, "/d/b.txt", "text"), "plain content");
        assert_int_equal(counter(&res, "records.textGiven"), 1);
        assert_int_equal(counter(&res, "records.extracted"), 1);
        assert_int_equal(counter(&res, "bulks.shared"), 0); /* mixed */
        assert_int_equal(res.text_attachments, 2);
        result_free(&res);
    }
    {
        struct result res =
            run(f, "{\"textOutput\": \"attribute\"}", NULL, 1, r, 2);

        assert_string_equal(attr(&res, "http://h/a.html", "text"), given);
        assert_string_equal(attr(&res, "http://h/a.html", "title"), "Given");
        assert_int_equal(counter(&res, "records.textGiven"), 1);
        assert_int_equal(res.text_attachments, 0);
        result_free(&res);
    }
    {
        /* 4 bytes: "d" and the two bytes of the e acute, not the j */
        struct result res = run(f, "{\"maxTextBytes\": 4}", NULL, 1, r, 2);

        assert_string_equal(attr(&res, "http://h/a.html", "text"),
                            "d\xc3\xa9j");
        result_free(&res);
        /* 7 bytes end with the space after "deja": dropped, as an
         * extracted text never ends with one */
        res = run(f, "{\"maxTextBytes\": 7}", NULL, 0, r, 2);
        assert_string_equal(attr(&res, "http://h/a.html", "text"),
                            "d\xc3\xa9j\xc3\xa0");
        result_free(&res);
        res = run(f, "{\"maxTextBytes\": 2}", NULL, 0, r, 2);
        assert_string_equal(attr(&res, "http://h/a.html", "text"), "d");
        assert_int_equal(counter(&res, "records.truncated"), 2); /* both */
        assert_string_equal(attr(&res, "http://h/a.html", "mimeType"),
                            "text/html");
        result_free(&res);
    }
}

/* An input of records that all bring their text is shared as the output,
 * not copied (bulks.shared); the output reads as the input. */
static void
test_text_given_shared(void **state)
{
    struct fixture *f = *state;
    const struct rec r[] = {
        {"http://h/1",
         "{\"mimeType\": \"text/html\", \"title\": \"One\", \"@att\": "
         "\"text\"}",
         "first text",
         10},
        {"http://h/2",
         "{\"mimeType\": \"text/html\", \"title\": \"Two\", \"@att\": "
         "\"text\"}",
         "",
         0},
        {"http://h/3",
         "{\"mimeType\": \"text/html\", \"title\": \"Three\", \"@att\": "
         "\"text\"}",
         "third text",
         10},
    };
    struct result res = run(f, "{}", NULL, 0, r, 3);

    assert_int_equal(counter(&res, "bulks.shared"), 1);
    assert_int_equal(counter(&res, "records.textGiven"), 3);
    assert_int_equal(json_object_size(res.records), 3);
    assert_string_equal(attr(&res, "http://h/1", "text"), "first text");
    assert_string_equal(attr(&res, "http://h/2", "text"), "");
    assert_string_equal(attr(&res, "http://h/3", "title"), "Three");
    result_free(&res);
    /* a text over maxTextBytes must be cut: not shared */
    res = run(f, "{\"maxTextBytes\": 5}", NULL, 0, r, 3);
    assert_int_equal(counter(&res, "bulks.shared"), 0);
    assert_string_equal(attr(&res, "http://h/1", "text"), "first");
    assert_string_equal(attr(&res, "http://h/3", "text"), "third");
    result_free(&res);
}

/* One HTML page: its HTTP charset (or NULL), the page, and the text limit
 * of both extractions (0: the default, 4 MiB). */
struct page {
    const char *cs;
    char *html;
    size_t len;
    uint64_t max;
    const char *want;    /* in the text, or NULL */
    const char *want_cs; /* the charset chosen, or NULL */
};

/* The crawler's way: page @p through a link parser with the text's tap,
 * fed in @chunk-byte pieces; the text, title and charset into the
 * buffers (caller frees them), the return value says it was cut. */
static int crawler_text(
    const struct page *p, size_t chunk, char **text, char **title, char **cs);

static int
no_link(void *ctx, const char *url, enum sl_web_link_kind kind)
{
    size_t *n = ctx;

    (void)url;
    (void)kind;
    (*n)++;
    return 0;
}

static int
crawler_text(
    const struct page *p, size_t chunk, char **text, char **title, char **cs)
{
    struct sl_text_html *t =
        sl_text_html_new(p->max ? p->max : SL_TEXT_MAX_DEFAULT);
    struct sl_web_links *lx = NULL;
    struct uchardet *ud = NULL;
    struct sl_web_tap tap;
    const char *tx = NULL;
    const char *ti = NULL;
    const char *c = NULL;
    size_t links = 0;
    size_t len = 0;
    size_t off = 0;
    int cut = 0;

    assert_int_equal(
        sl_web_links_begin("http://h/p.html", NULL, 0, no_link, &links, &lx),
        0);
    sl_text_html_begin(t,
                       sl_web_links_parser(lx),
                       p->html,
                       p->len < SL_TEXT_CHUNK ? p->len : SL_TEXT_CHUNK,
                       p->cs,
                       &ud,
                       &tap);
    sl_web_links_tap(lx, &tap);
    while (off < p->len) {
        size_t n = p->len - off < chunk ? p->len - off : chunk;

        assert_int_equal(sl_web_links_feed(lx, p->html + off, n), 0);
        off += n;
    }
    assert_int_equal(sl_web_links_end(lx, NULL), 0);
    cut = sl_text_html_end(t, &tx, &len, &ti, &c);
    assert_int_equal(strlen(tx), len);
    *text = sl_strdup(tx);
    *title = sl_strdup(ti);
    *cs = sl_strdup(c);
    sl_text_ud_free(ud);
    sl_text_html_free(t);
    return cut;
}

/*
 * The webCrawler's text (sl_text_html through the link parser's tap,
 * the page fed in 64 KiB chunks as parse_page feeds it) is the
 * textExtractor's, byte for byte, with the same title and charset, for
 * pages in several charsets (from the HTTP header, <meta>, a byte order
 * mark, detection; a header that contradicts <meta>), hidden elements,
 * <pre>, entities, pages of several chunks and texts cut at the limit
 * (a <title> after the cut is not taken by either).
 */
static void
test_text_html_once(void **state)
{
    struct fixture *f = *state;
    static const char lat[] =
        "<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me "
        "br\xfbl\xe9\x65</p></body></html>";
    static const char meta[] =
        "<html><head><meta charset=\"iso-8859-1\"><title>M\xe9ta</title>"
        "</head><body><p>na\xefve fa\xe7\x61\x64\x65</p></body></html>";
    static const char cp[] = "<html><body><p>\x93quoted\x94 \x96 caf\xe9 "
                             "\x80 100 and more words to detect</p></body>"
                             "</html>";
    static const char bom[] = "\xef\xbb\xbf<html><head><title>BOM "
                              "\xc3\xa9</title></head><body>\xc3\xa9t\xc3\xa9"
                              "</body></html>";
    static const char conflict[] =
        "<html><head><meta charset=\"utf-8\"><title>C</title></head><body>"
        "caf\xc3\xa9</body></html>";
    static const char rich[] =
        "<html><head><title>  Rich   title </title><style>p{}</style>"
        "<script>var s = '<p>no</p>';</script></head><body><h1>Head</h1>"
        "<p>a &amp; b &eacute;&#x4e2d;</p><pre>  keep   this\n  </pre>"
        "<ul><li>one</li><li>two</li></ul><noscript>ns</noscript>"
        "<table><tr><td>c1</td><td>c2</td></tr></table>tail</body></html>";
    static const char utf16be[] =
        "\xfe\xff\0<\0p\0>\0\xe9\0t\0\xe9\0<\0/\0p\0>";
    struct page pages[14];
    size_t np = 0;
    struct sl_buf big;
    struct sl_buf late;
    struct sl_buf soon;
    size_t i = 0;
    int k = 0;

    pages[np++] = (struct page){"ISO-8859-1",
                                (char *)lat,
                                sizeof(lat) - 1,
                                0,
                                "cr\xc3\xa8me br\xc3\xbbl\xc3\xa9\x65",
                                "ISO-8859-1"};
    pages[np++] = (struct page){
        NULL, (char *)lat, sizeof(lat) - 1, 0, "cr\xc3\xa8me", NULL};
    pages[np++] = (struct page){
        NULL, (char *)meta, sizeof(meta) - 1, 0, "na\xc3\xafve", "ISO-8859-1"};
    /* the header wins over <meta>: Latin-1 bytes read as UTF-8 */
    pages[np++] = (struct page){"UTF-8",
                                (char *)meta,
                                sizeof(meta) - 1,
                                0,
                                "na\xef\xbf\xbdve",
                                "UTF-8"};
    pages[np++] = (struct page){NULL,
                                (char *)cp,
                                sizeof(cp) - 1,
                                0,
                                "\xe2\x80\x9cquoted\xe2\x80\x9d",
                                NULL};
    /* a byte order mark wins over the header */
    pages[np++] = (struct page){"ISO-8859-1",
                                (char *)bom,
                                sizeof(bom) - 1,
                                0,
                                "\xc3\xa9t\xc3\xa9",
                                "UTF-8"};
    pages[np++] = (struct page){"windows-1252",
                                (char *)conflict,
                                sizeof(conflict) - 1,
                                0,
                                "caf\xc3\x83\xc2\xa9",
                                "WINDOWS-1252"};
    pages[np++] =
        (struct page){"no-such-charset",
                      (char *)rich,
                      sizeof(rich) - 1,
                      0,
                      "Head\na & b \xc3\xa9\xe4\xb8\xad\n  keep   this\n",
                      "UTF-8"};
    pages[np++] =
        (struct page){NULL, (char *)rich, sizeof(rich) - 1, 20, "Head", NULL};
    pages[np++] = (struct page){"ISO-8859-1",
                                (char *)utf16be,
                                sizeof(utf16be) - 1,
                                0,
                                "\xc3\xa9t\xc3\xa9",
                                "UTF-16BE"};
    sl_buf_init(&big, 1u << 20);
    sl_buf_init(&late, 1u << 20);
    sl_buf_init(&soon, 1u << 20);
    (void)sl_buf_append(&soon, "<html><body>", 12);
    (void)sl_buf_append(
        &big, "<html><head><title>Big</title></head><body>", 43);
    (void)sl_buf_append(&late, "<html><body>", 12);
    for (k = 0; k < 6000; k++) {
        char line[96];
        int n = snprintf(line,
                         sizeof(line),
                         "<p>paragraph %d caf\xc3\xa9 &amp; <b>bold</b></p>\n",
                         k);

        (void)sl_buf_append(&big, line, (size_t)n);
        (void)sl_buf_append(&late, line, (size_t)n);
        if (k < 150) {
            (void)sl_buf_append(&soon, line, (size_t)n);
        }
    }
    (void)sl_buf_append(&big, "</body></html>", 14);
    (void)sl_buf_append(&late, "<title>Late</title></body></html>", 33);
    (void)sl_buf_append(&soon, "<title>Soon</title></body></html>", 33);
    pages[np++] = (struct page){
        NULL, big.data, big.len, 0, "paragraph 5999 caf\xc3\xa9 & bold", NULL};
    pages[np++] =
        (struct page){NULL, big.data, big.len, 100000, "paragraph 10 ", NULL};
    pages[np++] =
        (struct page){NULL, late.data, late.len, 1000, "paragraph 1 ", NULL};
    /* the <title> 6 KB in: after the cut, before the end of a chunk */
    pages[np++] =
        (struct page){NULL, soon.data, soon.len, 1000, "paragraph 2 ", NULL};
    for (i = 0; i < np; i++) {
        char meta_json[256];
        char params[64];
        const struct rec r = {
            "http://h/p.html", meta_json, pages[i].html, pages[i].len};
        char *text = NULL;
        char *title = NULL;
        char *cs = NULL;
        char *text2 = NULL;
        char *title2 = NULL;
        char *cs2 = NULL;
        char mime[SL_TEXT_MIME_MAX];
        int cut = 0;
        int chunky = 0;

        (void)snprintf(meta_json,
                       sizeof(meta_json),
                       "{\"httpMimetype\": \"text/html\", \"@att\": "
                       "\"httpContent\"%s%s%s}",
                       pages[i].cs ? ", \"httpCharset\": \"" : "",
                       pages[i].cs ? pages[i].cs : "",
                       pages[i].cs ? "\"" : "");
        (void)snprintf(
            params,
            sizeof(params),
            "{\"maxTextBytes\": %llu}",
            (unsigned long long)(pages[i].max ? pages[i].max : 4u << 20));
        /* the crawler's way */
        assert_true(sl_text_html_applies(
            "text/html", pages[i].html, pages[i].len, mime));
        assert_string_equal(mime, "text/html");
        cut = crawler_text(&pages[i], SL_TEXT_CHUNK, &text, &title, &cs);
        /* however it is cut into pieces */
        assert_int_equal(crawler_text(&pages[i], 4093, &text2, &title2, &cs2),
                         cut);
        assert_string_equal(text2, text);
        assert_string_equal(title2, title);
        assert_string_equal(cs2, cs);

        /* what the page says, so that the equality below means something */
        if (pages[i].want != NULL && strstr(text, pages[i].want) == NULL) {
            fail_msg(
                "page %zu: no \"%s\" in \"%.300s\"", i, pages[i].want, text);
        }
        if (pages[i].want_cs != NULL) {
            assert_string_equal(cs, pages[i].want_cs);
        }
        assert_int_equal(cut, pages[i].max != 0); /* those are cut */
        assert_null(strstr(text, "no</p>"));      /* the script */
        if (i >= np - 2) {
            assert_string_equal(title, ""); /* after the cut */
        }
        /* the textExtractor's way, in one piece and in small reads */
        for (chunky = 0; chunky < 2; chunky++) {
            struct result res = run(f, params, NULL, chunky, &r, 1);

            assert_string_equal(attr(&res, "http://h/p.html", "text"), text);
            assert_string_equal(attr(&res, "http://h/p.html", "title"),
                                title[0] != '\0' ? title : "p.html");
            assert_string_equal(attr(&res, "http://h/p.html", "charset")
                                    ? attr(&res, "http://h/p.html", "charset")
                                    : "",
                                cs);
            assert_string_equal(attr(&res, "http://h/p.html", "mimeType"),
                                mime);
            assert_int_equal(counter(&res, "records.truncated"), cut);
            result_free(&res);
        }
        sl_free(text);
        sl_free(title);
        sl_free(cs);
        sl_free(text2);
        sl_free(title2);
        sl_free(cs2);
    }
    sl_buf_free(&big);
    sl_buf_free(&late);
    sl_buf_free(&soon);
}

/*
 * A page's <meta> charset against the header's: the header wins for the
 * whole page, however the page is cut.  libxml2 switched to a <meta>
 * charset in mid-page (or stopped at one it cannot read), from wherever it
 * had converted the input so far, so the text depended on the chunks
 * (fuzz_text: the webCrawler's text of such a page, fed in 1-byte chunks,
 * was not the textExtractor's).
 */
static void
test_text_html_meta_against_header(void **state)
{
    struct fixture *f = *state;
    static const char bad[] =
        "<meta http-equiv=\"Content-Type\" content=\"ticharset=js\">"
        "<p>caf\xe9 \xb1</p>";
    static const char late[] =
        "<html><head><title>T</title><meta http-equiv=\"Content-Type\" "
        "content=\"text/html; charset=shift_jis\"></head><body><p>caf\xe9 "
        "\xbc\xb1</p></body></html>";
    const struct page pages[] = {
        {"ISO-8859-1", (char *)bad, sizeof(bad) - 1, 0, "caf\xc3\xa9", NULL},
        {"ISO-8859-1",
         (char *)late,
         sizeof(late) - 1,
         0,
         "caf\xc3\xa9 \xc2\xbc\xc2\xb1",
         NULL},
    };
    static const size_t chunks[] = {1, 2, 7, SL_TEXT_CHUNK};
    size_t i = 0;
    size_t k = 0;

    for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        const struct rec r = {"http://h/p.html",
                              "{\"httpMimetype\": \"text/html\", \"@att\": "
                              "\"httpContent\", \"httpCharset\": "
                              "\"ISO-8859-1\"}",
                              pages[i].html,
                              pages[i].len};
        struct result res = run(f, "{}", NULL, 0, &r, 1);
        const char *want = attr(&res, "http://h/p.html", "text");

        assert_non_null(want);
        if (strstr(want, pages[i].want) == NULL) {
            fail_msg("page %zu: no \"%s\" in \"%s\"", i, pages[i].want, want);
        }
        assert_string_equal(attr(&res, "http://h/p.html", "charset"),
                            "ISO-8859-1");
        for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
            char *text = NULL;
            char *title = NULL;
            char *cs = NULL;

            (void)crawler_text(&pages[i], chunks[k], &text, &title, &cs);
            if (strcmp(text, want) != 0) {
                fail_msg("page %zu in chunks of %zu: \"%s\", the "
                         "textExtractor's \"%s\"",
                         i,
                         chunks[k],
                         text,
                         want);
            }
            assert_string_equal(cs, "ISO-8859-1");
            sl_free(text);
            sl_free(title);
            sl_free(cs);
        }
        result_free(&res);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_output, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_latin1_utf16, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_html, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_collapse_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_html_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_prose_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_html_charsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_xml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_no_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_converter, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_converter_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_mime_and_params, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_corrupt_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_office, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_given_attachment, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_given_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_html_once, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_html_meta_against_header, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
