/*
 * Unit tests of the run engine through the public jobmanager API, with a
 * real LMDB environment and object store in a temporary directory: task
 * generators (runOnceTrigger, runOnce from a bucket, default follow-ups,
 * completion), the state machine (finish, cancel, illegal transitions),
 * retries, leases, postpone with events, and recovery by closing and
 * reopening the jobmanager; a full disk: tasks given back with a growing
 * pause (errorCode NO_SPACE), and transient objects deleted only once the
 * state that releases them is committed (the store's test knob makes its
 * commits fail); the per-document history of runs: recorded with a
 * successful finish, a report that breaks the rules left out and counted,
 * the newest entries kept,
 * the runs past keepRuns dropped, all of it kept across a restart; a
 * consumed bulk deleted as soon as its one reader succeeded; flow control
 * (an action waits while the actions after it have enough to do).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "jobmanager/engine_int.h" /* f->jm->st for the store's test knob */
#include "tmpdir.h"

struct fx {
    char dir[256];
    char state[300];
    char storedir[300];
    struct sl_obj *store;
    struct sl_jm *jm;
    unsigned lease;
    unsigned flow; /* cfg.max_queued_downstream */
    json_t *ended; /* the run end hook's calls: ["job worker param", ...] */
};

static const char *const workers[] = {
    "{\"name\":\"split\",\"taskGenerator\":\"runOnceTrigger\","
    "\"output\":[{\"name\":\"out\",\"type\":\"recordBulks\","
    "\"modes\":[\"multiple\"]}]}",
    "{\"name\":\"copy\",\"parameters\":[{\"name\":\"p\",\"optional\":true}],"
    "\"input\":[{\"name\":\"in\",\"type\":\"recordBulks\"}],"
    "\"output\":[{\"name\":\"out\",\"type\":\"recordBulks\","
    "\"modes\":[\"optional\"]}]}",
    "{\"name\":\"done\",\"modes\":[\"requestsCompletion\"],"
    "\"input\":[{\"name\":\"in\",\"type\":\"recordBulks\"}]}",
};

static unsigned
three_parts(const json_t *params)
{
    (void)params;
    return 3;
}

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

/* The run end hook: records "<job> <worker> <parameter p or ->". */
static void
on_run_end(void *arg, const char *job, const char *worker, const json_t *params)
{
    struct fx *f = arg;
    const char *p = json_string_value(json_object_get(params, "p"));

    (void)json_array_append_new(
        f->ended,
        json_sprintf("%s %s %s", job, worker ? worker : "?", p ? p : "-"));
}

static void
jm_open(struct fx *f)
{
    struct sl_jm_config cfg;
    struct sl_err err;
    size_t i = 0;

    memset(&cfg, 0, sizeof(cfg));
    cfg.state_dir = f->state;
    cfg.store = f->store;
    cfg.lease_seconds = f->lease;
    cfg.max_retries = 2;
    cfg.max_queued_downstream = f->flow;
    cfg.nospace_first_ms = 100;
    cfg.nospace_max_ms = 400;
    cfg.history_max_per_run = 4;
    cfg.history_keep_runs = 2;
    assert_int_equal(sl_jm_open(&cfg, &f->jm, &err), 0);
    for (i = 0; i < sizeof(workers) / sizeof(workers[0]); i++) {
        json_t *d = json_loads(workers[i], 0, NULL);

        assert_int_equal(
            sl_jm_register_worker(f->jm, d, i == 2 ? three_parts : NULL, &err),
            0);
        json_decref(d);
    }
    sl_jm_set_run_end_hook(f->jm, on_run_end, f);
    assert_int_equal(sl_jm_start(f->jm, &err), 0);
}

static int
setup(void **state)
{
    struct fx *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "jmengine."));
    (void)snprintf(f->state, sizeof(f->state), "%s/jm", f->dir);
    (void)snprintf(f->storedir, sizeof(f->storedir), "%s/store", f->dir);
    assert_int_equal(
        sl_obj_open_fs(f->storedir, SL_DURABILITY_PROCESS, &f->store, &err), 0);
    assert_int_equal(sl_obj_store_create(f->store, "in", NULL, &err), 0);
    f->lease = 60;
    f->ended = json_array();
    jm_open(f);
    put_def(f->jm,
            "buckets",
            "{\"name\":\"src\",\"type\":\"recordBulks\","
            "\"parameters\":{\"store\":\"in\"}}");
    put_def(f->jm,
            "workflows",
            "{\"name\":\"chain\",\"modes\":[\"runOnce\"],"
            "\"parameters\":{\"tempStore\":\"tmp\"},"
            "\"startAction\":{\"worker\":\"split\",\"output\":{\"out\":\"a\"}},"
            "\"actions\":[{\"worker\":\"copy\",\"input\":{\"in\":\"a\"},"
            "\"output\":{\"out\":\"b\"}},"
            "{\"worker\":\"done\",\"input\":{\"in\":\"b\"}}]}");
    put_def(
        f->jm,
        "workflows",
        "{\"name\":\"frombucket\",\"modes\":[\"runOnce\",\"standard\"],"
        "\"parameters\":{\"tempStore\":\"tmp\"},"
        "\"startAction\":{\"worker\":\"copy\",\"input\":{\"in\":\"src\"}}}");
    put_def(f->jm, "jobs", "{\"name\":\"chainJob\",\"workflow\":\"chain\"}");
    put_def(
        f->jm, "jobs", "{\"name\":\"bucketJob\",\"workflow\":\"frombucket\"}");
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    sl_jm_close(f->jm);
    json_decref(f->ended);
    sl_obj_close(f->store);
    assert_int_equal(tmpdir_remove(f->dir), 0);
    sl_free(f);
    return 0;
}

/* Take a task of @worker; NULL if none. */
static json_t *
take(struct fx *f, const char *worker)
{
    json_t *t = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_jm_task_take(f->jm, worker, "h", NULL, &t, &err) != 0) {
        return NULL;
    }
    return t;
}

