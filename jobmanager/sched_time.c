/*
 * Job schedules, the calendar part (docs/jobmanager.md "Schedules"): a
 * job definition's "schedule" read into struct sl__jm_sched, and the next
 * start time after an instant, in the schedule's time zone by ICU's
 * calendar (daylight saving included: a start in the hour skipped in
 * spring is at the first valid minute after it, one in the hour repeated
 * in autumn at its first occurrence).
 *
 * Threads: no state; ICU's calendar is made per call.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "jobmanager/jobmanager_int.h"
#include "jobmanager/sched_int.h"

#define HORIZON  (366 * 8) /* days searched for the next start */
#define ZONE_MAX 64

static const char *const wday_names[] = {
    "sun", "mon", "tue", "wed", "thu", "fri", "sat"};

/* One value of @field at @v into *bit: a number in [@lo, @hi] or, for
 * dayOfWeek, a day name; 0 or -1. */
static int
field_value(const char *field, const json_t *v, int lo, int hi, int *bit)
{
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);

        if (strcmp(field, "dayOfWeek") == 0 && n == 7) {
            n = 0; /* Sunday, as cron reads it */
        }
        if (n < lo || n > hi) {
            return -1;
        }
        *bit = (int)n;
        return 0;
    }
    if (json_is_string(v) && strcmp(field, "dayOfWeek") == 0) {
        size_t i = 0;

        for (i = 0; i < 7; i++) {
            if (strcasecmp(json_string_value(v), wday_names[i]) == 0) {
                *bit = (int)i;
                return 0;
            }
        }
    }
    return -1;
}

/* Field @field of start @i of @starts into the bit set *set: a value or
 * a list of them; absent or "*": every value. */
static int
field_set(const json_t *start,
          size_t i,
          const char *field,
          int lo,
          int hi,
          uint64_t *set,
          struct sl_err *err)
{
    const json_t *v = json_object_get(start, field);
    const json_t *e = NULL;
    size_t k = 0;
    int bit = 0;

    *set = 0;
    if (v == NULL ||
        (json_is_string(v) && strcmp(json_string_value(v), "*") == 0)) {
        for (bit = lo; bit <= hi; bit++) {
            *set |= 1ull << bit;
        }
        return 0;
    }
    if (!json_is_array(v)) {
        if (field_value(field, v, lo, hi, &bit) == 0) {
            *set = 1ull << bit;
            return 0;
        }
    }
    json_array_foreach(v, k, e)
    {
        if (field_value(field, e, lo, hi, &bit) != 0) {
            *set = 0;
            break;
        }
        *set |= 1ull << bit;
    }
    if (*set != 0) {
        return 0;
    }
    return sl_err_set(
        err,
        SL_EINVALDEF,
        "schedule",
        "schedule.starts[%zu].%s: want %s from %d to %d%s, a "
        "list of them or \"*\"",
        i,
        field,
        strcmp(field, "dayOfWeek") == 0 ? "a day (sun..sat, or a number"
                                        : "a number",
        lo,
        strcmp(field, "dayOfWeek") == 0 ? 7 : hi,
        strcmp(field, "dayOfWeek") == 0 ? ", 0 and 7 Sunday)" : "");
}

/* ICU's canonical id of time zone @name into @out, or -1. */
static int
zone_id(const char *name, UChar *out, int32_t cap)
{
    UChar in[ZONE_MAX];
    UBool system = 0;
    UErrorCode st = U_ZERO_ERROR;

    if (strlen(name) >= ZONE_MAX) {
        return -1;
    }
    u_uastrcpy(in, name);
    (void)ucal_getCanonicalTimeZoneID(in, -1, out, cap, &system, &st);
    return U_SUCCESS(st) && system ? 0 : -1;
}

/* Whether a day of @s's dayOfMonth set is in a month of its month set
 * (29 February counts: it comes every four years). */
