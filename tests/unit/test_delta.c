/*
 * Unit tests for the delta service: the strategy table, the shard function
 * (literal values, so a change of the function breaks the test), check
 * states, visited marking, compounds and their elements (nested too),
 * records without hash, source isolation, the obsolete scan (streaming,
 * removal, entries visited meanwhile, callback errors), clear, count,
 * sources, run sequences, reopening with another shard count, long ids and
 * a full map.
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

/* ------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------- */

static int
setup(void **state)
{
    return delta_setup(state, "delta-", 1);
}

struct seen {
    char ids[64][128]; /* reported ids, in order */
    size_t n;
    size_t calls;
    size_t max_batch;
    int fail_with;      /* returned by the callback when non-zero */
    struct sl_delta *d; /* visit "keep" ids meanwhile when set */
    uint64_t seq;
    size_t total;            /* entries reported */
    const char *expect_long; /* an id longer than ids[] can hold */
    int long_ok;             /* expect_long was reported in full */
};

static int
on_obsolete(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    struct seen *s = ctx;
    size_t i = 0;

    s->calls++;
    s->max_batch = n > s->max_batch ? n : s->max_batch;
    s->total += n;
    for (i = 0; i < n; i++) {
        if (s->expect_long != NULL && strcmp(e[i].id, s->expect_long) == 0) {
            s->long_ok = 1;
        }
        if (s->n < 64) {
            (void)snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", e[i].id);
            s->n++;
        }
        if (s->d != NULL && strncmp(e[i].id, "keep", 4) == 0) {
            mark1(s->d, SRC, s->seq, e[i].id, NULL, "h1", 0);
        }
    }
    return s->fail_with;
}

static int
seen_has(const struct seen *s, const char *id)
{
    size_t i = 0;

    for (i = 0; i < s->n; i++) {
        if (strcmp(s->ids[i], id) == 0) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Strategies and shards
 * --------------------------------------------------------------------- */

static void
test_delta_strategy_table(void **state)
{
    static const struct {
        const char *name;
        enum sl_delta_strategy s;
        int reads, writes, deletes;
    } rows[] = {
        {"disabled", SL_DELTA_STRATEGY_DISABLED, 0, 0, 0},
        {"initial", SL_DELTA_STRATEGY_INITIAL, 0, 1, 0},
        {"additive", SL_DELTA_STRATEGY_ADDITIVE, 1, 1, 0},
        {"full", SL_DELTA_STRATEGY_FULL, 1, 1, 1},
    };
    static const char *const bad[] = {"none", "FULL", "", "full ", "delta"};
    enum sl_delta_strategy s = SL_DELTA_STRATEGY_DISABLED;
    struct sl_err err;
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(sl_delta_strategy_parse(rows[i].name, &s, &err), 0);
        assert_int_equal(s, rows[i].s);
        assert_string_equal(sl_delta_strategy_name(s), rows[i].name);
        assert_int_equal(sl_delta_strategy_reads(s), rows[i].reads);
        assert_int_equal(sl_delta_strategy_writes(s), rows[i].writes);
        assert_int_equal(sl_delta_strategy_deletes(s), rows[i].deletes);
    }
    assert_int_equal(sl_delta_strategy_parse(NULL, &s, &err), 0);
    assert_int_equal(s, SL_DELTA_STRATEGY_FULL);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sl_delta_strategy_parse(bad[i], &s, &err), SL_EINVAL);
        assert_string_equal(err.field, "deltaImportStrategy");
    }
}

static void
test_delta_shard_stability(void **state)
{
    /* zlib crc32 % 16 (and % 256); never change these numbers. */
    static const struct {
        const char *id;
        unsigned s16;
        unsigned s256;
    } rows[] = {
        {"a", 3, 67},
        {"record-42", 10, 234},
        {"/data/archive.zip", 9, 41},
        {"/data/archive.zip/inner/doc.txt", 2, 50},
        {"file:///data/docs/report.pdf", 10, 186},
        {"http://example.com/", 9, 201},
        {"https://www.eclipse.org/smila/", 7, 231},
        {"\xc3\xbc"
         "ber/gr\xc3\xb6\xc3\x9f"
         "e.txt",
         14,
         222},
    };
    struct fixture *f = *state;
    size_t i = 0;

    assert_int_equal(sl_delta_shards(f->d), 16);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(sl_delta_shard_of(f->d, rows[i].id), rows[i].s16);
        assert_int_equal(sl_delta_shard_for(16, rows[i].id), rows[i].s16);
        assert_int_equal(sl_delta_shard_for(256, rows[i].id), rows[i].s256);
    }
}

