/*
 * bench/delta: records per second of the delta service (16 shards,
 * durability process) against a plain single LMDB environment doing the
 * same puts and gets in the same run (docs/development.md "Benchmarks").
 *
 * Steps, each on N records (default 1M) in batches of 1000:
 *   mark      sl_delta_mark_updated of N new records
 *   check     sl_delta_check of N records, all UPTODATE (new run, so every
 *             record is marked visited), one thread, then 2 threads over
 *             disjoint batches
 *   scan      sl_delta_obsolete_scan of N entries after a new run (all
 *             obsolete, the callback counts), all shards one after the
 *             other, then 2 threads with half the shards each
 * Baselines (one LMDB env, MDB_NOSYNC, one txn per batch, keys sorted per
 * batch, sorting timed as in the service):
 *   put       put of N new keys
 *   get+put   get and rewrite of N keys (what a check that marks does)
 *   get       get of N keys in read transactions
 *   scan+del  cursor scan deleting N keys, 1000 per transaction
 * Data come from a fixed seed; one warm-up run, then R measured runs with
 * median, min and max; peak RSS at the end.
 *
 * usage: bench-delta [--records N] [--runs R] [--dir DIR]
 *                    [--order shuffled|crawl]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>

#include "deltaservice/deltaservice.h"

#define BATCH  1000
#define SRC    "bench"
#define NSTEPS 10

enum step {
    MARK,
    CHECK1,
    CHECK2,
    SCAN1,
    SCAN2,
    B_PUT,
    B_GETPUT,
    B_GET,
    B_SCANDEL,
    NSTEP_USED
};

static const char *const step_names[NSTEPS] = {
    "mark_updated (new)",
    "check (UPTODATE), 1 thread",
    "check (UPTODATE), 2 threads",
    "obsolete scan, shards sequential",
    "obsolete scan, 2 threads",
    "LMDB put",
    "LMDB get+put",
    "LMDB get",
    "LMDB scan+delete",
};

struct data {
    size_t n;
    char **ids; /* random order, as a crawl produces them */
    char **hashes;
    struct sl_delta_rec *recs;
};