static int
date_possible(const struct sl__jm_sched_start *s)
{
    static const int mdays[13] = {
        0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int m = 0;

    for (m = 1; m <= 12; m++) {
        if ((s->months & (1u << m)) &&
            (s->mdays & ((2u << mdays[m]) - 2u)) != 0) {
            return 1;
        }
    }
    return 0;
}

static int
start_parse(const json_t *start,
            size_t i,
            struct sl__jm_sched_start *s,
            struct sl_err *err)
{
    static const char *const keys[] = {
        "minute", "hour", "dayOfMonth", "month", "dayOfWeek", "windowMinutes"};
    const json_t *w = json_object_get(start, "windowMinutes");
    const char *key = NULL;
    const json_t *v = NULL;
    uint64_t set = 0;
    int rc = 0;

    if (!json_is_object(start)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.starts[%zu]: want an object",
                          i);
    }
    json_object_foreach((json_t *)start, key, v)
    {
        size_t k = 0;

        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], key)) {
            k++;
        }
        if (k == sizeof(keys) / sizeof(keys[0])) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              "schedule",
                              "schedule.starts[%zu]: unknown key '%s' (there "
                              "are minute, hour, dayOfMonth, month, "
                              "dayOfWeek, windowMinutes)",
                              i,
                              key);
        }
    }
    if (json_object_get(start, "minute") == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.starts[%zu].minute is required (else the "
                          "job would start every minute)",
                          i);
    }
    rc = field_set(start, i, "minute", 0, 59, &s->minutes, err);
    if (rc == 0) {
        rc = field_set(start, i, "hour", 0, 23, &set, err);
        s->hours = (uint32_t)set;
    }
    if (rc == 0) {
        rc = field_set(start, i, "dayOfMonth", 1, 31, &set, err);
        s->mdays = (uint32_t)set;
    }
    if (rc == 0) {
        rc = field_set(start, i, "month", 1, 12, &set, err);
        s->months = (uint16_t)set;
    }
    if (rc == 0) {
        rc = field_set(start, i, "dayOfWeek", 0, 6, &set, err);
        s->wdays = (uint8_t)set;
    }
    if (rc == 0 && w != NULL &&
        (!json_is_integer(w) || json_integer_value(w) < 1 ||
         json_integer_value(w) > 366 * 24 * 60)) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "schedule",
                        "schedule.starts[%zu].windowMinutes: want minutes "
                        "from 1 to 527040 (a year)",
                        i);
    }
    s->window_ms = w != NULL ? (int64_t)json_integer_value(w) * 60000 : 0;
    if (rc == 0 && !date_possible(s)) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "schedule",
                        "schedule.starts[%zu]: no month has such a day "
                        "(dayOfMonth and month never meet)",
                        i);
    }
    return rc;
}

int
sl__jm_sched_parse(const json_t *sched,
                   struct sl__jm_sched *out,
                   struct sl_err *err)
{
    const json_t *starts = json_object_get(sched, "starts");
    const json_t *tz = json_object_get(sched, "timeZone");
    const json_t *end = json_object_get(sched, "atWindowEnd");
    const json_t *missed = json_object_get(sched, "runMissed");
    const json_t *mode = json_object_get(sched, "mode");
    const char *key = NULL;
    const json_t *v = NULL;
    UChar zone[ZONE_MAX];
    size_t i = 0;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(sched)) {
        return sl_err_set(
            err, SL_EINVALDEF, "schedule", "schedule: want an object");
    }
    json_object_foreach((json_t *)sched, key, v)
    {
        if (strcmp(key, "starts") != 0 && strcmp(key, "timeZone") != 0 &&
            strcmp(key, "atWindowEnd") != 0 && strcmp(key, "runMissed") != 0 &&
            strcmp(key, "mode") != 0) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              "schedule",
                              "schedule: unknown key '%s' (there are starts, "
                              "timeZone, mode, atWindowEnd, runMissed)",
                              key);
        }
    }
    if (!json_is_array(starts) || json_array_size(starts) == 0 ||
        json_array_size(starts) > SL__JM_SCHED_MAX) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.starts: want a list of 1 to %d start "
                          "times",
                          SL__JM_SCHED_MAX);
    }
    (void)snprintf(out->tz,
                   sizeof(out->tz),
                   "%s",
                   json_is_string(tz) ? json_string_value(tz) : "UTC");
    if (tz != NULL && !json_is_string(tz)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.timeZone: want the name of a time zone "
                          "(such as UTC or Europe/Berlin)");
    }
    if (zone_id(out->tz, zone, ZONE_MAX) != 0) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.timeZone: '%s' is no time zone of the "
                          "tz database (such as UTC or Europe/Berlin)",
                          out->tz);
    }
    if (end != NULL && !(json_is_string(end) &&
                         (strcmp(json_string_value(end), "pause") == 0 ||
                          strcmp(json_string_value(end), "finish") == 0))) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.atWindowEnd: want \"pause\" or "
                          "\"finish\"");
    }
    out->finish_at_end =
        end != NULL && strcmp(json_string_value(end), "finish") == 0;
    if (missed != NULL && !json_is_boolean(missed)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.runMissed: want true or false");
    }
    out->run_missed = missed == NULL || json_is_true(missed);
    if (mode != NULL && !(json_is_string(mode) &&
                          (strcmp(json_string_value(mode), "runOnce") == 0 ||
                           strcmp(json_string_value(mode), "standard") == 0))) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "schedule",
                          "schedule.mode: want \"runOnce\" or \"standard\"");
    }
    if (mode != NULL) {
        (void)snprintf(
            out->mode, sizeof(out->mode), "%s", json_string_value(mode));
    }
    out->n = json_array_size(starts);
    for (i = 0; i < out->n; i++) {
        int rc = start_parse(json_array_get(starts, i), i, &out->s[i], err);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* A calendar in @s's zone, or NULL. */
static UCalendar *
calendar(const struct sl__jm_sched *s)
{
    UChar zone[ZONE_MAX];
    UErrorCode st = U_ZERO_ERROR;
    UCalendar *cal = NULL;

    if (zone_id(s->tz, zone, ZONE_MAX) != 0) {
        return NULL;
    }
    cal = ucal_open(zone, -1, "en_US_POSIX", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st)) {
        return NULL;
    }
    ucal_setAttribute(cal, UCAL_REPEATED_WALL_TIME, UCAL_WALLTIME_FIRST);
    ucal_setAttribute(cal, UCAL_SKIPPED_WALL_TIME, UCAL_WALLTIME_NEXT_VALID);
    return cal;
}

