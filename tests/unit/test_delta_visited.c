/*
 * Unit tests for the visited links of the delta service (sl_delta_visit
 * and sl_delta_visited_*): first and duplicate visits in one batch, across
 * batches and across runs, refused links, long URLs, per-source isolation
 * (also from the delta entries), counts per shard, the source list,
 * clearing one source or all, reopening, a store made before the
 * "visited" database existed, one sync per shard transaction in fsync
 * mode (mdb_env_sync is wrapped with -Wl,--wrap) and two threads racing
 * over the same 10,000 URLs.
 *
 * Each test gets a fresh directory made with mkdtemp under $TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>
#include <lmdb.h>

#include "deltaservice/deltaservice.h"
#include "delta_fixture.h"

#define SRC "web"

/* ------------------------------------------------------------------------
 * mdb_env_sync, counted (linked with -Wl,--wrap=mdb_env_sync)
 * --------------------------------------------------------------------- */

static atomic_ulong syncs;

int __real_mdb_env_sync(MDB_env *env, int force);
int __wrap_mdb_env_sync(MDB_env *env, int force);

int
__wrap_mdb_env_sync(MDB_env *env, int force)
{
    atomic_fetch_add(&syncs, 1);
    return __real_mdb_env_sync(env, force);
}

/* ------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------- */

static struct sl_delta *
open_delta(const char *path, enum sl_durability durability)
{
    struct sl_delta *d = NULL;
    struct sl_err err;

    if (sl_delta_open(path, 0, durability, 0, &d, &err) != 0) {
        fail_msg("open: %s", err.message);
    }
    return d;
}

static int
setup(void **state)
{
    return delta_setup(state, "delta-visited-", 1);
}

/* Visit one URL; returns first (the call must succeed). */
static int
visit1(struct sl_delta *d, const char *src, uint64_t seq, const char *url)
{
    struct sl_delta_link l = {url, -1, -1};
    struct sl_err err;

    assert_int_equal(sl_delta_visit(d, src, seq, 0, &l, 1, &err), 0);
    assert_int_equal(l.result, 0);
    return l.first;
}

static uint64_t
vcount(struct sl_delta *d, const char *src)
{
    uint64_t n = 0;
    struct sl_err err;

    assert_int_equal(sl_delta_visited_count(d, src, &n, NULL, &err), 0);
    return n;
}

struct names {
    char v[8][32];
    size_t n;
};

static int
on_source(void *ctx, const char *source)
{
    struct names *ns = ctx;

    assert_true(ns->n < 8);
    (void)snprintf(ns->v[ns->n++], sizeof(ns->v[0]), "%s", source);
    return 0;
}

/* ------------------------------------------------------------------------
 * Tests
 * --------------------------------------------------------------------- */

static void
test_visited_batch_duplicates(void **state)
{
    struct fixture *f = *state;
    char *huge = sl_malloc(SL_DELTA_ID_MAX + 2);
    struct sl_delta_link links[7] = {
        {"http://a.example/", -1, -1},
        {"http://b.example/", -1, -1},
        {"http://a.example/", -1, -1},
        {"", -1, -1},
        {NULL, -1, -1},
        {huge, -1, -1},
        {"http://b.example/", -1, -1},
    };
    struct sl_err err;

    memset(huge, 'x', SL_DELTA_ID_MAX + 1);
    huge[SL_DELTA_ID_MAX + 1] = '\0';
    assert_int_equal(sl_delta_visit(f->d, SRC, 1, 0, links, 7, &err), 0);
    /* The earlier of two equal URLs in the batch is the first. */
    assert_int_equal(links[0].first, 1);
    assert_int_equal(links[1].first, 1);
    assert_int_equal(links[2].first, 0);
    assert_int_equal(links[6].first, 0);
    assert_int_equal(links[0].result, 0);
    assert_int_equal(links[2].result, 0);
    assert_int_equal(links[3].result, SL_EINVAL);
    assert_int_equal(links[4].result, SL_EINVAL);
    assert_int_equal(links[5].result, SL_ETOOLARGE);
    assert_int_equal(links[3].first, 0);
    assert_int_equal(links[5].first, 0);
    assert_int_equal(vcount(f->d, SRC), 2);
    sl_free(huge);
}

