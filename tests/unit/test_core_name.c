/*
 * Unit tests for the name checks (core/name.c): table-driven valid and
 * invalid entity names, store names and object ids, including the message
 * that says what is wrong and where.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/sl.h"

struct name_case {
    const char *name; /* input */
    int rc;           /* expected result */
    const char *msg;  /* substring of the message, or NULL */
};

typedef int (*check_fn)(const char *name, struct sl_err *err);

/* Runs one table against one check, naming the failing row. */
static void
run_cases(check_fn check, const struct name_case *cases, size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        struct sl_err err;
        int rc = 0;

        sl_err_clear(&err);
        rc = check(cases[i].name, &err);
        if (rc != cases[i].rc) {
            fail_msg("case %zu: got %d (%s), want %d",
                     i,
                     rc,
                     err.message,
                     cases[i].rc);
        }
        if (rc != 0) {
            assert_int_equal(err.code, rc);
            assert_true(err.message[0] != '\0');
        }
        if (cases[i].msg != NULL && strstr(err.message, cases[i].msg) == NULL) {
            fail_msg("case %zu: message '%s' lacks '%s'",
                     i,
                     err.message,
                     cases[i].msg);
        }
    }
}

/* A string of @p n copies of @p c in @p buf (which has room for n + 1). */
static const char *
repeat(char *buf, char c, size_t n)
{
    memset(buf, c, n);
    buf[n] = '\0';
    return buf;
}

static void
test_name_entity(void **state)
{
    static char max[SL_NAME_MAX + 1];
    static char over[SL_NAME_MAX + 2];
    const struct name_case cases[] = {
        {"job1", 0, NULL},
        {"my-job_2.v3", 0, NULL},
        {"A", 0, NULL},
        {"..", 0, NULL}, /* allowed by ^[a-zA-Z0-9-_.]+$ */
        {repeat(max, 'x', SL_NAME_MAX), 0, NULL},
        {repeat(over, 'x', SL_NAME_MAX + 1), SL_EBADNAME, "257 bytes"},
        {"", SL_EBADNAME, "empty"},
        {NULL, SL_EBADNAME, "missing"},
        {"a b", SL_EBADNAME, "0x20 at offset 1"},
        {"a/b", SL_EBADNAME, "0x2f at offset 1"},
        {"caf\xc3\xa9", SL_EBADNAME, "0xc3 at offset 3"},
        {"x\n", SL_EBADNAME, "0x0a"},
    };

    (void)state;
    run_cases(sl_name_check_entity, cases, sizeof(cases) / sizeof(cases[0]));
}

static void
test_name_store(void **state)
{
    static char max[SL_NAME_MAX + 1];
    static char over[SL_NAME_MAX + 2];
    const struct name_case cases[] = {
        {"store", 0, NULL},
        {"My-Store-01", 0, NULL},
        {"-", 0, NULL},
        {repeat(max, 's', SL_NAME_MAX), 0, NULL},
        {repeat(over, 's', SL_NAME_MAX + 1), SL_EBADNAME, "at most 256"},
        {"", SL_EBADNAME, "empty"},
        {NULL, SL_EBADNAME, "missing"},
        {"a_b", SL_EBADNAME, "0x5f at offset 1"},
        {"a.b", SL_EBADNAME, "0x2e at offset 1"},
        {".tmp", SL_EBADNAME, "offset 0"},
        {"..", SL_EBADNAME, NULL},
        {"a/b", SL_EBADNAME, NULL},
    };

    (void)state;
    run_cases(sl_name_check_store, cases, sizeof(cases) / sizeof(cases[0]));
}

