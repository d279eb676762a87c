/*
 * Unit tests of the mail walk and of messages as documents (text/mail.c)
 * on the committed test documents tests/docs/sample.mbox and sample.eml
 * (Python's email and mailbox modules, tests/docs/make_mail.py): the
 * messages of a mailbox and the attachments of each message become
 * elements with their decoded content (an attached zip walked, an attached
 * message with its own attachments below it); a message read as a
 * document gives its plain text (not the attachments, not the HTML
 * alternative twice), in UTF-8 from ISO-8859-1 too, and its subject as
 * the title; a mailbox with more messages than maxEntries stops at the
 * limit; a damaged message is no crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "text/text.h"

#define MAX_ELEMENTS 32

/* What the walk handed to the sink. */
struct seen {
    size_t n;
    char ids[MAX_ELEMENTS][512];
    char mimes[MAX_ELEMENTS][128];
    char *content[MAX_ELEMENTS]; /* NUL-terminated copies */
    size_t len[MAX_ELEMENTS];
    uint64_t events[SL_TEXT_ARC_EVENTS];
};

static int
sink_begin(void *arg, const json_t *meta, const char *att, uint64_t size)
{
    struct seen *s = arg;
    const char *m = json_string_value(json_object_get(meta, "mimeType"));

    assert_true(s->n < MAX_ELEMENTS);
    (void)snprintf(s->ids[s->n],
                   sizeof(s->ids[0]),
                   "%s",
                   json_string_value(json_object_get(meta, "_recordid")));
    (void)snprintf(s->mimes[s->n], sizeof(s->mimes[0]), "%s", m ? m : "");
    assert_string_equal(
        json_string_value(json_object_get(meta, "_compoundRecordId")), "top");
    s->content[s->n] = sl_calloc(1, att != NULL ? size + 1 : 1);
    s->n++;
    return 0;
}

static int
sink_write(void *arg, const void *p, size_t n)
{
    struct seen *s = arg;
    size_t i = s->n - 1;

    memcpy(s->content[i] + s->len[i], p, n);
    s->len[i] += n;
    return 0;
}

static int
sink_end(void *arg)
{
    (void)arg;
    return 0;
}

static void
sink_note(void *arg, int event, double n, const char *id)
{
    (void)id;
    ((struct seen *)arg)->events[event] += (uint64_t)n;
}

static char *
escape(const char *raw)
{
    return sl_strdup(raw);
}

static int
is_archive(const char *name)
{
    size_t n = strlen(name);

    return n > 4 && strcmp(name + n - 4, ".zip") == 0;
}

static void walk_fd(int fd, uint64_t max_entries, struct seen *s);