/* Visit one URL for @owner; returns first. */
static int
visit_as(struct sl_delta *d, uint64_t seq, uint64_t owner, const char *url)
{
    struct sl_delta_link l = {url, -1, -1};
    struct sl_err err;

    assert_int_equal(sl_delta_visit(d, SRC, seq, owner, &l, 1, &err), 0);
    assert_int_equal(l.result, 0);
    return l.first;
}

/* Owners: a link marked for owner A is first again for A (a retried task
 * whose first attempt was lost), never for B or for no owner; a new run
 * marks it for its own owner; old 8-byte values (no owner) still read. */
static void
test_visited_owner(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(visit_as(f->d, 1, 0xA, "http://x/o"), 1);
    assert_int_equal(visit_as(f->d, 1, 0xA, "http://x/o"), 1);
    assert_int_equal(visit_as(f->d, 1, 0xB, "http://x/o"), 0);
    assert_int_equal(visit_as(f->d, 1, 0, "http://x/o"), 0);
    assert_int_equal(visit_as(f->d, 2, 0xB, "http://x/o"), 1);
    assert_int_equal(visit_as(f->d, 2, 0xA, "http://x/o"), 0);
    assert_int_equal(visit_as(f->d, 2, 0xB, "http://x/o"), 1);
    /* owner 0 marks are first once */
    assert_int_equal(visit_as(f->d, 2, 0, "http://x/p"), 1);
    assert_int_equal(visit_as(f->d, 2, 0, "http://x/p"), 0);
    assert_int_equal(visit_as(f->d, 2, 0xA, "http://x/p"), 0);
    assert_int_equal(vcount(f->d, SRC), 2);
}

/* The read-only test: first for links no visit of this run (by any owner)
 * or a later one has marked, 0 for the others; it marks nothing (a visit
 * afterwards is still first) and refuses what a visit refuses. */
static void
test_visited_test_readonly(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_link links[6] = {
        {"http://x/a", -1, -1}, /* visited by owner A in run 2 */
        {"http://x/b", -1, -1}, /* never visited */
        {"http://x/c", -1, -1}, /* visited in run 1 only */
        {"http://x/d", -1, -1}, /* visited in run 3 */
        {"", -1, -1},           /* refused */
        {"http://x/a", -1, -1}, /* twice in a batch: the same answer */
    };
    struct sl_err err;

    assert_int_equal(visit_as(f->d, 2, 0xA, "http://x/a"), 1);
    assert_int_equal(visit_as(f->d, 1, 0, "http://x/c"), 1);
    assert_int_equal(visit_as(f->d, 3, 0, "http://x/d"), 1);
    assert_int_equal(sl_delta_visited_test(f->d, SRC, 2, 0, links, 6, &err), 0);
    assert_int_equal(links[0].first, 0);
    assert_int_equal(links[1].first, 1);
    assert_int_equal(links[2].first, 1);
    assert_int_equal(links[3].first, 0);
    assert_int_equal(links[4].first, 0);
    assert_int_equal(links[4].result, SL_EINVAL);
    assert_int_equal(links[5].first, 0);
    assert_int_equal(links[0].result, 0);
    assert_int_equal(links[1].result, 0);
    /* nothing marked: b and c are still first for a visit */
    assert_int_equal(vcount(f->d, SRC), 3);
    assert_int_equal(visit_as(f->d, 2, 0xB, "http://x/b"), 1);
    assert_int_equal(visit_as(f->d, 2, 0xB, "http://x/c"), 1);
    /* the owner that marked a link gets what its visit would get: first
     * (a retried task); another owner and owner 0 do not */
    links[0].first = -1;
    assert_int_equal(sl_delta_visited_test(f->d, SRC, 2, 0, links, 1, &err), 0);
    assert_int_equal(links[0].first, 0);
    links[0].first = -1;
    assert_int_equal(sl_delta_visited_test(f->d, SRC, 2, 0xA, links, 1, &err),
                     0);
    assert_int_equal(links[0].first, 1);
    assert_int_equal(visit_as(f->d, 2, 0xA, "http://x/a"), 1);
    links[0].first = -1;
    assert_int_equal(sl_delta_visited_test(f->d, SRC, 2, 0xB, links, 1, &err),
                     0);
    assert_int_equal(links[0].first, 0);
    assert_int_equal(visit_as(f->d, 2, 0xB, "http://x/a"), 0);
    /* another source and a bad run sequence */
    links[0].first = -1;
    assert_int_equal(sl_delta_visited_test(f->d, "other", 2, 0, links, 1, &err),
                     0);
    assert_int_equal(links[0].first, 1);
    assert_int_equal(sl_delta_visited_test(f->d, SRC, 0, 0, links, 1, &err),
                     SL_EINVAL);
}