/* ------------------------------------------------------------------------
 * Check, mark, visited
 * --------------------------------------------------------------------- */

static void
test_delta_check_states(void **state)
{
    struct fixture *f = *state;
    char longhash[SL_DELTA_HASH_MAX + 2];
    struct sl_delta_rec recs[6];
    struct sl_err err;
    uint64_t seq = 0;

    memset(longhash, 'h', sizeof(longhash) - 1);
    longhash[sizeof(longhash) - 1] = '\0';
    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq, &err), 0);
    assert_int_equal(seq, 1);
    recs[0] = rec("doc1", NULL, "h1", 0);
    recs[1] = rec("doc2", NULL, "h2", 0);
    recs[2] = rec("nohash", NULL, NULL, 0);
    recs[3] = rec("emptyhash", NULL, "", 0);
    recs[4] = rec("", NULL, "h", 0);
    recs[5] = rec("big", NULL, longhash, 0);
    assert_int_equal(sl_delta_check(f->d, SRC, seq, recs, 6, &err), 0);
    assert_int_equal(recs[0].result, SL_DELTA_NEW);
    assert_int_equal(recs[1].result, SL_DELTA_NEW);
    assert_int_equal(recs[2].result, SL_DELTA_NOHASH);
    assert_int_equal(recs[3].result, SL_DELTA_NOHASH);
    assert_int_equal(recs[4].result, SL_EINVAL);
    assert_int_equal(recs[5].result, SL_ETOOLARGE);
    assert_int_equal(sl_delta_mark_updated(f->d, SRC, seq, recs, 6, &err), 0);
    assert_int_equal(recs[0].result, 0);
    assert_int_equal(recs[2].result, SL_DELTA_NOHASH);
    assert_int_equal(recs[4].result, SL_EINVAL);
    assert_int_equal(count(f->d, SRC), 2); /* never without hash */

    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq, &err), 0);
    assert_int_equal(seq, 2);
    assert_int_equal(check1(f->d, SRC, seq, "doc1", NULL, "h1"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, seq, "doc1", NULL, "h1"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, seq, "doc2", NULL, "h2b"),
                     SL_DELTA_CHANGED);
    assert_int_equal(check1(f->d, SRC, seq, "doc3", NULL, "h3"), SL_DELTA_NEW);

    /* Bad arguments. */
    assert_int_equal(sl_delta_check(f->d, SRC, 0, recs, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_check(f->d, "", 1, recs, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_check(f->d, NULL, 1, recs, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_check(f->d, SRC, seq, recs, 0, &err), 0);
}

static void
test_delta_visited_and_scan(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec recs[4];
    struct seen s;
    struct sl_err err;
    uint64_t seq1 = 0;
    uint64_t seq2 = 0;

    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq1, &err), 0);
    recs[0] = rec("a", NULL, "1", 0);
    recs[1] = rec("b", NULL, "1", 0);
    recs[2] = rec("c", NULL, "1", 0);
    recs[3] = rec("d", NULL, "1", 0);
    assert_int_equal(sl_delta_mark_updated(f->d, SRC, seq1, recs, 4, &err), 0);
    /* Nothing is obsolete in the run that wrote everything. */
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, seq1, on_obsolete, &s), 0);
    assert_int_equal(s.n, 0);

    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq2, &err), 0);
    assert_int_equal(check1(f->d, SRC, seq2, "a", NULL, "1"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, seq2, "b", NULL, "2"), SL_DELTA_CHANGED);
    mark1(f->d, SRC, seq2, "b", NULL, "2", 0);
    /* c and d were not visited; b changed and was pushed. */
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, seq2, on_obsolete, &s), 2);
    assert_int_equal(s.n, 2);
    assert_true(seen_has(&s, "c"));
    assert_true(seen_has(&s, "d"));
    assert_int_equal(count(f->d, SRC), 2);
    assert_int_equal(check1(f->d, SRC, seq2, "c", NULL, "1"), SL_DELTA_NEW);
    assert_int_equal(check1(f->d, SRC, seq2, "b", NULL, "2"),
                     SL_DELTA_UPTODATE);
}