/* Write @n bulks (empty objects) into output slot "out" of @t. */
static void
write_out(struct fx *f, const json_t *t, int n)
{
    json_t *b =
        json_array_get(json_object_get(json_object_get(t, "output"), "out"), 0);
    const char *store = json_string_value(json_object_get(b, "store"));
    const char *id = json_string_value(json_object_get(b, "id"));
    int i = 0;

    for (i = 0; i < n; i++) {
        struct sl_obj_writer *w = NULL;
        char oid[600];
        struct sl_err err;
        size_t len = strlen(id);

        if (i == 0) {
            (void)snprintf(oid, sizeof(oid), "%s", id);
        } else {
            (void)snprintf(oid, sizeof(oid), "%.*s/%d", (int)(len - 2), id, i);
        }
        assert_int_equal(sl_obj_writer_open(f->store, store, oid, &w, &err), 0);
        assert_int_equal(sl_obj_writer_write(w, "x", 1, &err), 0);
        assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
        sl_obj_writer_free(w);
    }
}

/* Finish task @t with result @res (taken). */
static int
finish_with(struct fx *f, const json_t *t, json_t *res)
{
    struct sl_err err;
    int rc =
        sl_jm_task_finish(f->jm,
                          json_string_value(json_object_get(t, "workerName")),
                          json_string_value(json_object_get(t, "taskId")),
                          res,
                          &err);

    json_decref(res);
    return rc;
}

static int
finish(struct fx *f, json_t *t, const char *status)
{
    return finish_with(f, t, json_pack("{s:s}", "status", status));
}

/* Start a run of @job (its id into @id) and finish its split task with
 * @n bulks. */
static void
split_run(struct fx *f, const char *job, char *id, int n)
{
    struct sl_err err;
    json_t *t = NULL;

    assert_int_equal(sl_jm_run_start(f->jm, job, NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    write_out(f, t, n);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
}

static json_t *
run_data(struct fx *f, const char *job, const char *id)
{
    json_t *out = NULL;
    struct sl_err err;

    assert_int_equal(sl_jm_run_get(f->jm, job, id, 0, &out, &err), 0);
    return out;
}

static const char *
state_of(struct fx *f, const char *job, const char *id)
{
    static char buf[32];
    json_t *d = NULL;
    int i = 0;

    /* The final state is written by the clean-up thread: wait a little. */
    for (i = 0; i < 200; i++) {
        d = run_data(f, job, id);
        (void)snprintf(buf,
                       sizeof(buf),
                       "%s",
                       json_string_value(json_object_get(d, "state")));
        json_decref(d);
        if (strcmp(buf, "CLEANINGUP") != 0 && strcmp(buf, "CANCELING") != 0) {
            break;
        }
        (void)usleep(10000);
    }
    return buf;
}

/* Take @n tasks of @worker and finish each SUCCESSFUL, after writing
 * @bulks bulks into its output slot "out" when @bulks > 0. */
static void
finish_n(struct fx *f, const char *worker, int n, int bulks)
{
    json_t *t = NULL;
    int i = 0;

    for (i = 0; i < n; i++) {
        t = take(f, worker);
        assert_non_null(t);
        if (bulks > 0) {
            write_out(f, t, bulks);
        }
        assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
        json_decref(t);
    }
}

/* Finish the three completion tasks of the "done" worker. */
static void
drain_completion(struct fx *f)
{
    finish_n(f, "done", 3, 0);
    assert_null(take(f, "done"));
}

static json_int_t
task_counter(struct fx *f, const char *job, const char *id, const char *name)
{
    json_t *d = run_data(f, job, id);
    json_int_t v =
        json_integer_value(json_object_get(json_object_get(d, "tasks"), name));

    json_decref(d);
    return v;
}

/* runOnceTrigger: one task; multiple slot: one follow-up per bulk; the
 * completion generator: partitions tasks in COMPLETING. */
static void
test_engine_generators_and_completion(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    int i = 0;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    assert_string_equal(state_of(f, "chainJob", id), "FINISHING");
    t = take(f, "split");
    assert_non_null(t);
    assert_int_equal(json_object_size(json_object_get(t, "input")), 0);
    assert_null(take(f, "split"));
    write_out(f, t, 4);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), SL_EGONE);
    json_decref(t);
    finish_n(f, "copy", 4, 1);
    assert_null(take(f, "copy"));
    for (i = 0; i < 4; i++) {
        t = take(f, "done");
        assert_non_null(t);
        assert_false(json_is_true(
            json_object_get(json_object_get(t, "properties"), "completion")));
        assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
        json_decref(t);
    }
    assert_string_equal(state_of(f, "chainJob", id), "COMPLETING");
    for (i = 0; i < 3; i++) {
        t = take(f, "done");
        assert_non_null(t);
        assert_true(json_is_true(
            json_object_get(json_object_get(t, "properties"), "completion")));
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(t, "properties"), "partitions")),
                         3);
        assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
        json_decref(t);
    }
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_int_equal(task_counter(f, "chainJob", id, "createdTaskCount"), 12);
    assert_int_equal(task_counter(f, "chainJob", id, "successfulTaskCount"),
                     12);
}

/*
 * Idle takers are woken by their own worker's tasks only: a new task of
 * "split" changes split's work generation and leaves copy's and done's
 * alone (all pool threads used to wake for every task); the follow-ups
 * of split's finish then change copy's.
 */
static void
test_engine_work_wait_per_worker(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    uint64_t g_split = sl_jm_work_wait(f->jm, "split", 0, 0);
    uint64_t g_copy = sl_jm_work_wait(f->jm, "copy", 0, 0);
    uint64_t g_done = sl_jm_work_wait(f->jm, "done", 0, 0);
    uint64_t g = 0;

    assert_true(g_split != 0 && g_copy != 0 && g_done != 0);
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    g = sl_jm_work_wait(f->jm, "split", g_split, 5000);
    assert_true(g != g_split);
    assert_true(sl_jm_work_wait(f->jm, "copy", g_copy, 0) == g_copy);
    assert_true(sl_jm_work_wait(f->jm, "done", g_done, 0) == g_done);

    finish_n(f, "split", 1, 2);
    g = sl_jm_work_wait(f->jm, "copy", g_copy, 5000);
    assert_true(g != g_copy);
    assert_true(sl_jm_work_wait(f->jm, "done", g_done, 0) == g_done);
    t = take(f, "copy");
    assert_non_null(t);
    json_decref(t);
}

