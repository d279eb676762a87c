/*
 * text/: persistent converters (conv_helper.c).  A converter written in
 * the shell speaks the protocol and misbehaves on request: a process
 * serves document after document (its pid in the text shows it is the
 * same one) and is replaced after maxDocuments; an "error" answer fails
 * the document but keeps the process; a process that hangs is killed at
 * the deadline, one that dies or writes garbage or more than it was asked
 * is killed, and the next document gets a new process; configuration
 * mistakes fail the document.  Then Sluice's own sluice-pdf, found beside
 * the test binary, on the committed sample PDF and a truncated copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text/text.h"

/* The converter: what it does depends on the document's content. */
static const char script[] =
    "#!/bin/bash\n"
    "while IFS=$'\\t' read -r path max; do\n"
    "  c=$(cat \"$path\")\n"
    "  case $c in\n"
    "  error) printf 'error cannot read it\\n' ;;\n"
    "  hang) sleep 30 ;;\n"
    "  die) printf 'ok\\n'; exit 3 ;;\n"
    "  garbage) printf 'hello\\n' ;;\n"
    "  flood) printf 'ok\\n\\n999999999\\n' ;;\n"
    "  *) t=\"pid $$ read $c max $max\"\n"
    "     printf 'ok\\nTitle: T %s\\nPages: 3\\nWhat: x\\n\\n%d\\n%s0\\n' "
    "\"$c\" ${#t} \"$t\" ;;\n"
    "  esac\n"
    "done\n";

static char script_path[512];

static int
setup(void **state)
{
    const char *dir = getenv("TMPDIR");
    FILE *f = NULL;

    (void)state;
    (void)snprintf(script_path,
                   sizeof(script_path),
                   "%s/sluice-conv-%d.sh",
                   dir != NULL ? dir : "/tmp",
                   (int)getpid());
    f = fopen(script_path, "w");
    if (f == NULL || fputs(script, f) < 0 || fclose(f) != 0) {
        return -1;
    }
    return chmod(script_path, 0755);
}

static int
teardown(void **state)
{
    (void)state;
    sl_text_helpers_close();
    return unlink(script_path);
}

/* Convert @content as @mime; the result in @r (valid until the document
 * is freed, which the caller does). */
static struct sl_text_doc *
convert(struct sl_text *t,
        const char *mime,
        const char *content,
        struct sl_text_result *r)
{
    struct sl_text_doc *d = sl_text_doc_new(t);
    size_t n = strlen(content);

    int fed = 0;

    assert_int_equal(sl_text_doc_begin(d, mime, NULL, content, n), 0);
    fed = sl_text_doc_feed(d, content, n);
    assert_true(fed == 0 || fed == SL_TEXT_STOP);
    assert_int_equal(sl_text_doc_end(d, 0), 0);
    sl_text_doc_result(d, r);
    return d;
}

/* The pid in a text "pid N read ...". */
static long
pid_of(const struct sl_text_result *r)
{
    return strncmp(r->text, "pid ", 4) == 0 ? strtol(r->text + 4, NULL, 10)
                                            : -1;
}

static json_t *
config(void)
{
    json_t *c = json_pack("{s:{s:[s], s:b, s:i, s:i}, s:{s:[s,s], s:b},"
                          " s:{s:[s], s:b, s:i}}",
                          "application/x-p",
                          "command",
                          script_path,
                          "persistent",
                          1,
                          "maxDocuments",
                          3,
                          "timeoutSeconds",
                          1,
                          "application/x-file",
                          "command",
                          script_path,
                          "{file}",
                          "persistent",
                          1,
                          "application/x-zero",
                          "command",
                          script_path,
                          "persistent",
                          1,
                          "maxDocuments",
                          0);

    assert_non_null(c);
    return c;
}

