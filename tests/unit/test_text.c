/*
 * text/: the text library on plain values, without a task: MIME types,
 * documents (plain text in a given charset, HTML with title and hidden
 * elements fed byte by byte, malformed XML, the cap, a given text, a
 * converter and its cancel callback), the HTML text of a links parser,
 * and the archive walk into a sink (elements, sanitised names, limits,
 * nested archives, corrupt input).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "text/text.h"
#include "text_fixture.h"

/* ------------------------------------------------------------------------
 * MIME types.
 * --------------------------------------------------------------------- */

static void
test_text_mime_tables(void **state)
{
    char out[SL_TEXT_MIME_MAX];

    (void)state;
    assert_string_equal(sl_text_mime_by_extension("HTML", NULL), "text/html");
    assert_string_equal(sl_text_mime_by_extension(NULL, "d/a.b/c.Txt"),
                        "text/plain");
    assert_null(sl_text_mime_by_extension(NULL, "d.x/noext"));
    assert_null(sl_text_mime_by_extension("exe", "a.txt"));
    assert_null(sl_text_mime_by_extension(NULL, NULL));
    sl_text_mime_normalize("Text/HTML; charset=UTF-8", out);
    assert_string_equal(out, "text/html");
    sl_text_mime_normalize(NULL, out);
    assert_string_equal(out, "");
    assert_int_equal(sl_text_mime_kind("text/html"), SL_TEXT_KIND_HTML);
    assert_int_equal(sl_text_mime_kind("application/xhtml+xml"),
                     SL_TEXT_KIND_HTML);
    assert_int_equal(sl_text_mime_kind("application/atom+xml"),
                     SL_TEXT_KIND_XML);
    assert_int_equal(sl_text_mime_kind("text/csv"), SL_TEXT_KIND_TEXT);
    assert_int_equal(sl_text_mime_kind("image/png"), SL_TEXT_KIND_OTHER);
}