static void
test_name_object_id(void **state)
{
    static char seg_max[SL_OBJECT_SEGMENT_MAX + 1];
    static char seg_over[SL_OBJECT_SEGMENT_MAX + 2];
    static char id_max[SL_OBJECT_ID_MAX + 1];
    static char id_over[SL_OBJECT_ID_MAX + 2];
    static char deep[SL_OBJECT_ID_MAX + 1];
    size_t i = 0;
    struct name_case cases[] = {
        {"a", 0, NULL},
        {"bucket/0b6f-uuid", 0, NULL},
        {"a/b/c/d.e/f-g_h", 0, NULL},
        {".hidden/..x/x..", 0, NULL},
        {"a b/(c)!@#$%^&*+=,;:'\"<>?|~`{}[]", 0, NULL},
        {"caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80", 0, NULL},
        {"\xed\x9f\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf", 0, NULL},
        {NULL, 0, NULL}, /* seg_max, filled below */
        {NULL, 0, NULL}, /* id_max */
        {NULL, 0, NULL}, /* deep: 512 one-byte segments */
        {NULL, SL_EBADNAME, "segment 1 is 256 bytes long"},
        {NULL, SL_EBADNAME, "1025 bytes long"},
        {NULL, SL_EBADNAME, "missing"},
        {"", SL_EBADNAME, "empty"},
        {"..", SL_EBADNAME, "segment 1 is '..'"},
        {".", SL_EBADNAME, "segment 1 is '.'"},
        {"a/..", SL_EBADNAME, "segment 2 is '..'"},
        {"a/../b", SL_EBADNAME, "segment 2 is '..'"},
        {"a/./b", SL_EBADNAME, "segment 2 is '.'"},
        {"a//b", SL_EBADNAME, "empty segment ('//') at offset 1"},
        {"/a", SL_EBADNAME, "starts with '/'"},
        {"a/", SL_EBADNAME, "ends with '/'"},
        {"/", SL_EBADNAME, NULL},
        {"a\\b", SL_EBADNAME, "backslash at offset 1"},
        {"..\\x", SL_EBADNAME, "backslash"},
        {"a\tb", SL_EBADNAME, "control character 0x09 at offset 1"},
        {"a\x1f", SL_EBADNAME, "0x1f"},
        {"a\x7f", SL_EBADNAME, "0x7f"},
        {"ab\x80", SL_EBADNAME, "invalid UTF-8 at offset 2"},
        {"\xc3", SL_EBADNAME, "invalid UTF-8 at offset 0"},
        {"\xc3(", SL_EBADNAME, "invalid UTF-8"},
        {"\xc0\xaf", SL_EBADNAME, "invalid UTF-8"},         /* overlong '/' */
        {"\xe0\x80\xaf", SL_EBADNAME, "invalid UTF-8"},     /* overlong */
        {"\xf0\x80\x80\xaf", SL_EBADNAME, "invalid UTF-8"}, /* overlong */
        {"\xed\xa0\x80", SL_EBADNAME, "invalid UTF-8"},     /* surrogate */
        {"\xf4\x90\x80\x80", SL_EBADNAME, "invalid UTF-8"}, /* > U+10FFFF */
        {"\xf8\x88\x80\x80\x80", SL_EBADNAME, "invalid UTF-8"},
        {"\xe6\x97", SL_EBADNAME, "invalid UTF-8"}, /* truncated */
        {"x/\xff", SL_EBADNAME, "invalid UTF-8 at offset 2"},
    };

    (void)state;
    cases[7].name = repeat(seg_max, 'a', SL_OBJECT_SEGMENT_MAX);
    repeat(id_max, 'b', SL_OBJECT_ID_MAX);
    for (i = 200; i < SL_OBJECT_ID_MAX; i += 200) {
        id_max[i] = '/';
    }
    cases[8].name = id_max;
    for (i = 0; i < SL_OBJECT_ID_MAX - 1; i += 2) {
        deep[i] = 'd';
        deep[i + 1] = '/';
    }
    deep[SL_OBJECT_ID_MAX - 1] = 'd';
    deep[SL_OBJECT_ID_MAX] = '\0';
    cases[9].name = deep;
    cases[10].name = repeat(seg_over, 'a', SL_OBJECT_SEGMENT_MAX + 1);
    repeat(id_over, 'c', SL_OBJECT_ID_MAX + 1);
    for (i = 200; i < SL_OBJECT_ID_MAX; i += 200) {
        id_over[i] = '/';
    }
    cases[11].name = id_over;
    run_cases(sl_name_check_object_id, cases, sizeof(cases) / sizeof(cases[0]));
}

