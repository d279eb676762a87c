/*
 * Unit tests for core basics: the error table, bounded buffers, records,
 * time formatting and number parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/sl.h"

static void
test_errors_table(void **state)
{
    (void)state;
    assert_int_equal(sl_err_http_status(SL_ENOENT), 404);
    assert_int_equal(sl_err_http_status(SL_ETOOLARGE), 413);
    assert_int_equal(sl_err_http_status(SL_EUNAUTH), 401);
    assert_int_equal(sl_err_http_status(SL_EMETHOD), 405);
    assert_int_equal(sl_err_http_status(12345), 500);
    assert_string_equal(sl_err_name(SL_EBADNAME), "SL_EBADNAME");
    assert_string_equal(sl_err_api_code(SL_EBADJSON), "MALFORMED_JSON");
    assert_string_equal(sl_strerror(SL_OK), "success");
    assert_int_equal(sl_err_from_errno(ENOENT), SL_ENOENT);
    assert_int_equal(sl_err_from_errno(ENOSPC), SL_ENOSPC);
    assert_int_equal(sl_err_from_errno(EBADF), SL_EIO);
    assert_int_equal(sl_err_from_errno(EDQUOT), SL_ENOSPC);
    assert_true(SL_EBADSTATE < -39999);
    /* no space: a temporary condition (docs/operations.md) */
    assert_true(sl_err_nospace(SL_ENOSPC));
    assert_true(sl_err_nospace(-EDQUOT));
    assert_false(sl_err_nospace(SL_EIO));
    assert_false(sl_err_nospace(0));
    /* a disk with room is not full; a path that is not there says nothing */
    assert_false(sl_disk_full("."));
    assert_false(sl_disk_full("/nonexistent/sluice"));
    assert_string_equal(sl_err_api_code(SL_ENOSPC), "NO_SPACE");
    assert_int_equal(sl_err_http_status(SL_ENOSPC), 507);
}

/* The pause after failures on a full disk: 1 s doubling to the cap while
 * failures follow the pauses, failures during a pause join it, a quiet
 * time as long as the last pause starts over. */
static void
test_util_backoff(void **state)
{
    struct sl_backoff b;
    int64_t t = 1000;

    (void)state;
    sl_backoff_init(&b, 0, 0); /* defaults: 1000, and max >= first */
    assert_int_equal(b.first_ms, 1000);
    assert_int_equal(b.max_ms, 1000);
    sl_backoff_init(&b, 1000, 5000);
    assert_int_equal(sl_backoff_left(&b, t), 0);
    assert_int_equal(sl_backoff_fail(&b, t), 1);
    assert_int_equal(b.cur_ms, 1000);
    assert_int_equal(sl_backoff_left(&b, t + 400), 600);
    assert_int_equal(sl_backoff_fail(&b, t + 400), 0); /* joins it */
    assert_int_equal(b.cur_ms, 1000);
    assert_int_equal(sl_backoff_left(&b, t + 1000), 0);
    /* failing again right after each pause: 2000, 4000, 5000, 5000 */
    t += 1000;
    assert_int_equal(sl_backoff_fail(&b, t + 5), 1);
    assert_int_equal(b.cur_ms, 2000);
    t += 5 + 2000;
    assert_int_equal(sl_backoff_fail(&b, t + 5), 1);
    assert_int_equal(b.cur_ms, 4000);
    t += 5 + 4000;
    assert_int_equal(sl_backoff_fail(&b, t + 5), 1);
    assert_int_equal(b.cur_ms, 5000);
    t += 5 + 5000;
    assert_int_equal(sl_backoff_fail(&b, t + 4999), 1);
    assert_int_equal(b.cur_ms, 5000);
    /* quiet for the length of the last pause: from the start again */
    t += 4999 + 5000;
    assert_int_equal(sl_backoff_fail(&b, t + 5000), 1);
    assert_int_equal(b.cur_ms, 1000);
    assert_int_equal(sl_backoff_left(&b, t + 5000), 1000);
}

