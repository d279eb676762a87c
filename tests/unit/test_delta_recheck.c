/*
 * Unit tests of the delta service's next checks (recheck.c): the interval
 * rules (new: the minimum; changed: half, never below the minimum;
 * unchanged: twice, never above the maximum), the due scan (only what is
 * due, in time order per shard, at most max, the callback's stop, other
 * sources apart), reopening, bad arguments, and that the next check goes
 * with its entry: delta-delete of the entry, clear and forget of the
 * source; and the runs recorded by time that a continuous run's expiry
 * asks for, and the gone scan of a watched folder or file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deltaservice/deltaservice.h"
#include "delta_fixture.h"

#define SRC "web"
#define MIN 1000u
#define MAX 8000u

static int
setup(void **state)
{
    return delta_setup(state, "recheck-", 1);
}

/* Record one check of @id at @now; returns its next check. */
static uint64_t
seen1(struct sl_delta *d,
      const char *src,
      const char *id,
      enum sl_delta_seen seen,
      uint64_t now)
{
    struct sl_delta_recheck it = {id, seen, 0, -1};
    struct sl_err err;

    assert_int_equal(
        sl_delta_recheck_set(d, src, 0, &it, 1, now, MIN, MAX, &err), 0);
    assert_int_equal(it.result, 0);
    return it.next_ms;
}

static uint64_t
interval_of(struct sl_delta *d, const char *id)
{
    uint64_t next = 0;
    uint64_t interval = 0;
    struct sl_err err;

    assert_int_equal(sl_delta_recheck_get(d, SRC, id, &next, &interval, &err),
                     0);
    return interval;
}

struct due {
    char ids[64][64];
    uint64_t at[64];
    size_t n;
    size_t stop_after; /* 0: never */
};

static int
on_due(void *ctx, const char *id, uint64_t due_ms)
{
    struct due *u = ctx;

    if (u->n < 64) {
        (void)snprintf(u->ids[u->n], sizeof(u->ids[0]), "%s", id);
        u->at[u->n] = due_ms;
    }
    u->n++;
    return u->stop_after != 0 && u->n == u->stop_after ? 7 : 0;
}

static size_t
due_now(struct sl_delta *d, const char *src, uint64_t now, struct due *u)
{
    struct sl_err err;
    size_t found = 0;

    memset(u, 0, sizeof(*u));
    assert_int_equal(
        sl_delta_recheck_due(d, src, now, 1000, on_due, u, &found, &err), 0);
    assert_int_equal(found, u->n);
    return found;
}

static int
due_has(const struct due *u, const char *id)
{
    size_t i = 0;

    for (i = 0; i < u->n && i < 64; i++) {
        if (strcmp(u->ids[i], id) == 0) {
            return 1;
        }
    }
    return 0;
}

/* New: the minimum; unchanged doubles up to the maximum; changed halves
 * down to the minimum; the next check is now + the interval. */
static void
test_recheck_intervals(void **state)
{
    struct fixture *f = *state;
    uint64_t now = 1000000;

    assert_int_equal(seen1(f->d, SRC, "u", SL_DELTA_SEEN_NEW, now), now + MIN);
    assert_int_equal(interval_of(f->d, "u"), MIN);
    assert_int_equal(seen1(f->d, SRC, "u", SL_DELTA_SEEN_UNCHANGED, now),
                     now + 2 * MIN);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_UNCHANGED, now);
    assert_int_equal(interval_of(f->d, "u"), 4 * MIN);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_UNCHANGED, now);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_UNCHANGED, now);
    assert_int_equal(interval_of(f->d, "u"), MAX); /* capped */
    assert_int_equal(seen1(f->d, SRC, "u", SL_DELTA_SEEN_CHANGED, now),
                     now + MAX / 2);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_CHANGED, now);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_CHANGED, now);
    (void)seen1(f->d, SRC, "u", SL_DELTA_SEEN_CHANGED, now);
    assert_int_equal(interval_of(f->d, "u"), MIN); /* floored */
    /* unchanged without a stored interval starts at the minimum */
    assert_int_equal(seen1(f->d, SRC, "fresh", SL_DELTA_SEEN_UNCHANGED, now),
                     now + MIN);
}

/* Checked twice in one run (a retried task): one step, not two; the
 * next run steps on from there. */