/* The run data is a snapshot: a task finishing afterwards (counters, an
 * error) does not change what was handed out, which callers serialise
 * after the jobmanager's lock is released (a shared reference to the
 * worker counters raced with task finishes). */
static void
test_engine_run_data_snapshot(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    json_t *d = NULL;
    char *before = NULL;
    char *after = NULL;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    write_out(f, t, 1);
    d = run_data(f, "chainJob", id);
    before = json_dumps(d, JSON_SORT_KEYS);
    assert_int_equal(finish_with(f,
                                 t,
                                 json_pack("{s:s, s:{s:i}}",
                                           "status",
                                           "SUCCESSFUL",
                                           "counters",
                                           "snapshotCounter",
                                           7)),
                     0);
    json_decref(t);
    t = take(f, "copy");
    assert_non_null(t);
    assert_int_equal(finish(f, t, "FATAL_ERROR"), 0);
    json_decref(t);
    after = json_dumps(d, JSON_SORT_KEYS);
    assert_string_equal(before, after);
    assert_null(strstr(after, "snapshotCounter"));
    json_decref(d);
    sl_free(after);
    /* and the run itself did record them */
    d = run_data(f, "chainJob", id);
    after = json_dumps(d, JSON_SORT_KEYS);
    assert_non_null(strstr(after, "snapshotCounter"));
    assert_int_equal(json_array_size(json_object_get(d, "errors")), 1);
    sl_free(before);
    sl_free(after);
    json_decref(d);
    (void)sl_jm_run_cancel(f->jm, "chainJob", id, &err);
}

/* runOnce from a bucket: one task per object; an empty bucket gives a run
 * that succeeds at once. */
static void
test_engine_runonce_from_bucket(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    int i = 0;

    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob", "runOnce", id, &err),
                     0);
    assert_string_equal(state_of(f, "bucketJob", id), "SUCCEEDED");
    for (i = 0; i < 5; i++) {
        struct sl_obj_writer *w = NULL;
        char oid[32];

        (void)snprintf(oid, sizeof(oid), "src/o%d", i);
        assert_int_equal(sl_obj_writer_open(f->store, "in", oid, &w, &err), 0);
        assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
        sl_obj_writer_free(w);
    }
    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob", "runOnce", id, &err),
                     0);
    for (i = 0; i < 5; i++) {
        t = take(f, "copy");
        assert_non_null(t);
        assert_int_equal(
            json_array_size(json_object_get(json_object_get(t, "input"), "in")),
            1);
        assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
        json_decref(t);
    }
    assert_null(take(f, "copy"));
    assert_string_equal(state_of(f, "bucketJob", id), "SUCCEEDED");
    /* a persistent bucket's objects are the user's: never deleted */
    for (i = 0; i < 5; i++) {
        struct sl_obj_info info;
        char oid[32];

        (void)snprintf(oid, sizeof(oid), "src/o%d", i);
        assert_int_equal(sl_obj_stat(f->store, "in", oid, &info, NULL), 0);
    }
}

/* Standard mode: RUNNING until finish; finish and cancel rules. */
static void
test_engine_state_machine(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char id2[SL_JM_RUN_ID_MAX];
    struct sl_err err;

    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob", "standard", id, &err),
                     0);
    assert_string_equal(state_of(f, "bucketJob", id), "RUNNING");
    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob", NULL, id2, &err),
                     SL_ECONFLICT);
    assert_int_equal(sl_jm_run_delete(f->jm, "bucketJob", id, &err),
                     SL_ECONFLICT);
    assert_int_equal(sl_jm_run_finish(f->jm, "bucketJob", id, &err), 0);
    assert_string_equal(state_of(f, "bucketJob", id), "SUCCEEDED");
    assert_int_equal(sl_jm_run_finish(f->jm, "bucketJob", id, &err),
                     SL_EBADSTATE);
    assert_int_equal(sl_jm_run_cancel(f->jm, "bucketJob", id, &err),
                     SL_EBADSTATE);
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", "standard", id2, &err),
                     SL_EINVAL);
    assert_string_equal(err.field, "mode");
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id2, &err), 0);
    assert_int_equal(sl_jm_run_finish(f->jm, "chainJob", id2, &err),
                     SL_EBADSTATE);
    assert_int_equal(sl_jm_run_cancel(f->jm, "chainJob", id2, &err), 0);
    assert_string_equal(state_of(f, "chainJob", id2), "CANCELED");
    assert_null(take(f, "split"));
    assert_int_equal(task_counter(f, "chainJob", id2, "cancelledTaskCount"), 1);
    assert_int_equal(sl_jm_run_delete(f->jm, "chainJob", id2, &err), 0);
    assert_int_equal(sl_jm_run_finish(f->jm, "chainJob", id2, &err), SL_ENOENT);
    assert_int_equal(sl_jm_run_start(f->jm, "nojob", NULL, id2, &err),
                     SL_ENOENT);
}

/* The run end hook: once per action of a run that takes no more tasks
 * (finished, canceled), with the action's resolved parameters, before the
 * run reaches its final state; never for a run still going. */
static void
test_engine_run_end_hook(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char *all = NULL;
    struct sl_err err;

    put_def(f->jm,
            "jobs",
            "{\"name\":\"hookJob\",\"workflow\":\"frombucket\","
            "\"parameters\":{\"p\":\"v1\"}}");
    assert_int_equal(sl_jm_run_start(f->jm, "hookJob", "standard", id, &err),
                     0);
    assert_int_equal(json_array_size(f->ended), 0);
    assert_int_equal(sl_jm_run_finish(f->jm, "hookJob", id, &err), 0);
    assert_string_equal(state_of(f, "hookJob", id), "SUCCEEDED");
    all = json_dumps(f->ended, JSON_COMPACT);
    assert_string_equal(all, "[\"hookJob copy v1\"]");
    sl_free(all);

    /* runOnce, canceled: each of the three actions, no parameter */
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    assert_int_equal(json_array_size(f->ended), 1);
    assert_int_equal(sl_jm_run_cancel(f->jm, "chainJob", id, &err), 0);
    assert_string_equal(state_of(f, "chainJob", id), "CANCELED");
    all = json_dumps(f->ended, JSON_COMPACT);
    assert_string_equal(all,
                        "[\"hookJob copy v1\",\"chainJob split -\","
                        "\"chainJob copy -\",\"chainJob done -\"]");
    sl_free(all);
}