static void
test_errors_set(void **state)
{
    struct sl_err err;

    (void)state;
    assert_int_equal(sl_err_set(&err, SL_EINVAL, "a.b", "bad %d", 7),
                     SL_EINVAL);
    assert_int_equal(err.code, SL_EINVAL);
    assert_string_equal(err.field, "a.b");
    assert_string_equal(err.message, "bad 7");
    assert_int_equal(sl_err_set(NULL, SL_EIO, NULL, "x"), SL_EIO);
    sl_err_clear(&err);
    assert_int_equal(err.code, 0);
    assert_string_equal(err.message, "");
}

static void
test_buf_limit(void **state)
{
    struct sl_buf b;

    (void)state;
    sl_buf_init(&b, 10);
    assert_int_equal(sl_buf_append(&b, "hello", 5), 0);
    assert_int_equal(sl_buf_appendf(&b, "%d", 1234), 0);
    assert_string_equal(b.data, "hello1234");
    assert_int_equal(sl_buf_append(&b, "x", 1), 0);
    assert_int_equal(b.len, 10);
    assert_int_equal(sl_buf_append(&b, "y", 1), SL_ETOOLARGE);
    assert_null(b.data);
    assert_int_equal(sl_buf_append(&b, "z", 1), SL_EBADSTATE);
    sl_buf_reset(&b);
    assert_int_equal(sl_buf_append(&b, "z", 1), 0);
    assert_string_equal(b.data, "z");
    sl_buf_free(&b);
}

static void
test_buf_big_format(void **state)
{
    struct sl_buf b;
    char big[2000];

    (void)state;
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    sl_buf_init(&b, 4096);
    assert_int_equal(sl_buf_appendf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, 2001);
    assert_int_equal(sl_buf_appendf(&b, "%s%s", big, big), SL_ETOOLARGE);
    sl_buf_free(&b);
}

static void
test_record_attachments(void **state)
{
    struct sl_record *rec = sl_record_new("r1");
    const char *name = NULL;
    const void *data = NULL;
    size_t len = 0;

    (void)state;
    assert_string_equal(sl_record_id(rec), "r1");
    assert_int_equal(sl_record_attachment_set(rec, "a", "xyz", 3), 0);
    assert_int_equal(sl_record_attachment_set(rec, "b", "", 0), 0);
    assert_int_equal(sl_record_attachment_set(rec, "a", "12345", 5), 0);
    assert_int_equal(sl_record_attachment_count(rec), 2);
    assert_int_equal(sl_record_attachment_get(rec, "a", &data, &len), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "12345", 5);
    assert_int_equal(sl_record_attachment_at(rec, 1, &name, &data, &len), 0);
    assert_string_equal(name, "b");
    assert_int_equal(len, 0);
    assert_int_equal(sl_record_attachment_set(rec, "", "x", 1), SL_EINVAL);
    assert_int_equal(sl_record_attachment_remove(rec, "a"), 0);
    assert_int_equal(sl_record_attachment_remove(rec, "a"), SL_ENOENT);
    assert_int_equal(sl_record_attachment_count(rec), 1);
    sl_record_free(rec);
}

static void
test_record_from_json(void **state)
{
    struct sl_record *rec = NULL;
    struct sl_err err;

    (void)state;
    assert_int_equal(sl_record_from_json_new(json_array(), &rec, &err),
                     SL_EINVAL);
    assert_null(rec);
    assert_int_equal(
        sl_record_from_json_new(json_pack("{s:i}", "_recordid", 3), &rec, &err),
        SL_EINVAL);
    assert_string_equal(err.field, "_recordid");
    assert_int_equal(
        sl_record_from_json_new(
            json_pack("{s:s, s:i}", "_recordid", "x", "n", 1), &rec, &err),
        0);
    assert_string_equal(sl_record_id(rec), "x");
    assert_int_equal(
        json_integer_value(json_object_get(sl_record_meta(rec), "n")), 1);
    sl_record_free(rec);
}

