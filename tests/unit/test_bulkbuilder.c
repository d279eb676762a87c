/*
 * Unit tests of the bulkbuilder over a real jobmanager (LMDB) and object
 * store in a temporary directory.
 *
 * test_bb_pending_stress: four threads push records into a job whose
 * bulks are sealed after every record, while the committer commits them;
 * afterwards pendingBulks must be 0 and committedBulks the number of
 * records.  The count of pending bulks used to be raised only after a
 * sealed bulk was visible to the committer, which could commit it first
 * and leave the count at 1 for ever.  test_bb_pending_window holds that
 * window open with the test knob bulkbuilder.sealed.
 *
 * test_bb_task_kept: a bulk whose .task file cannot be written and whose
 * copy into the store fails for a while is committed by the one task it
 * got first (a full disk used to make a new task at every tick).
 *
 * test_bb_half_linked: a bulk with inserts and deletes is sealed slot by
 * slot; the committer, which used to take it once slot 0 was linked,
 * committed the inserts alone and then removed the deletes' file.
 *
 * The tests of the window run in a process of their own ("delayed", with
 * SLUICE_TEST_DELAY=bulkbuilder.sealed=150 set by ctest): the knob is
 * read with getenv while the committer runs, so it is never changed then.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "bulkbuilder/bulkbuilder.h"
#include "tmpdir.h"

#define THREADS    4
#define PER_THREAD 750
#define WAIT_MS    120000

struct fx {
    char dir[256];
    struct sl_obj *store;
    struct sl_jm *jm;
    struct sl_bb *bb;
};

static void
put_def(struct sl_jm *jm, const char *kind, const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    struct sl_err err;

    assert_non_null(j);
    sl_err_clear(&err);
    if (sl_jm_defs_put(jm, kind, j, NULL, &err) != 0) {
        fail_msg("%s: %s (%s)", kind, err.message, err.field);
    }
    json_decref(j);
}

/* The fixture; bulks are sealed after every record, or with @sized only
 * at sl_bb_flush.  With @backlog the job's workflow has a second action,
 * of the worker "sink" whose tasks the test takes itself, and a run may
 * hold 2 bulks in active workflow runs. */
static int
setup_with(void **state, int sized, int backlog)
{
    struct fx *f = sl_calloc(1, sizeof(*f));
    char path[400];
    struct sl_jm_config jcfg;
    struct sl_bb_config bcfg;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;

    sl_err_clear(&err);
    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "bb."));
    (void)snprintf(path, sizeof(path), "%s/store", f->dir);
    assert_int_equal(
        sl_obj_open_fs(path, SL_DURABILITY_PROCESS, &f->store, &err), 0);
    memset(&jcfg, 0, sizeof(jcfg));
    (void)snprintf(path, sizeof(path), "%s/jm", f->dir);
    jcfg.state_dir = path;
    jcfg.store = f->store;
    assert_int_equal(sl_jm_open(&jcfg, &f->jm, &err), 0);
    memset(&bcfg, 0, sizeof(bcfg));
    (void)snprintf(path, sizeof(path), "%s/bb", f->dir);
    bcfg.dir = path;
    bcfg.limit_size = sized ? 1 << 20 : 1; /* 1: every record seals */
    bcfg.limit_ms = 3600000;
    bcfg.max_active = backlog ? 2 : 0;
    assert_int_equal(sl_bb_open(&bcfg, f->jm, f->store, &f->bb, &err), 0);
    if (backlog) {
        json_t *d = json_loads("{\"name\":\"sink\",\"input\":[{\"name\":"
                               "\"in\",\"type\":\"recordBulks\"}]}",
                               0,
                               NULL);

        assert_int_equal(sl_jm_register_worker(f->jm, d, NULL, &err), 0);
        json_decref(d);
    }
    assert_int_equal(sl_jm_start(f->jm, &err), 0);
    assert_int_equal(sl_bb_start(f->bb, &err), 0);
    put_def(f->jm,
            "workflows",
            "{\"name\":\"bbOnly\",\"modes\":[\"standard\"],"
            "\"parameters\":{\"tempStore\":\"tmp\"},"
            "\"startAction\":{\"worker\":\"bulkbuilder\",\"output\":"
            "{\"insertedRecords\":\"ins\",\"deletedRecords\":\"del\"}}}");
    if (backlog) {
        put_def(
            f->jm,
            "workflows",
            "{\"name\":\"bbSink\",\"modes\":[\"standard\"],"
            "\"parameters\":{\"tempStore\":\"tmp\"},"
            "\"startAction\":{\"worker\":\"bulkbuilder\",\"output\":"
            "{\"insertedRecords\":\"ins\",\"deletedRecords\":\"del\"}},"
            "\"actions\":[{\"worker\":\"sink\",\"input\":{\"in\":\"ins\"}}]}");
    }
    put_def(f->jm,
            "jobs",
            backlog ? "{\"name\":\"push\",\"workflow\":\"bbSink\"}"
                    : "{\"name\":\"push\",\"workflow\":\"bbOnly\"}");
    if (sl_jm_run_start(f->jm, "push", "standard", id, &err) != 0) {
        fail_msg("run start: %s", err.message);
    }
    *state = f;
    return 0;
}

