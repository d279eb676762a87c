/*
 * Shared by the text library's unit tests (test_text, test_text_office):
 * a document extracted from a file through MIME detection and the
 * document API in 4 KiB reads, and a compressed file written by
 * libarchive.  Include after cmocka.h, archive.h and text/text.h.
 */
#ifndef SL_TESTS_TEXT_FIXTURE_H
#define SL_TESTS_TEXT_FIXTURE_H

#include <sys/mman.h>
#include <unistd.h>

/* @n bytes @p compressed with libarchive's filter @filter into a new
 * memory file of *@size bytes. */
static inline int
text_compressed_fd(int filter, const char *p, size_t n, uint64_t *size)
{
    int fd = memfd_create("z", MFD_CLOEXEC);
    struct archive *a = archive_write_new();
    struct archive_entry *ae = archive_entry_new();

    assert_true(fd >= 0);
    assert_int_equal(archive_write_add_filter(a, filter), ARCHIVE_OK);
    assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
    archive_entry_set_pathname(ae, "data");
    archive_entry_set_filetype(ae, AE_IFREG);
    archive_entry_set_size(ae, (la_int64_t)n);
    assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
    assert_int_equal(archive_write_data(a, p, n), (la_ssize_t)n);
    archive_entry_free(ae);
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    assert_int_equal(archive_write_free(a), ARCHIVE_OK);
    *size = (uint64_t)lseek(fd, 0, SEEK_END);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

/* Extract the document named @id (its own type @mime, or NULL) on @fd
 * through the detector and the document API in 4 KiB reads; the results
 * in @r, the type detected in @out (SL_TEXT_MIME_MAX bytes, or NULL). */
static inline struct sl_text_doc *
text_extract_fd(struct sl_text *t,
                const char *id,
                const char *mime,
                int fd,
                struct sl_text_result *r,
                char *out)
{
    struct sl_text_doc *d = sl_text_doc_new(t);
    struct sl_text_hints h = {mime, NULL, id};
    char buf[4096];
    char type[SL_TEXT_MIME_MAX];
    ssize_t n = read(fd, buf, sizeof(buf));
    int fed = 0;

    out = out != NULL ? out : type;
    assert_true(n > 0);
    (void)sl_text_mime_detect(t, &h, buf, (size_t)n, out);
    sl_text_doc_name(d, id);
    assert_int_equal(sl_text_doc_begin(d, out, NULL, buf, (size_t)n), 0);
    while (fed == 0 && n > 0) {
        fed = sl_text_doc_feed(d, buf, (size_t)n);
        n = read(fd, buf, sizeof(buf));
    }
    assert_true(fed == 0 || fed == SL_TEXT_STOP);
    assert_int_equal(sl_text_doc_end(d, 0), 0);
    sl_text_doc_result(d, r);
    return d;
}

#endif /* SL_TESTS_TEXT_FIXTURE_H */