static double
now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
rng(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* --order crawl: records come in path order, as a crawler delivers a
 * directory's files together; default: shuffled (the worst case). */
static int crawl_order = 0;

static int
cmp_rec(const void *a, const void *b)
{
    return strcmp(((const struct sl_delta_rec *)a)->id,
                  ((const struct sl_delta_rec *)b)->id);
}

static void
make_data(struct data *dt, size_t n)
{
    uint64_t seed = 0x5eed5eedULL;
    size_t i = 0;

    dt->n = n;
    dt->ids = sl_calloc(n, sizeof(*dt->ids));
    dt->hashes = sl_calloc(n, sizeof(*dt->hashes));
    dt->recs = sl_calloc(n, sizeof(*dt->recs));
    for (i = 0; i < n; i++) {
        uint64_t r = rng(&seed);

        dt->ids[i] = sl_asprintf("/data/d%04u/f%07zu-%08x.txt",
                                 (unsigned)(r % 5000),
                                 i,
                                 (unsigned)(r >> 32));
        dt->hashes[i] = sl_asprintf("%016llx", (unsigned long long)rng(&seed));
        dt->recs[i].id = dt->ids[i];
        dt->recs[i].hash = dt->hashes[i];
    }
    if (crawl_order) {
        qsort(dt->recs, n, sizeof(dt->recs[0]), cmp_rec);
        return;
    }
    /* Shuffle so batches are not pre-sorted. */
    for (i = n - 1; i > 0; i--) {
        size_t j = (size_t)(rng(&seed) % (i + 1));
        struct sl_delta_rec t = dt->recs[i];

        dt->recs[i] = dt->recs[j];
        dt->recs[j] = t;
    }
}

static void
rm_rf(const char *dir)
{
    char *cmd = sl_asprintf("rm -rf '%s'", dir);

    if (system(cmd) != 0) {
        fprintf(stderr, "cannot remove %s\n", dir);
    }
    sl_free(cmd);
}

/* ------------------------------------------------------------------------
 * Delta service steps
 * --------------------------------------------------------------------- */

struct job {
    struct sl_delta *d;
    struct data *dt;
    uint64_t seq;
    int mark;       /* mark_updated instead of check */
    int t;          /* this thread */
    int nthreads;   /* batches b with b % nthreads == t */
    uint64_t count; /* obsolete entries seen */
};

static void *
batches_main(void *p)
{
    struct job *j = p;
    size_t b = 0;
    struct sl_err err;

    for (b = (size_t)j->t * BATCH; b < j->dt->n;
         b += (size_t)j->nthreads * BATCH) {
        size_t n = j->dt->n - b < BATCH ? j->dt->n - b : BATCH;
        int rc =
            j->mark
                ? sl_delta_mark_updated(
                      j->d, SRC, j->seq, j->dt->recs + b, n, &err)
                : sl_delta_check(j->d, SRC, j->seq, j->dt->recs + b, n, &err);

        if (rc != 0) {
            sl_panic("delta: %s", err.message);
        }
    }
    return NULL;
}

static int
count_cb(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    (void)e;
    *(uint64_t *)ctx += n;
    return 0;
}

static void *
scan_main(void *p)
{
    struct job *j = p;
    unsigned i = 0;
    struct sl_err err;

    for (i = (unsigned)j->t; i < sl_delta_shards(j->d);
         i += (unsigned)j->nthreads) {
        if (sl_delta_obsolete_scan(
                j->d, SRC, j->seq, i, 0, count_cb, &j->count, NULL, &err)) {
            sl_panic("scan: %s", err.message);
        }
    }
    return NULL;
}

/* Run fn on nthreads threads; returns seconds, adds obsolete counts. */
static double
run_threads(struct sl_delta *d,
            struct data *dt,
            uint64_t seq,
            int mark,
            int nthreads,
            void *(*fn)(void *),
            uint64_t *count)
{
    struct job jobs[2];
    pthread_t tids[2];
    double t0 = now();
    int i = 0;

    for (i = 0; i < nthreads; i++) {
        memset(&jobs[i], 0, sizeof(jobs[i]));
        jobs[i].d = d;
        jobs[i].dt = dt;
        jobs[i].seq = seq;
        jobs[i].mark = mark;
        jobs[i].t = i;
        jobs[i].nthreads = nthreads;
        if (pthread_create(&tids[i], NULL, fn, &jobs[i]) != 0) {
            sl_panic("pthread_create");
        }
    }
    for (i = 0; i < nthreads; i++) {
        (void)pthread_join(tids[i], NULL);
        if (count != NULL) {
            *count += jobs[i].count;
        }
    }
    return now() - t0;
}

static uint64_t
next_seq(struct sl_delta *d)
{
    uint64_t seq = 0;
    struct sl_err err;

    if (sl_delta_run_begin(d, SRC, &seq, &err) != 0) {
        sl_panic("run: %s", err.message);
    }
    return seq;
}

/* One measured run of the service steps into t[MARK..SCAN2]. */
static void
run_service(const char *base, struct data *dt, double *t)
{
    char *dir = sl_asprintf("%s/delta", base);
    struct sl_delta *d = NULL;
    struct sl_err err;
    uint64_t seq = 0;
    uint64_t count = 0;

    rm_rf(dir);
    if (sl_delta_open(dir, 16, SL_DURABILITY_PROCESS, 0, &d, &err) != 0) {
        sl_panic("open: %s", err.message);
    }
    seq = next_seq(d);
    t[MARK] = run_threads(d, dt, seq, 1, 1, batches_main, NULL);
    t[CHECK1] = run_threads(d, dt, next_seq(d), 0, 1, batches_main, NULL);
    t[CHECK2] = run_threads(d, dt, next_seq(d), 0, 2, batches_main, NULL);
    t[SCAN1] = run_threads(d, dt, next_seq(d), 0, 1, scan_main, &count);
    if (count != dt->n) {
        sl_panic("scan saw %llu entries", (unsigned long long)count);
    }
    (void)run_threads(d, dt, next_seq(d), 1, 1, batches_main, NULL);
    count = 0;
    t[SCAN2] = run_threads(d, dt, next_seq(d), 0, 2, scan_main, &count);
    if (count != dt->n) {
        sl_panic("parallel scan saw %llu entries", (unsigned long long)count);
    }
    sl_delta_close(d);
    rm_rf(dir);
    sl_free(dir);
}

/* ------------------------------------------------------------------------
 * Baseline: one plain LMDB environment
 * --------------------------------------------------------------------- */

struct kv {
    char key[128];
    size_t klen;
    const char *hash;
};

static int
cmp_kv(const void *a, const void *b)
{
    const struct kv *x = a;
    const struct kv *y = b;
    size_t m = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, m);

    return c != 0 ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

/* Keys of batch b, sorted (timed: the service sorts too). */
static size_t
batch_keys(struct data *dt, size_t b, struct kv *kv)
{
    size_t n = dt->n - b < BATCH ? dt->n - b : BATCH;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        const struct sl_delta_rec *r = &dt->recs[b + i];
        size_t len = strlen(r->id);

        memcpy(kv[i].key, SRC, sizeof(SRC));
        memcpy(kv[i].key + sizeof(SRC), r->id, len);
        kv[i].klen = sizeof(SRC) + len;
        kv[i].hash = r->hash;
    }
    qsort(kv, n, sizeof(*kv), cmp_kv);
    return n;
}