/* A local date: year, month (0-11, ICU's), day of the month, day of the
 * week (0 Sunday). */
struct day {
    int32_t y, mo, d, wd;
};

/* The first start of @st on local day @dy after @after, or -1 (@cal is
 * the zone's calendar, set here). */
static int64_t
first_on_day(UCalendar *cal,
             const struct day *dy,
             const struct sl__jm_sched_start *st,
             int64_t after)
{
    UErrorCode e = U_ZERO_ERROR;
    int h = 0;

    if (!(st->months & (1u << (dy->mo + 1))) || !(st->mdays & (1u << dy->d)) ||
        !(st->wdays & (1u << dy->wd))) {
        return -1;
    }
    for (h = 0; h < 24; h++) {
        int m = 0;

        if (!(st->hours & (1u << h))) {
            continue;
        }
        for (m = 0; m < 60; m++) {
            UDate t = 0;

            if (!(st->minutes & (1ull << m))) {
                continue;
            }
            ucal_setDateTime(cal, dy->y, dy->mo, dy->d, h, m, 0, &e);
            ucal_set(cal, UCAL_MILLISECOND, 0);
            t = ucal_getMillis(cal, &e);
            if (U_SUCCESS(e) && (int64_t)t > after) {
                return (int64_t)t;
            }
        }
    }
    return -1;
}

/* The local date @n days after the one of @after into *@dy: 0 or -1. */
static int
day_after(UCalendar *cal, int64_t after, int n, struct day *dy)
{
    UErrorCode e = U_ZERO_ERROR;

    /* noon: never in a skipped or repeated hour */
    ucal_setMillis(cal, (UDate)after, &e);
    ucal_set(cal, UCAL_HOUR_OF_DAY, 12);
    ucal_set(cal, UCAL_MINUTE, 0);
    ucal_add(cal, UCAL_DATE, n, &e);
    dy->y = ucal_get(cal, UCAL_YEAR, &e);
    dy->mo = ucal_get(cal, UCAL_MONTH, &e);
    dy->d = ucal_get(cal, UCAL_DATE, &e);
    dy->wd = ucal_get(cal, UCAL_DAY_OF_WEEK, &e) - UCAL_SUNDAY;
    return U_SUCCESS(e) ? 0 : -1;
}

int64_t
sl__jm_sched_next(const struct sl__jm_sched *s,
                  int64_t after,
                  int64_t *window_ms)
{
    UCalendar *cal = calendar(s);
    int64_t best = -1;
    int day = 0;

    *window_ms = 0;
    if (cal == NULL) {
        return -1;
    }
    /* day by day from @after's: the first day with a start has the next
     * one (the earliest of its starts; a tie takes the longest window) */
    for (day = 0; day < HORIZON && best < 0; day++) {
        struct day dy;
        size_t i = 0;

        if (day_after(cal, after, day, &dy) != 0) {
            break;
        }
        for (i = 0; i < s->n; i++) {
            int64_t t = first_on_day(cal, &dy, &s->s[i], after);

            if (t >= 0 && (best < 0 || t < best ||
                           (t == best && s->s[i].window_ms > *window_ms))) {
                best = t;
                *window_ms = s->s[i].window_ms;
            }
        }
    }
    ucal_close(cal);
    return best;
}
