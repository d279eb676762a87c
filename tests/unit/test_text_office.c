/*
 * text/: office documents and EPUB read in-process (text/office.c,
 * text/epub.c): the real documents of tests/docs/ (made by pandoc and
 * LibreOffice) through MIME detection and a document fed in chunks, their
 * text and metadata; zips with parts out of order; and hostile zips made
 * here with libarchive's zip writer: zip bombs, a billion laughs, a
 * truncated document, a zip that only claims to be a document, too many
 * entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "text/text.h"
#include "text_fixture.h"

#ifndef SL_TEST_DOCS
#error "SL_TEST_DOCS: the tests/docs folder"
#endif

#define SENTENCE "The quick sluice gate opens at dawn"
#define UNICODE  "Café crème, naïve façade, Straße, 東京."

#define DOCX                                                                   \
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#define ODT "application/vnd.oasis.opendocument.text"

/* The same for file @name of tests/docs. */
static struct sl_text_doc *
extract_file(struct sl_text *t,
             const char *name,
             struct sl_text_result *r,
             char *mime)
{
    char path[1024];
    struct sl_text_doc *d = NULL;
    int fd = -1;

    (void)snprintf(path, sizeof(path), "%s/%s", SL_TEST_DOCS, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    d = text_extract_fd(t, name, NULL, fd, r, mime);
    (void)close(fd);
    return d;
}

/* How often @needle is in @s. */
static size_t
count(const char *s, const char *needle)
{
    size_t n = 0;

    while ((s = strstr(s, needle)) != NULL) {
        n++;
        s += strlen(needle);
    }
    return n;
}

/* An ISO 8601 date or time: 2024-03-15, 2024-03-15T09:30:00Z. */
static int
iso_date(const char *s)
{
    return strlen(s) >= 10 && s[4] == '-' && s[7] == '-' &&
           strspn(s, "0123456789") == 4 && (s[10] == '\0' || s[10] == 'T');
}

/* ------------------------------------------------------------------------
 * The documents of tests/docs.
 * --------------------------------------------------------------------- */

static void
test_office_documents(void **state)
{
    static const struct {
        const char *file;
        const char *mime;
        int prose; /* from sample.md, not from sample.csv */
    } docs[] = {
        {"sample.docx", DOCX, 1},
        {"sample.odt", ODT, 1},
        {"sample.pptx",
         "application/vnd.openxmlformats-officedocument.presentationml."
         "presentation",
         1},
        {"sample.odp", "application/vnd.oasis.opendocument.presentation", 1},
        {"sample.epub", "application/epub+zip", 1},
        {"sample.xlsx",
         "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         0},
        {"sample.ods", "application/vnd.oasis.opendocument.spreadsheet", 0},
    };
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        struct sl_text_doc *d = extract_file(t, docs[i].file, &r, mime);

        print_message("%s (%s): %zu bytes, title \"%s\", author \"%s\", "
                      "created \"%s\", modified \"%s\", pages %llu\n",
                      docs[i].file,
                      mime,
                      r.len,
                      r.title,
                      r.author,
                      r.created,
                      r.modified,
                      (unsigned long long)r.pages);
        assert_string_equal(mime, docs[i].mime);
        assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
        assert_int_equal(r.corrupt, 0);
        assert_int_equal(r.cut, 0);
        assert_int_equal(r.full, 0);
        assert_int_equal(r.malformed, 0);
        assert_non_null(strstr(r.text, SENTENCE));
        assert_null(strchr(r.text, '<')); /* no markup */
        assert_null(strchr(r.text, '>'));
        assert_int_equal(strlen(r.text), r.len);
        if (!docs[i].prose) {
            assert_non_null(strstr(r.text, "Herons gather near the northern"));
            assert_non_null(strstr(r.text, "Kestrel"));
            sl_text_doc_free(d);
            continue;
        }
        assert_int_equal(count(r.text, "Harbour Survey"), 1);
        assert_non_null(strstr(r.text, "\n" UNICODE));
        assert_non_null(strstr(r.text, "2024-03-15"));
        /* the title (first slide, title page) before the chapter */
        assert_true(strstr(r.text, "Sluice Sample Report") <
                    strstr(r.text, "Harbour Survey"));
        assert_string_equal(r.title, "Sluice Sample Report");
        assert_string_equal(r.author, "Ada Lovelace");
        assert_true(iso_date(r.created));
        assert_true(iso_date(r.modified));
        sl_text_doc_free(d);
    }
    sl_text_free(t);
}

/* File @name of tests/docs gzip'd, in a new memory file. */
static int
gzip_file(const char *name)
{
    char path[1024];
    static char buf[1 << 16];
    uint64_t size = 0;
    int in = -1;
    ssize_t n = 0;

    (void)snprintf(path, sizeof(path), "%s/%s", SL_TEST_DOCS, name);
    in = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(in >= 0);
    n = read(in, buf, sizeof(buf));
    assert_true(n > 0 && n < (ssize_t)sizeof(buf));
    (void)close(in);
    return text_compressed_fd(ARCHIVE_FILTER_GZIP, buf, (size_t)n, &size);
}

/* Does @s start with @prefix? */
static int
starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define HEAD                                                                   \
    "Sluice Sample Report\nAda Lovelace\n2024-03-15\nHarbour "                 \
    "Survey\n" SENTENCE " and closes at dusk.\n"

/* The details: paragraphs as lines, runs joined, the metadata. */
static void
test_office_details(void **state)
{
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;
    char mime[SL_TEXT_MIME_MAX];

    (void)state;
    d = extract_file(t, "sample.docx", &r, mime);
    print_message("sample.docx text:\n%s\n", r.text);
    assert_true(starts(r.text, HEAD));
    assert_non_null(strstr(r.text, "\nKestrel\n1200\n"));
    assert_int_equal(r.pages, 1); /* docProps/app.xml */
    sl_text_doc_free(d);
    d = extract_file(t, "sample.odt", &r, mime);
    print_message("sample.odt text:\n%s\n", r.text);
    assert_true(starts(r.text, HEAD));
    assert_int_equal(r.pages, 0); /* no meta:page-count */
    sl_text_doc_free(d);
    /* the spine's order, without the navigation document */
    d = extract_file(t, "sample.epub", &r, mime);
    print_message("sample.epub text:\n%s\n", r.text);
    assert_string_equal(r.created, "2024-03-15"); /* dc:date */
    assert_true(starts(r.text, "Sluice Sample Report\n"));
    sl_text_doc_free(d);
    /* shared strings, then the sheet's numbers */
    d = extract_file(t, "sample.xlsx", &r, mime);
    print_message("sample.xlsx text:\n%s\n", r.text);
    assert_non_null(strstr(r.text, "Vessel\nTonnage\n"));
    assert_non_null(strstr(r.text, "1200"));
    assert_null(strstr(r.text, "\n0 ")); /* no shared string index */
    sl_text_doc_free(d);
    /* gzip'd: the document inside, with its metadata */
    {
        int fd = gzip_file("sample.docx");

        d = text_extract_fd(t, "sample.docx.gz", NULL, fd, &r, mime);
        assert_string_equal(mime, "application/gzip");
        assert_string_equal(r.encoding, "gzip");
        assert_string_equal(r.inner_mime, DOCX);
        assert_true(starts(r.text, HEAD));
        assert_string_equal(r.title, "Sluice Sample Report");
        assert_string_equal(r.author, "Ada Lovelace");
        assert_true(iso_date(r.modified));
        assert_int_equal(r.pages, 1);
        sl_text_doc_free(d);
        (void)close(fd);
    }
    /* the text cap */
    sl_text_free(t);
    o.max_text = 30;
    t = sl_text_new(&o);
    d = extract_file(t, "sample.docx", &r, mime);
    assert_int_equal(r.full, 1);
    assert_true(r.len <= 30);
    assert_string_equal(r.title, "Sluice Sample Report"); /* still read */
    sl_text_doc_free(d);
    d = extract_file(t, "sample.epub", &r, mime);
    assert_int_equal(r.full, 1);
    assert_true(r.len <= 30);
    sl_text_doc_free(d);
    sl_text_free(t);
}

/* ------------------------------------------------------------------------
 * Zips made here with libarchive's zip writer.
 * --------------------------------------------------------------------- */

/* A zip written on @fd. */
static struct archive *
zip_open(int fd)
{
    struct archive *a = archive_write_new();

    assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
    return a;
}

/* Entry @name: @head, @fill repeated @n times, @tail. */
static void
zip_add(struct archive *a,
        const char *name,
        const char *head,
        const char *fill,
        size_t n,
        const char *tail)
{
    struct archive_entry *ae = archive_entry_new();
    size_t k = strlen(fill);
    size_t per = k > 0 ? (1u << 16) / k : 0; /* fills a chunk */
    static char chunk[1 << 16];
    size_t i = 0;

    for (i = 0; i < per; i++) {
        memcpy(chunk + i * k, fill, k);
    }
    archive_entry_set_pathname(ae, name);
    archive_entry_set_filetype(ae, AE_IFREG);
    archive_entry_set_perm(ae, 0644);
    archive_entry_set_size(ae,
                           (la_int64_t)(strlen(head) + n * k + strlen(tail)));
    assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
    assert_int_equal(archive_write_data(a, head, strlen(head)),
                     (la_ssize_t)strlen(head));
    while (n > 0) {
        size_t m = n < per ? n : per;

        assert_int_equal(archive_write_data(a, chunk, m * k),
                         (la_ssize_t)(m * k));
        n -= m;
    }
    assert_int_equal(archive_write_data(a, tail, strlen(tail)),
                     (la_ssize_t)strlen(tail));
    archive_entry_free(ae);
}

/* The zip's end; its size, and @fd back at its start. */
static uint64_t
zip_close(struct archive *a, int fd)
{
    uint64_t size = 0;

    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    assert_int_equal(archive_write_free(a), ARCHIVE_OK);
    size = (uint64_t)lseek(fd, 0, SEEK_END);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return size;
}

#define W_DOC                                                                  \
    "<?xml version=\"1.0\"?><w:document xmlns:w=\"http://schemas."             \
    "openxmlformats.org/wordprocessingml/2006/main\"><w:body>"
#define W_P(s) "<w:p><w:r><w:t>" s "</w:t></w:r></w:p>"

/* Parts out of their order in the zip: slides by number (their notes
 * after them), an EPUB by its
 * spine (the OPF last, an escaped href, the navigation document left
 * out, a document the manifest does not name after the spine's). */
static void
test_office_order(void **state)
{
    static const char pptx[] =
        "application/vnd.openxmlformats-officedocument.presentationml."
        "presentation";
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    int fd = memfd_create("order", MFD_CLOEXEC);
    struct archive *a = zip_open(fd);
    struct sl_text_doc *d = NULL;

    (void)state;
    zip_add(a, "ppt/slides/slide10.xml", "<s><p><t>Ten</t></p></s>", "", 0, "");
    zip_add(a, "ppt/slides/slide2.xml", "<s><p><t>Two</t></p></s>", "", 0, "");
    zip_add(a, "ppt/slides/slide1.xml", "<s><p><t>One</t></p></s>", "", 0, "");
    zip_add(a, "ppt/slides/slide3.xml.rels", "<s><t>No</t></s>", "", 0, "");
    zip_add(a,
            "ppt/notesSlides/notesSlide2.xml",
            "<s><p><t>Note two</t></p></s>",
            "",
            0,
            "");
    zip_add(a,
            "ppt/notesSlides/notesSlide1.xml",
            "<s><p><t>Note one</t></p></s>",
            "",
            0,
            "");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "order.pptx", pptx, fd, &r, mime);
    /* the slides in order, then their speaker notes in order */
    assert_string_equal(r.text, "One\nTwo\nTen\nNote one\nNote two");
    sl_text_doc_free(d);
    (void)close(fd);
    fd = memfd_create("order", MFD_CLOEXEC);
    a = zip_open(fd);
    zip_add(a, "mimetype", "application/epub+zip", "", 0, "");
    zip_add(a, "OPS/extra.html", "<p>Extra</p>", "", 0, "");
    zip_add(a, "OPS/text/b.xhtml", "<p>Second</p>", "", 0, "");
    zip_add(a, "OPS/nav.xhtml", "<p>Contents</p>", "", 0, "");
    zip_add(a, "OPS/text/chap 1.xhtml", "<p>First</p>", "", 0, "");
    zip_add(a,
            "OPS/book.opf",
            "<package><metadata><title>Order</title><creator>A</creator>"
            "<creator>B</creator></metadata><manifest>"
            "<item id='n' href='nav.xhtml' media-type='application/xhtml+xml'/>"
            "<item id='b' href='./text/b.xhtml#top' "
            "media-type='application/xhtml+xml'/>"
            "<item id='a' href='text/chap%201.xhtml' "
            "media-type='application/xhtml+xml'/></manifest>"
            "<spine><itemref idref='a'/><itemref idref='b'/></spine>"
            "</package>",
            "",
            0,
            "");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "order.epub", "application/epub+zip", fd, &r, mime);
    assert_string_equal(r.text, "First\nSecond\nExtra");
    assert_string_equal(r.title, "Order");
    assert_string_equal(r.author, "A");
    sl_text_doc_free(d);
    (void)close(fd);
    sl_text_free(t);
}