static void
test_delta_was_pushed(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec r = rec("/z.zip/e", "/z.zip", "h", 0);
    struct sl_err err;
    int pushed = -1;
    int known = -1;

    mark1(f->d, SRC, 3, r.id, r.compound_id, r.hash, 0);
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 3, &r, &pushed, NULL, &err), 0);
    assert_int_equal(pushed, 1);
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 4, &r, &pushed, &known, &err), 0);
    assert_int_equal(pushed, 0);
    assert_int_equal(known, 1); /* an entry: pushing it is an update */
    r.hash = "other";
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 3, &r, &pushed, NULL, &err), 0);
    assert_int_equal(pushed, 0);
    r.hash = NULL;
    pushed = -1;
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 3, &r, &pushed, NULL, &err), 0);
    assert_int_equal(pushed, 0);
    r = rec("unknown", NULL, "h", 0);
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, SRC, 3, &r, &pushed, &known, &err), 0);
    assert_int_equal(pushed, 0);
    assert_int_equal(known, 0); /* no entry: a new document */
    r = rec("x", NULL, "h", 0);
    assert_int_equal(
        sl_delta_was_pushed_in_run(f->d, "other", 3, &r, &pushed, NULL, &err),
        0);
    assert_int_equal(pushed, 0);
}

/* ------------------------------------------------------------------------
 * Compounds
 * --------------------------------------------------------------------- */

static void
test_delta_compound_marks_elements(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec r;
    struct seen s;
    struct sl_err err;
    uint64_t per_shard[16];
    unsigned cs = 0;

    /* Run 1: a compound, three elements, a nested compound with two
     * elements of its own, and a plain file. */
    mark1(f->d, SRC, 1, "/c.zip", NULL, "c1", 1);
    mark1(f->d, SRC, 1, "/c.zip/a", "/c.zip", "e", 0);
    mark1(f->d, SRC, 1, "/c.zip/b", "/c.zip", "e", 0);
    mark1(f->d, SRC, 1, "/c.zip/c", "/c.zip", "e", 0);
    mark1(f->d, SRC, 1, "/c.zip/n.zip", "/c.zip", "n1", 1);
    mark1(f->d, SRC, 1, "/c.zip/n.zip/x", "/c.zip/n.zip", "e", 0);
    mark1(f->d, SRC, 1, "/c.zip/n.zip/y", "/c.zip/n.zip", "e", 0);
    mark1(f->d, SRC, 1, "/plain", NULL, "p", 0);
    assert_int_equal(count(f->d, SRC), 8);
    /* A compound and its elements share the compound's shard. */
    cs = sl_delta_shard_of(f->d, "/c.zip");
    assert_int_equal(sl_delta_count(f->d, SRC, NULL, per_shard, &err), 0);
    assert_true(per_shard[cs] >= 5);

    /* Run 2: the compound is unchanged (the flag comes from the entry). */
    r = rec("/c.zip", NULL, "c1", 0);
    assert_int_equal(sl_delta_check(f->d, SRC, 2, &r, 1, &err), 0);
    assert_int_equal(r.result, SL_DELTA_UPTODATE);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 2, on_obsolete, &s), 1);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.ids[0], "/plain");

    /* Run 3: the compound changed; elements are not marked by it, the
     * extractor checks them one by one. */
    r = rec("/c.zip", NULL, "c2", 1);
    assert_int_equal(sl_delta_check(f->d, SRC, 3, &r, 1, &err), 0);
    assert_int_equal(r.result, SL_DELTA_CHANGED);
    mark1(f->d, SRC, 3, "/c.zip", NULL, "c2", 1);
    r = rec("/c.zip/a", "/c.zip", "e", 0);
    assert_int_equal(sl_delta_check(f->d, SRC, 3, &r, 1, &err), 0);
    assert_int_equal(r.result, SL_DELTA_UPTODATE);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 3, on_obsolete, &s), 5);
    assert_true(seen_has(&s, "/c.zip/b"));
    assert_true(seen_has(&s, "/c.zip/n.zip"));
    assert_true(seen_has(&s, "/c.zip/n.zip/y"));
    assert_int_equal(count(f->d, SRC), 2);

    /* Run 4: the removed elements left no index entries behind: an
     * unchanged compound marks only what is left. */
    r = rec("/c.zip", NULL, "c2", 1);
    assert_int_equal(sl_delta_check(f->d, SRC, 4, &r, 1, &err), 0);
    assert_int_equal(r.result, SL_DELTA_UPTODATE);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 4, on_obsolete, &s), 0);
}