/* sl_jm_param_in_use: a worker's parameter as its tasks resolve it
 * (job parameters, "<worker>.<param>", the default for an unset one), in
 * active runs only. */
static void
test_engine_param_in_use(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char id2[SL_JM_RUN_ID_MAX];
    char job[SL_NAME_MAX + 1] = "";
    struct sl_err err;

    put_def(f->jm,
            "jobs",
            "{\"name\":\"paramJob\",\"workflow\":\"frombucket\","
            "\"parameters\":{\"p\":\"v1\"}}");
    put_def(f->jm,
            "jobs",
            "{\"name\":\"paramJob2\",\"workflow\":\"chain\","
            "\"parameters\":{\"copy.p\":\"v3\"}}");
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v1", job),
                     0);
    assert_int_equal(sl_jm_run_start(f->jm, "paramJob", "standard", id, &err),
                     0);
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v1", job),
                     1);
    assert_string_equal(job, "paramJob");
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v2", NULL),
                     0);
    assert_int_equal(sl_jm_param_in_use(f->jm, "split", "p", NULL, "v1", NULL),
                     0);
    /* unset: the caller's default, or nothing */
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "q", "dq", "dq", NULL),
                     1);
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "q", NULL, "dq", NULL),
                     0);
    /* "<worker>.<param>" reaches that worker only */
    assert_int_equal(sl_jm_run_start(f->jm, "paramJob2", NULL, id2, &err), 0);
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v3", job),
                     1);
    assert_string_equal(job, "paramJob2");
    assert_int_equal(sl_jm_param_in_use(f->jm, "split", "p", NULL, "v3", NULL),
                     0);
    assert_int_equal(sl_jm_run_cancel(f->jm, "paramJob2", id2, &err), 0);
    assert_int_equal(sl_jm_run_finish(f->jm, "paramJob", id, &err), 0);
    assert_string_equal(state_of(f, "paramJob", id), "SUCCEEDED");
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v1", NULL),
                     0);
    assert_int_equal(sl_jm_param_in_use(f->jm, "copy", "p", NULL, "v3", NULL),
                     0);
}

/* Recoverable errors retry under a new id until maxRetries; then the run
 * fails and nothing is left. */
static void
test_engine_retries(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char first[64];
    struct sl_err err;
    json_t *t = NULL;
    int i = 0;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    for (i = 0; i < 3; i++) {
        t = take(f, "split");
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(t, "properties"), "retries")),
                         i);
        if (i == 0) {
            (void)snprintf(first,
                           sizeof(first),
                           "%s",
                           json_string_value(json_object_get(t, "taskId")));
        } else {
            assert_string_not_equal(
                first, json_string_value(json_object_get(t, "taskId")));
        }
        assert_int_equal(finish(f, t, "RECOVERABLE_ERROR"), 0);
        json_decref(t);
    }
    assert_string_equal(state_of(f, "chainJob", id), "FAILED");
    assert_int_equal(
        task_counter(f, "chainJob", id, "retriedAfterErrorTaskCount"), 2);
    assert_int_equal(
        task_counter(f, "chainJob", id, "failedAfterRetryTaskCount"), 1);
    assert_null(take(f, "split"));
}

/* Postpone with a prerequisite event holds the task until completed. */
static void
test_engine_events(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;

    char long_name[600];

    /* Names are checked before they become keys: one over LMDB's key
     * limit used to fail the group commit and stop the store. */
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(sl_jm_event_begin(f->jm, long_name, &err), SL_EINVAL);
    assert_string_equal(err.field, "event");
    assert_int_equal(sl_jm_event_begin(f->jm, "a\nb", &err), SL_EINVAL);
    assert_int_equal(sl_jm_event_begin(f->jm, "\xff\xfe", &err), SL_EINVAL);
    assert_int_equal(sl_jm_event_complete(f->jm, long_name, &err), SL_EINVAL);
    assert_int_equal(sl_jm_event_begin(f->jm, "login", &err), 1);
    assert_int_equal(sl_jm_event_begin(f->jm, "login", &err), 0);
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_int_equal(finish_with(f,
                                 t,
                                 json_pack("{s:s, s:[s]}",
                                           "status",
                                           "POSTPONE",
                                           "prerequisiteEvents",
                                           "login")),
                     0);
    json_decref(t);
    assert_null(take(f, "split"));
    assert_int_equal(sl_jm_event_complete(f->jm, "login", &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");

    /* A pending event is completed by a restart (its owner is gone). */
    assert_int_equal(sl_jm_event_begin(f->jm, "token", &err), 1);
    sl_jm_close(f->jm);
    jm_open(f);
    assert_int_equal(sl_jm_event_begin(f->jm, "token", &err), 1);
}

/* An expired lease is a retry; the late finisher gets SL_EGONE. */
static void
test_engine_lease_expiry(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    json_t *t2 = NULL;

    sl_jm_close(f->jm);
    f->lease = 1;
    jm_open(f);
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    (void)sleep(2);
    assert_int_equal(
        sl_jm_task_keepalive(f->jm,
                             "split",
                             json_string_value(json_object_get(t, "taskId")),
                             &err),
        SL_EGONE);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), SL_EGONE);
    t2 = take(f, "split");
    assert_non_null(t2);
    assert_int_equal(finish(f, t2, "SUCCESSFUL"), 0);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_int_equal(
        task_counter(f, "chainJob", id, "retriedAfterTimeoutTaskCount"), 1);
    json_decref(t);
    json_decref(t2);
}

/* A server that stalls (here: jm->mu held past the lease, so neither the
 * lease timer nor a keep-alive can run) does not expire the leases it
 * could not hear about: once it runs again, a keep-alive still holds. */