static void
test_text_mime_detect(void **state)
{
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1"
                              "\x08\x06\0\0\0\x1f\x15\xc4\x89";
    struct sl_text_opts o = {1024, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_hints h = {NULL, "txt", "a/b.txt"};
    char out[SL_TEXT_MIME_MAX];

    (void)state;
    /* a textual extension over a textual head: no libmagic */
    assert_int_equal(sl_text_mime_detect(t, &h, "hello\n", 6, out), 1);
    assert_string_equal(out, "text/plain");
    /* the record's own type goes first on the fast path */
    h.mime = "text/csv; charset=utf-8";
    assert_int_equal(sl_text_mime_detect(t, &h, "a,b\n", 4, out), 1);
    assert_string_equal(out, "text/csv");
    /* binary content: libmagic decides, over the extension */
    h.mime = NULL;
    assert_int_equal(sl_text_mime_detect(t, &h, png, sizeof(png) - 1, out), 0);
    assert_string_equal(out, "image/png");
    /* application/octet-stream says nothing: libmagic decides (a README
     * served so by a web server is text) */
    h.mime = "application/octet-stream";
    h.extension = NULL;
    h.id = "http://h/doc/README";
    assert_int_equal(sl_text_mime_detect(t, &h, "Read me first.\n", 15, out),
                     0);
    assert_string_equal(out, "text/plain");
    h.mime = "application/octet-stream";
    h.id = "http://h/doc/notes.txt";
    assert_int_equal(sl_text_mime_detect(t, &h, "notes\n", 6, out), 1);
    assert_string_equal(out, "text/plain");
    sl_text_free(t);
}

/* ------------------------------------------------------------------------
 * Documents.
 * --------------------------------------------------------------------- */

/* Extract @n bytes @p of type @mime (HTTP charset @cs) with @t, fed in
 * pieces of @chunk bytes; the result in @r, valid until the caller frees
 * the returned document. */
static struct sl_text_doc *
extract(struct sl_text *t,
        const char *mime,
        const char *cs,
        const char *p,
        size_t n,
        size_t chunk,
        struct sl_text_result *r)
{
    struct sl_text_doc *d = sl_text_doc_new(t);
    size_t off = 0;
    int fed = 0;

    assert_int_equal(sl_text_doc_begin(d, mime, cs, p, n), 0);
    while (fed == 0 && off < n) {
        size_t k = n - off < chunk ? n - off : chunk;

        fed = sl_text_doc_feed(d, p + off, k);
        off += k;
    }
    assert_true(fed == 0 || fed == SL_TEXT_STOP);
    assert_int_equal(sl_text_doc_end(d, 0), 0);
    sl_text_doc_result(d, r);
    assert_int_equal(strlen(r->text), r->len);
    return d;
}

static void
test_text_doc_plain_and_markup(void **state)
{
    static const char html[] =
        "<html><head><title>The  title</title><style>p{}</style>"
        "<script>var x;</script></head><body><p>one &amp;  two</p>"
        "<div>three</div><pre>a  b</pre></body></html>";
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;

    (void)state;
    d = extract(t, "text/plain", "ISO-8859-1", "caf\xe9 cr\xe8me", 11, 64, &r);
    assert_string_equal(r.text, "caf\xc3\xa9 cr\xc3\xa8me");
    assert_string_equal(r.charset, "ISO-8859-1");
    assert_int_equal(r.kind, SL_TEXT_KIND_TEXT);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_int_equal(r.full, 0);
    sl_text_doc_free(d);

    d = extract(t, "text/html", NULL, html, sizeof(html) - 1, 1, &r);
    assert_string_equal(r.text, "one & two\nthree\na  b");
    assert_string_equal(r.title, "The title");
    assert_int_equal(r.kind, SL_TEXT_KIND_HTML);
    sl_text_doc_free(d);

    d = extract(t, "application/xml", NULL, "<a><b>x</a>", 11, 4, &r);
    assert_int_equal(r.kind, SL_TEXT_KIND_XML);
    assert_int_equal(r.malformed, 1);
    sl_text_doc_free(d);

    d = extract(t, "image/png", NULL, "\x89PNG", 4, 4, &r);
    assert_int_equal(r.outcome, SL_TEXT_NOTEXT);
    assert_int_equal(r.len, 0);
    sl_text_doc_free(d);
    sl_text_free(t);
}

/* A compressed single file is one document: the text of what is inside,
 * typed by its content and its name without the suffix; every filter
 * libarchive reads, a compressed HTML page (title and all), a compressed
 * compressed file, a large one cut at the text cap, and a truncated and a
 * corrupt one (no text, counted corrupt, no crash). */
static void
test_text_doc_compressed(void **state)
{
    static const struct {
        int filter;
        const char *encoding;
        const char *id;
    } cases[] = {
        {ARCHIVE_FILTER_GZIP, "gzip", "doc/README.gz"},
        {ARCHIVE_FILTER_BZIP2, "bzip2", "doc/README.bz2"},
        {ARCHIVE_FILTER_XZ, "xz", "doc/README.xz"},
        {ARCHIVE_FILTER_ZSTD, "zstd", "doc/README.zst"},
        {ARCHIVE_FILTER_LZ4, "lz4", "doc/README.lz4"},
        {ARCHIVE_FILTER_LZMA, "lzma", "doc/README.lzma"},
    };
    static const char readme[] = "Sluice reads compressed files.\n";
    static const char page[] = "<html><head><title>Caching</title></head>"
                               "<body><p>Keep it warm.</p></body></html>";
    struct sl_text_opts o = {4096, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;
    uint64_t size = 0;
    char *big = sl_malloc(1 << 20);
    size_t i = 0;
    int fd = -1;
    int fd2 = -1;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fd = text_compressed_fd(
            cases[i].filter, readme, sizeof(readme) - 1, &size);
        d = text_extract_fd(t, cases[i].id, NULL, fd, &r, NULL);
        assert_string_equal(r.text, "Sluice reads compressed files.\n");
        assert_string_equal(r.encoding, cases[i].encoding);
        assert_string_equal(r.inner_mime, "text/plain");
        assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
        assert_int_equal(r.corrupt, 0);
        sl_text_doc_free(d);
        (void)close(fd);
    }
    /* typed by its name inside: caching.html.gz is HTML */
    fd = text_compressed_fd(ARCHIVE_FILTER_GZIP, page, sizeof(page) - 1, &size);
    d = text_extract_fd(t, "site/caching.html.gz", NULL, fd, &r, NULL);
    assert_string_equal(r.inner_mime, "text/html");
    assert_string_equal(r.title, "Caching");
    assert_string_equal(r.text, "Keep it warm.");
    assert_int_equal(r.kind, SL_TEXT_KIND_HTML);
    sl_text_doc_free(d);
    /* compressed twice */
    {
        char twice[4096];
        ssize_t n = read(fd, twice, 0);

        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        n = read(fd, twice, sizeof(twice));
        assert_true(n > 0 && (uint64_t)n == size);
        fd2 = text_compressed_fd(ARCHIVE_FILTER_XZ, twice, (size_t)n, &size);
    }
    (void)close(fd);
    d = text_extract_fd(t, "site/caching.html.gz.xz", NULL, fd2, &r, NULL);
    assert_string_equal(r.encoding, "xz");
    assert_string_equal(r.text, "Keep it warm.");
    sl_text_doc_free(d);
    (void)close(fd2);
    /* a megabyte of text: the text stops at the cap */
    for (i = 0; i < (1u << 20); i++) {
        big[i] = (char)(i % 64 == 63 ? '\n' : 'a' + (char)(i % 26));
    }
    fd = text_compressed_fd(ARCHIVE_FILTER_GZIP, big, 1u << 20, &size);
    d = text_extract_fd(t, "big.txt.gz", NULL, fd, &r, NULL);
    assert_int_equal(r.full, 1);
    assert_true(r.len > 4000 && r.len <= 4096);
    sl_text_doc_free(d);
    /* truncated: the text read up to the cut, counted corrupt */
    sl_text_free(t);
    o.max_text = 4 << 20;
    t = sl_text_new(&o);
    assert_int_equal(ftruncate(fd, (off_t)size / 2), 0);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    d = text_extract_fd(t, "big.txt.gz", NULL, fd, &r, NULL);
    assert_int_equal(r.corrupt, 1);
    assert_int_equal(r.full, 0);
    assert_true(r.len > 0 && r.len < (1u << 20));
    assert_memory_equal(r.text, big, r.len);
    sl_text_doc_free(d);
    (void)close(fd);
    fd = memfd_create("bad", MFD_CLOEXEC);
    assert_int_equal(write(fd, "\x1f\x8b\x08\0garbage garbage", 20), 20);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    d = text_extract_fd(t, "bad.gz", NULL, fd, &r, NULL);
    assert_string_equal(r.encoding, "gzip");
    assert_int_equal(r.corrupt, 1);
    assert_int_equal(r.len, 0);
    sl_text_doc_free(d);
    (void)close(fd);
    sl_free(big);
    sl_text_free(t);
}

static void
test_text_doc_cap_and_given(void **state)
{
    struct sl_text_opts o = {6, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;

    (void)state;
    /* cut between characters: "\xc3\xa9" does not fit after "abcde" */
    d = extract(t, "text/plain", "UTF-8", "abcde\xc3\xa9xyz", 10, 3, &r);
    assert_string_equal(r.text, "abcde");
    assert_int_equal(r.full, 1);
    sl_text_doc_free(d);

    /* a given text cut at the cap ends in no space */
    d = sl_text_doc_new(t);
    assert_int_equal(sl_text_doc_give(d, "hello ", 6), 0);
    assert_int_equal(sl_text_doc_give(d, "world", 5), 1);
    sl_text_doc_give_end(d);
    sl_text_doc_result(d, &r);
    assert_string_equal(r.text, "hello");
    assert_int_equal(r.full, 1);
    sl_text_doc_free(d);
    sl_text_free(t);
}

/* The cancel callback: cancels once *arg is set. */
static int
canceled(void *arg)
{
    return *(int *)arg;
}

static void
test_text_doc_converter(void **state)
{
    json_t *conv = json_pack("{s:{s:[s,s,s]}, s:{s:[s,s], s:i}}",
                             "application/x-up",
                             "command",
                             "tr",
                             "a-z",
                             "A-Z",
                             "application/x-slow",
                             "command",
                             "sleep",
                             "5",
                             "timeoutSeconds",
                             10);
    int stop = 0;
    struct sl_text_opts o = {1 << 20, conv, canceled, &stop};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;

    (void)state;
    assert_non_null(conv);
    d = extract(t, "application/x-up", NULL, "shout", 5, 2, &r);
    assert_string_equal(r.text, "SHOUT");
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    sl_text_doc_free(d);

    d = sl_text_doc_new(t);
    assert_int_equal(sl_text_doc_begin(d, "application/x-slow", NULL, "x", 1),
                     0);
    stop = 1;
    assert_int_equal(sl_text_doc_feed(d, "x", 1), SL_ECANCELED);
    assert_int_equal(sl_text_doc_end(d, 1), 0);
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

/* A converter's metaCommand (run on the spooled file once the converter
 * succeeded) gives the metadata from "Key: value" lines, as pdfinfo
 * prints them; one that fails leaves the text alone. */
static void
test_text_doc_converter_meta(void **state)
{
    json_t *conv = json_loads(
        "{\"application/x-meta\": {\"command\": [\"cat\", \"{file}\"],"
        " \"metaCommand\": [\"sh\", \"-c\", \"printf 'Title:  The Title\\n"
        "Author: Ada Lovelace\\nCreationDate: 2024-03-15T10:00:00Z\\n"
        "ModDate: 2024-03-16T10:00:00Z\\nPages: 52\\nOther: x\\n'; "
        "test -s \\\"$0\\\"\", \"{file}\"]},"
        " \"application/x-badmeta\": {\"command\": [\"cat\", \"{file}\"],"
        " \"metaCommand\": [\"false\", \"{file}\"]}}",
        0,
        NULL);
    struct sl_text_opts o = {1 << 20, conv, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;

    (void)state;
    assert_non_null(conv);
    d = extract(t, "application/x-meta", NULL, "words", 5, 2, &r);
    assert_string_equal(r.text, "words");
    assert_string_equal(r.title, "The Title");
    assert_string_equal(r.author, "Ada Lovelace");
    assert_string_equal(r.created, "2024-03-15T10:00:00Z");
    assert_string_equal(r.modified, "2024-03-16T10:00:00Z");
    assert_int_equal(r.pages, 52);
    sl_text_doc_free(d);
    d = extract(t, "application/x-badmeta", NULL, "kept", 4, 4, &r);
    assert_string_equal(r.text, "kept");
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_string_equal(r.author, "");
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

/* The metadata of the legacy Office formats and RTF, as `exiftool -S`
 * prints it: its tag names CreateDate and ModifyDate are the dates,
 * Slides (a presentation's) the page count; an OLE2 date never set (a
 * zero FILETIME, printed "0" or "0000:00:00 00:00:00") is no date. */
static void
test_text_doc_converter_meta_exiftool(void **state)
{
    json_t *conv = json_loads(
        "{\"application/x-ole\": {\"command\": [\"cat\", \"{file}\"],"
        " \"metaCommand\": [\"printf\", \"Title: Sluice Sample Report\\n"
        "Author: Ada Lovelace\\nCreateDate: 2024-03-15T10:00:00Z\\n"
        "ModifyDate: 2024-03-16T09:30:00Z\\nSlides: 3\\n\"]},"
        " \"application/x-unset\": {\"command\": [\"cat\", \"{file}\"],"
        " \"metaCommand\": [\"printf\", \"Title: T\\nCreateDate: 0\\n"
        "ModifyDate: 0000:00:00 00:00:00\\nPages: 0\\n\"]}}",
        0,
        NULL);
    struct sl_text_opts o = {1 << 20, conv, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;

    (void)state;
    assert_non_null(conv);
    d = extract(t, "application/x-ole", NULL, "slides", 6, 6, &r);
    assert_string_equal(r.text, "slides");
    assert_string_equal(r.title, "Sluice Sample Report");
    assert_string_equal(r.author, "Ada Lovelace");
    assert_string_equal(r.created, "2024-03-15T10:00:00Z");
    assert_string_equal(r.modified, "2024-03-16T09:30:00Z");
    assert_int_equal(r.pages, 3);
    sl_text_doc_free(d);
    d = extract(t, "application/x-unset", NULL, "sheet", 5, 5, &r);
    assert_string_equal(r.title, "T");
    assert_string_equal(r.created, "");
    assert_string_equal(r.modified, "");
    assert_int_equal(r.pages, 0);
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

/* ------------------------------------------------------------------------
 * The HTML text of a links parser.
 * --------------------------------------------------------------------- */

static int
on_link(void *ctx, const char *url, enum sl_web_link_kind kind)
{
    (void)url;
    (void)kind;
    (*(size_t *)ctx)++;
    return 0;
}

static void
test_text_html_tap(void **state)
{
    static const char page[] = "<html><title>T</title><body><p>x "
                               "<a href=\"/a\">link</a></p></body></html>";
    struct sl_text_html *t = sl_text_html_new(1024);
    struct sl_web_links *lx = NULL;
    struct uchardet *ud = NULL;
    struct sl_web_tap tap;
    char mime[SL_TEXT_MIME_MAX];
    const char *text = NULL;
    const char *title = NULL;
    const char *cs = NULL;
    size_t links = 0;
    size_t len = 0;

    (void)state;
    assert_true(
        sl_text_html_applies("Text/Html; charset=utf-8", page, 10, mime));
    assert_string_equal(mime, "text/html");
    assert_false(sl_text_html_applies("text/html", "<p>\0x", 5, mime));
    assert_false(sl_text_html_applies("text/plain", "<p>x", 4, mime));
    assert_int_equal(
        sl_web_links_begin("http://h/p.html", NULL, 0, on_link, &links, &lx),
        0);
    sl_text_html_begin(
        t, sl_web_links_parser(lx), page, sizeof(page) - 1, "utf-8", &ud, &tap);
    sl_web_links_tap(lx, &tap);
    assert_int_equal(sl_web_links_feed(lx, page, sizeof(page) - 1), 0);
    assert_int_equal(sl_web_links_end(lx, NULL), 0);
    assert_int_equal(sl_text_html_end(t, &text, &len, &title, &cs), 0);
    assert_string_equal(text, "x link");
    assert_int_equal(len, 6);
    assert_string_equal(title, "T");
    assert_string_equal(cs, "UTF-8");
    assert_int_equal(links, 1);
    sl_text_ud_free(ud);
    sl_text_html_free(t);
}

/* ------------------------------------------------------------------------
 * Archives.
 * --------------------------------------------------------------------- */

/* What the sink saw. */
struct seen {
    char ids[16][128]; /* element ids, in order */
    size_t n;          /* elements */
    size_t bytes;      /* content bytes written */
    uint64_t want;     /* of the current element */
    double events[SL_TEXT_ARC_EVENTS];
    char event_id[SL_TEXT_ARC_EVENTS][128]; /* last id of each event */
    size_t compounds;                       /* elements marked _isCompound */
};

static int
sink_begin(void *arg, const json_t *meta, const char *att, uint64_t size)
{
    struct seen *s = arg;

    assert_true(s->n < 16);
    (void)snprintf(s->ids[s->n++],
                   sizeof(s->ids[0]),
                   "%s",
                   json_string_value(json_object_get(meta, "_recordid")));
    assert_string_equal(
        json_string_value(json_object_get(meta, "_compoundRecordId")), "top");
    if (json_is_true(json_object_get(meta, "_isCompound"))) {
        s->compounds++;
    }
    assert_true(att == NULL || strcmp(att, "content") == 0);
    s->want = att != NULL ? size : 0;
    return 0;
}

static int
sink_write(void *arg, const void *p, size_t n)
{
    struct seen *s = arg;

    (void)p;
    assert_true(n <= s->want);
    s->want -= n;
    s->bytes += n;
    return 0;
}

static int
sink_end(void *arg)
{
    assert_int_equal(((struct seen *)arg)->want, 0);
    return 0;
}

static void
sink_note(void *arg, int event, double n, const char *id)
{
    struct seen *s = arg;

    s->events[event] += n;
    (void)snprintf(s->event_id[event],
                   sizeof(s->event_id[0]),
                   "%s",
                   id != NULL ? id : "(null)");
}

static char *
escape(const char *raw)
{
    return sl_strdup(raw);
}

static int
is_zip(const char *name)
{
    size_t n = strlen(name);

    return n > 4 && strcmp(name + n - 4, ".zip") == 0;
}

/* A zip of the @n (name, data) pairs in @e, in a new memory file. */
static int
zip_fd(const char *const (*e)[2], size_t n, uint64_t *size)
{
    int fd = memfd_create("zip", MFD_CLOEXEC);
    struct archive *a = archive_write_new();
    size_t i = 0;

    assert_true(fd >= 0);
    assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
    for (i = 0; i < n; i++) {
        struct archive_entry *ae = archive_entry_new();
        size_t len = strlen(e[i][1]);

        archive_entry_set_pathname(ae, e[i][0]);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)len);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, e[i][1], len), (la_ssize_t)len);
        archive_entry_free(ae);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    assert_int_equal(archive_write_free(a), ARCHIVE_OK);
    *size = (uint64_t)lseek(fd, 0, SEEK_END);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

/* Walk @fd (@size bytes) with limits @lim into @s. */
static int
walk(int fd,
     uint64_t size,
     const struct sl_text_archive_limits *lim,
     struct seen *s)
{
    static const struct sl_text_archive_names names = {
        "path", "name", "folder", "ext", "size", "modified", "content", 0};
    struct sl_text_archive_sink sink;
    struct sl_text_archive *x = NULL;
    struct sl_err err;
    int rc = 0;

    memset(s, 0, sizeof(*s));
    memset(&sink, 0, sizeof(sink));
    sink.arg = s;
    sink.begin = sink_begin;
    sink.write = sink_write;
    sink.end = sink_end;
    sink.note = sink_note;
    sink.escape = escape;
    sink.is_archive = is_zip;
    sl_err_clear(&err);
    x = sl_text_archive_new("test", lim, &names, &sink);
    rc = sl_text_archive_walk(x, "top", NULL, fd, size, &err);
    sl_text_archive_free(x);
    return rc;
}

static void
test_text_archive_walk(void **state)
{
    static const char *const inner[][2] = {{"deep.txt", "inner text"}};
    static const char *const outer[][2] = {
        {"a.txt", "hello"}, {"../up.txt", "up"}, {"./d/b.txt", "bb"}};
    struct sl_text_archive_limits lim = {5, 100, 1 << 20, 100, 1 << 20};
    struct seen s;
    uint64_t size = 0;
    int fd = zip_fd(outer, 3, &size);

    (void)state;
    assert_int_equal(walk(fd, size, &lim, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.ids[0], "top!/a.txt");
    assert_string_equal(s.ids[1], "top!/up.txt");
    assert_string_equal(s.ids[2], "top!/d/b.txt");
    assert_int_equal(s.bytes, 9);
    assert_true(s.events[SL_TEXT_ARC_EXTRACTED] == 1);
    assert_true(s.events[SL_TEXT_ARC_RECORDS] == 3);
    assert_true(s.events[SL_TEXT_ARC_BYTES] == 9);
    assert_true(s.events[SL_TEXT_ARC_SANITISED] == 1);
    assert_true(s.events[SL_TEXT_ARC_CORRUPT] == 0);

    /* at most 2 entries per archive */
    lim.max_entries = 2;
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(walk(fd, size, &lim, &s), 0);
    assert_int_equal(s.n, 2);
    assert_true(s.events[SL_TEXT_ARC_LIMIT_ENTRIES] == 1);
    assert_string_equal(s.event_id[SL_TEXT_ARC_LIMIT_ENTRIES], "top");
    assert_string_equal(s.event_id[SL_TEXT_ARC_RECORDS], "(null)");

    /* an entry over maxEntrySize: a record without content, reported */
    lim.max_entries = 100;
    lim.max_entry = 4;
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(walk(fd, size, &lim, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.bytes, 4);
    assert_true(s.events[SL_TEXT_ARC_LIMIT_ENTRY] == 1);
    assert_string_equal(s.event_id[SL_TEXT_ARC_LIMIT_ENTRY], "top!/a.txt");
    lim.max_entry = 1 << 20;
    (void)close(fd);

    /* a nested archive: its own record, then its elements */
    {
        int in = zip_fd(inner, 1, &size);
        char *zip = sl_malloc((size_t)size + 1);
        struct archive *a = archive_write_new();
        struct archive_entry *ae = archive_entry_new();

        assert_int_equal(read(in, zip, (size_t)size), (ssize_t)size);
        (void)close(in);
        fd = memfd_create("nest", MFD_CLOEXEC);
        assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
        assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
        archive_entry_set_pathname(ae, "in.zip");
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)size);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, zip, (size_t)size),
                         (la_ssize_t)size);
        archive_entry_free(ae);
        assert_int_equal(archive_write_close(a), ARCHIVE_OK);
        assert_int_equal(archive_write_free(a), ARCHIVE_OK);
        sl_free(zip);
        size = (uint64_t)lseek(fd, 0, SEEK_END);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        lim.max_entries = 100;
        assert_int_equal(walk(fd, size, &lim, &s), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.ids[0], "top!/in.zip");
        assert_string_equal(s.ids[1], "top!/in.zip!/deep.txt");
        assert_int_equal(s.compounds, 1);
        assert_true(s.events[SL_TEXT_ARC_EXTRACTED] == 2);
        /* too deep: kept as a file */
        lim.max_depth = 0;
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_int_equal(walk(fd, size, &lim, &s), 0);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.compounds, 0);
        assert_true(s.events[SL_TEXT_ARC_LIMIT_DEPTH] == 1);
        assert_string_equal(s.event_id[SL_TEXT_ARC_LIMIT_DEPTH], "top!/in.zip");
        (void)close(fd);
    }

    /* a symbolic link in a tar: no element, reported under its id */
    {
        struct archive *a = archive_write_new();
        struct archive_entry *ae = archive_entry_new();

        fd = memfd_create("link", MFD_CLOEXEC);
        assert_int_equal(archive_write_set_format_pax_restricted(a),
                         ARCHIVE_OK);
        assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
        archive_entry_set_pathname(ae, "d/link");
        archive_entry_set_filetype(ae, AE_IFLNK);
        archive_entry_set_symlink(ae, "../etc/passwd");
        archive_entry_set_perm(ae, 0777);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        archive_entry_free(ae);
        assert_int_equal(archive_write_close(a), ARCHIVE_OK);
        assert_int_equal(archive_write_free(a), ARCHIVE_OK);
        size = (uint64_t)lseek(fd, 0, SEEK_END);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_int_equal(walk(fd, size, &lim, &s), 0);
        assert_int_equal(s.n, 0);
        assert_true(s.events[SL_TEXT_ARC_SKIPPED] == 1);
        assert_string_equal(s.event_id[SL_TEXT_ARC_SKIPPED], "top!/d/link");
        (void)close(fd);
    }

    /* not an archive: reported corrupt, no error */
    fd = memfd_create("junk", MFD_CLOEXEC);
    assert_int_equal(write(fd, "not an archive at all", 21), 21);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(walk(fd, 21, &lim, &s), 0);
    assert_int_equal(s.n, 0);
    assert_true(s.events[SL_TEXT_ARC_CORRUPT] == 1);
    assert_string_equal(s.event_id[SL_TEXT_ARC_CORRUPT], "top");
    (void)close(fd);

    /* a compressed text file is no archive and not corrupt: a document
     * (no mtree entries made of its lines either) */
    {
        static const char rst[] = "Caching\n=======\n\n.. note::\n"
                                  "   >>> cache = {}\n";
        uint64_t zsize = 0;

        memset(&s, 0, sizeof(s));
        fd = text_compressed_fd(
            ARCHIVE_FILTER_GZIP, rst, sizeof(rst) - 1, &zsize);
        assert_int_equal(walk(fd, zsize, &lim, &s), 0);
        assert_int_equal(s.n, 0);
        assert_true(s.events[SL_TEXT_ARC_CORRUPT] == 0);
        assert_true(s.events[SL_TEXT_ARC_NOT_ARCHIVE] == 1);
        assert_true(s.events[SL_TEXT_ARC_EXTRACTED] == 0);
        (void)close(fd);
    }

    fd = sl_text_spool_open();
    assert_true(fd >= 0);
    (void)close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_mime_tables),
        cmocka_unit_test(test_text_mime_detect),
        cmocka_unit_test(test_text_doc_plain_and_markup),
        cmocka_unit_test(test_text_doc_cap_and_given),
        cmocka_unit_test(test_text_doc_compressed),
        cmocka_unit_test(test_text_doc_converter),
        cmocka_unit_test(test_text_doc_converter_meta),
        cmocka_unit_test(test_text_doc_converter_meta_exiftool),
        cmocka_unit_test(test_text_html_tap),
        cmocka_unit_test(test_text_archive_walk),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