static void
test_helper_reused_and_replaced(void **state)
{
    json_t *conv = config();
    struct sl_text_opts o = {1 << 20, conv, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;
    long first = 0;
    int i = 0;

    (void)state;
    d = convert(t, "application/x-p", "alpha", &r);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_true(strstr(r.text, "read alpha max 1048576") != NULL);
    assert_string_equal(r.title, "T alpha");
    assert_int_equal(r.pages, 3);
    first = pid_of(&r);
    assert_true(first > 0);
    sl_text_doc_free(d);
    /* the same process for the 2nd and 3rd document (maxDocuments 3) */
    for (i = 0; i < 2; i++) {
        d = convert(t, "application/x-p", "beta", &r);
        assert_int_equal(pid_of(&r), first);
        sl_text_doc_free(d);
    }
    /* then a new one */
    d = convert(t, "application/x-p", "gamma", &r);
    assert_true(pid_of(&r) > 0);
    assert_true(pid_of(&r) != first);
    first = pid_of(&r);
    sl_text_doc_free(d);
    /* an "error" answer fails the document, the process goes on */
    d = convert(t, "application/x-p", "error", &r);
    assert_int_equal(r.outcome, SL_TEXT_CONV_FAILED);
    assert_string_equal(r.text, "");
    sl_text_doc_free(d);
    d = convert(t, "application/x-p", "delta", &r);
    assert_int_equal(pid_of(&r), first);
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

static void
test_helper_misbehaves(void **state)
{
    static const char *const bad[] = {"die", "garbage", "flood"};
    json_t *conv = config();
    struct sl_text_opts o = {1 << 20, conv, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;
    long before = 0;
    size_t i = 0;

    (void)state;
    d = convert(t, "application/x-p", "one", &r);
    before = pid_of(&r);
    sl_text_doc_free(d);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        d = convert(t, "application/x-p", bad[i], &r);
        assert_int_equal(r.outcome, SL_TEXT_CONV_FAILED);
        assert_string_equal(r.text, "");
        sl_text_doc_free(d);
        /* killed: the next document has a process of its own */
        d = convert(t, "application/x-p", "next", &r);
        assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
        assert_true(pid_of(&r) > 0);
        assert_true(pid_of(&r) != before);
        before = pid_of(&r);
        sl_text_doc_free(d);
    }
    /* one that hangs is killed at the deadline (1 s) */
    d = convert(t, "application/x-p", "hang", &r);
    assert_int_equal(r.outcome, SL_TEXT_CONV_TIMEOUT);
    sl_text_doc_free(d);
    d = convert(t, "application/x-p", "after", &r);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_true(pid_of(&r) != before);
    sl_text_doc_free(d);
    /* configuration mistakes: {file} in a persistent command,
     * maxDocuments 0 */
    d = convert(t, "application/x-file", "x", &r);
    assert_int_equal(r.outcome, SL_TEXT_CONV_FAILED);
    sl_text_doc_free(d);
    d = convert(t, "application/x-zero", "x", &r);
    assert_int_equal(r.outcome, SL_TEXT_CONV_FAILED);
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

/* The cancel callback: cancels once *arg is set. */
static int
canceled(void *arg)
{
    return *(int *)arg;
}

static void
test_helper_canceled(void **state)
{
    json_t *conv = config();
    int stop = 1;
    struct sl_text_opts o = {1 << 20, conv, canceled, &stop};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_doc *d = sl_text_doc_new(t);

    (void)state;
    assert_int_equal(sl_text_doc_begin(d, "application/x-p", NULL, "hang", 4),
                     0);
    assert_int_equal(sl_text_doc_feed(d, "hang", 4), 0);
    assert_int_equal(sl_text_doc_end(d, 0), SL_ECANCELED);
    sl_text_doc_free(d);
    sl_text_free(t);
    json_decref(conv);
}

/* Read @path whole into a new buffer of *@n bytes. */
static char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long len = 0;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    p = sl_malloc((size_t)len);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    (void)fclose(f);
    *n = (size_t)len;
    return p;
}

static struct sl_text_doc *
convert_bytes(struct sl_text *t,
              const char *p,
              size_t n,
              struct sl_text_result *r)
{
    struct sl_text_doc *d = sl_text_doc_new(t);

    assert_int_equal(sl_text_doc_begin(d, "application/pdf", NULL, p, n), 0);
    assert_int_equal(sl_text_doc_feed(d, p, n), 0);
    assert_int_equal(sl_text_doc_end(d, 0), 0);
    sl_text_doc_result(d, r);
    return d;
}

/* sluice-pdf, as the default configuration runs it. */
static void
test_helper_sluice_pdf(void **state)
{
    json_t *conv = json_pack("{s:{s:[s], s:b}}",
                             "application/pdf",
                             "command",
                             "sluice-pdf",
                             "persistent",
                             1);
    struct sl_text_opts o = {1 << 20, conv, NULL, NULL};
    struct sl_text *t = sl_text_new(&o);
    struct sl_text_result r;
    struct sl_text_doc *d = NULL;
    size_t n = 0;
    char *pdf = slurp(SL_TEST_DOCS "/sample.pdf", &n);

    (void)state;
    assert_true(sl_text_program_found("sluice-pdf"));
    d = convert_bytes(t, pdf, n, &r);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_true(strstr(r.text, "The quick sluice gate opens at dawn") != NULL);
    assert_string_equal(r.title, "Sluice Sample Report");
    assert_string_equal(r.author, "Ada Lovelace");
    assert_true(strncmp(r.created, "20", 2) == 0);
    assert_int_equal(r.pages, 1);
    sl_text_doc_free(d);
    /* a truncated copy is refused; the process reads the next one */
    d = convert_bytes(t, pdf, n / 3, &r);
    assert_int_equal(r.outcome, SL_TEXT_CONV_FAILED);
    sl_text_doc_free(d);
    d = convert_bytes(t, pdf, n, &r);
    assert_int_equal(r.outcome, SL_TEXT_EXTRACTED);
    assert_int_equal(r.pages, 1);
    sl_text_doc_free(d);
    sl_free(pdf);
    sl_text_free(t);
    json_decref(conv);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helper_reused_and_replaced),
        cmocka_unit_test(test_helper_misbehaves),
        cmocka_unit_test(test_helper_canceled),
        cmocka_unit_test(test_helper_sluice_pdf),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
