/*
 * Unit tests of the job schedules' calendar (jobmanager/sched_time.c,
 * docs/jobmanager.md "Schedules"): a schedule read from JSON and refused
 * with the key that is wrong; the next start after an instant in UTC and
 * in Europe/Berlin, across both daylight saving changes of 2026 (the
 * skipped hour's start comes at its first valid minute, the repeated
 * hour's at its first occurrence), days of the week and of the month,
 * months, several start times; a date that never comes is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "jobmanager/sched_int.h"

/* @text (a schedule) read; fails the test when it is refused. */
static void
parse(const char *text, struct sl__jm_sched *s)
{
    json_t *j = json_loads(text, 0, NULL);
    struct sl_err err;

    assert_non_null(j);
    sl_err_clear(&err);
    if (sl__jm_sched_parse(j, s, &err) != 0) {
        fail_msg("%s: %s", text, err.message);
    }
    json_decref(j);
}

/* The next start of @text after @after (ISO, UTC), formatted. */
static const char *
next(const char *text, const char *after, int64_t *window)
{
    static char out[64];
    struct sl__jm_sched s;
    struct tm tm;
    int64_t w = 0;
    int64_t t = 0;

    parse(text, &s);
    memset(&tm, 0, sizeof(tm));
    assert_non_null(strptime(after, "%Y-%m-%dT%H:%M:%SZ", &tm));
    t = sl__jm_sched_next(&s, (int64_t)timegm(&tm) * 1000, &w);
    if (window != NULL) {
        *window = w;
    }
    if (t < 0) {
        return "none";
    }
    sl_time_format(t, out, sizeof(out));
    return out;
}

static void
test_sched_next(void **state)
{
    int64_t w = 0;
    static const char berlin[] =
        "{\"timeZone\": \"Europe/Berlin\", \"starts\": [{\"minute\": 30,"
        " \"hour\": 2, \"windowMinutes\": 90}]}";

    (void)state;
    /* UTC, every day at 02:30 */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": [30], \"hour\": [2]}]}",
             "2026-03-01T02:30:00Z",
             &w),
        "2026-03-02T02:30:00.000Z");
    assert_int_equal(w, 0);
    /* a start is on the minute, whatever the milliseconds of the time */
    {
        struct sl__jm_sched s;

        parse("{\"starts\": [{\"minute\": 0}]}", &s);
        assert_int_equal(sl__jm_sched_next(&s, 1795000000123LL, &w) % 60000, 0);
    }
    /* Berlin: 02:30 CET is 01:30Z */
    assert_string_equal(next(berlin, "2026-03-01T00:00:00Z", &w),
                        "2026-03-01T01:30:00.000Z");
    assert_int_equal(w, 90 * 60000);
    /* 2026-03-29: 02:00 becomes 03:00, 02:30 does not exist: 03:00 CEST */
    assert_string_equal(next(berlin, "2026-03-28T12:00:00Z", NULL),
                        "2026-03-29T01:00:00.000Z");
    /* then 02:30 CEST is 00:30Z */
    assert_string_equal(next(berlin, "2026-03-29T12:00:00Z", NULL),
                        "2026-03-30T00:30:00.000Z");
    /* 2026-10-25: 03:00 becomes 02:00, 02:30 comes twice: the first */
    assert_string_equal(next(berlin, "2026-10-24T12:00:00Z", NULL),
                        "2026-10-25T00:30:00.000Z");
    assert_string_equal(next(berlin, "2026-10-25T00:30:00Z", NULL),
                        "2026-10-26T01:30:00.000Z");
    /* weekdays (2026-11-28 is a Saturday): Monday 08:00 */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 0, \"hour\": 8, \"dayOfWeek\":"
             " [\"mon\", \"fri\"]}]}",
             "2026-11-28T00:00:00Z",
             NULL),
        "2026-11-30T08:00:00.000Z");
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 0, \"hour\": 8, \"dayOfWeek\": 7}]}",
             "2026-11-28T00:00:00Z",
             NULL),
        "2026-11-29T08:00:00.000Z");
    /* the 31st, in months that have one; both fields must match */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 5, \"hour\": 0, \"dayOfMonth\": 31,"
             " \"month\": [2, 4, 5]}]}",
             "2026-01-01T00:00:00Z",
             NULL),
        "2026-05-31T00:05:00.000Z");
    /* the earliest of several start times, with its window */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 0, \"hour\": 9, \"windowMinutes\":"
             " 10}, {\"minute\": [15, 45], \"hour\": 8, \"windowMinutes\":"
             " 20}]}",
             "2026-11-28T08:20:00Z",
             &w),
        "2026-11-28T08:45:00.000Z");
    assert_int_equal(w, 20 * 60000);
    /* every minute of an hour */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": \"*\", \"hour\": 23}]}",
             "2026-11-28T23:10:00Z",
             NULL),
        "2026-11-28T23:11:00.000Z");
    /* Friday the 13th: 2027-08-13 after 2026-11-28 (2026-11-13 was one) */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 0, \"hour\": 0, \"dayOfMonth\": 13,"
             " \"dayOfWeek\": \"fri\"}]}",
             "2026-11-28T00:00:00Z",
             NULL),
        "2027-08-13T00:00:00.000Z");
    /* February 29 comes in 2028 */
    assert_string_equal(
        next("{\"starts\": [{\"minute\": 0, \"hour\": 0, \"dayOfMonth\": 29,"
             " \"month\": 2}]}",
             "2026-01-01T00:00:00Z",
             NULL),
        "2028-02-29T00:00:00.000Z");
}