static void
test_visited_across_batches_and_runs(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    uint64_t seq = 0;

    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq, &err), 0);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/1"), 1);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/1"), 0);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/2"), 1);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/2"), 0);

    /* The next run visits everything first again, once. */
    assert_int_equal(sl_delta_run_begin(f->d, SRC, &seq, &err), 0);
    assert_int_equal(seq, 2);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/2"), 1);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/2"), 0);
    assert_int_equal(visit1(f->d, SRC, seq, "http://x/1"), 1);
    /* An older run never overrides a newer one's mark. */
    assert_int_equal(visit1(f->d, SRC, 1, "http://x/1"), 0);
    assert_int_equal(visit1(f->d, SRC, 3, "http://x/1"), 1);
    assert_int_equal(visit1(f->d, SRC, 2, "http://x/1"), 0);
    assert_int_equal(vcount(f->d, SRC), 2);
}

static void
test_visited_bad_arguments(void **state)
{
    struct fixture *f = *state;
    char longsrc[SL_DELTA_SOURCE_MAX + 2];
    struct sl_delta_link l = {"http://x/", -1, -1};
    struct sl_err err;
    uint64_t n = 0;

    memset(longsrc, 's', sizeof(longsrc) - 1);
    longsrc[sizeof(longsrc) - 1] = '\0';
    assert_int_equal(sl_delta_visit(f->d, NULL, 1, 0, &l, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_visit(f->d, "", 1, 0, &l, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_visit(f->d, longsrc, 1, 0, &l, 1, &err),
                     SL_EINVAL);
    assert_int_equal(sl_delta_visit(f->d, SRC, 0, 0, &l, 1, &err), SL_EINVAL);
    assert_int_equal(sl_delta_visit(f->d, SRC, 1, 0, NULL, 0, &err), 0);
    assert_int_equal(sl_delta_visited_count(f->d, "", &n, NULL, &err),
                     SL_EINVAL);
    assert_int_equal(sl_delta_visited_clear(f->d, longsrc, &err), SL_EINVAL);
    assert_int_equal(vcount(f->d, SRC), 0);
}

static void
test_visited_long_urls(void **state)
{
    struct fixture *f = *state;
    char *a = sl_malloc(SL_DELTA_ID_MAX + 1);
    char *b = sl_malloc(SL_DELTA_ID_MAX + 1);

    /* Equal far beyond LMDB's key limit, different only at the end. */
    memset(a, 'p', SL_DELTA_ID_MAX);
    a[SL_DELTA_ID_MAX] = '\0';
    memcpy(b, a, SL_DELTA_ID_MAX + 1);
    b[SL_DELTA_ID_MAX - 1] = 'q';
    assert_int_equal(visit1(f->d, SRC, 1, a), 1);
    assert_int_equal(visit1(f->d, SRC, 1, b), 1);
    assert_int_equal(visit1(f->d, SRC, 1, a), 0);
    assert_int_equal(visit1(f->d, SRC, 1, b), 0);
    a[600] = '\0'; /* a prefix of both is another URL */
    assert_int_equal(visit1(f->d, SRC, 1, a), 1);
    assert_int_equal(vcount(f->d, SRC), 3);
    sl_free(a);
    sl_free(b);
}

static void
test_visited_sources_isolated(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec rec;
    struct names ns;
    struct sl_err err;
    uint64_t n = 0;

    assert_int_equal(visit1(f->d, "web-a", 1, "http://same/"), 1);
    assert_int_equal(visit1(f->d, "web-b", 1, "http://same/"), 1);
    assert_int_equal(visit1(f->d, "web-a", 1, "http://same/"), 0);
    assert_int_equal(visit1(f->d, "web-a", 1, "http://other/"), 1);
    /* "web" is a prefix of both names, not a source of its own. */
    assert_int_equal(visit1(f->d, "web", 1, "http://same/"), 1);
    assert_int_equal(vcount(f->d, "web-a"), 2);
    assert_int_equal(vcount(f->d, "web-b"), 1);
    assert_int_equal(vcount(f->d, "web"), 1);

    memset(&ns, 0, sizeof(ns));
    assert_int_equal(sl_delta_visited_sources(f->d, on_source, &ns, &err), 0);
    assert_int_equal(ns.n, 3);
    assert_string_equal(ns.v[0], "web");
    assert_string_equal(ns.v[1], "web-a");
    assert_string_equal(ns.v[2], "web-b");

    /* Delta entries and visited links do not see each other. */
    memset(&ns, 0, sizeof(ns));
    assert_int_equal(sl_delta_sources(f->d, on_source, &ns, &err), 0);
    assert_int_equal(ns.n, 0);
    memset(&rec, 0, sizeof(rec));
    rec.id = "http://same/";
    rec.hash = "h";
    assert_int_equal(sl_delta_mark_updated(f->d, "web-a", 1, &rec, 1, &err), 0);
    assert_int_equal(sl_delta_count(f->d, "web-a", &n, NULL, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(vcount(f->d, "web-a"), 2);
    assert_int_equal(sl_delta_clear(f->d, "web-a", &err), 0);
    assert_int_equal(vcount(f->d, "web-a"), 2);
    assert_int_equal(sl_delta_clear_all(f->d, &err), 0);
    assert_int_equal(vcount(f->d, "web-a"), 2);
    assert_int_equal(sl_delta_mark_updated(f->d, "web-a", 1, &rec, 1, &err), 0);
    assert_int_equal(sl_delta_visited_clear(f->d, NULL, &err), 0);
    assert_int_equal(sl_delta_count(f->d, "web-a", &n, NULL, &err), 0);
    assert_int_equal(n, 1);
}

static void
test_visited_counts_and_clear(void **state)
{
    struct fixture *f = *state;
    unsigned nshards = sl_delta_shards(f->d);
    uint64_t *per = sl_calloc(nshards, sizeof(*per));
    uint64_t *want = sl_calloc(nshards, sizeof(*want));
    struct sl_delta_link links[300];
    char urls[300][40];
    struct names ns;
    struct sl_err err;
    uint64_t total = 0;
    unsigned used = 0;
    unsigned i = 0;

    for (i = 0; i < 300; i++) {
        (void)snprintf(
            urls[i], sizeof(urls[i]), "https://host%u/p/%u", i % 7, i);
        links[i].url = urls[i];
        want[sl_delta_shard_of(f->d, urls[i])]++;
    }
    assert_int_equal(sl_delta_visit(f->d, "one", 5, 0, links, 300, &err), 0);
    assert_int_equal(sl_delta_visit(f->d, "two", 5, 0, links, 100, &err), 0);
    assert_int_equal(sl_delta_visited_count(f->d, "one", &total, per, &err), 0);
    assert_int_equal(total, 300);
    for (i = 0; i < nshards; i++) {
        assert_int_equal(per[i], want[i]); /* sharded by the URL */
        used += per[i] > 0;
    }
    assert_true(used > nshards / 2);
    assert_int_equal(vcount(f->d, "two"), 100);
    assert_int_equal(vcount(f->d, "three"), 0);

    /* Clear one source: the other stays; its links are first again. */
    assert_int_equal(sl_delta_visited_clear(f->d, "one", &err), 0);
    assert_int_equal(vcount(f->d, "one"), 0);
    assert_int_equal(vcount(f->d, "two"), 100);
    assert_int_equal(visit1(f->d, "one", 5, urls[0]), 1);
    assert_int_equal(visit1(f->d, "two", 5, urls[0]), 0);

    /* Clear all. */
    assert_int_equal(sl_delta_visited_clear(f->d, NULL, &err), 0);
    assert_int_equal(vcount(f->d, "one"), 0);
    assert_int_equal(vcount(f->d, "two"), 0);
    memset(&ns, 0, sizeof(ns));
    assert_int_equal(sl_delta_visited_sources(f->d, on_source, &ns, &err), 0);
    assert_int_equal(ns.n, 0);
    assert_int_equal(visit1(f->d, "two", 5, urls[0]), 1);
    sl_free(per);
    sl_free(want);
}

static void
test_visited_reopen(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(visit1(f->d, SRC, 1, "http://keep/1"), 1);
    assert_int_equal(visit1(f->d, SRC, 1, "http://keep/2"), 1);
    sl_delta_close(f->d);
    f->d = open_delta(f->path, SL_DURABILITY_FSYNC);
    assert_int_equal(vcount(f->d, SRC), 2);
    assert_int_equal(visit1(f->d, SRC, 1, "http://keep/1"), 0);
    assert_int_equal(visit1(f->d, SRC, 1, "http://keep/3"), 1);
    assert_int_equal(visit1(f->d, SRC, 2, "http://keep/2"), 1);
}

/* In fsync mode every shard transaction that wrote is synced once; a
 * batch that writes nothing syncs nothing. */
static void
test_visited_fsync_per_shard(void **state)
{
    struct fixture *f = *state;
    unsigned nshards = 0;
    char *seen = NULL;
    struct sl_delta_link links[64];
    char urls[64][32];
    struct sl_err err;
    unsigned shards_used = 0;
    unsigned i = 0;

    sl_delta_close(f->d);
    f->d = open_delta(f->path, SL_DURABILITY_FSYNC);
    nshards = sl_delta_shards(f->d);
    seen = sl_calloc(nshards, 1);
    for (i = 0; i < 64; i++) {
        (void)snprintf(urls[i], sizeof(urls[i]), "http://s/%u", i);
        links[i].url = urls[i];
        if (!seen[sl_delta_shard_of(f->d, urls[i])]) {
            seen[sl_delta_shard_of(f->d, urls[i])] = 1;
            shards_used++;
        }
    }
    atomic_store(&syncs, 0);
    assert_int_equal(sl_delta_visit(f->d, SRC, 1, 0, links, 64, &err), 0);
    assert_int_equal(atomic_load(&syncs), shards_used);
    atomic_store(&syncs, 0);
    assert_int_equal(sl_delta_visit(f->d, SRC, 1, 0, links, 64, &err), 0);
    assert_int_equal(atomic_load(&syncs), 0);
    for (i = 0; i < 64; i++) {
        assert_int_equal(links[i].first, 0);
    }
    sl_free(seen);
}

/*
 * A store from before the visited links: drop the "visited" database of
 * every shard with LMDB itself, then the service must open it again, with
 * its delta entries, and visit.
 */
static void
test_visited_old_store_opens(void **state)
{
    struct fixture *f = *state;
    struct sl_delta_rec rec;
    struct sl_err err;
    unsigned nshards = sl_delta_shards(f->d);
    unsigned i = 0;

    memset(&rec, 0, sizeof(rec));
    rec.id = "doc-1";
    rec.hash = "h";
    assert_int_equal(sl_delta_mark_updated(f->d, "files", 1, &rec, 1, &err), 0);
    assert_int_equal(visit1(f->d, SRC, 1, "http://old/"), 1);
    sl_delta_close(f->d);
    f->d = NULL;
    for (i = 0; i < nshards; i++) {
        char dir[700];
        MDB_env *env = NULL;
        MDB_txn *txn = NULL;
        MDB_dbi dbi = 0;

        (void)snprintf(dir, sizeof(dir), "%s/shard-%02u", f->path, i);
        assert_int_equal(mdb_env_create(&env), 0);
        assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
        assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
        assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, "visited", 0, &dbi), 0);
        assert_int_equal(mdb_drop(txn, dbi, 1), 0);
        assert_int_equal(mdb_txn_commit(txn), 0);
        assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, "visited", 0, &dbi), MDB_NOTFOUND);
        mdb_txn_abort(txn);
        mdb_env_close(env);
    }
    f->d = open_delta(f->path, SL_DURABILITY_PROCESS);
    rec.result = 0;
    assert_int_equal(sl_delta_check(f->d, "files", 2, &rec, 1, &err), 0);
    assert_int_equal(rec.result, SL_DELTA_UPTODATE);
    assert_int_equal(vcount(f->d, SRC), 0);
    assert_int_equal(visit1(f->d, SRC, 1, "http://old/"), 1);
    assert_int_equal(visit1(f->d, SRC, 1, "http://old/"), 0);
}