/* A NULL err is allowed and only the code comes back. */
static void
test_name_null_err(void **state)
{
    (void)state;
    assert_int_equal(sl_name_check_object_id("a/../b", NULL), SL_EBADNAME);
    assert_int_equal(sl_name_check_store("a.b", NULL), SL_EBADNAME);
    assert_int_equal(sl_name_check_entity("a b", NULL), SL_EBADNAME);
    assert_int_equal(sl_name_check_object_id("a/b", NULL), 0);
}

/* sl_utf8_valid_head: a sequence cut by the end is valid (a lead byte and
 * fewer continuation bytes than it needs), anything else as sl_utf8_valid:
 * a bad byte before the end, a bad lead or a stray byte at it. */
static void
test_utf8_valid_head(void **state)
{
    static const char *const cut[] = {
        "\xc3",
        "\xe6",
        "\xe6\x97",
        "\xf0",
        "\xf0\x9f",
        "\xf0\x9f\x98",
        "\xe0\x80", /* could never be completed: not checked at the end */
    };
    static const char *const bad[] = {
        "\x80",
        "\xc0",
        "\xc1",
        "\xf5",
        "\xff",
        "\xe6(",
        "\xf0\x9f(",
        "\xc3\xbc\x80",
        "\xe6\x97\xa5\xa5",
    };
    char buf[40];
    size_t i = 0;
    size_t k = 0;

    (void)state;
    assert_int_equal(sl_utf8_valid_head("", 0), 1);
    assert_int_equal(sl_utf8_valid_head("\xc3\xbc\xe4\xb8\xad", 5), 1);
    for (k = 0; k < sizeof(cut) / sizeof(cut[0]); k++) {
        size_t clen = strlen(cut[k]);

        for (i = 0; i + clen <= 32; i++) {
            memset(buf, 'a', sizeof(buf));
            memcpy(buf + i, cut[k], clen);
            assert_int_equal(sl_utf8_valid_head(buf, i + clen), 1);
            assert_int_equal(sl_utf8_valid(buf, i + clen), 0);
            /* the same bytes before more text are invalid */
            assert_int_equal(sl_utf8_valid_head(buf, i + clen + 1), 0);
        }
    }
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        size_t blen = strlen(bad[k]);

        for (i = 0; i + blen <= 32; i++) {
            memset(buf, 'a', sizeof(buf));
            memcpy(buf + i, bad[k], blen);
            assert_int_equal(sl_utf8_valid_head(buf, i + blen), 0);
        }
    }
}

/* sl_utf8_decode: code points of each length, the invalid forms as 0, and
 * a cut sequence as -1 whatever its continuation bytes (it is judged when
 * complete); every code point U+0000..U+10FFFF outside the surrogates
 * round-trips through its encoding. */