static void
test_recheck_once_per_run(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_recheck it = {"r", SL_DELTA_SEEN_NEW, 0, 0};
    struct sl_err err;
    int i = 0;

    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 1, &it, 1, 0, MIN, MAX, &err), 0);
    it.seen = SL_DELTA_SEEN_UNCHANGED;
    for (i = 0; i < 3; i++) { /* run 2, its task retried twice */
        assert_int_equal(
            sl_delta_recheck_set(f->d, SRC, 2, &it, 1, 0, MIN, MAX, &err), 0);
        assert_int_equal(interval_of(f->d, "r"), 2 * MIN);
    }
    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 3, &it, 1, 0, MIN, MAX, &err), 0);
    assert_int_equal(interval_of(f->d, "r"), 4 * MIN);
    it.seen = SL_DELTA_SEEN_CHANGED; /* run 3 again: from 2 * MIN */
    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 3, &it, 1, 0, MIN, MAX, &err), 0);
    assert_int_equal(interval_of(f->d, "r"), MIN);
}

/* Only what is due; each record once, at its latest time; in time order
 * within a shard; at most max; a callback's value stops the scan. */
static void
test_recheck_due_scan(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_recheck items[40];
    char ids[40][16];
    struct due u;
    struct sl_err err;
    size_t found = 0;
    size_t i = 0;

    for (i = 0; i < 40; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "doc-%zu", i);
        items[i] = (struct sl_delta_recheck){ids[i], SL_DELTA_SEEN_NEW, 0, 0};
    }
    /* 20 checked at t=0 (due at 1000), 20 at t=5000 (due at 6000) */
    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 0, items, 20, 0, MIN, MAX, &err), 0);
    assert_int_equal(sl_delta_recheck_set(
                         f->d, SRC, 0, items + 20, 20, 5000, MIN, MAX, &err),
                     0);
    assert_int_equal(due_now(f->d, SRC, 999, &u), 0);
    assert_int_equal(due_now(f->d, SRC, 1000, &u), 20);
    for (i = 0; i < 20; i++) {
        assert_true(due_has(&u, ids[i]));
    }
    assert_int_equal(due_now(f->d, SRC, 6000, &u), 40);
    /* per shard in time order: a later time never before an earlier one
     * of the same shard */
    for (i = 1; i < u.n; i++) {
        if (sl_delta_shard_of(f->d, u.ids[i]) ==
            sl_delta_shard_of(f->d, u.ids[i - 1])) {
            assert_true(u.at[i] >= u.at[i - 1]);
        }
    }
    /* checked again: moved, not duplicated */
    (void)seen1(f->d, SRC, "doc-3", SL_DELTA_SEEN_UNCHANGED, 1000);
    assert_int_equal(due_now(f->d, SRC, 2999, &u), 19);
    assert_false(due_has(&u, "doc-3"));
    assert_int_equal(due_now(f->d, SRC, 3000, &u), 20);
    /* at most max */
    memset(&u, 0, sizeof(u));
    assert_int_equal(
        sl_delta_recheck_due(f->d, SRC, 6000, 5, on_due, &u, &found, &err), 0);
    assert_int_equal(found, 5);
    /* the callback stops it */
    memset(&u, 0, sizeof(u));
    u.stop_after = 3;
    assert_int_equal(
        sl_delta_recheck_due(f->d, SRC, 6000, 100, on_due, &u, &found, &err),
        7);
    assert_int_equal(found, 3);
    /* other sources apart */
    assert_int_equal(due_now(f->d, "other", 1000000, &u), 0);
    (void)seen1(f->d, "other", "doc-1", SL_DELTA_SEEN_NEW, 0);
    assert_int_equal(due_now(f->d, "other", 1000000, &u), 1);
    assert_int_equal(due_now(f->d, SRC, 1000000, &u), 40);
}