static void
test_delta_long_ids(void **state)
{
    struct fixture *f = *state;
    char longid[3000];
    char elem[3100];
    struct sl_delta_rec r;
    struct seen s;
    struct sl_err err;

    memset(longid, 'L', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    (void)snprintf(elem, sizeof(elem), "%s/inner", longid);
    mark1(f->d, SRC, 1, longid, NULL, "h", 1);
    mark1(f->d, SRC, 1, elem, longid, "h", 0);
    /* Same prefix, different id: its own entry. */
    longid[2990] = 'M';
    mark1(f->d, SRC, 1, longid, NULL, "h", 0);
    assert_int_equal(count(f->d, SRC), 3);
    longid[2990] = 'L';
    r = rec(longid, NULL, "h", 0);
    assert_int_equal(sl_delta_check(f->d, SRC, 2, &r, 1, &err), 0);
    assert_int_equal(r.result, SL_DELTA_UPTODATE);
    /* The element was marked by its compound; the 'M' id is obsolete and
     * is reported with its full id. */
    memset(&s, 0, sizeof(s));
    longid[2990] = 'M';
    s.expect_long = longid;
    assert_int_equal(scan_all(f->d, SRC, 2, on_obsolete, &s), 1);
    assert_int_equal(s.total, 1);
    assert_true(s.long_ok);
}

/* ------------------------------------------------------------------------
 * Obsolete scan
 * --------------------------------------------------------------------- */

static void
test_delta_scan_streams_in_batches(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec *recs = sl_calloc(3000, sizeof(*recs));
    char(*ids)[32] = sl_calloc(3000, sizeof(*ids));
    uint64_t per_shard[16];
    uint64_t removed = 0;
    struct seen s;
    struct sl_err err;
    size_t i = 0;

    for (i = 0; i < 3000; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "doc-%05zu", i);
        recs[i] = rec(ids[i], NULL, "h", 0);
    }
    assert_int_equal(sl_delta_mark_updated(f->d, SRC, 1, recs, 3000, &err), 0);
    assert_int_equal(sl_delta_count(f->d, SRC, NULL, per_shard, &err), 0);
    assert_true(per_shard[5] > 100);
    memset(&s, 0, sizeof(s));
    assert_int_equal(sl_delta_obsolete_scan(
                         f->d, SRC, 2, 5, 50, on_obsolete, &s, &removed, &err),
                     0);
    assert_int_equal(removed, per_shard[5]);
    assert_int_equal(s.total, per_shard[5]);
    assert_int_equal(s.max_batch, 50);
    assert_int_equal(s.calls, (per_shard[5] + 49) / 50);
    assert_int_equal(count(f->d, SRC), 3000 - per_shard[5]);
    /* Other shards untouched; a second scan finds nothing. */
    memset(&s, 0, sizeof(s));
    assert_int_equal(sl_delta_obsolete_scan(
                         f->d, SRC, 2, 5, 0, on_obsolete, &s, &removed, &err),
                     0);
    assert_int_equal(s.calls, 0);
    assert_int_equal(removed, 0);
    assert_int_equal(sl_delta_obsolete_scan(
                         f->d, SRC, 2, 16, 0, on_obsolete, &s, NULL, &err),
                     SL_EINVAL);
    assert_int_equal(
        sl_delta_obsolete_scan(f->d, SRC, 0, 1, 0, on_obsolete, &s, NULL, &err),
        SL_EINVAL);
    sl_free(ids);
    sl_free(recs);
}