/* Walk test document @name with at most @max_entries entries. */
static void
walk(const char *name, uint64_t max_entries, struct seen *s)
{
    char path[1024];
    int fd = -1;

    (void)snprintf(path, sizeof(path), "%s/%s", SL_TEST_DOCS, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    walk_fd(fd, max_entries, s);
    (void)close(fd);
}

/* Walk the mailbox or message on @fd. */
static void
walk_fd(int fd, uint64_t max_entries, struct seen *s)
{
    static const struct sl_text_archive_names names = {
        NULL, NULL, NULL, NULL, NULL, NULL, "content", 0};
    struct sl_text_archive_limits lim = {5, max_entries, 1 << 30, 0, 1 << 30};
    struct sl_text_archive_sink sink;
    struct sl_text_archive *x = NULL;
    struct sl_err err;

    memset(s, 0, sizeof(*s));
    memset(&sink, 0, sizeof(sink));
    sink.arg = s;
    sink.begin = sink_begin;
    sink.write = sink_write;
    sink.end = sink_end;
    sink.note = sink_note;
    sink.escape = escape;
    sink.is_archive = is_archive;
    x = sl_text_archive_new("test", &lim, &names, &sink);
    assert_int_equal(sl_text_archive_walk(x, "top", NULL, fd, 1, &err), 0);
    sl_text_archive_free(x);
}

static void
seen_free(struct seen *s)
{
    size_t i = 0;

    for (i = 0; i < s->n; i++) {
        sl_free(s->content[i]);
    }
}

/* The element of @s with id @id, or fail. */
static size_t
find(const struct seen *s, const char *id)
{
    size_t i = 0;

    for (i = 0; i < s->n; i++) {
        if (strcmp(s->ids[i], id) == 0) {
            return i;
        }
    }
    for (i = 0; i < s->n; i++) {
        print_message("seen %s (%s)\n", s->ids[i], s->mimes[i]);
    }
    fail_msg("no element %s", id);
    return 0;
}

static char last_author[256]; /* of the last read_message */
static char last_created[64];

/* The text and title of message @p (@n bytes) read as a document. */
static void
read_message(const char *p, size_t n, char **text, char **title)
{
    struct sl_text_opts o = {1 << 20, NULL, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_doc *d = sl_text_doc_new(t);
    struct sl_text_hints h = {NULL, "eml", "x.eml"};
    struct sl_text_result r;
    char mime[SL_TEXT_MIME_MAX];

    (void)sl_text_mime_detect(t, &h, p, n, mime);
    assert_string_equal(mime, "message/rfc822");
    assert_int_equal(sl_text_doc_begin(d, mime, NULL, p, n), 0);
    (void)sl_text_doc_feed(d, p, n);
    assert_int_equal(sl_text_doc_end(d, 0), 0);
    sl_text_doc_result(d, &r);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    *text = sl_strdup(r.text);
    *title = sl_strdup(r.title);
    (void)snprintf(last_author, sizeof(last_author), "%s", r.author);
    (void)snprintf(last_created, sizeof(last_created), "%s", r.created);
    sl_text_doc_free(d);
    sl_text_free(t);
}

static void
test_mbox(void **state)
{
    struct seen s;
    char *text = NULL;
    char *title = NULL;
    size_t i = 0;

    (void)state;
    walk("sample.mbox", 100, &s);
    assert_true(s.events[SL_TEXT_ARC_CORRUPT] == 0);
    /* three messages, each an element typed message/rfc822 */
    for (i = 1; i <= 3; i++) {
        char id[32];

        (void)snprintf(id, sizeof(id), "top!/%zu", i);
        assert_string_equal(s.mimes[find(&s, id)], "message/rfc822");
    }
    /* the second's zip, and the text file inside it */
    assert_string_equal(s.mimes[find(&s, "top!/2!/manifest.zip")],
                        "application/zip");
    i = find(&s, "top!/2!/manifest.zip!/manifest.txt");
    assert_string_equal(s.content[i], "Cargo manifest: osprey carries salt.\n");
    /* the third forwards a message: an element, its attachments below */
    assert_string_equal(s.mimes[find(&s, "top!/3!/message-1.eml")],
                        "message/rfc822");
    i = find(&s, "top!/3!/message-1.eml!/notes.txt");
    assert_string_equal(s.content[i],
                        "Tide table notes: kestrel moored at pier four.\n");
    i = find(&s, "top!/3!/message-1.eml!/report.pdf");
    assert_memory_equal(s.content[i], "%PDF", 4);
    assert_int_equal(s.n, 8);
    /* message 2 read as a document: UTF-8 from ISO-8859-1, no attachment */
    i = find(&s, "top!/2");
    read_message(s.content[i], s.len[i], &text, &title);
    assert_string_equal(title, "Café crème");
    assert_string_equal(last_author, "Björn <bjorn@example.org>");
    assert_non_null(strstr(text, "Café am Hafen ist heiß; naïve façade."));
    assert_null(strstr(text, "Cargo manifest"));
    sl_free(text);
    sl_free(title);
    seen_free(&s);
    /* at most 2 entries: two messages, the limit counted */
    walk("sample.mbox", 2, &s);
    assert_true(s.events[SL_TEXT_ARC_LIMIT_ENTRIES] >= 1);
    (void)find(&s, "top!/2");
    for (i = 0; i < s.n; i++) {
        assert_null(strstr(s.ids[i], "top!/3"));
    }
    seen_free(&s);
}

static void
test_eml(void **state)
{
    struct seen s;
    char *text = NULL;
    char *title = NULL;
    char path[1024];
    char *p = NULL;
    size_t i = 0;
    off_t n = 0;
    int fd = -1;

    (void)state;
    walk("sample.eml", 100, &s);
    /* a message: its attachments are the elements */
    assert_int_equal(s.n, 2);
    i = find(&s, "top!/report.pdf");
    assert_string_equal(s.mimes[i], "application/pdf");
    assert_memory_equal(s.content[i], "%PDF", 4);
    (void)find(&s, "top!/notes.txt");
    seen_free(&s);
    /* as a document: the plain alternative once, the subject */
    (void)snprintf(path, sizeof(path), "%s/sample.eml", SL_TEST_DOCS);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    n = lseek(fd, 0, SEEK_END);
    p = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_true(p != MAP_FAILED);
    read_message(p, (size_t)n, &text, &title);
    assert_string_equal(title, "Sluice Sample Report");
    assert_string_equal(last_author, "Ada Lovelace <ada@example.org>");
    assert_string_equal(last_created, "2024-03-15T10:00:00Z");
    assert_non_null(strstr(text, "The quick sluice gate opens at dawn"));
    assert_null(strstr(strstr(text, "opens at dawn") + 1, "opens at dawn"));
    assert_null(strstr(text, "Tide table"));
    assert_null(strstr(text, "<p>"));
    sl_free(text);
    sl_free(title);
    /* damaged: cut in the middle of the PDF attachment, then garbage */
    read_message(p, (size_t)n / 2, &text, &title);
    assert_non_null(strstr(text, "The quick sluice gate"));
    sl_free(text);
    sl_free(title);
    (void)munmap(p, (size_t)n);
    (void)close(fd);
}

/* A mailbox holding a message of 10,000 attachments: the walk stops at
 * maxEntries (counted); read as a document, the message
 * gives its text from the parts it reads. */
static void
test_many_parts(void **state)
{
    struct sl_buf b;
    struct seen s;
    char *text = NULL;
    char *title = NULL;
    int fd = memfd_create("mbox", MFD_CLOEXEC);
    int i = 0;

    (void)state;
    assert_true(fd >= 0);
    sl_buf_init(&b, 4u << 20);
    assert_int_equal(
        sl_buf_appendf(&b,
                       "From x@example.org Fri Mar 15 10:00:00 2024\n"
                       "From: x@example.org\nSubject: many\nMIME-Version: 1.0\n"
                       "Content-Type: multipart/mixed; boundary=BB\n\n"
                       "--BB\nContent-Type: text/plain\n\nbody words\n"),
        0);
    for (i = 0; i < 10000; i++) {
        assert_int_equal(sl_buf_appendf(&b,
                                        "--BB\nContent-Type: "
                                        "application/octet-stream\n"
                                        "Content-Disposition: attachment; "
                                        "filename=f%d.bin\n\nx\n",
                                        i),
                         0);
    }
    assert_int_equal(sl_buf_appendf(&b, "--BB--\n"), 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    walk_fd(fd, 25, &s);
    assert_true(s.events[SL_TEXT_ARC_LIMIT_ENTRIES] >= 1);
    assert_true(s.n <= 26);
    seen_free(&s);
    /* the message without the mbox "From " line */
    read_message(strchr(b.data, '\n') + 1,
                 b.len - (size_t)(strchr(b.data, '\n') + 1 - b.data),
                 &text,
                 &title);
    assert_string_equal(title, "many");
    assert_string_equal(text, "body words");
    sl_free(text);
    sl_free(title);
    sl_buf_free(&b);
    (void)close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mbox),
        cmocka_unit_test(test_eml),
        cmocka_unit_test(test_many_parts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
