/*
 * Multi-threaded test of the delta service, meant for the sanitizer builds
 * (-DSL_SANITIZE=address,undefined and thread): 4 threads check and mark
 * batches of their own ids and of ids shared by all threads, at the same
 * time, plus one obsolete scan per shard racing with them.  Afterwards
 * every id is in the store exactly once and up to date.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>

#include "deltaservice/deltaservice.h"
#include "tmpdir.h"

#define SRC      "mt"
#define THREADS  4
#define ROUNDS   20
#define BATCH    100
#define N_SHARED 300
/* Own ids: the even half of each batch.  Shared ids: odd i plus a multiple
 * of 100, modulo 300, so only the odd half of N_SHARED ever occurs. */
#define EXPECTED (THREADS * ROUNDS * (BATCH / 2) + N_SHARED / 2)

struct thread_arg {
    struct sl_delta *d;
    int t; /* thread number */
    uint64_t seq;
    int errors; /* failed calls */
    int bad;    /* unexpected results */
};

/* One round: a batch of own ids and shared ids, checked then marked. */
static void
one_round(struct thread_arg *a, int round)
{
    char ids[BATCH][32];
    struct sl_delta_rec recs[BATCH];
    struct sl_err err;
    int i = 0;

    for (i = 0; i < BATCH; i++) {
        if (i % 2 == 0) {
            (void)snprintf(
                ids[i], sizeof(ids[i]), "t%d/r%d/%d", a->t, round, i);
        } else {
            (void)snprintf(ids[i],
                           sizeof(ids[i]),
                           "shared/%d",
                           (round * BATCH + i) % N_SHARED);
        }
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].id = ids[i];
        recs[i].hash = "h";
        recs[i].compound_id = i % 10 == 2 ? ids[0] : NULL;
        recs[i].is_compound = i == 0;
    }
    if (sl_delta_check(a->d, SRC, a->seq, recs, BATCH, &err) != 0) {
        a->errors++;
        return;
    }
    for (i = 0; i < BATCH; i++) {
        if (recs[i].result < SL_DELTA_NEW ||
            recs[i].result > SL_DELTA_UPTODATE) {
            a->bad++;
        }
    }
    if (sl_delta_mark_updated(a->d, SRC, a->seq, recs, BATCH, &err) != 0) {
        a->errors++;
    }
}

static void *
worker(void *p)
{
    struct thread_arg *a = p;
    int round = 0;

    for (round = 0; round < ROUNDS; round++) {
        one_round(a, round);
    }
    return NULL;
}

static int
keep_all(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    size_t *count = ctx;

    (void)e;
    *count += n;
    return 0;
}

/*
 * Obsolete scan of every shard (t < 0) or of the shards of parity t.
 * During the writes of the same run it finds nothing older (bad when it
 * does); in a later run it removes everything.
 */
static void *
scanner(void *p)
{
    struct thread_arg *a = p;
    size_t reported = 0;
    unsigned i = 0;
    struct sl_err err;

    for (i = 0; i < sl_delta_shards(a->d); i++) {
        if (a->t >= 0 && (int)(i % 2) != a->t) {
            continue;
        }
        if (sl_delta_obsolete_scan(
                a->d, SRC, a->seq, i, 10, keep_all, &reported, NULL, &err)) {
            a->errors++;
        }
    }
    a->bad += (int)reported; /* checked by the caller per phase */
    return NULL;
}

static void
test_delta_mt_check_mark(void **state)
{
    struct thread_arg args[THREADS + 1];
    pthread_t tids[THREADS + 1];
    struct sl_delta *d = NULL;
    struct sl_err err;
    char dir[512];
    char path[600];
    uint64_t seq = 0;
    uint64_t n = 0;
    int i = 0;

    (void)state;
    assert_non_null(tmpdir_make(dir, sizeof(dir), "delta-mt-"));
    (void)snprintf(path, sizeof(path), "%s/delta", dir);
    assert_int_equal(sl_delta_open(path, 0, SL_DURABILITY_PROCESS, 0, &d, &err),
                     0);
    assert_int_equal(sl_delta_run_begin(d, SRC, &seq, &err), 0);
    for (i = 0; i <= THREADS; i++) {
        memset(&args[i], 0, sizeof(args[i]));
        args[i].d = d;
        args[i].t = i < THREADS ? i : -1;
        args[i].seq = seq;
        assert_int_equal(
            pthread_create(
                &tids[i], NULL, i < THREADS ? worker : scanner, &args[i]),
            0);
    }
    for (i = 0; i <= THREADS; i++) {
        assert_int_equal(pthread_join(tids[i], NULL), 0);
        assert_int_equal(args[i].errors, 0);
        assert_int_equal(args[i].bad, 0);
    }
    assert_int_equal(sl_delta_count(d, SRC, &n, NULL, &err), 0);
    assert_int_equal(n, EXPECTED);

    /* Run 2: the same batches again, all up to date now (checks write the
     * visited marks concurrently). */
    assert_int_equal(sl_delta_run_begin(d, SRC, &seq, &err), 0);
    for (i = 0; i < THREADS; i++) {
        args[i].seq = seq;
        assert_int_equal(pthread_create(&tids[i], NULL, worker, &args[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(tids[i], NULL), 0);
        assert_int_equal(args[i].errors, 0);
    }
    assert_int_equal(sl_delta_count(d, SRC, &n, NULL, &err), 0);
    assert_int_equal(n, EXPECTED);

    /* Run 3 visits nothing: two threads scan half the shards each and
     * remove everything. */
    assert_int_equal(sl_delta_run_begin(d, SRC, &seq, &err), 0);
    for (i = 0; i < 2; i++) {
        memset(&args[i], 0, sizeof(args[i]));
        args[i].d = d;
        args[i].t = i;
        args[i].seq = seq;
        assert_int_equal(pthread_create(&tids[i], NULL, scanner, &args[i]), 0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(tids[i], NULL), 0);
        assert_int_equal(args[i].errors, 0);
    }
    assert_int_equal(args[0].bad + args[1].bad, EXPECTED);
    assert_int_equal(sl_delta_count(d, SRC, &n, NULL, &err), 0);
    assert_int_equal(n, 0);
    sl_delta_close(d);
    (void)tmpdir_remove(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_mt_check_mark),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