static void
test_delta_scan_keeps_visited_meanwhile(void **state)
{
    struct fixture *f = *state;
    static const char *const ids[] = {"keep-1", "gone-1", "keep-2", "gone-2"};
    struct seen s;
    struct sl_err err;
    uint64_t removed = 0;
    unsigned shard = 0;
    size_t i = 0;

    for (i = 0; i < 4; i++) {
        mark1(f->d, SRC, 1, ids[i], NULL, "h1", 0);
    }
    /* The callback visits the "keep" ids (a concurrent check) before
     * confirming: they must survive. */
    memset(&s, 0, sizeof(s));
    s.d = f->d;
    s.seq = 2;
    assert_int_equal(scan_all(f->d, SRC, 2, on_obsolete, &s), 2);
    assert_int_equal(s.n, 4);
    assert_int_equal(count(f->d, SRC), 2);
    assert_int_equal(check1(f->d, SRC, 2, "keep-1", NULL, "h1"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, SRC, 2, "gone-1", NULL, "h1"), SL_DELTA_NEW);

    /* A failing callback stops the scan and removes nothing. */
    memset(&s, 0, sizeof(s));
    s.fail_with = SL_EUPSTREAM;
    shard = sl_delta_shard_of(f->d, "keep-1");
    assert_int_equal(
        sl_delta_obsolete_scan(
            f->d, SRC, 3, shard, 0, on_obsolete, &s, &removed, &err),
        SL_EUPSTREAM);
    assert_int_equal(removed, 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(count(f->d, SRC), 2);
}

/* ------------------------------------------------------------------------
 * Sources, clear, count, runs, reopen, limits
 * --------------------------------------------------------------------- */

struct names {
    char v[8][32];
    size_t n;
    int stop_after; /* return 1 after this many when > 0 */
};

static int
on_source(void *ctx, const char *source)
{
    struct names *ns = ctx;

    (void)snprintf(ns->v[ns->n], sizeof(ns->v[0]), "%s", source);
    ns->n++;
    return ns->stop_after > 0 && (int)ns->n >= ns->stop_after ? 1 : 0;
}

static void
test_delta_sources_isolated(void **state)
{
    struct fixture *f = *state;
    struct names ns;
    struct seen s;
    struct sl_err err;

    mark1(f->d, "web", 1, "id", NULL, "w", 0);
    mark1(f->d, "files", 1, "id", NULL, "f", 0);
    mark1(f->d, "files", 1, "id2", NULL, "f", 0);
    mark1(f->d, "a", 1, "z", NULL, "a", 0);
    mark1(f->d, "files-2", 1, "id", NULL, "x", 0);
    assert_int_equal(check1(f->d, "web", 2, "id", NULL, "w"),
                     SL_DELTA_UPTODATE);
    assert_int_equal(check1(f->d, "files", 2, "id", NULL, "w"),
                     SL_DELTA_CHANGED);
    assert_int_equal(check1(f->d, "none", 2, "id", NULL, "w"), SL_DELTA_NEW);

    memset(&ns, 0, sizeof(ns));
    assert_int_equal(sl_delta_sources(f->d, on_source, &ns, &err), 0);
    assert_int_equal(ns.n, 4);
    assert_string_equal(ns.v[0], "a");
    assert_string_equal(ns.v[1], "files");
    assert_string_equal(ns.v[2], "files-2");
    assert_string_equal(ns.v[3], "web");
    memset(&ns, 0, sizeof(ns));
    ns.stop_after = 2;
    assert_int_equal(sl_delta_sources(f->d, on_source, &ns, &err), 1);
    assert_int_equal(ns.n, 2);

    /* web was visited in run 2, files not: the scan of files leaves web. */
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, "files", 2, on_obsolete, &s), 2);
    assert_int_equal(count(f->d, "files"), 0);
    assert_int_equal(count(f->d, "web"), 1);
    assert_int_equal(count(f->d, "files-2"), 1);

    assert_int_equal(sl_delta_clear(f->d, "web", &err), 0);
    assert_int_equal(count(f->d, "web"), 0);
    assert_int_equal(count(f->d, "a"), 1);
    assert_int_equal(sl_delta_clear_all(f->d, &err), 0);
    assert_int_equal(count(f->d, "a"), 0);
    assert_int_equal(count(f->d, "files-2"), 0);
    memset(&ns, 0, sizeof(ns));
    assert_int_equal(sl_delta_sources(f->d, on_source, &ns, &err), 0);
    assert_int_equal(ns.n, 0);
}