static void
test_sched_refused(void **state)
{
    static const struct {
        const char *text;
        const char *message; /* a part of it */
    } bad[] = {
        {"[]", "want an object"},
        {"{\"starts\": []}", "schedule.starts"},
        {"{\"starts\": [{\"hour\": 2}]}", "minute is required"},
        {"{\"starts\": [{\"minute\": 60}]}", "starts[0].minute"},
        {"{\"starts\": [{\"minute\": 0, \"hour\": [1, 24]}]}",
         "starts[0].hour"},
        {"{\"starts\": [{\"minute\": 0, \"dayOfWeek\": \"someday\"}]}",
         "starts[0].dayOfWeek"},
        {"{\"starts\": [{\"minute\": 0, \"dayOfMonth\": 0}]}",
         "starts[0].dayOfMonth"},
        {"{\"starts\": [{\"minute\": 0, \"windowMinutes\": 0}]}",
         "windowMinutes"},
        {"{\"starts\": [{\"minute\": 0, \"minutes\": 5}]}",
         "unknown key 'minutes'"},
        {"{\"starts\": [{\"minute\": 0}], \"timeZone\": \"Mars/Olympus\"}",
         "Mars/Olympus"},
        {"{\"starts\": [{\"minute\": 0}], \"atWindowEnd\": \"stop\"}",
         "atWindowEnd"},
        {"{\"starts\": [{\"minute\": 0}], \"runMissed\": 1}", "runMissed"},
        {"{\"starts\": [{\"minute\": 0}], \"mode\": \"often\"}",
         "schedule.mode"},
        {"{\"starts\": [{\"minute\": 0}], \"every\": 5}", "unknown key"},
        {"{\"starts\": [{\"minute\": 0, \"dayOfMonth\": 30, \"month\": 2}]}",
         "no month has such a day"},
        {"{\"starts\": [{\"minute\": 0, \"dayOfWeek\": \"monkey\"}]}",
         "starts[0].dayOfWeek"},
        {"{\"starts\": [{\"minute\": 0}], \"timeZone\": 5}",
         "want the name of a time zone"},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = json_loads(bad[i].text, 0, NULL);
        struct sl__jm_sched s;
        struct sl_err err;

        sl_err_clear(&err);
        assert_int_equal(sl__jm_sched_parse(j, &s, &err), SL_EINVALDEF);
        assert_string_equal(err.field, "schedule");
        if (strstr(err.message, bad[i].message) == NULL) {
            fail_msg("%s: message '%s' lacks '%s'",
                     bad[i].text,
                     err.message,
                     bad[i].message);
        }
        json_decref(j);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sched_next),
        cmocka_unit_test(test_sched_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