static void
test_engine_lease_stall(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;

    sl_jm_close(f->jm);
    f->lease = 2;
    jm_open(f);
    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    (void)pthread_mutex_lock(&f->jm->mu);
    (void)usleep(3000 * 1000);
    (void)pthread_mutex_unlock(&f->jm->mu);
    (void)usleep(300 * 1000); /* the lease timer has run meanwhile */
    assert_int_equal(
        sl_jm_task_keepalive(f->jm,
                             "split",
                             json_string_value(json_object_get(t, "taskId")),
                             &err),
        0);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_int_equal(
        task_counter(f, "chainJob", id, "retriedAfterTimeoutTaskCount"), 0);
    json_decref(t);
}

/* Close and reopen mid-run: the in-progress task is todo again, its old id
 * is gone from nobody's view but finishing it still works only once, and
 * the run completes with the same counters. */
static void
test_engine_recovery(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    json_t *t = NULL;
    json_t *again = NULL;

    split_run(f, "chainJob", id, 2);
    t = take(f, "copy"); /* in progress at the "crash" */
    assert_non_null(t);
    sl_jm_close(f->jm);
    jm_open(f);
    assert_string_equal(state_of(f, "chainJob", id), "FINISHING");
    again = take(f, "copy");
    assert_non_null(again);
    json_decref(again);
    again = take(f, "copy");
    assert_non_null(again);
    assert_null(take(f, "copy"));
    json_decref(again);
    json_decref(t);
    sl_jm_close(f->jm);
    jm_open(f);
    finish_n(f, "copy", 2, 0);
    finish_n(f, "done", 3, 0);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_int_equal(task_counter(f, "chainJob", id, "createdTaskCount"), 6);
    assert_int_equal(task_counter(f, "chainJob", id, "successfulTaskCount"), 6);
}

/* A page of run @id's history (state -1: all). */
static json_t *
docs_page(struct fx *f, const char *id, int state, uint64_t after, unsigned n)
{
    json_t *out = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_jm_run_documents(
            f->jm, "chainJob", id, state, after, n, &out, &err) != 0) {
        fail_msg("documents: %s", err.message);
    }
    return out;
}

static json_int_t
docs_count(const json_t *page, const char *name)
{
    return json_integer_value(
        json_object_get(json_object_get(page, "counts"), name));
}

/* One run of chainJob: the split task reports @docs (JSON text) and
 * writes nothing, the completion tasks end the run. */
static void
history_run(struct fx *f, char id[SL_JM_RUN_ID_MAX], const char *docs)
{
    struct sl_err err;
    json_t *t = NULL;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    assert_int_equal(finish_with(f,
                                 t,
                                 json_pack("{s:s, s:o}",
                                           "status",
                                           "SUCCESSFUL",
                                           "documents",
                                           json_loads(docs, 0, NULL))),
                     0);
    json_decref(t);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
}

static void
test_engine_history(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char old[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *t = NULL;
    json_t *page = NULL;
    json_t *doc = NULL;
    int i = 0;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    /* not an array: refused whole, the task stays in progress */
    sl_err_clear(&err);
    assert_int_equal(
        finish_with(
            f,
            t,
            json_pack(
                "{s:s, s:s}", "status", "SUCCESSFUL", "documents", "all")),
        SL_EINVAL);
    /* an entry that breaks the rules is left out and counted alone */
    write_out(f, t, 1);
    assert_int_equal(
        finish_with(f,
                    t,
                    json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s, s:s}]}",
                              "status",
                              "SUCCESSFUL",
                              "documents",
                              "state",
                              "gone",
                              "id",
                              "x",
                              "state",
                              "new",
                              "id",
                              "a",
                              "source",
                              "s1")),
        0);
    json_decref(t);
    page = run_data(f, "chainJob", id);
    {
        const char *k = NULL;
        json_t *c = NULL;
        json_int_t invalid = 0;

        json_object_foreach(json_object_get(page, "worker"), k, c)
        {
            invalid +=
                json_integer_value(json_object_get(c, "documents.invalid"));
        }
        assert_int_equal(invalid, 1);
    }
    json_decref(page);
    t = take(f, "copy");
    assert_int_equal(finish_with(f,
                                 t,
                                 json_pack("{s:s, s:[{s:s, s:s}]}",
                                           "status",
                                           "RECOVERABLE_ERROR",
                                           "documents",
                                           "state",
                                           "failed",
                                           "id",
                                           "lost")),
                     0);
    json_decref(t);
    t = take(f, "copy");
    assert_non_null(t);
    assert_int_equal(
        finish_with(
            f,
            t,
            json_loads("{\"status\": \"SUCCESSFUL\", \"documents\": ["
                       "{\"state\": \"failed\", \"id\": \"b\", \"source\": "
                       "\"s1\", \"reason\": \"unreadable\", \"message\": "
                       "\"Permission denied\"},"
                       "{\"state\": \"skipped\", \"id\": \"c\"},"
                       "{\"state\": \"changed\", \"id\": \"d\"},"
                       "{\"state\": \"deleted\", \"id\": \"a\", \"source\": "
                       "\"s1\"}]}",
                       0,
                       NULL)),
        0);
    json_decref(t);

    page = docs_page(f, NULL, -1, 0, 10);
    assert_string_equal(json_string_value(json_object_get(page, "runId")), id);
    assert_int_equal(docs_count(page, "new"), 1);
    assert_int_equal(docs_count(page, "failed"), 1);
    assert_int_equal(docs_count(page, "deleted"), 1);
    /* five reported, the newest four kept (history_max_per_run 4) */
    assert_int_equal(docs_count(page, "recorded"), 4);
    assert_int_equal(docs_count(page, "notRecorded"), 1);
    assert_int_equal(json_array_size(json_object_get(page, "documents")), 4);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(page, "documents"), 0), "id")),
        "b");
    json_decref(page);
    page = docs_page(f, NULL, SL_JM_DOC_FAILED, 0, 10);
    assert_int_equal(json_array_size(json_object_get(page, "documents")), 1);
    doc = json_array_get(json_object_get(page, "documents"), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "reason")),
                        "unreadable");
    assert_string_equal(json_string_value(json_object_get(doc, "worker")),
                        "copy");
    json_decref(page);
    page = docs_page(f, id, -1, 0, 2); /* pages of two */
    assert_int_equal(json_array_size(json_object_get(page, "documents")), 2);
    assert_true(json_is_integer(json_object_get(page, "next")));
    {
        uint64_t next =
            (uint64_t)json_integer_value(json_object_get(page, "next"));

        json_decref(page);
        page = docs_page(f, id, -1, next, 2);
        assert_int_equal(json_array_size(json_object_get(page, "documents")),
                         2);
        assert_null(json_object_get(page, "next"));
        json_decref(page);
    }
    /* last events: b failed; a deleted, so none */
    assert_int_equal(sl_jm_document_problem(f->jm, "s1", "b", &doc, &err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "state")),
                        "failed");
    assert_string_equal(json_string_value(json_object_get(doc, "runId")), id);
    json_decref(doc);
    assert_int_equal(sl_jm_document_problem(f->jm, "s1", "a", &doc, &err),
                     SL_ENOENT);

    /* kept across a restart, the run still going */
    sl_jm_close(f->jm);
    jm_open(f);
    page = docs_page(f, id, -1, 0, 10);
    assert_int_equal(docs_count(page, "recorded"), 4);
    assert_int_equal(docs_count(page, "new"), 1);
    json_decref(page);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    (void)snprintf(old, sizeof(old), "%s", id);

    /* two more runs: the first one's entries go (keepRuns 2) */
    history_run(f, id, "[{\"state\": \"new\", \"id\": \"e\"}]");
    history_run(f, id, "[{\"state\": \"new\", \"id\": \"f\"}]");
    for (i = 0; i < 500; i++) {
        page = docs_page(f, old, -1, 0, 10);
        if (json_array_size(json_object_get(page, "documents")) == 0) {
            break;
        }
        json_decref(page);
        page = NULL;
        (void)usleep(10000);
    }
    assert_non_null(page);
    assert_int_equal(docs_count(page, "new"), 1); /* counts stay */
    assert_int_equal(docs_count(page, "recorded"), 0);
    json_decref(page);
    page = docs_page(f, id, -1, 0, 10);
    assert_int_equal(json_array_size(json_object_get(page, "documents")), 1);
    json_decref(page);
    assert_int_equal(sl_jm_documents_forget(f->jm, "s1", &err), 0);
    assert_int_equal(sl_jm_document_problem(f->jm, "s1", "b", &doc, &err),
                     SL_ENOENT);
}