/* ------------------------------------------------------------------------
 * Hostile documents.
 * --------------------------------------------------------------------- */

/* A DOCX whose document.xml holds 200 MiB of spaces deflated to about
 * 200 KB: between two paragraphs (one text node: libxml2 stops at 10 MB)
 * and in a run (the same); 64 MiB of empty paragraphs (many nodes: the
 * expansion ratio stops them after 200 times the zip's 100 KB). */
static void
test_office_zip_bomb(void **state)
{
    static const struct {
        const char *head;
        const char *fill;
        size_t size; /* MiB */
        const char *tail;
    } bombs[] = {
        {W_DOC W_P(SENTENCE) "<w:p/>",
         " ",
         200,
         "<w:p/></w:body></w:document>"},
        {W_DOC W_P(SENTENCE) "<w:p><w:r><w:t>",
         " ",
         200,
         "</w:t></w:r></w:p></w:body></w:document>"},
        {W_DOC W_P(SENTENCE), "<w:p/>  ", 64, "</w:body></w:document>"},
    };
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(bombs) / sizeof(bombs[0]); i++) {
        int fd = memfd_create("bomb", MFD_CLOEXEC);
        struct archive *a = zip_open(fd);
        uint64_t size = 0;
        int64_t t0 = 0;
        struct sl_text_doc *d = NULL;

        zip_add(a, "[Content_Types].xml", "<Types/>", "", 0, "");
        zip_add(a,
                "word/document.xml",
                bombs[i].head,
                bombs[i].fill,
                (bombs[i].size << 20) / strlen(bombs[i].fill),
                bombs[i].tail);
        zip_add(
            a, "docProps/core.xml", "<c><title>Bomb</title></c>", "", 0, "");
        size = zip_close(a, fd);
        t0 = sl_mono_ms();
        d = text_extract_fd(t, "bomb.docx", DOCX, fd, &r, mime);
        print_message("zip bomb %zu (%llu bytes, %zu MiB inside): %lld ms, "
                      "cut %d, malformed %d, corrupt %d, text \"%s\"\n",
                      i,
                      (unsigned long long)size,
                      bombs[i].size,
                      (long long)(sl_mono_ms() - t0),
                      r.cut,
                      r.malformed,
                      r.corrupt,
                      r.text);
        assert_true(size < (1u << 20));
        assert_string_equal(mime, DOCX);
        assert_int_equal(r.cut, 1);
        assert_string_equal(r.text, SENTENCE);
        assert_true(sl_mono_ms() - t0 < 20000);
        sl_text_doc_free(d);
        (void)close(fd);
    }
    sl_text_free(t);
}