/* Bad arguments; an unknown record; kept across a reopen. */
static void
test_recheck_args_and_reopen(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_recheck bad[2] = {{"", SL_DELTA_SEEN_NEW, 0, 0},
                                      {"ok", SL_DELTA_SEEN_NEW, 0, 0}};
    struct sl_err err;
    uint64_t next = 0;
    uint64_t interval = 0;
    struct due u;

    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 0, bad, 2, 0, 0, MAX, &err), SL_EINVAL);
    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 0, bad, 2, 0, MAX, MIN, &err),
        SL_EINVAL);
    assert_int_equal(
        sl_delta_recheck_set(f->d, "", 0, bad, 2, 0, MIN, MAX, &err),
        SL_EINVAL);
    assert_int_equal(
        sl_delta_recheck_set(f->d, SRC, 0, bad, 2, 0, MIN, MAX, &err), 0);
    assert_int_equal(bad[0].result, SL_EINVAL);
    assert_int_equal(bad[1].result, 0);
    assert_int_equal(
        sl_delta_recheck_get(f->d, SRC, "none", &next, &interval, &err),
        SL_ENOENT);
    sl_delta_close(f->d);
    f->d = NULL;
    assert_int_equal(
        sl_delta_open(f->path, 0, SL_DURABILITY_PROCESS, 0, &f->d, &err), 0);
    assert_int_equal(
        sl_delta_recheck_get(f->d, SRC, "ok", &next, &interval, &err), 0);
    assert_int_equal(next, MIN);
    assert_int_equal(due_now(f->d, SRC, MIN, &u), 1);
}

/* The delta-delete's callback: the deletes were sent. */
static int
deletes_sent(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    (void)ctx;
    (void)e;
    (void)n;
    return 0;
}

/* The next check goes with its entry: the delta-delete of an entry, clear
 * and forget of the source. */