/* Take a task of @worker, waiting up to @max_ms; *waited (if not NULL)
 * is how long it took. */
static json_t *
take_wait(struct fx *f, const char *worker, int64_t max_ms, int64_t *waited)
{
    int64_t t0 = sl_mono_ms();
    json_t *t = NULL;

    while ((t = take(f, worker)) == NULL && sl_mono_ms() - t0 < max_ms) {
        (void)usleep(2000);
    }
    if (waited != NULL) {
        *waited = sl_mono_ms() - t0;
    }
    return t;
}

static json_t *
nospace_result(void)
{
    return json_pack("{s:s, s:s, s:s}",
                     "status",
                     "RECOVERABLE_ERROR",
                     "errorMessage",
                     "write: no space left on device",
                     "errorCode",
                     "NO_SPACE");
}

/*
 * A task that fails with errorCode NO_SPACE goes back without counting a
 * retry (here more often than maxRetries 2), under a new id, and no task
 * is handed out during a pause of 100 ms, then 200 ms while it goes on
 * failing; the run does not fail.
 */
static void
test_engine_nospace_backoff(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char prev[64];
    struct sl_err err;
    json_t *t = NULL;
    json_t *d = NULL;
    int64_t waited = 0;
    int i = 0;

    assert_int_equal(sl_jm_run_start(f->jm, "chainJob", NULL, id, &err), 0);
    t = take(f, "split");
    assert_non_null(t);
    assert_int_equal(
        finish_with(
            f,
            t,
            json_pack(
                "{s:s, s:i}", "status", "RECOVERABLE_ERROR", "errorCode", 5)),
        SL_EINVAL); /* not a string: refused, still ours */
    (void)snprintf(prev,
                   sizeof(prev),
                   "%s",
                   json_string_value(json_object_get(t, "taskId")));
    assert_int_equal(finish_with(f, t, nospace_result()), 0);
    json_decref(t);
    assert_null(take(f, "split")); /* paused */
    t = take_wait(f, "split", 2000, &waited);
    assert_non_null(t);
    assert_true(waited >= 80);
    assert_string_not_equal(prev,
                            json_string_value(json_object_get(t, "taskId")));
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(t, "properties"), "retries")),
                     0);
    /* failing again at once: the next pause is twice as long */
    assert_int_equal(finish_with(f, t, nospace_result()), 0);
    json_decref(t);
    t = take_wait(f, "split", 2000, &waited);
    assert_non_null(t);
    assert_true(waited >= 180);
    for (i = 0; i < 3; i++) {
        assert_int_equal(finish_with(f, t, nospace_result()), 0);
        json_decref(t);
        t = take_wait(f, "split", 2000, NULL);
        assert_non_null(t);
    }
    assert_string_equal(state_of(f, "chainJob", id), "FINISHING");
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_int_equal(
        task_counter(f, "chainJob", id, "retriedAfterNoSpaceTaskCount"), 5);
    assert_int_equal(
        task_counter(f, "chainJob", id, "retriedAfterErrorTaskCount"), 0);
    assert_int_equal(
        task_counter(f, "chainJob", id, "failedAfterRetryTaskCount"), 0);
    d = run_data(f, "chainJob", id);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(d, "errors"), 0), "status")),
        "NO_SPACE");
    json_decref(d);
}

struct bg_finish {
    struct fx *f;
    json_t *t;
    const char *status;
    int rc;
};

static void *
bg_finish_main(void *arg)
{
    struct bg_finish *b = arg;

    b->rc = finish(b->f, b->t, b->status);
    return NULL;
}

/* Does object @id of store "tmp" exist? */
static int
tmp_exists(struct fx *f, const char *id)
{
    struct sl_obj_info info;

    return sl_obj_stat(f->store, "tmp", id, &info, NULL) == 0;
}

/* The id of the first bulk of slot @slot in part @part ("input",
 * "output") of task @t. */
static const char *
bulk_id(const json_t *t, const char *part, const char *slot)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(t, part), slot), 0),
        "id"));
}

