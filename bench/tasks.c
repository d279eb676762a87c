/*
 * bench/tasks: task finishes per second of the jobmanager.  A runOnce job
 * from a persistent bucket of N objects gives N tasks of a worker that does
 * nothing; T threads take and finish them through the same API the
 * internal workers and the REST handlers use.  Runs each durability
 * setting 3 times after a warm-up and prints median, min and max, plus a
 * baseline measured in the same run: a raw LMDB loop of one put+delete per
 * write transaction with MDB_NOSYNC (the floor of "one commit per finish").
 *
 * usage: bench-tasks [--tasks N] [--threads T] [--runs R]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "jobmanager/jobmanager.h"

static const char *worker_desc = "{\"name\":\"noop\",\"input\":[{\"name\":"
                                 "\"in\",\"type\":\"recordBulks\"}]}";

struct worker_arg {
    struct sl_jm *jm;
    long done;
};

static void *
worker_main(void *p)
{
    struct worker_arg *a = p;
    json_t *ok = json_pack("{s:s}", "status", "SUCCESSFUL");
    int idle = 0;

    while (idle < 200) {
        json_t *task = NULL;
        struct sl_err err;

        if (sl_jm_task_take(a->jm, "noop", NULL, NULL, &task, &err) != 0) {
            idle++;
            (void)usleep(1000);
            continue;
        }
        idle = 0;
        if (sl_jm_task_finish(
                a->jm,
                "noop",
                json_string_value(json_object_get(task, "taskId")),
                ok,
                &err) == 0) {
            a->done++;
        }
        json_decref(task);
    }
    json_decref(ok);
    return NULL;
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

/* One measured run: returns finishes per second. */
static double
run_once(const char *base, int fsync_mode, long ntasks, int threads)
{
    char *data = sl_asprintf("%s/run", base);
    char *storedir = sl_asprintf("%s/store", data);
    char *statedir = sl_asprintf("%s/jm", data);
    struct sl_obj *store = NULL;
    struct sl_jm *jm = NULL;
    struct sl_jm_config cfg;
    struct sl_err err;
    char run_id[SL_JM_RUN_ID_MAX];
    json_t *desc = json_loads(worker_desc, 0, NULL);
    pthread_t tids[64];
    struct worker_arg args[64];
    int64_t t0 = 0;
    int64_t t1 = 0;
    long done = 0;
    long i = 0;
    int t = 0;

    rm_rf(data);
    if (sl_obj_open_fs(storedir, SL_DURABILITY_PROCESS, &store, &err) != 0) {
        sl_panic("store: %s", err.message);
    }
    (void)sl_obj_store_create(store, "in", NULL, NULL);
    for (i = 0; i < ntasks; i++) {
        struct sl_obj_writer *w = NULL;
        char id[64];

        (void)snprintf(id, sizeof(id), "src/%08ld", i);
        if (sl_obj_writer_open(store, "in", id, &w, &err) != 0 ||
            sl_obj_writer_commit(w, NULL, &err) != 0) {
            sl_panic("object: %s", err.message);
        }
        sl_obj_writer_free(w);
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.state_dir = statedir;
    cfg.durability = fsync_mode ? SL_DURABILITY_FSYNC : SL_DURABILITY_PROCESS;
    cfg.store = store;
    if (sl_jm_open(&cfg, &jm, &err) != 0 ||
        sl_jm_register_worker(jm, desc, NULL, &err) != 0 ||
        sl_jm_start(jm, &err) != 0) {
        sl_panic("jobmanager: %s", err.message);
    }
    json_decref(desc);
    desc = json_pack("{s:s, s:s, s:{s:s}}",
                     "name",
                     "src",
                     "type",
                     "recordBulks",
                     "parameters",
                     "store",
                     "in");
    if (sl_jm_defs_put(jm, "buckets", desc, NULL, &err) != 0) {
        sl_panic("bucket: %s", err.message);
    }
    json_decref(desc);
    desc = json_pack("{s:s, s:[s], s:{s:s, s:{s:s}}}",
                     "name",
                     "wf",
                     "modes",
                     "runOnce",
                     "startAction",
                     "worker",
                     "noop",
                     "input",
                     "in",
                     "src");
    if (sl_jm_defs_put(jm, "workflows", desc, NULL, &err) != 0) {
        sl_panic("workflow: %s", err.message);
    }
    json_decref(desc);
    desc = json_pack("{s:s, s:s}", "name", "job", "workflow", "wf");
    if (sl_jm_defs_put(jm, "jobs", desc, NULL, &err) != 0) {
        sl_panic("job: %s", err.message);
    }
    json_decref(desc);
    if (sl_jm_run_start(jm, "job", "runOnce", run_id, &err) != 0) {
        sl_panic("start: %s", err.message);
    }
    t0 = sl_mono_ms();
    for (t = 0; t < threads; t++) {
        args[t].jm = jm;
        args[t].done = 0;
        (void)pthread_create(&tids[t], NULL, worker_main, &args[t]);
    }
    for (t = 0; t < threads; t++) {
        (void)pthread_join(tids[t], NULL);
        done += args[t].done;
    }
    t1 = sl_mono_ms() - 200; /* the idle tail of the workers */
    if (done != ntasks) {
        sl_panic("finished %ld of %ld tasks", done, ntasks);
    }
    sl_jm_close(jm);
    sl_obj_close(store);
    sl_free(data);
    sl_free(storedir);
    sl_free(statedir);
    return (double)ntasks * 1000.0 / (double)(t1 - t0);
}

/* Baseline: one LMDB write transaction (put + delete) per operation. */
static double
lmdb_floor(const char *base, int fsync_mode, long n)
{
    char *dir = sl_asprintf("%s/lmdb", base);
    MDB_env *env = NULL;
    MDB_dbi dbi = 0;
    MDB_txn *txn = NULL;
    char key[32];
    char val[512];
    int64_t t0 = 0;
    long i = 0;

    rm_rf(dir);
    if (mkdir(dir, 0755) != 0 || mdb_env_create(&env) != 0 ||
        mdb_env_set_mapsize(env, (size_t)1 << 30) != 0 ||
        mdb_env_open(env, dir, fsync_mode ? 0 : MDB_NOSYNC, 0644) != 0) {
        sl_panic("lmdb");
    }
    memset(val, 'v', sizeof(val));
    (void)mdb_txn_begin(env, NULL, 0, &txn);
    (void)mdb_dbi_open(txn, NULL, 0, &dbi);
    (void)mdb_txn_commit(txn);
    t0 = sl_mono_ms();
    for (i = 0; i < n; i++) {
        MDB_val k = {0, key};
        MDB_val v = {sizeof(val), val};

        k.mv_size = (size_t)snprintf(key, sizeof(key), "%08ld", i);
        (void)mdb_txn_begin(env, NULL, 0, &txn);
        (void)mdb_put(txn, dbi, &k, &v, 0);
        (void)mdb_del(txn, dbi, &k, NULL);
        (void)mdb_txn_commit(txn);
    }
    i = sl_mono_ms() - t0;
    mdb_env_close(env);
    sl_free(dir);
    return (double)n * 1000.0 / (double)(i ? i : 1);
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tasks", required_argument, NULL, 'n'},
        {"threads", required_argument, NULL, 't'},
        {"runs", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    long ntasks = 20000;
    int threads = 2;
    int runs = 3;
    char base[] = "/tmp/sluice-bench-tasks.XXXXXX";
    int c = 0;
    int mode = 0;

    json_set_alloc_funcs(sl_malloc, sl_free);
    sl_log_set_level(SL_LOG_WARN);
    while ((c = getopt_long(argc, argv, "n:t:r:", opts, NULL)) != -1) {
        uint64_t v = 0;

        if (sl_parse_u64(optarg, &v) != 0 || v == 0) {
            fprintf(stderr, "bad number '%s'\n", optarg);
            return 2;
        }
        if (c == 'n') {
            ntasks = (long)v;
        } else if (c == 't') {
            threads = v > 64 ? 64 : (int)v;
        } else if (c == 'r') {
            runs = v > 15 ? 15 : (int)v;
        } else {
            return 2;
        }
    }
    if (mkdtemp(base) == NULL) {
        return 1;
    }
    printf("bench/tasks: %ld no-op tasks, %d worker threads, %d runs each "
           "(after one warm-up), warm page cache, nproc %ld\n",
           ntasks,
           threads,
           runs,
           sysconf(_SC_NPROCESSORS_ONLN));
    for (mode = 0; mode < 2; mode++) {
        double r[16];
        double floor = 0;
        int i = 0;

        (void)run_once(base, mode, ntasks / 10 ? ntasks / 10 : 1, threads);
        for (i = 0; i < runs; i++) {
            r[i] = run_once(base, mode, ntasks, threads);
        }
        qsort(r, (size_t)runs, sizeof(r[0]), cmp_double);
        floor = lmdb_floor(base, mode, mode ? 300 : ntasks);
        printf("durability %-7s  finishes/s median %8.0f  min %8.0f  max "
               "%8.0f | baseline LMDB txn-per-op %8.0f/s | ratio %.2fx\n",
               mode ? "fsync" : "process",
               r[runs / 2],
               r[0],
               r[runs - 1],
               floor,
               r[runs / 2] / floor);
        fflush(stdout);
    }
    printf("peak RSS %ld KiB\n", sl_peak_rss_kib());
    rm_rf(base);
    return 0;
}
