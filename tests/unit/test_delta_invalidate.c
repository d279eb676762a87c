/*
 * Unit tests for sl_delta_invalidate (docs/deltaservice.md "Re-indexing a
 * source"): an invalidated entry is CHANGED for every check (the
 * deltaChecker's, the fileCrawler's pre-check, the updatePusher's element
 * check: all of them sl_delta_check) and never "pushed in this run",
 * keeps its compound flag and link and its visited sequence, so the
 * entries a later run does not visit are still reported by the obsolete
 * scan; a push makes it valid again.  Other sources are untouched unless
 * every source is invalidated; many entries take several transactions;
 * long ids keep their full id; a second call changes nothing.
 *
 * Each test gets a fresh directory made with mkdtemp under $TMPDIR.
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

#define SRC "files"

static int
setup(void **state)
{
    return delta_setup(state, "delta-inv-", 1);
}

static uint64_t
invalidated(struct sl_delta *d, const char *src)
{
    uint64_t n = 99;
    struct sl_err err;

    assert_int_equal(sl_delta_invalidated_count(d, src, &n, &err), 0);
    return n;
}

static void
invalidate(struct sl_delta *d, const char *src)
{
    struct sl_err err;

    sl_err_clear(&err);
    assert_int_equal(sl_delta_invalidate(d, src, &err), 0);
}

/* What the obsolete scans of a run reported. */
struct seen {
    char ids[16][600];
    char cids[16][64]; /* "" when not an element */
    int compound[16];
    size_t n;
};

static int
on_obsolete(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    struct seen *s = ctx;
    size_t i = 0;

    for (i = 0; i < n && s->n < 16; i++, s->n++) {
        (void)snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", e[i].id);
        (void)snprintf(s->cids[s->n],
                       sizeof(s->cids[0]),
                       "%s",
                       e[i].compound_id ? e[i].compound_id : "");
        s->compound[s->n] = e[i].is_compound;
    }
    return 0;
}

/* The index of @id in what a scan reported, or -1. */
static int
seen_at(const struct seen *s, const char *id)
{
    size_t i = 0;

    for (i = 0; i < s->n; i++) {
        if (strcmp(s->ids[i], id) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------------
 * Tests
 * --------------------------------------------------------------------- */

/* Every check answers CHANGED until a push stores the hash again; the
 * other source stays UPTODATE; was-pushed says no. */
static void
test_invalidate_makes_changed(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec r = rec("/a.txt", NULL, "h1", 0);
    struct sl_err err;
    int pushed = 1;

    mark1(f->d, SRC, 1, "/a.txt", NULL, "h1", 0);
    mark1(f->d, SRC, 1, "/b.txt", NULL, "h2", 0);
    mark1(f->d, "other", 1, "/a.txt", NULL, "h1", 0);
    assert_int_equal(invalidated(f->d, SRC), 0);
    invalidate(f->d, SRC);
    assert_int_equal(count(f->d, SRC), 2);
    assert_int_equal(invalidated(f->d, SRC), 2);
    assert_int_equal(invalidated(f->d, "other"), 0);
    /* The run that visited it asks again (a retried push task). */
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 1, &r, &pushed, NULL, &err), 0);
    assert_int_equal(pushed, 0);
    assert_int_equal(check1(f->d, SRC, 2, "/a.txt", NULL, "h1"),
                     SL_DELTA_CHANGED);
    /* A check does not store anything: still CHANGED. */
    assert_int_equal(check1(f->d, SRC, 2, "/a.txt", NULL, "h1"),
                     SL_DELTA_CHANGED);
    assert_int_equal(check1(f->d, "other", 2, "/a.txt", NULL, "h1"),
                     SL_DELTA_UPTODATE);
    mark1(f->d, SRC, 2, "/a.txt", NULL, "h1", 0);
    assert_int_equal(invalidated(f->d, SRC), 1);
    assert_int_equal(check1(f->d, SRC, 3, "/a.txt", NULL, "h1"),
                     SL_DELTA_UPTODATE);
    /* A record without a hash is still not looked up. */
    assert_int_equal(check1(f->d, SRC, 3, "/b.txt", NULL, ""), SL_DELTA_NOHASH);
    assert_int_equal(sl_delta_invalidate(f->d, "", &err), SL_EINVAL);
    assert_int_equal(sl_delta_invalidate(f->d, "a/b", &err), SL_EINVAL);
}

/* A re-crawl after invalidating: what it pushes becomes valid, what it
 * does not visit is reported obsolete with its compound flag and link. */
static void
test_invalidate_keeps_obsolete_and_links(void **state)
{
    struct fixture *f = *state;
    struct seen s;

    mark1(f->d, SRC, 1, "/keep.txt", NULL, "k", 0);
    mark1(f->d, SRC, 1, "/gone.txt", NULL, "g", 0);
    mark1(f->d, SRC, 1, "/p.zip!/m1", "/p.zip", "m1", 0);
    mark1(f->d, SRC, 1, "/p.zip!/m2", "/p.zip", "m2", 0);
    mark1(f->d, SRC, 1, "/p.zip", NULL, "z", 1);
    invalidate(f->d, SRC);
    assert_int_equal(invalidated(f->d, SRC), 5);
    /* Run 2: the compound is CHANGED, so its check marks no element
     * visited; one member is CHANGED (pushed), the other gone with it. */
    assert_int_equal(check1(f->d, SRC, 2, "/p.zip", NULL, "z"),
                     SL_DELTA_CHANGED);
    assert_int_equal(check1(f->d, SRC, 2, "/p.zip!/m1", "/p.zip", "m1"),
                     SL_DELTA_CHANGED);
    assert_int_equal(check1(f->d, SRC, 2, "/keep.txt", NULL, "k"),
                     SL_DELTA_CHANGED);
    mark1(f->d, SRC, 2, "/p.zip!/m1", "/p.zip", "m1", 0);
    mark1(f->d, SRC, 2, "/p.zip", NULL, "z", 1);
    mark1(f->d, SRC, 2, "/keep.txt", NULL, "k", 0);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 2, on_obsolete, &s), 2);
    assert_int_equal(s.n, 2);
    assert_true(seen_at(&s, "/gone.txt") >= 0);
    assert_string_equal(s.cids[seen_at(&s, "/p.zip!/m2")], "/p.zip");
    assert_int_equal(count(f->d, SRC), 3);
    assert_int_equal(invalidated(f->d, SRC), 0);
    /* Run 3: the compound is UPTODATE and marks its remaining element
     * through the compound index (the link survived): nothing obsolete. */
    assert_int_equal(check1(f->d, SRC, 3, "/p.zip", NULL, "z"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, 3, "/keep.txt", NULL, "k"),
                     SL_DELTA_UPTODATE);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 3, on_obsolete, &s), 0);
}