/* ------------------------------------------------------------------------
 * Two threads over the same URLs
 * --------------------------------------------------------------------- */

#define RACE_URLS 10000

struct racer {
    struct sl_delta *d;
    uint64_t seq;
    unsigned seed;
    char (*urls)[48];     /* RACE_URLS, shared */
    unsigned char *first; /* per URL: 1 when this thread was first */
    pthread_barrier_t *start;
    int errors;
};

static void *
race(void *p)
{
    struct racer *r = p;
    size_t *order = sl_malloc(RACE_URLS * sizeof(*order));
    struct sl_delta_link *links = sl_calloc(500, sizeof(*links));
    struct sl_err err;
    size_t i = 0;

    for (i = 0; i < RACE_URLS; i++) {
        order[i] = i;
    }
    for (i = RACE_URLS - 1; i > 0; i--) {
        size_t j = (size_t)rand_r(&r->seed) % (i + 1);
        size_t t = order[i];

        order[i] = order[j];
        order[j] = t;
    }
    (void)pthread_barrier_wait(r->start); /* race from the same moment */
    for (i = 0; i < RACE_URLS;) {
        size_t n = 1 + (size_t)rand_r(&r->seed) % 500;
        size_t k = 0;

        n = n < RACE_URLS - i ? n : RACE_URLS - i;
        for (k = 0; k < n; k++) {
            links[k].url = r->urls[order[i + k]];
        }
        if (sl_delta_visit(r->d, "race", r->seq, 0, links, n, &err) != 0) {
            r->errors++;
        }
        for (k = 0; k < n; k++) {
            r->errors += links[k].result != 0;
            r->first[order[i + k]] = (unsigned char)links[k].first;
        }
        i += n;
    }
    sl_free(links);
    sl_free(order);
    return NULL;
}

