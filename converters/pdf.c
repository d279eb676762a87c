/*
 * sluice-pdf: the PDF converter Sluice ships, a persistent converter
 * (docs/formats.md "Persistent converters").  The server starts it once
 * and keeps it for many documents, so that a PDF costs its reading, not
 * the start of a process that loads poppler; the server still owns the
 * limits: the address space limit is set before exec, each document has
 * a deadline after which the process is killed (and a new one started for
 * the next document), and the process is replaced after maxDocuments.
 *
 * The protocol, on stdin and stdout:
 *   request   "<path>\t<max text bytes>\n"
 *   response  "ok\n", "Key: value\n" lines (Title, Author, CreationDate,
 *             ModDate, Pages; values on one line), "\n", then the text in
 *             chunks "<decimal length>\n<bytes>", ended by "0\n";
 *             or "error <message>\n" alone.
 * EOF on stdin ends the process (the server went away).  poppler (glib
 * binding) reads the document; the text of each page in turn, pages
 * separated by an empty line, at most the asked bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poppler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_ 8192

/* Write @s as one protocol line value: control characters become spaces. */
static void
put_value(const char *key, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    if (s == NULL || s[0] == '\0') {
        return;
    }
    fputs(key, stdout);
    fputs(": ", stdout);
    for (; *p != '\0'; p++) {
        putchar(*p < 0x20 ? ' ' : *p);
    }
    putchar('\n');
}

static void
put_date(const char *key, GDateTime *t)
{
    gchar *s = NULL;

    if (t == NULL) {
        return;
    }
    s = g_date_time_format_iso8601(t);
    put_value(key, s);
    g_free(s);
    g_date_time_unref(t);
}

static void
put_chunk(const char *p, size_t n)
{
    if (n > 0) {
        printf("%zu\n", n);
        fwrite(p, 1, n, stdout);
    }
}

/* The metadata lines and the empty line that ends them. */
static void
put_meta(PopplerDocument *doc, int pages)
{
    gchar *title = poppler_document_get_title(doc);
    gchar *author = poppler_document_get_author(doc);

    fputs("ok\n", stdout);
    put_value("Title", title);
    put_value("Author", author);
    put_date("CreationDate", poppler_document_get_creation_date_time(doc));
    put_date("ModDate", poppler_document_get_modification_date_time(doc));
    printf("Pages: %d\n\n", pages);
    g_free(title);
    g_free(author);
}

/* Answer the request for @path: its metadata and at most @max bytes of
 * text. */
static void
convert(const char *path, unsigned long long max)
{
    GError *error = NULL;
    PopplerDocument *doc = NULL;
    unsigned long long sent = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int pages = 0;
    int i = 0;

    if (fd < 0) {
        char buf[256];

        printf("error cannot open the file: %s\n",
               strerror_r(errno, buf, sizeof(buf)));
        return;
    }
    doc = poppler_document_new_from_fd(fd, NULL, &error); /* owns fd */
    if (doc == NULL) {
        printf("error %s\n",
               error != NULL ? error->message : "not a readable PDF");
        g_clear_error(&error);
        return;
    }
    pages = poppler_document_get_n_pages(doc);
    put_meta(doc, pages);
    for (i = 0; i < pages && sent < max; i++) {
        PopplerPage *page = poppler_document_get_page(doc, i);
        char *text = page != NULL ? poppler_page_get_text(page) : NULL;
        size_t n = text != NULL ? strlen(text) : 0;

        if (n > max - sent) {
            n = (size_t)(max - sent);
        }
        if (i > 0 && n > 0) {
            put_chunk("\n\n", 2);
        }
        put_chunk(text, n);
        sent += n;
        g_free(text);
        if (page != NULL) {
            g_object_unref(page);
        }
    }
    fputs("0\n", stdout);
    g_object_unref(doc);
}

int
main(int argc, char **argv)
{
    char line[LINE_MAX_];

    (void)argv;
    if (argc != 1) {
        fputs("usage: sluice-pdf (started by the sluice server; requests "
              "\"<path>\\t<max bytes>\" on stdin)\n",
              stderr);
        return 2;
    }
    while (fgets(line, sizeof(line), stdin) != NULL) {
        char *tab = strrchr(line, '\t');
        char *end = NULL;
        unsigned long long max = 0;

        line[strcspn(line, "\n")] = '\0';
        if (tab == NULL) {
            fputs("error malformed request\n", stdout);
        } else {
            *tab = '\0';
            errno = 0;
            max = strtoull(tab + 1, &end, 10);
            if (errno != 0 || end == tab + 1 || *end != '\0') {
                fputs("error malformed request\n", stdout);
            } else {
                convert(line, max);
            }
        }
        if (fflush(stdout) != 0) {
            return 1;
        }
    }
    return 0;
}