/* An ODT whose content.xml declares a billion laughs (l9: 10^9 "lol")
 * and an external entity: neither is expanded, fast. */
static void
test_office_entities(void **state)
{
    struct sl_buf content;
    size_t i = 0;
    size_t k = 0;
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    int fd = memfd_create("lol", MFD_CLOEXEC);
    struct archive *a = zip_open(fd);
    struct sl_text_doc *d = NULL;
    int64_t t0 = 0;

    (void)state;
    sl_buf_init(&content, 1 << 16);
    (void)sl_buf_appendf(&content,
                         "<?xml version=\"1.0\"?>\n"
                         "<!DOCTYPE office:document-content [\n"
                         "<!ENTITY l0 \"lol\">\n");
    for (i = 1; i < 10; i++) {
        (void)sl_buf_appendf(&content, "<!ENTITY l%zu \"", i);
        for (k = 0; k < 10; k++) {
            (void)sl_buf_appendf(&content, "&l%zu;", i - 1);
        }
        (void)sl_buf_appendf(&content, "\">\n");
    }
    (void)sl_buf_appendf(
        &content,
        "<!ENTITY xx SYSTEM \"file:///etc/passwd\">\n]>\n"
        "<office:document-content xmlns:office=\"urn:oasis:names:tc:"
        "opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:"
        "opendocument:xmlns:text:1.0\"><office:body><office:text>"
        "<text:p>Before the laughs</text:p><text:p>&l9;&xx;</text:p>"
        "<text:p>After the laughs</text:p>"
        "</office:text></office:body></office:document-content>");
    zip_add(a, "mimetype", ODT, "", 0, "");
    zip_add(a, "content.xml", content.data, "", 0, "");
    sl_buf_free(&content);
    (void)zip_close(a, fd);
    t0 = sl_mono_ms();
    d = text_extract_fd(t, "lol.odt", ODT, fd, &r, mime);
    print_message("billion laughs: %lld ms, %zu bytes, malformed %d, "
                  "text \"%s\"\n",
                  (long long)(sl_mono_ms() - t0),
                  r.len,
                  r.malformed,
                  r.text);
    assert_string_equal(mime, ODT);
    assert_true(sl_mono_ms() - t0 < 2000);
    assert_int_equal(r.malformed, 1); /* libxml2 refuses the declarations */
    assert_null(strstr(r.text, "lol"));
    assert_null(strstr(r.text, "root:"));
    assert_true(r.len < 100);
    sl_text_doc_free(d);
    (void)close(fd);
    /* a harmless entity: the text stays, the reference is not expanded */
    fd = memfd_create("ent", MFD_CLOEXEC);
    a = zip_open(fd);
    zip_add(a,
            "content.xml",
            "<!DOCTYPE d [<!ENTITY co \"Sluice Co\">]><d><p>Made by &co;."
            "</p></d>",
            "",
            0,
            "");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "ent.odt", ODT, fd, &r, mime);
    assert_string_equal(r.text, "Made by .");
    assert_int_equal(r.malformed, 0);
    sl_text_doc_free(d);
    (void)close(fd);
    sl_text_free(t);
}