static void
test_visited_threads_race(void **state)
{
    struct fixture *f = *state;
    char(*urls)[48] = sl_calloc(RACE_URLS, sizeof(*urls));
    struct racer r[2];
    pthread_t tid[2];
    pthread_barrier_t start;
    uint64_t seq = 0;
    int t = 0;
    int i = 0;

    for (i = 0; i < RACE_URLS; i++) {
        (void)snprintf(urls[i], sizeof(urls[i]), "https://race.example/%d", i);
    }
    assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
    for (seq = 1; seq <= 2; seq++) {
        for (t = 0; t < 2; t++) {
            memset(&r[t], 0, sizeof(r[t]));
            r[t].d = f->d;
            r[t].seq = seq;
            r[t].seed = (unsigned)(seq * 100 + (uint64_t)t);
            r[t].urls = urls;
            r[t].start = &start;
            r[t].first = sl_calloc(RACE_URLS, 1);
            assert_int_equal(pthread_create(&tid[t], NULL, race, &r[t]), 0);
        }
        for (t = 0; t < 2; t++) {
            assert_int_equal(pthread_join(tid[t], NULL), 0);
            assert_int_equal(r[t].errors, 0);
        }
        for (i = 0; i < RACE_URLS; i++) {
            if (r[0].first[i] + r[1].first[i] != 1) {
                fail_msg("run %llu: url %d first %d times",
                         (unsigned long long)seq,
                         i,
                         r[0].first[i] + r[1].first[i]);
            }
        }
        for (t = 0; t < 2; t++) {
            sl_free(r[t].first);
        }
        assert_int_equal(vcount(f->d, "race"), RACE_URLS);
    }
    (void)pthread_barrier_destroy(&start);
    sl_free(urls);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_visited_batch_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_across_batches_and_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_long_urls, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_sources_isolated, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_counts_and_clear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_visited_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_visited_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_test_readonly, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_fsync_per_shard, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_old_store_opens, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_visited_threads_race, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