static void
test_delta_clear_large_and_elements(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec *recs = sl_calloc(25000, sizeof(*recs));
    char(*ids)[32] = sl_calloc(25000, sizeof(*ids));
    uint64_t per_shard[16];
    uint64_t sum = 0;
    struct seen s;
    struct sl_err err;
    size_t i = 0;

    for (i = 0; i < 25000; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "/big.zip/%zu", i);
        recs[i] = rec(ids[i], "/big.zip", "h", 0);
    }
    assert_int_equal(sl_delta_mark_updated(f->d, SRC, 1, recs, 25000, &err), 0);
    mark1(f->d, SRC, 1, "/big.zip", NULL, "z", 1);
    assert_int_equal(sl_delta_count(f->d, SRC, &sum, per_shard, &err), 0);
    assert_int_equal(sum, 25001);
    assert_int_equal(per_shard[sl_delta_shard_of(f->d, "/big.zip")], 25001);
    assert_int_equal(sl_delta_clear(f->d, SRC, &err), 0);
    assert_int_equal(count(f->d, SRC), 0);
    /* The compound index was cleared too: nothing comes back. */
    mark1(f->d, SRC, 2, "/big.zip", NULL, "z", 1);
    assert_int_equal(check1(f->d, SRC, 3, "/big.zip", NULL, "z"),
                     SL_DELTA_UPTODATE);
    memset(&s, 0, sizeof(s));
    assert_int_equal(scan_all(f->d, SRC, 3, on_obsolete, &s), 0);
    assert_int_equal(count(f->d, SRC), 1);
    sl_free(ids);
    sl_free(recs);
}

static void
test_delta_runs_and_reopen(void **state)
{
    struct fixture *f = *state;
    struct sl_delta *d2 = NULL;
    struct sl_err err;
    uint64_t seq = 0;

    assert_int_equal(sl_delta_run_current(f->d, "web", &seq, &err), 0);
    assert_int_equal(seq, 0);
    assert_int_equal(sl_delta_run_begin(f->d, "web", &seq, &err), 0);
    assert_int_equal(seq, 1);
    assert_int_equal(sl_delta_run_begin(f->d, "web", &seq, &err), 0);
    assert_int_equal(seq, 2);
    assert_int_equal(sl_delta_run_begin(f->d, "files", &seq, &err), 0);
    assert_int_equal(seq, 1);
    assert_int_equal(sl_delta_run_begin(f->d, "", &seq, &err), SL_EINVAL);
    mark1(f->d, "web", 2, "page", NULL, "h", 0);
    sl_delta_close(f->d);
    f->d = NULL;

    assert_int_equal(
        sl_delta_open(f->path, 8, SL_DURABILITY_FSYNC, 0, &d2, &err),
        SL_ECONFLICT);
    assert_null(d2);
    assert_non_null(strstr(err.message, "16 shards"));
    assert_int_equal(
        sl_delta_open(f->path, 1000, SL_DURABILITY_FSYNC, 0, &d2, &err),
        SL_EINVAL);
    assert_int_equal(
        sl_delta_open(f->path, 16, SL_DURABILITY_FSYNC, 0, &f->d, &err), 0);
    assert_int_equal(sl_delta_run_current(f->d, "web", &seq, &err), 0);
    assert_int_equal(seq, 2);
    assert_int_equal(sl_delta_run_begin(f->d, "web", &seq, &err), 0);
    assert_int_equal(seq, 3);
    assert_int_equal(check1(f->d, "web", seq, "page", NULL, "h"),
                     SL_DELTA_UPTODATE);
    /* fsync mode writes the same way. */
    mark1(f->d, "web", seq, "page2", NULL, "h", 0);
    assert_int_equal(count(f->d, "web"), 2);
}

static void
test_delta_new_service_shard_count(void **state)
{
    struct fixture *f = *state;
    struct sl_delta *d = NULL;
    struct sl_err err;
    char *path = sl_asprintf("%s/four", f->dir);

    assert_int_equal(sl_delta_open(path, 4, SL_DURABILITY_PROCESS, 0, &d, &err),
                     0);
    assert_int_equal(sl_delta_shards(d), 4);
    assert_int_equal(sl_delta_shard_of(d, "record-42"), 2); /* crc32 % 4 */
    sl_delta_close(d);
    assert_int_equal(sl_delta_open(path, 0, SL_DURABILITY_PROCESS, 0, &d, &err),
                     0);
    assert_int_equal(sl_delta_shards(d), 4);
    sl_delta_close(d);
    sl_free(path);
}