/* Half of sample.docx; a zip that only claims to be a DOCX; not a zip; a
 * zip of too many entries. */
static void
test_office_broken(void **state)
{
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    char path[1024];
    char *buf = sl_malloc(1 << 16);
    int fd = memfd_create("half", MFD_CLOEXEC);
    int in = -1;
    ssize_t n = 0;
    struct archive *a = NULL;
    struct sl_text_doc *d = NULL;
    size_t i = 0;

    (void)state;
    (void)snprintf(path, sizeof(path), "%s/sample.docx", SL_TEST_DOCS);
    in = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(in >= 0);
    n = read(in, buf, 1 << 16);
    assert_true(n > 1000 && n < (1 << 16));
    (void)close(in);
    assert_int_equal(write(fd, buf, (size_t)n / 2), n / 2);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    d = text_extract_fd(t, "half.docx", NULL, fd, &r, mime);
    print_message("half of sample.docx: corrupt %d, outcome %d, text \"%s\"\n",
                  r.corrupt,
                  r.outcome,
                  r.text);
    assert_string_equal(mime, DOCX);
    assert_int_equal(r.corrupt, 1);
    sl_text_doc_free(d);
    (void)close(fd);
    /* a zip, but no document */
    fd = memfd_create("fake", MFD_CLOEXEC);
    a = zip_open(fd);
    zip_add(a, "hello.txt", "Hello, world.", "", 0, "");
    zip_add(
        a, "word/document.xml.bak", W_DOC W_P("hidden"), "", 0, "</w:body>");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "fake.docx", DOCX, fd, &r, mime);
    assert_string_equal(mime, DOCX);
    assert_int_equal(r.len, 0);
    assert_int_equal(r.outcome, SL_TEXT_NOTEXT);
    assert_int_equal(r.corrupt, 1);
    sl_text_doc_free(d);
    (void)close(fd);
    /* not even a zip */
    fd = memfd_create("junk", MFD_CLOEXEC);
    memset(buf, 'x', 5000);
    memcpy(buf, "PK\003\004", 4);
    assert_int_equal(write(fd, buf, 5000), 5000);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    d = text_extract_fd(t, "junk.epub", "application/epub+zip", fd, &r, mime);
    assert_int_equal(r.len, 0);
    assert_int_equal(r.corrupt, 1);
    sl_text_doc_free(d);
    (void)close(fd);
    /* the document after 10,000 other entries is not read */
    fd = memfd_create("many", MFD_CLOEXEC);
    a = zip_open(fd);
    for (i = 0; i < 10000; i++) {
        (void)snprintf(path, sizeof(path), "e/%zu", i);
        zip_add(a, path, "", "", 0, "");
    }
    zip_add(a, "word/document.xml", W_DOC W_P("late"), "", 0, "</w:body>");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "many.docx", DOCX, fd, &r, mime);
    assert_int_equal(r.cut, 1);
    assert_int_equal(r.len, 0);
    sl_text_doc_free(d);
    (void)close(fd);
    sl_free(buf);
    sl_text_free(t);
}