/* An invalidated compound that the next run does not find: its entry
 * and its elements are obsolete, the compound flag kept. */
static void
test_invalidate_compound_obsolete(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    int i = 0;

    mark1(f->d, SRC, 1, "/p.zip!/m1", "/p.zip", "m1", 0);
    mark1(f->d, SRC, 1, "/p.zip", NULL, "z", 1);
    invalidate(f->d, SRC);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 2, on_obsolete, &s), 2);
    i = seen_at(&s, "/p.zip");
    assert_true(i >= 0);
    assert_int_equal(s.compound[i], 1);
    i = seen_at(&s, "/p.zip!/m1");
    assert_true(i >= 0);
    assert_string_equal(s.cids[i], "/p.zip");
    assert_int_equal(s.compound[i], 0);
    assert_int_equal(count(f->d, SRC), 0);
}

/* 25,000 entries (three transactions in their shard) and a long id;
 * a second call rewrites nothing; NULL invalidates every source. */
static void
test_invalidate_large_long_and_all(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec *recs = sl_calloc(25000, sizeof(*recs));
    char(*ids)[32] = sl_calloc(25000, sizeof(*ids));
    char longid[600];
    struct sl_err err;
    struct seen s;
    size_t i = 0;

    for (i = 0; i < 25000; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "/big.zip/%zu", i);
        recs[i] = rec(ids[i], "/big.zip", "h", 0);
    }
    assert_int_equal(sl_delta_mark_updated(f->d, SRC, 1, recs, 25000, &err), 0);
    memset(longid, 'x', sizeof(longid) - 1);
    longid[0] = '/';
    longid[sizeof(longid) - 1] = '\0';
    mark1(f->d, SRC, 1, longid, NULL, "long", 0);
    mark1(f->d, "web", 1, "http://a/", NULL, "w", 0);
    invalidate(f->d, SRC);
    assert_int_equal(invalidated(f->d, SRC), 25001);
    assert_int_equal(invalidated(f->d, "web"), 0);
    invalidate(f->d, SRC);
    assert_int_equal(invalidated(f->d, SRC), 25001);
    assert_int_equal(count(f->d, SRC), 25001);
    assert_int_equal(check1(f->d, SRC, 2, longid, NULL, "long"),
                     SL_DELTA_CHANGED);
    for (i = 0; i < 25000; i += 997) {
        assert_int_equal(check1(f->d, SRC, 2, ids[i], "/big.zip", "h"),
                         SL_DELTA_CHANGED);
    }
    invalidate(f->d, NULL);
    assert_int_equal(invalidated(f->d, "web"), 1);
    assert_int_equal(check1(f->d, "web", 2, "http://a/", NULL, "w"),
                     SL_DELTA_CHANGED);
    /* A long id (hashed key, the id in the value) keeps its full id. */
    mark1(f->d, "lng", 1, longid, NULL, "long", 0);
    invalidate(f->d, "lng");
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, "lng", 2, on_obsolete, &s), 1);
    assert_true(seen_at(&s, longid) >= 0);
    sl_free(ids);
    sl_free(recs);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_invalidate_makes_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_invalidate_keeps_obsolete_and_links, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_invalidate_compound_obsolete, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_invalidate_large_long_and_all, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