/* The input object id of copy task @t. */
static const char *
input_id(const json_t *t)
{
    return bulk_id(t, "input", "in");
}

/* Wait up to 2 s for object @id of store "tmp" to go; whether it went. */
static int
tmp_gone(struct fx *f, const char *id)
{
    int i = 0;

    for (i = 0; i < 200 && tmp_exists(f, id); i++) {
        (void)usleep(10000);
    }
    return !tmp_exists(f, id);
}

/*
 * A bulk of a transient bucket that one action reads is deleted once its
 * task succeeded, while the run goes on: a runOnce run is one workflow
 * run, and its intermediate bulks used to stay until its end.  A failed
 * task keeps its input for the retry; a bulk that two actions read stays
 * until the run ends.
 */
static void
test_engine_inputs_released(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char in[2][300];
    char out[300];
    json_t *t = NULL;
    json_t *t2 = NULL;

    split_run(f, "chainJob", id, 2);
    t = take(f, "copy");
    t2 = take(f, "copy");
    assert_non_null(t2);
    (void)snprintf(in[0], sizeof(in[0]), "%s", input_id(t));
    (void)snprintf(in[1], sizeof(in[1]), "%s", input_id(t2));
    (void)snprintf(out, sizeof(out), "%s", bulk_id(t, "output", "out"));
    write_out(f, t, 1);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    assert_true(tmp_gone(f, in[0]));
    assert_string_equal(state_of(f, "chainJob", id), "FINISHING");
    assert_true(tmp_exists(f, out)); /* "done" has not read it yet */
    /* the failed task's input stays for its retry */
    assert_int_equal(finish(f, t2, "RECOVERABLE_ERROR"), 0);
    json_decref(t2);
    (void)usleep(100000);
    assert_true(tmp_exists(f, in[1]));
    t2 = take(f, "copy");
    assert_non_null(t2);
    assert_string_equal(input_id(t2), in[1]);
    assert_int_equal(finish(f, t2, "SUCCESSFUL"), 0);
    json_decref(t2);
    assert_true(tmp_gone(f, in[1]));
    t = take(f, "done");
    assert_string_equal(input_id(t), out);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    assert_true(tmp_gone(f, out));
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");

    /* two actions read bucket "a": its bulks stay until the run ends */
    put_def(f->jm,
            "workflows",
            "{\"name\":\"fan\",\"modes\":[\"runOnce\"],"
            "\"parameters\":{\"tempStore\":\"tmp\"},"
            "\"startAction\":{\"worker\":\"split\",\"output\":{\"out\":\"a\"}},"
            "\"actions\":[{\"worker\":\"copy\",\"input\":{\"in\":\"a\"}},"
            "{\"worker\":\"done\",\"input\":{\"in\":\"a\"}}]}");
    put_def(f->jm, "jobs", "{\"name\":\"fanJob\",\"workflow\":\"fan\"}");
    split_run(f, "fanJob", id, 1);
    t = take(f, "copy");
    (void)snprintf(in[0], sizeof(in[0]), "%s", input_id(t));
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    t = take(f, "done");
    assert_string_equal(input_id(t), in[0]);
    assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
    json_decref(t);
    (void)usleep(100000);
    assert_true(tmp_exists(f, in[0]));
    drain_completion(f);
    assert_string_equal(state_of(f, "fanJob", id), "SUCCEEDED");
    assert_false(tmp_exists(f, in[0]));
}

/*
 * Flow control: copy waits while its run has two "done" tasks to do, and
 * goes on (its idle takers woken) once one is taken.  An action that reads
 * what it writes is never held back by its own tasks.
 */
static void
test_engine_flow_control(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    json_t *done[2] = {NULL, NULL};
    uint64_t gen = 0;
    int i = 0;

    sl_jm_close(f->jm);
    f->flow = 2;
    jm_open(f);
    split_run(f, "chainJob", id, 4);
    finish_n(f, "copy", 2, 1);
    assert_null(take(f, "copy")); /* two copy tasks wait */
    gen = sl_jm_work_wait(f->jm, "copy", 0, 0);
    assert_int_equal(sl_jm_work_wait(f->jm, "copy", gen, 0), gen);
    done[0] = take(f, "done");
    assert_non_null(done[0]);
    assert_int_not_equal(sl_jm_work_wait(f->jm, "copy", gen, 0), gen);
    finish_n(f, "copy", 1, 1);
    assert_null(take(f, "copy")); /* two again */
    for (i = 0; i < 2; i++) {
        assert_int_equal(finish(f, done[0], "SUCCESSFUL"), 0);
        json_decref(done[0]);
        done[0] = take(f, "done");
        assert_non_null(done[0]);
    }
    assert_int_equal(finish(f, done[0], "SUCCESSFUL"), 0);
    json_decref(done[0]);
    finish_n(f, "copy", 1, 1);
    done[1] = take(f, "done");
    assert_int_equal(finish(f, done[1], "SUCCESSFUL"), 0);
    json_decref(done[1]);
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");

    /* copy reads what it writes: its own four tasks do not hold it */
    put_def(f->jm,
            "workflows",
            "{\"name\":\"loop\",\"modes\":[\"runOnce\"],"
            "\"parameters\":{\"tempStore\":\"tmp\"},"
            "\"startAction\":{\"worker\":\"split\",\"output\":{\"out\":\"a\"}},"
            "\"actions\":[{\"worker\":\"copy\",\"input\":{\"in\":\"a\"},"
            "\"output\":{\"out\":\"a\"}}]}");
    put_def(f->jm, "jobs", "{\"name\":\"loopJob\",\"workflow\":\"loop\"}");
    split_run(f, "loopJob", id, 4);
    finish_n(f, "copy", 4, 0);
    assert_string_equal(state_of(f, "loopJob", id), "SUCCEEDED");
}

/*
 * State first, then clean-up.  A fatal error fails the run, which deletes
 * its transient objects; while the commit of that state fails (a full
 * disk), nothing may be deleted: the persisted state still has the tasks
 * that read them.  1. The server stops before the commit succeeds: the
 * objects are still there, and after a restart the run goes on from the
 * committed state and completes.  2. The commit succeeds later: the run
 * ends FAILED and only then are its objects deleted.
 */