static int
setup(void **state)
{
    return setup_with(state, 0, 0);
}

static int
setup_sized(void **state)
{
    return setup_with(state, 1, 0);
}

static int
setup_backlog(void **state)
{
    return setup_with(state, 0, 1);
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    sl_bb_close(f->bb);
    sl_jm_close(f->jm);
    sl_obj_close(f->store);
    assert_int_equal(tmpdir_remove(f->dir), 0);
    sl_free(f);
    return 0;
}

struct pusher {
    struct fx *f;
    int n;
    int count;
    int failed;
};

static void *
push_main(void *arg)
{
    struct pusher *p = arg;
    int i = 0;

    for (i = 0; i < p->count; i++) {
        json_t *meta = json_pack("{s:s+}", "_recordid", "r", "x");
        struct sl_err err;
        char rid[64];

        (void)snprintf(rid, sizeof(rid), "t%d-r%d", p->n, i);
        (void)json_object_set_new(meta, "_recordid", json_string(rid));
        sl_err_clear(&err);
        if (sl_bb_add(p->f->bb, "push", meta, 0, &err) != 0) {
            p->failed++;
        }
        json_decref(meta);
    }
    return NULL;
}

static void
job_status(struct fx *f, json_int_t *pending, json_int_t *committed)
{
    json_t *st = sl_bb_status(f->bb, "push");

    assert_non_null(st);
    *pending = json_integer_value(json_object_get(st, "pendingBulks"));
    *committed = json_integer_value(json_object_get(st, "committedBulks"));
    json_decref(st);
}

/* Wait until @want bulks are committed; asserts it happens. */
static void
wait_committed(struct fx *f, json_int_t want)
{
    json_int_t pending = -1;
    json_int_t committed = -1;
    int64_t deadline = sl_mono_ms() + WAIT_MS;

    do {
        struct timespec ts = {0, 20 * 1000 * 1000};

        job_status(f, &pending, &committed);
        if (committed >= want) {
            break;
        }
        (void)nanosleep(&ts, NULL);
    } while (sl_mono_ms() < deadline);
    assert_int_equal(committed, want);
}

/* Wait until @want bulks are committed, then check that none is pending. */
static void
expect_all_committed(struct fx *f, json_int_t want)
{
    json_int_t pending = -1;
    json_int_t committed = -1;

    wait_committed(f, want);
    job_status(f, &pending, &committed);
    assert_int_equal(pending, 0);
}