static void
test_delta_map_full_is_an_error(void **state)
{
    struct fixture *f = *state;
    struct sl_delta *d = NULL;
    struct sl_delta_rec recs[500];
    char ids[500][32];
    struct sl_err err;
    char *path = sl_asprintf("%s/small", f->dir);
    int rc = 0;
    int round = 0;
    size_t i = 0;

    assert_int_equal(
        sl_delta_open(path, 1, SL_DURABILITY_PROCESS, 1 << 20, &d, &err), 0);
    for (round = 0; round < 100 && rc == 0; round++) {
        for (i = 0; i < 500; i++) {
            (void)snprintf(ids[i], sizeof(ids[i]), "r%03d-%05zu", round, i);
            recs[i] = rec(ids[i], NULL, "0123456789abcdef0123456789", 0);
        }
        rc = sl_delta_mark_updated(d, SRC, 1, recs, 500, &err);
    }
    assert_int_equal(rc, SL_ENOSPC);
    assert_non_null(strstr(err.message, "deltaMapSize"));
    /* The service stays usable for reads. */
    assert_int_equal(check1(d, SRC, 2, "r000-00001", NULL, "x"),
                     SL_DELTA_CHANGED);
    sl_delta_close(d);
    /* A larger map size grows the shard. */
    assert_int_equal(
        sl_delta_open(path, 1, SL_DURABILITY_PROCESS, 8 << 20, &d, &err), 0);
    assert_int_equal(sl_delta_mark_updated(d, SRC, 1, recs, 500, &err), 0);
    sl_delta_close(d);
    sl_free(path);
}

/* Purge marks: listed in byte order, kept across a reopen, removed. */
struct purges {
    char names[4][32];
    size_t n;
    struct sl_delta *d; /* unmark each one listed when set */
};

static int
on_purge(void *ctx, const char *source)
{
    struct purges *p = ctx;
    struct sl_err err;

    if (p->n < 4) {
        (void)snprintf(p->names[p->n], sizeof(p->names[0]), "%s", source);
        p->n++;
    }
    if (p->d != NULL) {
        assert_int_equal(sl_delta_purge_mark(p->d, source, 0, &err), 0);
    }
    return 0;
}

static void
test_delta_purge_marks(void **state)
{
    struct fixture *f = *state;
    struct purges p;
    struct sl_err err;

    memset(&p, 0, sizeof(p));
    assert_int_equal(sl_delta_purges_pending(f->d, on_purge, &p, &err), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(sl_delta_purge_mark(f->d, "web", 1, &err), 0);
    assert_int_equal(sl_delta_purge_mark(f->d, "files", 1, &err), 0);
    assert_int_equal(sl_delta_purge_mark(f->d, "files", 1, &err), 0);
    assert_int_equal(sl_delta_purge_mark(f->d, "", 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_purge_mark(f->d, "nothing", 0, &err), 0);
    /* marks left in place: each listed once, then the end */
    assert_int_equal(sl_delta_purges_pending(f->d, on_purge, &p, &err), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.names[0], "files");
    assert_string_equal(p.names[1], "web");
    assert_int_equal(sl_delta_purge_is_marked(f->d, "web"), 1);
    assert_int_equal(sl_delta_purge_is_marked(f->d, "nothing"), 0);
    assert_int_equal(sl_delta_purge_is_marked(f->d, ""), 0);
    memset(&p, 0, sizeof(p));
    sl_delta_close(f->d);
    f->d = NULL;
    assert_int_equal(
        sl_delta_open(f->path, 16, SL_DURABILITY_FSYNC, 0, &f->d, &err), 0);
    p.d = f->d; /* unmarking while listing */
    assert_int_equal(sl_delta_purges_pending(f->d, on_purge, &p, &err), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.names[0], "files");
    assert_string_equal(p.names[1], "web");
    memset(&p, 0, sizeof(p));
    assert_int_equal(sl_delta_purges_pending(f->d, on_purge, &p, &err), 0);
    assert_int_equal(p.n, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_strategy_table),
        cmocka_unit_test_setup_teardown(
            test_delta_shard_stability, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_check_states, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_visited_and_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delta_was_pushed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_compound_marks_elements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delta_long_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_scan_streams_in_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_scan_keeps_visited_meanwhile, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_sources_isolated, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_clear_large_and_elements, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_runs_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_new_service_shard_count, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_map_full_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_purge_marks, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