/* One pass over all batches: 0 put, 1 get+put, 2 get, in one txn each. */
static double
baseline_pass(MDB_env *env, MDB_dbi dbi, struct data *dt, int mode)
{
    static struct kv kv[BATCH];
    unsigned char val[64];
    double t0 = now();
    size_t b = 0;

    memset(val, 0, sizeof(val));
    for (b = 0; b < dt->n; b += BATCH) {
        size_t n = batch_keys(dt, b, kv);
        MDB_txn *txn = NULL;
        size_t i = 0;
        int rc = mdb_txn_begin(env, NULL, mode == 2 ? MDB_RDONLY : 0, &txn);

        for (i = 0; rc == 0 && i < n; i++) {
            MDB_val k = {kv[i].klen, kv[i].key};
            MDB_val v = {12 + 16 + 4, val};

            if (mode != 0) {
                rc = mdb_get(txn, dbi, &k, &v);
                if (rc == 0 && mode == 1) {
                    memcpy(val, v.mv_data, v.mv_size);
                    val[2]++;
                    v.mv_data = val;
                }
            } else {
                memcpy(val + 12, kv[i].hash, 16);
            }
            if (rc == 0 && mode != 2) {
                rc = mdb_put(txn, dbi, &k, &v, 0);
            }
        }
        if (rc == 0 && mode != 2) {
            rc = mdb_txn_commit(txn);
        } else if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        if (rc != 0) {
            sl_panic("baseline: %s", mdb_strerror(rc));
        }
    }
    return now() - t0;
}

/* Cursor scan deleting every key, BATCH deletes per transaction. */
static double
baseline_scan_delete(MDB_env *env, MDB_dbi dbi, size_t n)
{
    double t0 = now();
    size_t done = 0;
    int rc = 0;

    while (rc == 0) {
        MDB_txn *txn = NULL;
        MDB_cursor *cur = NULL;
        MDB_val k;
        MDB_val v;
        int i = 0;

        rc = mdb_txn_begin(env, NULL, 0, &txn);
        if (rc == 0) {
            rc = mdb_cursor_open(txn, dbi, &cur);
        }
        for (i = 0; rc == 0 && i < BATCH; i++) {
            rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
            if (rc == 0) {
                rc = mdb_cursor_del(cur, 0);
                done++;
            }
        }
        mdb_cursor_close(cur);
        if (rc == 0 || rc == MDB_NOTFOUND) {
            int crc = mdb_txn_commit(txn);

            rc = crc != 0 ? crc : rc;
        } else {
            mdb_txn_abort(txn);
        }
    }
    if (rc != MDB_NOTFOUND || done != n) {
        sl_panic("baseline scan: %s, %zu", mdb_strerror(rc), done);
    }
    return now() - t0;
}

static void
run_baseline(const char *base, struct data *dt, double *t)
{
    char *dir = sl_asprintf("%s/plain", base);
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi = 0;

    rm_rf(dir);
    (void)mkdir(dir, 0755);
    if (mdb_env_create(&env) != 0 ||
        mdb_env_set_mapsize(env, (size_t)4 << 30) != 0 ||
        mdb_env_open(env, dir, MDB_NOSYNC | MDB_NOTLS, 0644) != 0 ||
        mdb_txn_begin(env, NULL, 0, &txn) != 0 ||
        mdb_dbi_open(txn, NULL, 0, &dbi) != 0 || mdb_txn_commit(txn) != 0) {
        sl_panic("baseline env");
    }
    t[B_PUT] = baseline_pass(env, dbi, dt, 0);
    t[B_GETPUT] = baseline_pass(env, dbi, dt, 1);
    t[B_GET] = baseline_pass(env, dbi, dt, 2);
    t[B_SCANDEL] = baseline_scan_delete(env, dbi, dt->n);
    mdb_env_close(env);
    rm_rf(dir);
    sl_free(dir);
}