static void
test_util_time_and_numbers(void **state)
{
    char ts[32];
    char uuid[37];
    uint64_t v = 0;

    (void)state;
    sl_time_format(1795256130123LL, ts, sizeof(ts));
    assert_string_equal(ts, "2026-11-21T10:15:30.123Z");
    assert_int_equal(sl_parse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(sl_parse_u64("18446744073709551616", &v), SL_EINVAL);
    assert_int_equal(sl_parse_u64("", &v), SL_EINVAL);
    assert_int_equal(sl_parse_u64("-1", &v), SL_EINVAL);
    assert_int_equal(sl_parse_u64("12a", &v), SL_EINVAL);
    sl_uuid(uuid);
    assert_int_equal(strlen(uuid), 36);
    assert_true(uuid[14] == '4');
}

/* The test knob sleeps for its own point only: not for a point that
 * extends or prefixes another, nor for junk or values over 60 s (each of
 * which would sleep seconds here). */
static void
test_util_test_delay(void **state)
{
    int64_t t0 = 0;

    (void)state;
    assert_int_equal(setenv("SLUICE_TEST_DELAY",
                            "a.bc=5000,a.b=60,a=x,zz=junk,big=60001,=5000,c=",
                            1),
                     0);
    t0 = sl_mono_ms();
    sl_test_delay("a.b");
    assert_true(sl_mono_ms() - t0 >= 60);
    t0 = sl_mono_ms();
    sl_test_delay("a");
    sl_test_delay("a.");
    sl_test_delay("zz");
    sl_test_delay("big");
    sl_test_delay("");
    sl_test_delay("c");
    sl_test_delay("other");
    assert_true(sl_mono_ms() - t0 < 1000);
    assert_int_equal(unsetenv("SLUICE_TEST_DELAY"), 0);
    t0 = sl_mono_ms();
    sl_test_delay("a.b");
    assert_true(sl_mono_ms() - t0 < 60);
}

/* SHA-256 in pieces equals the one-shot digest (and the FIPS 180-2
 * value of "abc"). */
static void
test_util_sha256_pieces(void **state)
{
    static const char abc[] =
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    char data[5000];
    char one[65];
    char hex[65];
    struct sl_sha256 *h = NULL;
    size_t i = 0;

    (void)state;
    h = sl_sha256_new();
    sl_sha256_update(h, "a", 1);
    sl_sha256_update(h, "", 0);
    sl_sha256_update(h, "bc", 2);
    sl_sha256_final_hex(h, hex);
    sl_sha256_free(h);
    assert_string_equal(hex, abc);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = (char)(i * 7 + 3);
    }
    sl_sha256_hex(data, sizeof(data), one);
    h = sl_sha256_new();
    for (i = 0; i < sizeof(data); i += 333) {
        size_t n = sizeof(data) - i < 333 ? sizeof(data) - i : 333;

        sl_sha256_update(h, data + i, n);
    }
    sl_sha256_final_hex(h, hex);
    sl_sha256_free(h);
    assert_string_equal(hex, one);
    h = sl_sha256_new(); /* nothing added: the digest of "" */
    sl_sha256_final_hex(h, hex);
    sl_sha256_free(h);
    sl_sha256_hex("", 0, one);
    assert_string_equal(hex, one);
    sl_sha256_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_table),
        cmocka_unit_test(test_errors_set),
        cmocka_unit_test(test_buf_limit),
        cmocka_unit_test(test_buf_big_format),
        cmocka_unit_test(test_record_attachments),
        cmocka_unit_test(test_record_from_json),
        cmocka_unit_test(test_util_time_and_numbers),
        cmocka_unit_test(test_util_test_delay),
        cmocka_unit_test(test_util_sha256_pieces),
        cmocka_unit_test(test_util_backoff),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