static void
test_bb_pending_stress(void **state)
{
    struct fx *f = *state;
    pthread_t th[THREADS];
    struct pusher p[THREADS];
    int i = 0;

    for (i = 0; i < THREADS; i++) {
        p[i].f = f;
        p[i].n = i;
        p[i].count = PER_THREAD;
        p[i].failed = 0;
        assert_int_equal(pthread_create(&th[i], NULL, push_main, &p[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(p[i].failed, 0);
    }
    expect_all_committed(f, THREADS * PER_THREAD);
}

/*
 * The window itself: each seal waits 150 ms once its bulk is visible, so
 * the committer (every 100 ms at least) commits it while nothing else is
 * pending.  The count must still end at 0.
 */
static void
test_bb_pending_window(void **state)
{
    struct fx *f = *state;
    struct pusher p = {f, 0, 3, 0};

    (void)push_main(&p);
    assert_int_equal(p.failed, 0);
    expect_all_committed(f, 3);
}

static json_int_t push_counter(struct fx *f, const char *name);

static void
test_bb_half_linked(void **state)
{
    struct fx *f = *state;
    json_t *a = json_pack("{s:s}", "_recordid", "half-a");
    json_t *b = json_pack("{s:s}", "_recordid", "half-b");
    struct sl_err err;

    sl_err_clear(&err);
    /* one bulk with an insert (slot 0) and a delete (slot 1), sealed by
     * this thread, which waits 150 ms after each link */
    assert_int_equal(sl_bb_add(f->bb, "push", a, 0, &err), 0);
    assert_int_equal(sl_bb_add(f->bb, "push", b, 1, &err), 0);
    assert_int_equal(sl_bb_flush(f->bb, "push", &err), 0);
    json_decref(a);
    json_decref(b);
    expect_all_committed(f, 1);
    /* the committed task's outputs, as the jobmanager counted them */
    assert_int_equal(
        push_counter(f, "0_bulkbuilder/output.insertedRecords.dataObjectCount"),
        1);
    assert_int_equal(
        push_counter(f, "0_bulkbuilder/output.deletedRecords.dataObjectCount"),
        1);
}

/* Task counter @name of the current run of job "push", or with
 * "<action>_<worker>/<counter>" a worker counter. */
static json_int_t
push_counter(struct fx *f, const char *name)
{
    json_t *info = NULL;
    json_t *run = NULL;
    struct sl_err err;
    json_int_t v = -1;

    sl_err_clear(&err);
    assert_int_equal(sl_jm_job_info(f->jm, "push", 0, &info, &err), 0);
    assert_int_equal(
        sl_jm_run_get(f->jm,
                      "push",
                      json_string_value(json_object_get(
                          json_object_get(info, "runs"), "current")),
                      0,
                      &run,
                      &err),
        0);
    if (strchr(name, '/') != NULL) { /* "<action>_<worker>/<counter>" */
        char key[64];

        (void)snprintf(key, sizeof(key), "%.*s", (int)strcspn(name, "/"), name);
        v = json_integer_value(json_object_get(
            json_object_get(json_object_get(run, "worker"), key),
            strchr(name, '/') + 1));
    } else {
        v = json_integer_value(
            json_object_get(json_object_get(run, "tasks"), name));
    }
    json_decref(run);
    json_decref(info);
    return v;
}

static void
test_bb_task_kept(void **state)
{
    struct fx *f = *state;
    json_t *meta = json_pack("{s:s}", "_recordid", "kept-1");
    struct timespec ts = {0, 600 * 1000 * 1000};
    struct sl_err err;
    char path[400];

    sl_err_clear(&err);
    /* bulk 1 as usual (the job's directory and bulk numbers exist now) */
    assert_int_equal(sl_bb_add(f->bb, "push", meta, 0, &err), 0);
    expect_all_committed(f, 1);
    assert_int_equal(push_counter(f, "createdTaskCount"), 1);
    /* bulk 2's .task cannot be written: a directory holds its temp name */
    (void)snprintf(path,
                   sizeof(path),
                   "%s/bb/j.push/00000000000000000002.task.tmp",
                   f->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    /* and its copy fails: the store of its output bucket is gone */
    assert_int_equal(sl_obj_store_delete(f->store, "tmp", &err), 0);
    assert_int_equal(sl_bb_add(f->bb, "push", meta, 0, &err), 0);
    json_decref(meta);
    (void)nanosleep(&ts, NULL); /* six ticks of the committer */
    assert_int_equal(push_counter(f, "createdTaskCount"), 2);
    assert_int_equal(push_counter(f, "successfulTaskCount"), 1);
    assert_int_equal(sl_obj_store_create(f->store, "tmp", NULL, &err), 0);
    expect_all_committed(f, 2);
    assert_int_equal(push_counter(f, "createdTaskCount"), 2);
    assert_int_equal(push_counter(f, "successfulTaskCount"), 2);
}

/* Take a task of the sink worker and finish it SUCCESSFUL (0: none). */
static int
sink_one(struct fx *f)
{
    json_t *t = NULL;
    json_t *res = json_pack("{s:s}", "status", "SUCCESSFUL");
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_jm_task_take(f->jm, "sink", "h", NULL, &t, &err) != 0 || t == NULL) {
        json_decref(res);
        return 0;
    }
    rc = sl_jm_task_finish(f->jm,
                           "sink",
                           json_string_value(json_object_get(t, "taskId")),
                           res,
                           &err);
    assert_int_equal(rc, 0);
    json_decref(res);
    json_decref(t);
    return 1;
}

/*
 * A bounded backlog (issue 29): with 6 sealed bulks and a run that may
 * hold 2 in active workflow runs, 2 are handed over and 4 wait in the
 * journal (still after five committer ticks); each workflow run that
 * ends lets one more through; a drain (as a finish does) hands over all
 * the rest at once; every record reaches a task.
 */
static void
test_bb_backlog_bounded(void **state)
{
    struct fx *f = *state;
    struct timespec ticks = {0, 500 * 1000 * 1000};
    struct pusher p = {f, 0, 6, 0};
    json_int_t pending = -1;
    json_int_t committed = -1;
    struct sl_err err;
    int done = 0;

    (void)push_main(&p); /* every record seals a bulk */
    assert_int_equal(p.failed, 0);
    wait_committed(f, 2);
    (void)nanosleep(&ticks, NULL);
    job_status(f, &pending, &committed);
    assert_int_equal(committed, 2);
    assert_int_equal(pending, 4);
    assert_int_equal(sl_jm_run_active_wfruns(f->jm, "push"), 2);

    assert_int_equal(sink_one(f), 1); /* one workflow run ends */
    wait_committed(f, 3);
    (void)nanosleep(&ticks, NULL);
    job_status(f, &pending, &committed);
    assert_int_equal(committed, 3);
    assert_int_equal(pending, 3);

    sl_err_clear(&err);
    assert_int_equal(sl_bb_drain(f->bb, "push", WAIT_MS, &err), 0);
    job_status(f, &pending, &committed);
    assert_int_equal(committed, 6);
    assert_int_equal(pending, 0);
    assert_int_equal(sl_jm_run_active_wfruns(f->jm, "push"), 5);
    while (sink_one(f)) {
        done++;
    }
    assert_int_equal(done, 5);
    assert_int_equal(sl_jm_run_active_wfruns(f->jm, "push"), 0);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_bb_pending_stress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bb_task_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_bb_backlog_bounded, setup_backlog, teardown),
    };
    const struct CMUnitTest delayed[] = {
        cmocka_unit_test_setup_teardown(
            test_bb_pending_window, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_bb_half_linked, setup_sized, teardown),
    };

    json_set_alloc_funcs(sl_malloc, sl_free);
    if (argc > 1 && strcmp(argv[1], "delayed") == 0) {
        return cmocka_run_group_tests(delayed, NULL, NULL);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