static void
test_recheck_goes_with_entry(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    uint64_t next = 0;
    uint64_t interval = 0;
    struct due u;

    mark1(f->d, SRC, 1, "kept", NULL, "h", 0);
    mark1(f->d, SRC, 1, "gone", NULL, "h", 0);
    (void)seen1(f->d, SRC, "kept", SL_DELTA_SEEN_NEW, 0);
    (void)seen1(f->d, SRC, "gone", SL_DELTA_SEEN_NEW, 0);
    assert_int_equal(check1(f->d, SRC, 2, "kept", NULL, "h"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(scan_all(f->d, SRC, 2, deletes_sent, NULL), 1); /* gone */
    assert_int_equal(
        sl_delta_recheck_get(f->d, SRC, "gone", &next, &interval, &err),
        SL_ENOENT);
    assert_int_equal(due_now(f->d, SRC, 10 * MAX, &u), 1);
    assert_true(due_has(&u, "kept"));

    assert_int_equal(sl_delta_clear(f->d, SRC, &err), 0);
    assert_int_equal(due_now(f->d, SRC, 10 * MAX, &u), 0);
    (void)seen1(f->d, SRC, "again", SL_DELTA_SEEN_NEW, 0);
    assert_int_equal(sl_delta_forget(f->d, SRC, &err), 0);
    assert_int_equal(due_now(f->d, SRC, 10 * MAX, &u), 0);
    assert_int_equal(
        sl_delta_recheck_get(f->d, SRC, "again", &next, &interval, &err),
        SL_ENOENT);
}

/* Runs recorded by time (sl_delta_run_for_at): the newest run begun at or
 * before a time, per source; the same run id answers its sequence again;
 * older records are dropped once asked past them; it survives reopening. */
static void
test_runs_by_time(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    uint64_t s1 = 0;
    uint64_t s2 = 0;
    uint64_t s3 = 0;
    uint64_t seq = 0;

    assert_int_equal(sl_delta_run_for_at(f->d, SRC, "r/pass1", 1000, &s1, &err),
                     0);
    assert_int_equal(
        sl_delta_run_for_at(f->d, SRC, "r/pass1", 9999, &seq, &err), 0);
    assert_int_equal(seq, s1); /* the same pass: no new run, no new time */
    assert_int_equal(sl_delta_run_for_at(f->d, SRC, "r/pass2", 2000, &s2, &err),
                     0);
    assert_int_equal(
        sl_delta_run_for_at(f->d, "other", "o/pass1", 1500, &seq, &err), 0);
    assert_int_equal(sl_delta_run_for_at(f->d, SRC, "r/pass3", 3000, &s3, &err),
                     0);
    assert_true(s1 < s2 && s2 < s3);
    assert_int_equal(sl_delta_run_before(f->d, SRC, 999, &seq, &err), 0);
    assert_int_equal(seq, 0);
    assert_int_equal(sl_delta_run_before(f->d, SRC, 1000, &seq, &err), 0);
    assert_int_equal(seq, s1);
    assert_int_equal(sl_delta_run_before(f->d, SRC, 2999, &seq, &err), 0);
    assert_int_equal(seq, s2);
    assert_int_equal(sl_delta_run_before(f->d, "other", 99999, &seq, &err), 0);
    assert_int_equal(seq, 1);
    sl_delta_close(f->d);
    f->d = NULL;
    assert_int_equal(
        sl_delta_open(f->path, 0, SL_DURABILITY_PROCESS, 0, &f->d, &err), 0);
    assert_int_equal(sl_delta_run_before(f->d, SRC, 99999, &seq, &err), 0);
    assert_int_equal(seq, s3);
    /* asked at 2999 before: the record of s1 is gone */
    assert_int_equal(sl_delta_run_before(f->d, SRC, 1000, &seq, &err), 0);
    assert_int_equal(seq, 0);
    assert_int_equal(sl_delta_run_before(f->d, SRC, -5, &seq, &err), 0);
    assert_int_equal(seq, 0); /* before 1970: nothing, nothing dropped */
    assert_int_equal(sl_delta_run_before(f->d, SRC, 99999, &seq, &err), 0);
    assert_int_equal(seq, s3);
    assert_int_equal(sl_delta_run_before(f->d, "", 1000, &seq, &err),
                     SL_EINVAL);
}

/* The gone scan: the entries of one id and of the ids under it ('/' and
 * an archive's '!'), not those that only begin alike, nor other sources;
 * an entry seen in the scan's run stays; "a!b.txt" is a file of its own. */
struct gone_seen {
    char ids[16][32];
    size_t n;
};

static int
gone_cb(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    struct gone_seen *g = ctx;
    size_t i = 0;

    for (i = 0; i < n && g->n < 16; i++) {
        (void)snprintf(g->ids[g->n++], sizeof(g->ids[0]), "%s", e[i].id);
    }
    return 0;
}

static size_t
gone(struct sl_delta *d, const char *id, uint64_t seq, struct gone_seen *g)
{
    struct sl_err err;
    uint64_t total = 0;
    unsigned sh = 0;

    memset(g, 0, sizeof(*g));
    for (sh = 0; sh < sl_delta_shards(d); sh++) {
        uint64_t removed = 0;

        assert_int_equal(
            sl_delta_gone_scan(d, SRC, id, seq, sh, gone_cb, g, &removed, &err),
            0);
        total += removed;
    }
    assert_int_equal(total, g->n);
    return g->n;
}

static void
test_gone_scan(void **state)
{
    struct fixture *f = *state;
    struct gone_seen g;
    struct sl_err err;
    uint64_t removed = 0;

    mark1(f->d, SRC, 1, "/t/a", NULL, "h", 0);
    mark1(f->d, SRC, 1, "/t/a/x", NULL, "h", 0);
    mark1(f->d, SRC, 1, "/t/a/y/z", NULL, "h", 0);
    mark1(f->d, SRC, 1, "/t/a.zip", NULL, "h", 1);
    mark1(f->d, SRC, 1, "/t/a.zip!/in.txt", "/t/a.zip", "h", 0);
    mark1(f->d, SRC, 1, "/t/ab", NULL, "h", 0);
    mark1(f->d, SRC, 1, "/t/a!b.txt", NULL, "h", 0); /* a file named so */
    mark1(f->d, SRC, 2, "/t/a/seen", NULL, "h", 0);
    mark1(f->d, "other", 1, "/t/a/x", NULL, "h", 0);
    assert_int_equal(gone(f->d, "/t/a", 2, &g), 3); /* a, a/x, a/y/z */
    assert_int_equal(check1(f->d, SRC, 3, "/t/a/x", NULL, "h"), SL_DELTA_NEW);
    assert_int_equal(check1(f->d, SRC, 3, "/t/ab", NULL, "h"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, 3, "/t/a!b.txt", NULL, "h"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, 3, "/t/a/seen", NULL, "h"),
                     SL_DELTA_UPTODATE); /* seen in run 2: stays */
    assert_int_equal(check1(f->d, "other", 3, "/t/a/x", NULL, "h"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(gone(f->d, "/t/a.zip", 3, &g), 2); /* and its entry */
    assert_int_equal(check1(f->d, SRC, 4, "/t/a.zip!/in.txt", "/t/a.zip", "h"),
                     SL_DELTA_NEW);
    assert_int_equal(gone(f->d, "/t/none", 4, &g), 0);
    assert_int_equal(
        sl_delta_gone_scan(f->d, SRC, "", 4, 0, gone_cb, &g, &removed, &err),
        SL_EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_recheck_intervals, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_recheck_once_per_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recheck_due_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_recheck_args_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_recheck_goes_with_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runs_by_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_scan, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