static void
test_engine_state_first(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char in[2][300];
    struct bg_finish bg;
    pthread_t th;
    json_t *t = NULL;
    int i = 0;

    split_run(f, "chainJob", id, 2);
    t = take(f, "copy");
    assert_non_null(t);
    (void)snprintf(in[0], sizeof(in[0]), "%s", input_id(t));
    assert_true(tmp_exists(f, in[0]));

    /* 1. the disk is full: the fatal finish waits for its commit */
    sl__jm_store_test_fail(f->jm->st, ENOSPC);
    bg.f = f;
    bg.t = t;
    bg.status = "FATAL_ERROR";
    bg.rc = -1;
    assert_int_equal(pthread_create(&th, NULL, bg_finish_main, &bg), 0);
    (void)usleep(400000);
    assert_true(tmp_exists(f, in[0])); /* state first: nothing deleted */
    sl_jm_shutdown(f->jm);             /* the server stops meanwhile */
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(bg.rc, SL_EIO);
    json_decref(t);
    sl_jm_close(f->jm);
    assert_true(tmp_exists(f, in[0]));
    jm_open(f);
    /* the committed state: FINISHING, both copy tasks to do, inputs there */
    assert_string_equal(state_of(f, "chainJob", id), "FINISHING");
    for (i = 0; i < 2; i++) {
        t = take(f, "copy");
        assert_non_null(t);
        assert_true(tmp_exists(f, input_id(t)));
        assert_int_equal(finish(f, t, "SUCCESSFUL"), 0);
        json_decref(t);
    }
    drain_completion(f);
    assert_string_equal(state_of(f, "chainJob", id), "SUCCEEDED");
    assert_false(tmp_exists(f, in[0]));

    /* 2. the commit succeeds once space is back: deleted after it */
    split_run(f, "chainJob", id, 2);
    t = take(f, "copy");
    (void)snprintf(in[0], sizeof(in[0]), "%s", input_id(t));
    json_decref(take(f, "copy") /* in progress: dropped by the failure */);
    sl__jm_store_test_fail(f->jm->st, ENOSPC);
    bg.t = t;
    bg.rc = -1;
    assert_int_equal(pthread_create(&th, NULL, bg_finish_main, &bg), 0);
    (void)usleep(300000);
    assert_true(tmp_exists(f, in[0]));
    assert_int_equal(bg.rc, -1); /* still waiting for the commit */
    sl__jm_store_test_fail(f->jm->st, 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(bg.rc, 0);
    json_decref(t);
    assert_string_equal(state_of(f, "chainJob", id), "FAILED");
    assert_false(tmp_exists(f, in[0]));
}

/* Two runs with tasks for one worker are served in turn; the global
 * in-progress limit holds tasks back. */
static void
test_engine_fairness_and_limits(void **state)
{
    struct fx *f = *state;
    char id[SL_JM_RUN_ID_MAX];
    char id2[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    json_t *held[4] = {NULL, NULL, NULL, NULL};
    const char *prev = NULL;
    int i = 0;

    for (i = 0; i < 4; i++) {
        struct sl_obj_writer *w = NULL;
        char oid[32];

        (void)snprintf(oid, sizeof(oid), "src/o%d", i);
        assert_int_equal(sl_obj_writer_open(f->store, "in", oid, &w, &err), 0);
        assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
        sl_obj_writer_free(w);
    }
    put_def(
        f->jm, "jobs", "{\"name\":\"bucketJob2\",\"workflow\":\"frombucket\"}");
    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob", "runOnce", id, &err),
                     0);
    assert_int_equal(sl_jm_run_start(f->jm, "bucketJob2", "runOnce", id2, &err),
                     0);
    for (i = 0; i < 4; i++) {
        const char *job = NULL;

        held[i] = take(f, "copy");
        assert_non_null(held[i]);
        job = json_string_value(
            json_object_get(json_object_get(held[i], "properties"), "jobName"));
        if (prev != NULL) {
            assert_string_not_equal(prev, job);
        }
        prev = job;
    }
    for (i = 0; i < 4; i++) {
        assert_int_equal(finish(f, held[i], "SUCCESSFUL"), 0);
        json_decref(held[i]);
    }

    /* Global limit of 2 tasks in progress. */
    sl_jm_close(f->jm);
    {
        struct sl_jm_config cfg;
        size_t k = 0;

        memset(&cfg, 0, sizeof(cfg));
        cfg.state_dir = f->state;
        cfg.store = f->store;
        cfg.max_in_progress = 2;
        assert_int_equal(sl_jm_open(&cfg, &f->jm, &err), 0);
        for (k = 0; k < sizeof(workers) / sizeof(workers[0]); k++) {
            json_t *d = json_loads(workers[k], 0, NULL);

            assert_int_equal(sl_jm_register_worker(f->jm, d, NULL, &err), 0);
            json_decref(d);
        }
        assert_int_equal(sl_jm_start(f->jm, &err), 0);
    }
    held[0] = take(f, "copy");
    held[1] = take(f, "copy");
    assert_non_null(held[0]);
    assert_non_null(held[1]);
    assert_null(take(f, "copy"));
    assert_int_equal(finish(f, held[0], "SUCCESSFUL"), 0);
    held[2] = take(f, "copy");
    assert_non_null(held[2]);
    for (i = 1; i < 3; i++) {
        assert_int_equal(finish(f, held[i], "SUCCESSFUL"), 0);
    }
    for (i = 0; i < 3; i++) {
        json_decref(held[i]);
    }
    held[3] = take(f, "copy");
    assert_non_null(held[3]);
    assert_int_equal(finish(f, held[3], "SUCCESSFUL"), 0);
    json_decref(held[3]);
    assert_string_equal(state_of(f, "bucketJob", id), "SUCCEEDED");
    assert_string_equal(state_of(f, "bucketJob2", id2), "SUCCEEDED");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_engine_work_wait_per_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_generators_and_completion, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_run_data_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_runonce_from_bucket, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_state_machine, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_run_end_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_param_in_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_inputs_released, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_flow_control, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_events, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_lease_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_lease_stall, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_history, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_fairness_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_nospace_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_engine_state_first, setup, teardown),
    };

    json_set_alloc_funcs(sl_malloc, sl_free);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