/* ------------------------------------------------------------------------
 * Report
 * --------------------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
rate(size_t n, double secs)
{
    return secs > 0 ? (double)n / secs : 0;
}

static void
report(size_t n, int runs, double (*t)[NSTEPS])
{
    static const int base_of[NSTEPS] = {
        [MARK] = B_PUT,
        [CHECK1] = B_GETPUT,
        [CHECK2] = B_GETPUT,
        [SCAN1] = B_SCANDEL,
        [SCAN2] = B_SCANDEL,
        [B_PUT] = -1,
        [B_GETPUT] = -1,
        [B_GET] = -1,
        [B_SCANDEL] = -1,
    };
    double med[NSTEPS];
    int s = 0;

    printf("%-34s %12s %12s %12s %10s\n",
           "step",
           "median/s",
           "min/s",
           "max/s",
           "ratio");
    double lo[NSTEPS];
    double hi[NSTEPS];

    for (s = 0; s < NSTEP_USED; s++) {
        double v[16];
        int r = 0;

        for (r = 0; r < runs; r++) {
            v[r] = t[r][s];
        }
        qsort(v, (size_t)runs, sizeof(v[0]), cmp_double);
        med[s] = v[runs / 2];
        lo[s] = v[0];
        hi[s] = v[runs - 1];
    }
    for (s = 0; s < NSTEP_USED; s++) {
        printf("%-34s %12.0f %12.0f %12.0f",
               step_names[s],
               rate(n, med[s]),
               rate(n, hi[s]),
               rate(n, lo[s]));
        if (base_of[s] >= 0) {
            printf(" %9.2fx\n", med[base_of[s]] / med[s]);
        } else {
            printf(" %10s\n", "baseline");
        }
    }
    printf("parallel/sequential scan: %.2fx; check 2 threads/1: %.2fx\n",
           med[SCAN1] / med[SCAN2],
           med[CHECK1] / med[CHECK2]);
    printf("ratio = baseline time / service time (median); baselines: "
           "mark vs put, check vs get+put, scan vs scan+delete\n");
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"records", required_argument, NULL, 'n'},
        {"runs", required_argument, NULL, 'r'},
        {"dir", required_argument, NULL, 'd'},
        {"order", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    uint64_t n = 1000000;
    uint64_t runs = 3;
    const char *dir = "/tmp/bench-delta";
    struct data dt;
    double(*t)[NSTEPS] = NULL;
    double warm[NSTEPS];
    int c = 0;
    int r = 0;

    while ((c = getopt_long(argc, argv, "n:r:d:o:", opts, NULL)) != -1) {
        if (c == 'o' &&
            (strcmp(optarg, "crawl") == 0 || strcmp(optarg, "shuffled") == 0)) {
            crawl_order = strcmp(optarg, "crawl") == 0;
            continue;
        }
        if (c == 'n' && sl_parse_u64(optarg, &n) == 0 && n >= BATCH) {
            continue;
        }
        if (c == 'r' && sl_parse_u64(optarg, &runs) == 0 && runs >= 1 &&
            runs <= 15) {
            continue;
        }
        if (c == 'd') {
            dir = optarg;
            continue;
        }
        fprintf(stderr,
                "usage: %s [--records N>=1000] [--runs 1-15] "
                "[--dir DIR] [--order shuffled|crawl]\n",
                argv[0]);
        return 2;
    }
    (void)mkdir(dir, 0755);
    make_data(&dt, (size_t)n);
    t = sl_calloc(runs, sizeof(*t));
    printf("bench-delta: %zu records (%s order), batches of %d, 16 shards, "
           "durability process, %d runs after a warm-up\n",
           dt.n,
           crawl_order ? "crawl" : "shuffled",
           BATCH,
           (int)runs);
    fflush(stdout);
    run_service(dir, &dt, warm);
    run_baseline(dir, &dt, warm);
    for (r = 0; r < (int)runs; r++) {
        run_service(dir, &dt, t[r]);
        run_baseline(dir, &dt, t[r]);
    }
    report(dt.n, (int)runs, t);
    printf("peak RSS: %ld KiB\n", sl_peak_rss_kib());
    sl_free(t);
    return 0;
}