static void
test_utf8_decode(void **state)
{
    uint32_t cp = 0;
    uint32_t v = 0;

    (void)state;
    assert_int_equal(sl_utf8_decode("A", 1, &cp), 1);
    assert_int_equal(cp, 0x41);
    assert_int_equal(sl_utf8_decode("\xc3\xbc", 2, &cp), 2);
    assert_int_equal(cp, 0xfc);
    assert_int_equal(sl_utf8_decode("\xe4\xb8\xad", 3, &cp), 3);
    assert_int_equal(cp, 0x4e2d);
    assert_int_equal(sl_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x1f600);
    assert_int_equal(sl_utf8_decode("", 0, &cp), 0);
    assert_int_equal(sl_utf8_decode("\x80", 1, &cp), 0);     /* stray */
    assert_int_equal(sl_utf8_decode("\xc0\xaf", 2, &cp), 0); /* overlong */
    assert_int_equal(sl_utf8_decode("\xe0\x80\xaf", 3, &cp), 0);
    assert_int_equal(sl_utf8_decode("\xf0\x80\x80\xaf", 4, &cp), 0);
    assert_int_equal(sl_utf8_decode("\xed\xa0\x80", 3, &cp), 0); /* D800 */
    assert_int_equal(sl_utf8_decode("\xf4\x90\x80\x80", 4, &cp), 0);
    assert_int_equal(sl_utf8_decode("\xf5\x80\x80\x80", 4, &cp), 0);
    assert_int_equal(sl_utf8_decode("\xe4\x28\xad", 3, &cp), 0);
    assert_int_equal(sl_utf8_decode("\xe4\xb8", 2, &cp), -1);
    assert_int_equal(sl_utf8_decode("\xe0\x80", 2, &cp), -1);
    assert_int_equal(sl_utf8_decode("\xf0", 1, &cp), -1);
    assert_int_equal(sl_utf8_decode("\xe4\x28", 2, &cp), 0);
    for (v = 0; v <= 0x10ffff; v++) {
        unsigned char b[4];
        int n = v < 0x80 ? 1 : v < 0x800 ? 2 : v < 0x10000 ? 3 : 4;

        if (v >= 0xd800 && v <= 0xdfff) {
            continue;
        }
        b[0] = n == 1   ? (unsigned char)v
               : n == 2 ? (unsigned char)(0xc0 | (v >> 6))
               : n == 3 ? (unsigned char)(0xe0 | (v >> 12))
                        : (unsigned char)(0xf0 | (v >> 18));
        for (int i = 1; i < n; i++) {
            b[i] = (unsigned char)(0x80 | ((v >> (6 * (n - 1 - i))) & 0x3f));
        }
        cp = 0xffffffffu;
        assert_int_equal(sl_utf8_decode(b, (size_t)n, &cp), n);
        assert_int_equal(cp, v);
        if (n > 1) {
            assert_int_equal(sl_utf8_decode(b, (size_t)n - 1, &cp), -1);
        }
    }
}

/* sl_utf8_valid: the eight-byte ASCII steps find a bad byte at any offset,
 * sequences cut by the length are invalid, NUL bytes are allowed. */
static void
test_utf8_valid(void **state)
{
    static const char *const bad[] = {
        "\x80",
        "\xc3(",
        "\xc0\xaf",
        "\xe0\x80\xaf",
        "\xf0\x80\x80\xaf",
        "\xed\xa0\x80",
        "\xf4\x90\x80\x80",
        "\xf8\x88\x80\x80\x80",
        "\xff",
    };
    char buf[40];
    size_t i = 0;
    size_t k = 0;

    (void)state;
    assert_int_equal(sl_utf8_valid("", 0), 1);
    assert_int_equal(sl_utf8_valid("a\0b", 3), 1);
    assert_int_equal(sl_utf8_valid("\xc3\xbc\xe4\xb8\xad\xf0\x9f\x98\x80", 9),
                     1);
    assert_int_equal(sl_utf8_valid("\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7), 1);
    /* the lowest and highest of each form around the excluded ranges */
    assert_int_equal(sl_utf8_valid("\xc2\x80\xdf\xbf", 4), 1);
    assert_int_equal(sl_utf8_valid("\xe0\xa0\x80\xed\x9f\xbf", 6), 1);
    assert_int_equal(sl_utf8_valid("\xee\x80\x80\xf0\x90\x80\x80", 7), 1);
    /* a bad third or fourth byte */
    assert_int_equal(sl_utf8_valid("\xe4\xb8\x28", 3), 0);
    assert_int_equal(sl_utf8_valid("\xf0\x9f\x98\x28", 4), 0);
    assert_int_equal(sl_utf8_valid("\xf0\x9f\xc0\x80", 4), 0);
    /* a valid sequence cut by the length: the byte after it is not read */
    assert_int_equal(sl_utf8_valid("\xe6\x97\xa5", 2), 0);
    assert_int_equal(sl_utf8_valid("\xf0\x9f\x98\x80", 3), 0);
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        size_t blen = strlen(bad[k]);

        for (i = 0; i + blen <= 32; i++) {
            memset(buf, 'a', sizeof(buf));
            memcpy(buf + i, bad[k], blen);
            assert_int_equal(sl_utf8_valid(buf, 32), 0);
            assert_int_equal(sl_utf8_valid(buf, i), 1); /* before it: fine */
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_entity),
        cmocka_unit_test(test_name_store),
        cmocka_unit_test(test_name_object_id),
        cmocka_unit_test(test_name_null_err),
        cmocka_unit_test(test_utf8_decode),
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_valid_head),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