/* A zip that libmagic calls application/zip (its members are not the
 * ones libmagic looks for) is read as the office document its extension
 * names; named .zip it stays a zip. */
static void
test_office_generic_zip(void **state)
{
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];
    int fd = memfd_create("plain", MFD_CLOEXEC);
    struct archive *a = zip_open(fd);
    struct sl_text_doc *d = NULL;

    (void)state;
    zip_add(a, "[Content_Types].xml", "<Types/>", "", 0, "");
    zip_add(a, "word/document.xml", W_DOC W_P(SENTENCE), "", 0, "</w:body>");
    (void)zip_close(a, fd);
    d = text_extract_fd(t, "plain.docx", NULL, fd, &r, mime);
    assert_string_equal(mime, DOCX);
    assert_string_equal(r.text, SENTENCE);
    sl_text_doc_free(d);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    d = text_extract_fd(t, "plain.zip", NULL, fd, &r, mime);
    assert_string_equal(mime, "application/zip");
    sl_text_doc_free(d);
    (void)close(fd);
    sl_text_free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_office_generic_zip),
        cmocka_unit_test(test_office_documents),
        cmocka_unit_test(test_office_details),
        cmocka_unit_test(test_office_order),
        cmocka_unit_test(test_office_zip_bomb),
        cmocka_unit_test(test_office_entities),
        cmocka_unit_test(test_office_broken),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
