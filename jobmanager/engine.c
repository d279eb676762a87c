/*
 * The run engine: job runs and workflow runs, their states and counters,
 * the completion phase, clean-up, the lease timer, and the public
 * definitions API (validated by defs.c, persisted here).  See
 * docs/jobmanager.md for the states and the task protocol.
 */
#include <string.h>
#include <time.h>

#include "jobmanager/engine_int.h"

static const char *const state_names[] = {
    "PREPARING",
    "RUNNING",
    "FINISHING",
    "COMPLETING",
    "CLEANINGUP",
    "SUCCEEDED",
    "FAILED",
    "CANCELING",
    "CANCELED",
};

static const char *const tc_names[TC_N] = {
    "createdTaskCount",
    "successfulTaskCount",
    "retriedAfterErrorTaskCount",
    "retriedAfterTimeoutTaskCount",
    "failedWithoutRetryTaskCount",
    "failedAfterRetryTaskCount",
    "obsoleteTaskCount",
    "cancelledTaskCount",
    "retriedAfterNoSpaceTaskCount",
};

static const char *const wc_names[WC_N] = {"startedWorkflowRunCount",
                                           "successfulWorkflowRunCount",
                                           "failedWorkflowRunCount",
                                           "canceledWorkflowRunCount"};

const char *
sl__jm_state_name(enum run_state s)
{
    return state_names[s];
}

static int
state_final(enum run_state s)
{
    return s == RS_SUCCEEDED || s == RS_FAILED || s == RS_CANCELED;
}

int
sl__jm_state_parse(const char *name, enum run_state *out)
{
    size_t i = 0;

    for (i = 0;
         name != NULL && i < sizeof(state_names) / sizeof(state_names[0]);
         i++) {
        if (strcmp(name, state_names[i]) == 0) {
            *out = (enum run_state)i;
            return 0;
        }
    }
    return SL_EINVAL;
}

/* Key of a run in the runs database: "<job>\0<runId>". */
static size_t
run_key(char *buf, size_t cap, const char *job, const char *id)
{
    size_t jl = strlen(job);
    size_t il = strlen(id);

    if (jl + il + 1 > cap) {
        sl_panic("jobmanager: run key too long");
    }
    memcpy(buf, job, jl);
    buf[jl] = '\0';
    memcpy(buf + jl + 1, id, il);
    return jl + 1 + il;
}

json_t *
sl__jm_action(const struct run *r, int action)
{
    if (action == 0) {
        return json_object_get(r->wfdef, "startAction");
    }
    return json_array_get(json_object_get(r->wfdef, "actions"),
                          (size_t)action - 1);
}

struct run *
sl__jm_run_find(struct sl_jm *jm, const char *job)
{
    struct run *r = NULL;

    for (r = jm->runs; r != NULL; r = r->next) {
        if (strcmp(r->job, job) == 0) {
            return r;
        }
    }
    return NULL;
}

struct wfrun *
sl__jm_wfrun_find(struct run *r, unsigned id)
{
    struct wfrun *w = NULL;

    for (w = r->wfruns; w != NULL; w = w->next) {
        if (w->id == id) {
            return w;
        }
    }
    return NULL;
}

struct wfrun *
sl__jm_wfrun_new(struct run *r)
{
    struct wfrun *w = sl_calloc(1, sizeof(*w));

    w->id = ++r->next_wfrun;
    w->next = r->wfruns;
    r->wfruns = w;
    r->active_wfruns++;
    r->wc[WC_STARTED]++;
    return w;
}

static void
wfrun_unlink(struct run *r, struct wfrun *w)
{
    struct wfrun **pp = &r->wfruns;

    while (*pp != NULL && *pp != w) {
        pp = &(*pp)->next;
    }
    if (*pp == w) {
        *pp = w->next;
        r->active_wfruns--;
    }
    sl_free(w);
}

/* ------------------------------------------------------------------------
 * Run data JSON (API.md), also the persisted form (with "_internal").
 * --------------------------------------------------------------------- */

/* sl__jm_run_json; with @share the worker counters and errors are
 * referenced, not copied: for a caller that serialises the result before
 * it releases jm->mu (sl__jm_run_persist, at every task finish). */
static json_t *
run_json(const struct run *r, int internal, int share)
{
    json_t *j = NULL;
    json_t *tasks = json_object();
    json_t *wfs = json_object();
    char ts[32];
    size_t i = 0;

    for (i = 0; i < TC_N; i++) {
        (void)json_object_set_new(
            tasks, tc_names[i], json_integer((json_int_t)r->tc[i]));
    }
    (void)json_object_set_new(
        wfs, "activeWorkflowRunCount", json_integer(r->active_wfruns));
    for (i = 0; i < WC_N; i++) {
        (void)json_object_set_new(
            wfs, wc_names[i], json_integer((json_int_t)r->wc[i]));
    }
    /* worker and errors change while tasks finish: copies, since the
     * caller serialises the result after the jobmanager's lock is
     * released (a shared reference raced with a task finishing, and
     * json_dumps of it failed: "handler gave no reply" under ASan) */
    j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o}",
                  "jobId",
                  r->id,
                  "runMode",
                  r->runonce ? "RUNONCE" : "STANDARD",
                  "state",
                  state_names[r->state],
                  "workflowRuns",
                  wfs,
                  "tasks",
                  tasks,
                  "worker",
                  share ? json_incref(r->worker) : json_deep_copy(r->worker),
                  "errors",
                  share ? json_incref(r->errors) : json_deep_copy(r->errors));
    sl_time_format(r->start_ms, ts, sizeof(ts));
    (void)json_object_set_new(j, "startTime", json_string(ts));
    if (r->finish_ms) {
        sl_time_format(r->finish_ms, ts, sizeof(ts));
        (void)json_object_set_new(j, "finishTime", json_string(ts));
    }
    if (r->end_ms) {
        sl_time_format(r->end_ms, ts, sizeof(ts));
        (void)json_object_set_new(j, "endTime", json_string(ts));
    }
    if (r->completion != NULL) {
        (void)json_object_set_new(
            j, "completion", json_deep_copy(r->completion));
    }
    if (internal) {
        json_t *active = json_array();
        struct wfrun *w = NULL;

        for (w = r->wfruns; w != NULL; w = w->next) {
            (void)json_array_append_new(active,
                                        json_pack("{s:i, s:b, s:b}",
                                                  "id",
                                                  (int)w->id,
                                                  "failed",
                                                  w->failed,
                                                  "completion",
                                                  w->completion));
        }
        (void)json_object_set_new(
            j,
            "_internal",
            json_pack("{s:s, s:I, s:I, s:I, s:O, s:O, s:O, s:i, s:b, s:o}",
                      "job",
                      r->job,
                      "startMs",
                      (json_int_t)r->start_ms,
                      "finishMs",
                      (json_int_t)r->finish_ms,
                      "endMs",
                      (json_int_t)r->end_ms,
                      "jobdef",
                      r->jobdef,
                      "wfdef",
                      r->wfdef,
                      "buckets",
                      r->buckets,
                      "nextWfRun",
                      (int)r->next_wfrun,
                      "hadFatal",
                      r->had_fatal,
                      "wfruns",
                      active));
        if (r->incomplete > 0) {
            json_t *in = json_object_get(j, "_internal");

            (void)json_object_set_new(
                in, "incomplete", json_integer((json_int_t)r->incomplete));
            (void)json_object_set_new(
                in,
                "incompleteWhy",
                json_string(r->incomplete_why ? r->incomplete_why : ""));
        }
    }
    return j;
}

void
sl__jm_run_counters_load(struct run *r, const json_t *j)
{
    json_t *tasks = json_object_get(j, "tasks");
    json_t *wfs = json_object_get(j, "workflowRuns");
    size_t i = 0;

    for (i = 0; i < TC_N; i++) {
        r->tc[i] =
            (uint64_t)json_integer_value(json_object_get(tasks, tc_names[i]));
    }
    for (i = 0; i < WC_N; i++) {
        r->wc[i] =
            (uint64_t)json_integer_value(json_object_get(wfs, wc_names[i]));
    }
}

json_t *
sl__jm_run_json(const struct run *r, int internal)
{
    return run_json(r, internal, 0);
}

void
sl__jm_run_persist(struct sl_jm *jm, struct run *r)
{
    char key[SL_NAME_MAX + SL_JM_RUN_ID_MAX + 2];
    size_t klen = run_key(key, sizeof(key), r->job, r->id);
    json_t *j = run_json(r, 1, 1); /* serialised here, under jm->mu */

    (void)sl__jm_store_put_json(jm->st, SL__JM_DB_RUNS, key, klen, j);
    json_decref(j);
}

static void
run_free(struct run *r)
{
    while (r->wfruns != NULL) {
        wfrun_unlink(r, r->wfruns);
    }
    json_decref(r->jobdef);
    json_decref(r->wfdef);
    json_decref(r->buckets);
    json_decref(r->worker);
    json_decref(r->errors);
    json_decref(r->completion);
    sl_free(r->incomplete_why);
    sl_free(r->data_source);
    sl_free(r);
}

static void
run_unlink(struct sl_jm *jm, struct run *r)
{
    struct run **pp = &jm->runs;
    struct wqueue *q = NULL;

    while (*pp != NULL && *pp != r) {
        pp = &(*pp)->next;
    }
    if (*pp == r) {
        *pp = r->next;
    }
    for (q = jm->queues; q != NULL; q = q->next) {
        SL_ASSERT(q->rr == NULL || q->todo > 0);
    }
    run_free(r);
}

/* ------------------------------------------------------------------------
 * Clean-up: transient objects of ended workflow runs and job runs.
 * --------------------------------------------------------------------- */

/* Append @c to the clean-up queue and wake its thread; jm->mu held. */
static void
cleanup_link(struct sl_jm *jm, struct cleanup *c)
{
    if (jm->cleanups_tail != NULL) {
        jm->cleanups_tail->next = c;
    } else {
        jm->cleanups = c;
    }
    jm->cleanups_tail = c;
    (void)pthread_cond_signal(&jm->cleanup_cv);
}

void
sl__jm_cleanup_push(struct sl_jm *jm,
                    const char *store,
                    const char *id,
                    const char *prefix,
                    const struct run *finalize)
{
    struct cleanup *c = sl_calloc(1, sizeof(*c));

    c->store = store ? sl_strdup(store) : NULL;
    c->id = id ? sl_strdup(id) : NULL;
    c->prefix = prefix ? sl_strdup(prefix) : NULL;
    if (finalize != NULL) {
        (void)snprintf(c->job, sizeof(c->job), "%s", finalize->job);
        (void)snprintf(c->run_id, sizeof(c->run_id), "%s", finalize->id);
    }
    cleanup_link(jm, c);
}

/*
 * Queue the run end hook for every action of @r, ahead of its clean-up
 * (which lists and deletes its transient objects first): the run takes
 * no more tasks.  Call with jm->mu held.
 */
static void
queue_run_end(struct sl_jm *jm, const struct run *r)
{
    struct cleanup *c = NULL;
    json_t *act = NULL;
    size_t i = 0;

    if (jm->run_end == NULL) {
        return;
    }
    c = sl_calloc(1, sizeof(*c));
    c->ended = json_array();
    for (i = 0; (act = sl__jm_action(r, (int)i)) != NULL; i++) {
        (void)json_array_append_new(
            c->ended,
            json_pack("[O, o]",
                      json_object_get(act, "worker"),
                      sl__jm_task_params(r->jobdef, r->wfdef, act)));
    }
    (void)snprintf(c->ended_job, sizeof(c->ended_job), "%s", r->job);
    cleanup_link(jm, c);
}

/* Call the run end hook for each [worker, params] of @ended, actions of
 * job @job; without jm->mu held. */
static void
call_run_end(struct sl_jm *jm, const char *job, const json_t *ended)
{
    const json_t *pair = NULL;
    size_t i = 0;

    json_array_foreach(ended, i, pair)
    {
        jm->run_end(jm->run_end_arg,
                    job,
                    json_string_value(json_array_get(pair, 0)),
                    json_array_get(pair, 1));
    }
}

/* Queue deletion of the transient objects of a run (or one workflow
 * run when @wfrun > 0). */
static void
cleanup_transient(struct sl_jm *jm, struct run *r, unsigned wfrun, int finalize)
{
    const char *bucket = NULL;
    json_t *bi = NULL;

    if (finalize) {
        queue_run_end(jm, r);
    }
    json_object_foreach(r->buckets, bucket, bi)
    {
        char *prefix = NULL;

        if (json_is_true(json_object_get(bi, "persistent"))) {
            continue;
        }
        prefix = wfrun ? sl_asprintf("%s/%s/%u/", bucket, r->id, wfrun)
                       : sl_asprintf("%s/%s/", bucket, r->id);
        sl__jm_cleanup_push(jm,
                            json_string_value(json_object_get(bi, "store")),
                            NULL,
                            prefix,
                            NULL);
        sl_free(prefix);
    }
    if (finalize) {
        sl__jm_cleanup_push(jm, NULL, NULL, NULL, r);
    }
}

struct del_ctx {
    struct sl_jm *jm;
    const char *store;
    json_t *ids;
};

static int
collect_id(void *ctx, const struct sl_obj_info *info)
{
    struct del_ctx *c = ctx;

    (void)json_array_append_new(c->ids, json_string(info->id));
    return json_array_size(c->ids) >= 1000 ? 1 : 0;
}

/* Delete everything under one prefix, 1000 ids at a time. */
static void
delete_prefix(struct sl_jm *jm, const char *store, const char *prefix)
{
    for (;;) {
        struct del_ctx c = {jm, store, json_array()};
        size_t i = 0;
        json_t *id = NULL;
        size_t n = 0;

        (void)sl_obj_list(jm->cfg.store, store, prefix, collect_id, &c, NULL);
        n = json_array_size(c.ids);
        json_array_foreach(c.ids, i, id)
        {
            (void)sl_obj_delete(
                jm->cfg.store, store, json_string_value(id), NULL);
        }
        json_decref(c.ids);
        if (n < 1000) {
            return;
        }
    }
}

/* A run whose clean-up is done reaches its final state; it is logged as
 * ended once that state is committed. */
static void
finalize_run(struct sl_jm *jm, const char *job, const char *run_id)
{
    struct run *r = NULL;
    const char *state = NULL;
    uint64_t seq = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL && strcmp(r->id, run_id) == 0) {
        if (r->state == RS_CLEANINGUP) {
            r->state = r->had_fatal ? RS_FAILED : RS_SUCCEEDED;
        } else if (r->state == RS_CANCELING) {
            r->state = RS_CANCELED;
        } else if (r->state != RS_FAILED) {
            r = NULL;
        }
    } else {
        r = NULL;
    }
    if (r != NULL) {
        r->end_ms = sl_time_ms();
        sl__jm_run_persist(jm, r);
        state = state_names[r->state];
        run_unlink(jm, r);
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (sl__jm_store_wait(jm->st, seq, NULL) != 0) {
        if (state != NULL) {
            SL_WARN("jobmanager: run %s of job %s: its final state %s was "
                    "not committed; it ends again at the next start",
                    run_id,
                    job,
                    state);
        }
    } else if (state != NULL) {
        SL_INFO("jobmanager: run %s of job %s ended %s", run_id, job, state);
    }
}

void *
sl__jm_cleanup_main(void *arg)
{
    struct sl_jm *jm = arg;

    (void)pthread_mutex_lock(&jm->mu);
    for (;;) {
        struct cleanup *c = NULL;
        uint64_t seq = 0;
        int committed = 0;

        while (jm->cleanups == NULL && !jm->stopping) {
            (void)pthread_cond_wait(&jm->cleanup_cv, &jm->mu);
        }
        if (jm->cleanups == NULL) {
            break;
        }
        c = jm->cleanups;
        jm->cleanups = c->next;
        if (jm->cleanups == NULL) {
            jm->cleanups_tail = NULL;
        }
        /* State first, then clean-up: the change that made these objects
         * unreferenced (tasks finished or dropped, the run CLEANINGUP) was
         * queued before this item, so it is committed once everything
         * queued now is.  Deleting earlier, a commit that then failed (a
         * full disk) and a restart left tasks whose inputs were gone. */
        seq = sl__jm_store_last(jm->st);
        (void)pthread_mutex_unlock(&jm->mu);
        if (c->ended != NULL) {
            call_run_end(jm, c->ended_job, c->ended);
        }
        committed = sl__jm_store_wait(jm->st, seq, NULL) == 0;
        if (!committed && (c->prefix != NULL || c->id != NULL)) {
            SL_WARN("jobmanager: clean-up of %s/%s skipped: the state that "
                    "releases it was not committed",
                    c->store,
                    c->prefix != NULL ? c->prefix : c->id);
        } else if (!committed) {
            /* a run's end: it ends at the next start */
        } else if (c->prefix != NULL) {
            delete_prefix(jm, c->store, c->prefix);
        } else if (c->id != NULL) {
            (void)sl_obj_delete(jm->cfg.store, c->store, c->id, NULL);
        }
        if (committed && c->job[0] != '\0') {
            finalize_run(jm, c->job, c->run_id);
        }
        json_decref(c->ended);
        sl_free(c->store);
        sl_free(c->id);
        sl_free(c->prefix);
        sl_free(c);
        (void)pthread_mutex_lock(&jm->mu);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return NULL;
}

/* ------------------------------------------------------------------------
 * Run state machine.
 * --------------------------------------------------------------------- */

void
sl__jm_run_requeue_cleanup(struct sl_jm *jm, struct run *r)
{
    cleanup_transient(jm, r, 0, 1);
}

static json_t *completion_skip(const struct run *r);
static void note_skipped(struct sl_jm *jm, struct run *r, json_t *why);

/* The run failed: drop its tasks, clean up, end FAILED. */
void
sl__jm_run_fail(struct sl_jm *jm, struct run *r)
{
    if (state_final(r->state) || r->state == RS_CANCELING) {
        return;
    }
    sl__jm_tasks_drop_run(jm, r, 0, TC_OBSOLETE);
    while (r->wfruns != NULL) {
        r->wc[WC_FAILED]++;
        wfrun_unlink(r, r->wfruns);
    }
    r->had_fatal = 1;
    note_skipped(jm, r, completion_skip(r));
    r->state = RS_CLEANINGUP;
    if (!r->cleanup_queued) {
        r->cleanup_queued = 1;
        cleanup_transient(jm, r, 0, 1);
    }
}

/* Append "<n> <one>" (or "<n> <many>") to @b when @n > 0. */
static void
why_add(struct sl_buf *b, uint64_t n, const char *one, const char *many)
{
    if (n == 0) {
        return;
    }
    (void)sl_buf_appendf(b,
                         "%s%llu %s",
                         b->len > 0 ? "; " : "",
                         (unsigned long long)n,
                         n == 1 ? one : many);
}

/*
 * Why run @r may not delete what its crawl did not see, or NULL: its view
 * of the source is complete only when every workflow run succeeded, no
 * task failed and no task reported input it could not read.  A standard
 * run that never started a workflow run did no work at all.
 */
static json_t *
completion_skip(const struct run *r)
{
    struct sl_buf b;
    uint64_t failed_tasks =
        r->tc[TC_FAILED_NO_RETRY] + r->tc[TC_FAILED_AFTER_RETRY];
    json_t *j = NULL;

    sl_buf_init(&b, 1024);
    if (!r->runonce && r->wc[WC_STARTED] == 0) {
        (void)sl_buf_appendf(&b, "no workflow run was started");
    }
    why_add(&b,
            r->wc[WC_CANCELED],
            "workflow run canceled",
            "workflow runs canceled");
    why_add(
        &b, r->wc[WC_FAILED], "workflow run failed", "workflow runs failed");
    why_add(&b, failed_tasks, "task failed", "tasks failed");
    if (r->had_fatal && failed_tasks == 0 && r->wc[WC_FAILED] == 0) {
        why_add(&b, 1, "task failed", "tasks failed");
    }
    why_add(&b,
            r->incomplete,
            "task could not read all its input",
            "tasks could not read all their input");
    if (r->incomplete > 0 && r->incomplete_why != NULL) {
        (void)sl_buf_appendf(&b, " (first: %s)", r->incomplete_why);
    }
    if (b.len > 0) {
        j = json_pack("{s:s%}", "skipped", b.data, b.len);
    }
    sl_buf_free(&b);
    return j;
}

/*
 * Start the completion phase, or clean up if no worker asks for it.  The
 * completion phase (an updatePusher's delta-delete) deletes what the run
 * did not see: it runs only after a complete run (completion_skip), and
 * the run data says why not.
 */
/* The worker of action @a of run @r when it requests a completion phase,
 * else NULL. */
static const struct sl__jm_worker *
completion_worker(struct sl_jm *jm, struct run *r, size_t a)
{
    json_t *act = sl__jm_action(r, (int)a);
    const struct sl__jm_worker *w = sl__jm_defs_worker(
        jm->defs, json_string_value(json_object_get(act, "worker")));

    return w != NULL && (w->modes & SL__JM_WORKER_REQUESTS_COMPLETION) ? w
                                                                       : NULL;
}

/* Record that run @r, ending without a completion phase, deleted nothing
 * and why (@why, owned), when its workflow has a worker that would have
 * deleted: "completion": {"skipped": why} in its run data. */
static void
note_skipped(struct sl_jm *jm, struct run *r, json_t *why)
{
    size_t n = json_array_size(json_object_get(r->wfdef, "actions")) + 1;
    size_t a = 0;

    for (a = 0; why != NULL && r->completion == NULL && a < n; a++) {
        if (completion_worker(jm, r, a) != NULL) {
            SL_WARN("jobmanager: run %s of job %s: no completion phase, "
                    "nothing is deleted: %s",
                    r->id,
                    r->job,
                    json_string_value(json_object_get(why, "skipped")));
            r->completion = json_incref(why);
        }
    }
    json_decref(why);
}

/* The completion tasks of action @a (worker @w) in workflow run @wf. */
static void
completion_tasks(struct sl_jm *jm,
                 struct run *r,
                 struct wfrun *wf,
                 size_t a,
                 const struct sl__jm_worker *w)
{
    unsigned parts = 1;
    unsigned i = 0;

    if (w->completion_partitions != NULL) {
        json_t *p =
            sl__jm_task_params(r->jobdef, r->wfdef, sl__jm_action(r, (int)a));

        parts = w->completion_partitions(p);
        json_decref(p);
    }
    for (i = 0; i < parts; i++) {
        (void)sl__jm_task_create(jm,
                                 r,
                                 wf,
                                 (int)a,
                                 NULL,
                                 json_pack("{s:b, s:i, s:i}",
                                           "completion",
                                           1,
                                           "partition",
                                           (int)i,
                                           "partitions",
                                           (int)parts));
    }
}

/*
 * Start the completion phase, or clean up if no worker asks for it.  The
 * completion phase (an updatePusher's delta-delete) deletes what the run
 * did not see: it runs only after a complete run (completion_skip), and
 * the run data says why not ("completion": {"skipped": why}).
 */
static void
run_complete(struct sl_jm *jm, struct run *r)
{
    size_t n = json_array_size(json_object_get(r->wfdef, "actions")) + 1;
    size_t a = 0;
    struct wfrun *wf = NULL;
    json_t *skip = NULL;

    for (a = 0; r->state == RS_FINISHING && a < n; a++) {
        const struct sl__jm_worker *w = completion_worker(jm, r, a);

        if (w == NULL) {
            continue;
        }
        if (wf == NULL && (skip = completion_skip(r)) != NULL) {
            note_skipped(jm, r, skip);
            break;
        }
        if (wf == NULL) {
            wf = sl__jm_wfrun_new(r);
            wf->completion = 1;
            json_decref(r->completion);
            r->completion = json_pack("{s:b}", "ran", 1);
        }
        completion_tasks(jm, r, wf, a, w);
    }
    if (wf != NULL && wf->open > 0) {
        r->state = RS_COMPLETING;
        return;
    }
    if (wf != NULL) {
        r->wc[WC_SUCCESSFUL]++;
        wfrun_unlink(r, wf);
    }
    r->state = RS_CLEANINGUP;
    if (!r->cleanup_queued) {
        r->cleanup_queued = 1;
        cleanup_transient(jm, r, 0, 1);
    }
}

/*
 * After any change: end workflow runs without open tasks, and move the job
 * run on when no workflow run is left (FINISHING or COMPLETING).
 */
void
sl__jm_run_check_done(struct sl_jm *jm, struct run *r)
{
    struct wfrun *w = r->wfruns;

    while (w != NULL) {
        struct wfrun *next = w->next;

        if (w->open == 0) {
            r->wc[w->failed ? WC_FAILED : WC_SUCCESSFUL]++;
            if (!r->runonce && !w->completion) {
                cleanup_transient(jm, r, w->id, 0);
            }
            wfrun_unlink(r, w);
        }
        w = next;
    }
    if (r->active_wfruns > 0) {
        return;
    }
    if (r->state == RS_FINISHING) {
        run_complete(jm, r);
    } else if (r->state == RS_COMPLETING) {
        r->state = RS_CLEANINGUP;
        if (!r->cleanup_queued) {
            r->cleanup_queued = 1;
            cleanup_transient(jm, r, 0, 1);
        }
    }
}

/* ------------------------------------------------------------------------
 * Starting runs.
 * --------------------------------------------------------------------- */

static void
make_run_id(char out[SL_JM_RUN_ID_MAX])
{
    int64_t ms = sl_time_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char base[32];
    char uuid[37];

    (void)gmtime_r(&secs, &tm);
    (void)strftime(base, sizeof(base), "%Y%m%d-%H%M%S", &tm);
    sl_uuid(uuid);
    (void)snprintf(
        out, SL_JM_RUN_ID_MAX, "%s%03d-%.8s", base, (int)(ms % 1000), uuid);
}

/*
 * Resolve every bucket the workflow uses (slot maps of all actions) into
 * {"store","persistent"}; creates the stores of transient buckets.
 */
static int
resolve_buckets(struct sl_jm *jm,
                const json_t *job,
                const json_t *wf,
                json_t **out,
                struct sl_err *err)
{
    json_t *buckets = json_object();
    json_t *actions = json_object_get(wf, "actions");
    size_t n = json_array_size(actions) + 1;
    size_t a = 0;
    int rc = 0;

    for (a = 0; a < n && rc == 0; a++) {
        json_t *act = a == 0 ? json_object_get(wf, "startAction")
                             : json_array_get(actions, a - 1);
        const char *maps[2] = {"input", "output"};
        size_t m = 0;

        for (m = 0; m < 2 && rc == 0; m++) {
            const char *slot = NULL;
            json_t *b = NULL;

            json_object_foreach(json_object_get(act, maps[m]), slot, b)
            {
                struct sl__jm_bucket_info bi;

                if (json_object_get(buckets, json_string_value(b)) != NULL) {
                    continue;
                }
                rc = sl__jm_bucket_resolve(
                    jm->defs, job, wf, json_string_value(b), &bi, err);
                if (rc != 0) {
                    break;
                }
                if (!bi.persistent) {
                    (void)sl_obj_store_create(
                        jm->cfg.store, bi.store, NULL, NULL);
                }
                (void)json_object_set_new(buckets,
                                          bi.name,
                                          json_pack("{s:s, s:b}",
                                                    "store",
                                                    bi.store,
                                                    "persistent",
                                                    bi.persistent));
            }
        }
    }
    if (rc != 0) {
        json_decref(buckets);
        return rc;
    }
    *out = buckets;
    return 0;
}

/* The objects of the start bucket, for a runOnce run from a bucket. */
static int
list_start_bucket(void *ctx, const struct sl_obj_info *info)
{
    (void)json_array_append_new(ctx, json_string(info->id));
    return 0;
}

/* Decide the mode: @mode or the workflow's first mode; check it. */
static int
choose_mode(const json_t *wf,
            const char *mode,
            int *runonce,
            struct sl_err *err)
{
    json_t *modes = json_object_get(wf, "modes");
    size_t i = 0;
    json_t *m = NULL;

    if (mode == NULL) {
        mode = json_is_array(modes) && json_array_size(modes) > 0
                   ? json_string_value(json_array_get(modes, 0))
                   : "standard";
    }
    if (strcmp(mode, "runOnce") != 0 && strcmp(mode, "standard") != 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "mode",
                          "mode must be 'runOnce' or 'standard', not '%s'",
                          mode);
    }
    *runonce = strcmp(mode, "runOnce") == 0;
    if (!json_is_array(modes) || json_array_size(modes) == 0) {
        return 0;
    }
    json_array_foreach(modes, i, m)
    {
        if (strcmp(json_string_value(m), mode) == 0) {
            return 0;
        }
    }
    return sl_err_set(err,
                      SL_EINVAL,
                      "mode",
                      "workflow '%s' does not allow mode '%s'",
                      json_string_value(json_object_get(wf, "name")),
                      mode);
}

/* The initial tasks of a new run; called with jm->mu held. */
static int
initial_tasks(struct sl_jm *jm,
              struct run *r,
              const json_t *objects,
              struct sl_err *err)
{
    json_t *start = sl__jm_action(r, 0);
    const struct sl__jm_worker *w = sl__jm_defs_worker(
        jm->defs, json_string_value(json_object_get(start, "worker")));
    struct wfrun *wf = NULL;
    const char *slot = NULL;
    json_t *b = NULL;
    size_t i = 0;
    json_t *id = NULL;

    if (!r->runonce) {
        if (w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER) {
            return sl_err_set(err,
                              SL_EINVAL,
                              "mode",
                              "worker '%s' starts only runOnce runs",
                              w->name);
        }
        r->state = RS_RUNNING;
        return 0;
    }
    if (w->modes & SL__JM_WORKER_BULK_SOURCE) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "mode",
                          "bulk source '%s' runs only in standard mode",
                          w->name);
    }
    wf = sl__jm_wfrun_new(r);
    if (w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER) {
        (void)sl__jm_task_create(jm, r, wf, 0, NULL, NULL);
    } else {
        json_object_foreach(json_object_get(start, "input"), slot, b)
        {
            json_t *bi = json_object_get(r->buckets, json_string_value(b));

            json_array_foreach(objects, i, id)
            {
                (void)sl__jm_task_create(jm,
                                         r,
                                         wf,
                                         0,
                                         json_pack("{s:[{s:O, s:O, s:O}]}",
                                                   slot,
                                                   "bucket",
                                                   b,
                                                   "store",
                                                   json_object_get(bi, "store"),
                                                   "id",
                                                   id),
                                         NULL);
            }
            break; /* one input slot drives a runOnce from a bucket */
        }
    }
    r->state = RS_FINISHING;
    r->finish_ms = sl_time_ms();
    return 0;
}

/* Another active run crawling the same dataSource? */
static const struct run *
data_source_busy(struct sl_jm *jm, const char *ds)
{
    struct run *r = NULL;

    for (r = jm->runs; ds != NULL && r != NULL; r = r->next) {
        if (r->data_source != NULL && strcmp(r->data_source, ds) == 0) {
            return r;
        }
    }
    return NULL;
}

/* Everything that does not need the engine lock: definitions, buckets and
 * the start bucket's objects.  Fills a new run (not yet linked). */
static int
prepare_run(struct sl_jm *jm,
            const char *job,
            const char *mode,
            struct run **out,
            json_t **objects,
            struct sl_err *err)
{
    struct run *r = sl_calloc(1, sizeof(*r));
    json_t *params = NULL;
    json_t *start = NULL;
    const char *slot = NULL;
    json_t *b = NULL;
    int rc = 0;

    r->jobdef = sl__jm_defs_get(jm->defs, SL__JM_JOB, job);
    if (r->jobdef == NULL) {
        rc = sl_err_set(err, SL_ENOENT, "job", "no job '%s'", job);
        goto fail;
    }
    r->wfdef = sl__jm_defs_get(
        jm->defs,
        SL__JM_WORKFLOW,
        json_string_value(json_object_get(r->jobdef, "workflow")));
    if (r->wfdef == NULL) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "workflow",
                        "the workflow of job '%s' does not exist",
                        job);
        goto fail;
    }
    rc = choose_mode(r->wfdef, mode, &r->runonce, err);
    if (rc == 0) {
        rc = resolve_buckets(jm, r->jobdef, r->wfdef, &r->buckets, err);
    }
    if (rc != 0) {
        goto fail;
    }
    (void)snprintf(r->job, sizeof(r->job), "%s", job);
    make_run_id(r->id);
    r->start_ms = sl_time_ms();
    r->worker = json_object();
    r->errors = json_array();
    start = json_object_get(r->wfdef, "startAction");
    params = sl__jm_task_params(r->jobdef, r->wfdef, start);
    if (json_is_string(json_object_get(params, "dataSource"))) {
        r->data_source =
            sl_strdup(json_string_value(json_object_get(params, "dataSource")));
    }
    json_decref(params);
    if (jm->start_check != NULL) {
        size_t i = 0;
        json_t *act = NULL;

        for (i = 0; (act = sl__jm_action(r, (int)i)) != NULL; i++) {
            params = sl__jm_task_params(r->jobdef, r->wfdef, act);
            rc = jm->start_check(
                jm->start_check_arg,
                job,
                json_string_value(json_object_get(act, "worker")),
                params,
                err);
            json_decref(params);
            if (rc != 0) {
                goto fail;
            }
        }
    }
    *objects = json_array();
    json_object_foreach(json_object_get(start, "input"), slot, b)
    {
        json_t *bi = json_object_get(r->buckets, json_string_value(b));
        char *prefix = sl_asprintf("%s/", json_string_value(b));

        if (r->runonce && json_is_true(json_object_get(bi, "persistent"))) {
            (void)sl_obj_list(jm->cfg.store,
                              json_string_value(json_object_get(bi, "store")),
                              prefix,
                              list_start_bucket,
                              *objects,
                              NULL);
        }
        sl_free(prefix);
        break;
    }
    *out = r;
    return 0;
fail:
    run_free(r);
    return rc;
}

int
sl_jm_run_start(struct sl_jm *jm,
                const char *job,
                const char *mode,
                char run_id[SL_JM_RUN_ID_MAX],
                struct sl_err *err)
{
    struct run *r = NULL;
    const struct run *busy = NULL;
    json_t *objects = NULL;
    uint64_t seq = 0;
    int rc = 0;

    rc = prepare_run(jm, job, mode, &r, &objects, err);
    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&jm->mu);
    if (sl__jm_run_find(jm, job) != NULL) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "job",
                        "job '%s' already has an active run (%s)",
                        job,
                        sl__jm_run_find(jm, job)->id);
        goto unlock;
    }
    busy = data_source_busy(jm, r->data_source);
    if (busy != NULL) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "dataSource",
                        "data source '%s' is being crawled by run %s of job "
                        "'%s'",
                        r->data_source,
                        busy->id,
                        busy->job);
        goto unlock;
    }
    rc = initial_tasks(jm, r, objects, err);
    if (rc != 0) {
        sl__jm_tasks_drop_run(jm, r, 0, TC_OBSOLETE);
        goto unlock;
    }
    r->next = jm->runs;
    jm->runs = r;
    (void)snprintf(run_id, SL_JM_RUN_ID_MAX, "%s", r->id);
    SL_INFO("jobmanager: run %s of job %s started (%s)",
            r->id,
            job,
            r->runonce ? "runOnce" : "standard");
    sl__jm_run_check_done(jm, r);
    sl__jm_run_persist(jm, r);
    r = NULL;
unlock:
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    json_decref(objects);
    if (r != NULL) {
        run_free(r);
        return rc;
    }
    return sl__jm_store_wait(jm->st, seq, err);
}

/* ------------------------------------------------------------------------
 * Run queries and transitions.
 * --------------------------------------------------------------------- */

/* The active run @run_id of @job, or NULL. */
static struct run *
active_run(struct sl_jm *jm, const char *job, const char *run_id)
{
    struct run *r = sl__jm_run_find(jm, job);

    return r != NULL && strcmp(r->id, run_id) == 0 ? r : NULL;
}

static void
strip_internal(json_t *j, int details)
{
    json_t *in = json_object_get(j, "_internal");

    if (details && in != NULL) {
        (void)json_object_set(
            j, "jobDefinition", json_object_get(in, "jobdef"));
        (void)json_object_set(
            j, "workflowDefinition", json_object_get(in, "wfdef"));
        (void)json_object_set(j, "buckets", json_object_get(in, "buckets"));
    }
    (void)json_object_del(j, "_internal");
}

int
sl_jm_run_get(struct sl_jm *jm,
              const char *job,
              const char *run_id,
              int details,
              json_t **out,
              struct sl_err *err)
{
    struct run *r = NULL;
    char key[SL_NAME_MAX + SL_JM_RUN_ID_MAX + 2];
    int rc = 0;

    *out = NULL;
    (void)pthread_mutex_lock(&jm->mu);
    r = active_run(jm, job, run_id);
    if (r != NULL) {
        *out = sl__jm_run_json(r, details);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (*out == NULL) {
        if (strlen(job) + strlen(run_id) + 2 > sizeof(key)) {
            return sl_err_set(err, SL_ENOENT, "runId", "no run '%s'", run_id);
        }
        rc = sl__jm_store_get_json(jm->st,
                                   SL__JM_DB_RUNS,
                                   key,
                                   run_key(key, sizeof(key), job, run_id),
                                   out);
        if (rc != 0) {
            return sl_err_set(err,
                              SL_ENOENT,
                              "runId",
                              "job '%s' has no run '%s'",
                              job,
                              run_id);
        }
    }
    strip_internal(*out, details);
    return 0;
}

struct ids_ctx {
    json_t *ids;
    const char *active;
};

static int
collect_run_id(
    void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct ids_ctx *c = ctx;
    const char *k = key;
    size_t jl = strnlen(k, klen);
    char *id = sl_strndup(k + jl + 1, klen - jl - 1);

    (void)val;
    (void)vlen;
    if (c->active == NULL || strcmp(id, c->active) != 0) {
        (void)json_array_append_new(c->ids, json_string(id));
    }
    sl_free(id);
    return 0;
}

int
sl_jm_job_info(struct sl_jm *jm,
               const char *job,
               int details,
               json_t **out,
               struct sl_err *err)
{
    json_t *def = sl__jm_defs_get(jm->defs, SL__JM_JOB, job);
    struct ids_ctx c = {NULL, NULL};
    char active[SL_JM_RUN_ID_MAX] = "";
    char prefix[SL_NAME_MAX + 2];
    struct run *r = NULL;
    json_t *runs = NULL;

    (void)details;
    *out = NULL;
    if (def == NULL) {
        return sl_err_set(err, SL_ENOENT, "job", "no job '%s'", job);
    }
    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL) {
        (void)snprintf(active, sizeof(active), "%s", r->id);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    c.ids = json_array();
    c.active = active[0] ? active : NULL;
    (void)sl__jm_store_scan(jm->st,
                            SL__JM_DB_RUNS,
                            prefix,
                            run_key(prefix, sizeof(prefix), job, ""),
                            collect_run_id,
                            &c);
    runs = json_pack("{s:o}", "completed", c.ids);
    if (active[0]) {
        (void)json_object_set_new(runs, "current", json_string(active));
    }
    *out = json_pack("{s:o, s:o}", "definition", def, "runs", runs);
    return 0;
}

const char *
sl_jm_run_state(struct sl_jm *jm, const char *job, const char *run_id)
{
    struct run *r = NULL;
    const char *s = NULL;

    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL && (run_id == NULL || strcmp(r->id, run_id) == 0)) {
        s = state_names[r->state];
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return s;
}

/* Common frame of finish and cancel: find the active run or explain. */
static int
transition(struct sl_jm *jm,
           const char *job,
           const char *run_id,
           int cancel,
           struct sl_err *err)
{
    struct run *r = NULL;
    json_t *stored = NULL;
    uint64_t seq = 0;
    int rc = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = active_run(jm, job, run_id);
    if (r == NULL) {
        (void)pthread_mutex_unlock(&jm->mu);
        rc = sl_jm_run_get(jm, job, run_id, 0, &stored, err);
        if (rc != 0) {
            return rc;
        }
        rc = sl_err_set(err,
                        SL_EBADSTATE,
                        "state",
                        "run %s of job '%s' has ended (%s)",
                        run_id,
                        job,
                        json_string_value(json_object_get(stored, "state")));
        json_decref(stored);
        return rc;
    }
    if (!cancel) {
        if (r->state != RS_RUNNING) {
            rc = sl_err_set(err,
                            SL_EBADSTATE,
                            "state",
                            "run %s is %s; only a RUNNING run can be finished",
                            r->id,
                            state_names[r->state]);
        } else {
            r->state = RS_FINISHING;
            r->finish_ms = sl_time_ms();
            sl__jm_run_check_done(jm, r);
            sl__jm_run_persist(jm, r);
        }
    } else if (r->state == RS_CANCELING || r->state == RS_CLEANINGUP) {
        rc = sl_err_set(err,
                        SL_EBADSTATE,
                        "state",
                        "run %s is %s and cannot be canceled",
                        r->id,
                        state_names[r->state]);
    } else {
        sl__jm_tasks_drop_run(jm, r, 0, TC_CANCELLED);
        while (r->wfruns != NULL) {
            r->wc[WC_CANCELED]++;
            wfrun_unlink(r, r->wfruns);
        }
        note_skipped(
            jm, r, json_pack("{s:s}", "skipped", "the job run was canceled"));
        r->state = RS_CANCELING;
        sl__jm_run_persist(jm, r);
        if (!r->cleanup_queued) {
            r->cleanup_queued = 1;
            cleanup_transient(jm, r, 0, 1);
        }
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (rc != 0) {
        return rc;
    }
    return sl__jm_store_wait(jm->st, seq, err);
}

int
sl_jm_run_finish(struct sl_jm *jm,
                 const char *job,
                 const char *run_id,
                 struct sl_err *err)
{
    return transition(jm, job, run_id, 0, err);
}

int
sl_jm_run_cancel(struct sl_jm *jm,
                 const char *job,
                 const char *run_id,
                 struct sl_err *err)
{
    return transition(jm, job, run_id, 1, err);
}

int
sl_jm_run_delete(struct sl_jm *jm,
                 const char *job,
                 const char *run_id,
                 struct sl_err *err)
{
    char key[SL_NAME_MAX + SL_JM_RUN_ID_MAX + 2];
    json_t *stored = NULL;
    size_t klen = 0;
    int rc = 0;
    uint64_t seq = 0;

    (void)pthread_mutex_lock(&jm->mu);
    if (active_run(jm, job, run_id) != NULL) {
        (void)pthread_mutex_unlock(&jm->mu);
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "runId",
                          "run %s of job '%s' is still active",
                          run_id,
                          job);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (strlen(job) + strlen(run_id) + 2 > sizeof(key)) {
        return sl_err_set(err, SL_ENOENT, "runId", "no run '%s'", run_id);
    }
    klen = run_key(key, sizeof(key), job, run_id);
    rc = sl__jm_store_get_json(jm->st, SL__JM_DB_RUNS, key, klen, &stored);
    if (rc != 0) {
        return sl_err_set(
            err, SL_ENOENT, "runId", "job '%s' has no run '%s'", job, run_id);
    }
    json_decref(stored);
    seq = sl__jm_store_del(jm->st, SL__JM_DB_RUNS, key, klen);
    return sl__jm_store_wait(jm->st, seq, err);
}

int
sl_jm_wfrun_get(struct sl_jm *jm,
                const char *job,
                const char *run_id,
                const char *wfrun_id,
                json_t **out,
                struct sl_err *err)
{
    struct run *r = NULL;
    struct wfrun *w = NULL;
    uint64_t id = 0;
    int rc = 0;

    *out = NULL;
    if (sl_parse_u64(wfrun_id, &id) != 0 || id > UINT32_MAX) {
        return sl_err_set(
            err, SL_ENOENT, "workflowRunId", "no workflow run '%s'", wfrun_id);
    }
    (void)pthread_mutex_lock(&jm->mu);
    r = active_run(jm, job, run_id);
    w = r != NULL ? sl__jm_wfrun_find(r, (unsigned)id) : NULL;
    if (w != NULL) {
        *out = json_pack("{s:s, s:s, s:I, s:I, s:b, s:b}",
                         "jobId",
                         r->id,
                         "state",
                         w->failed ? "FAILING" : "RUNNING",
                         "workflowRunId",
                         (json_int_t)w->id,
                         "openTaskCount",
                         (json_int_t)w->open,
                         "failed",
                         w->failed,
                         "completion",
                         w->completion);
    } else {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        "workflowRunId",
                        "run %s of job '%s' has no active workflow run '%s'",
                        run_id,
                        job,
                        wfrun_id);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc;
}

int
sl_jm_wfrun_cancel(struct sl_jm *jm,
                   const char *job,
                   const char *run_id,
                   const char *wfrun_id,
                   struct sl_err *err)
{
    struct run *r = NULL;
    struct wfrun *w = NULL;
    uint64_t id = 0;
    uint64_t seq = 0;
    int rc = 0;

    if (sl_parse_u64(wfrun_id, &id) != 0 || id > UINT32_MAX) {
        return sl_err_set(
            err, SL_ENOENT, "workflowRunId", "no workflow run '%s'", wfrun_id);
    }
    (void)pthread_mutex_lock(&jm->mu);
    r = active_run(jm, job, run_id);
    w = r != NULL ? sl__jm_wfrun_find(r, (unsigned)id) : NULL;
    if (w == NULL) {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        "workflowRunId",
                        "run %s of job '%s' has no active workflow run '%s'",
                        run_id,
                        job,
                        wfrun_id);
    } else {
        sl__jm_tasks_drop_run(jm, r, (int)w->id, TC_CANCELLED);
        r->wc[WC_CANCELED]++;
        if (!r->runonce) {
            cleanup_transient(jm, r, w->id, 0);
        }
        wfrun_unlink(r, w);
        sl__jm_run_check_done(jm, r);
        sl__jm_run_persist(jm, r);
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    return rc != 0 ? rc : sl__jm_store_wait(jm->st, seq, err);
}

int
sl_jm_store_in_use(struct sl_jm *jm,
                   const char *store,
                   char job[SL_NAME_MAX + 1])
{
    struct run *r = NULL;
    int used = 0;

    (void)pthread_mutex_lock(&jm->mu);
    for (r = jm->runs; r != NULL && !used; r = r->next) {
        const char *bucket = NULL;
        json_t *bi = NULL;

        json_object_foreach(r->buckets, bucket, bi)
        {
            const char *s = json_string_value(json_object_get(bi, "store"));

            if (s != NULL && strcmp(s, store) == 0) {
                used = 1;
                if (job != NULL) {
                    (void)snprintf(job, SL_NAME_MAX + 1, "%s", r->job);
                }
                break;
            }
        }
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return used;
}

int
sl_jm_source_in_use(struct sl_jm *jm,
                    const char *source,
                    char job[SL_NAME_MAX + 1])
{
    struct run *r = NULL;
    int used = 0;

    (void)pthread_mutex_lock(&jm->mu);
    for (r = jm->runs; r != NULL; r = r->next) {
        if (r->data_source != NULL &&
            (source == NULL || strcmp(r->data_source, source) == 0)) {
            used = 1;
            if (job != NULL) {
                (void)snprintf(job, SL_NAME_MAX + 1, "%s", r->job);
            }
            break;
        }
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return used;
}

json_t *
sl_jm_active_jobs(struct sl_jm *jm)
{
    json_t *out = json_array();
    struct run *r = NULL;

    (void)pthread_mutex_lock(&jm->mu);
    for (r = jm->runs; r != NULL; r = r->next) {
        (void)json_array_append_new(out, json_string(r->job));
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return out;
}

/* ------------------------------------------------------------------------
 * Events.
 * --------------------------------------------------------------------- */

int
sl_jm_event_name_check(const char *name, const char *field, struct sl_err *err)
{
    size_t len = name != NULL ? strlen(name) : 0;
    size_t i = 0;

    if (len == 0 || len > SL_NAME_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "an event name must have 1 to %d bytes, not %zu",
                          SL_NAME_MAX,
                          len);
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
            return sl_err_set(err,
                              SL_EINVAL,
                              field,
                              "an event name cannot hold the control "
                              "character 0x%02x (offset %zu)",
                              (unsigned)(unsigned char)name[i],
                              i);
        }
    }
    if (!sl_utf8_valid(name, len)) {
        return sl_err_set(err, SL_EINVAL, field, "an event name must be UTF-8");
    }
    return 0;
}

int
sl_jm_event_begin(struct sl_jm *jm, const char *name, struct sl_err *err)
{
    int began = 0;
    uint64_t seq = 0;
    int rc = sl_jm_event_name_check(name, "event", err);

    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&jm->mu);
    if (json_object_get(jm->events, name) == NULL) {
        (void)json_object_set_new(jm->events, name, json_true());
        (void)sl__jm_store_put(
            jm->st, SL__JM_DB_EVENTS, name, strlen(name), "", 0);
        began = 1;
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    rc = sl__jm_store_wait(jm->st, seq, err);
    return rc != 0 ? rc : began;
}

int
sl_jm_event_complete(struct sl_jm *jm, const char *name, struct sl_err *err)
{
    uint64_t seq = 0;

    if (sl_jm_event_name_check(name, "event", err) != 0) {
        return SL_EINVAL;
    }
    (void)pthread_mutex_lock(&jm->mu);
    sl__jm_wake_all(jm); /* waiting tasks may be eligible now */
    (void)json_object_del(jm->events, name);
    seq = sl__jm_store_del(jm->st, SL__JM_DB_EVENTS, name, strlen(name));
    (void)pthread_mutex_unlock(&jm->mu);
    return sl__jm_store_wait(jm->st, seq, err);
}

/* ------------------------------------------------------------------------
 * Lease timer.
 * --------------------------------------------------------------------- */

void *
sl__jm_lease_main(void *arg)
{
    struct sl_jm *jm = arg;

    (void)pthread_mutex_lock(&jm->mu);
    while (!jm->stopping) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000 * 1000 * 1000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000 * 1000 * 1000;
        }
        (void)pthread_cond_timedwait(&jm->lease_cv, &jm->mu, &ts);
        if (!jm->stopping) {
            int64_t now = sl_mono_ms();

            sl__jm_lease_expire(jm, now);
            sl__jm_nospace_tick(jm, now);
        }
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return NULL;
}

/* ------------------------------------------------------------------------
 * Life cycle.
 * --------------------------------------------------------------------- */

/* Store commits make queued tasks durable, so takeable: wake the takers
 * of the queues that got tasks up to the committed sequence. */
static void
work_committed(void *arg)
{
    struct sl_jm *jm = arg;
    struct wqueue *q = NULL;
    uint64_t committed = 0;

    (void)pthread_mutex_lock(&jm->mu);
    committed = sl__jm_store_committed(jm->st); /* mu before the store's */
    for (q = jm->queues; q != NULL; q = q->next) {
        if (q->await_seq != 0 && q->await_seq <= committed) {
            q->await_seq = 0;
            sl__jm_wake_queue(q);
        }
    }
    (void)pthread_mutex_unlock(&jm->mu);
}

int
sl_jm_open(const struct sl_jm_config *cfg,
           struct sl_jm **out,
           struct sl_err *err)
{
    struct sl_jm *jm = sl_calloc(1, sizeof(*jm));
    int rc = 0;

    *out = NULL;
    jm->cfg = *cfg;
    jm->state_dir = sl_strdup(cfg->state_dir);
    jm->config_dir = cfg->config_dir ? sl_strdup(cfg->config_dir) : NULL;
    jm->workflows_dir =
        cfg->workflows_dir ? sl_strdup(cfg->workflows_dir) : NULL;
    jm->cfg.state_dir = jm->state_dir;
    jm->cfg.config_dir = jm->config_dir;
    jm->cfg.workflows_dir = jm->workflows_dir;
    jm->cfg.lease_seconds = cfg->lease_seconds ? cfg->lease_seconds : 120;
    jm->cfg.max_retries = cfg->max_retries ? cfg->max_retries : 10;
    jm->cfg.max_errors = cfg->max_errors ? cfg->max_errors : 100;
    jm->cfg.nospace_first_ms =
        cfg->nospace_first_ms ? cfg->nospace_first_ms : 1000;
    jm->cfg.nospace_max_ms = cfg->nospace_max_ms ? cfg->nospace_max_ms : 60000;
    sl_backoff_init(
        &jm->nospace, jm->cfg.nospace_first_ms, jm->cfg.nospace_max_ms);
    jm->defs = sl__jm_defs_new();
    jm->events = json_object();
    (void)pthread_mutex_init(&jm->mu, NULL);
    (void)pthread_cond_init(&jm->lease_cv, NULL);
    (void)pthread_cond_init(&jm->cleanup_cv, NULL);
    (void)pthread_cond_init(&jm->work_cv, NULL);
    jm->work_gen = 1;
    rc = sl__jm_store_open(jm->state_dir, cfg->durability, &jm->st, err);
    if (rc != 0) {
        sl_jm_close(jm);
        return rc;
    }
    sl__jm_store_set_swap_lock(jm->st, &jm->mu);
    sl__jm_store_set_notify(jm->st, work_committed, jm);
    *out = jm;
    return 0;
}

int
sl_jm_register_worker(struct sl_jm *jm,
                      const json_t *desc,
                      unsigned (*partitions)(const json_t *params),
                      struct sl_err *err)
{
    struct sl__jm_worker *w = NULL;
    int rc = 0;

    if (jm->started) {
        return sl_err_set(err,
                          SL_EBADSTATE,
                          NULL,
                          "workers must be registered before the start");
    }
    rc = sl__jm_worker_parse(desc, &w, err);
    if (rc != 0) {
        return rc;
    }
    w->completion_partitions = partitions;
    rc = sl__jm_defs_add_worker(jm->defs, w);
    if (rc != 0) {
        return sl_err_set(err,
                          rc,
                          "name",
                          "worker '%s' is registered twice",
                          json_string_value(json_object_get(desc, "name")));
    }
    return 0;
}

void
sl_jm_set_start_check(struct sl_jm *jm,
                      int (*check)(void *arg,
                                   const char *job,
                                   const char *worker,
                                   const json_t *params,
                                   struct sl_err *err),
                      void *arg)
{
    jm->start_check = check;
    jm->start_check_arg = arg;
}

void
sl_jm_set_def_check(struct sl_jm *jm,
                    int (*check)(void *arg,
                                 const char *job,
                                 const char *worker,
                                 const json_t *desc,
                                 const json_t *params,
                                 struct sl_err *err),
                    void *arg)
{
    sl__jm_defs_set_check(jm->defs, check, arg);
}

void
sl_jm_set_run_end_hook(struct sl_jm *jm,
                       void (*hook)(void *arg,
                                    const char *job,
                                    const char *worker,
                                    const json_t *params),
                       void *arg)
{
    jm->run_end = hook;
    jm->run_end_arg = arg;
}

void
sl_jm_set_worker_limit(struct sl_jm *jm,
                       const char *worker,
                       unsigned max_in_progress)
{
    struct wqueue *q = NULL;

    (void)pthread_mutex_lock(&jm->mu);
    q = sl__jm_wqueue(jm, worker);
    if (q != NULL) {
        q->limit = max_in_progress;
    }
    (void)pthread_mutex_unlock(&jm->mu);
}

void
sl_jm_shutdown(struct sl_jm *jm)
{
    if (jm != NULL && jm->st != NULL) {
        sl__jm_store_give_up(jm->st);
    }
}

void
sl_jm_close(struct sl_jm *jm)
{
    struct wqueue *q = NULL;
    size_t i = 0;

    if (jm == NULL) {
        return;
    }
    sl_jm_shutdown(jm);
    if (jm->started) {
        (void)pthread_mutex_lock(&jm->mu);
        jm->stopping = 1;
        (void)pthread_cond_broadcast(&jm->lease_cv);
        (void)pthread_cond_broadcast(&jm->cleanup_cv);
        (void)pthread_mutex_unlock(&jm->mu);
        (void)pthread_join(jm->lease_thread, NULL);
        (void)pthread_join(jm->cleanup_thread, NULL);
    }
    for (i = 0; i < jm->tasks_cap; i++) {
        while (jm->tasks[i] != NULL) {
            struct task *t = jm->tasks[i];

            jm->tasks[i] = t->hnext;
            json_decref(t->json);
            json_decref(t->events);
            sl_free(t);
        }
    }
    sl_free(jm->tasks);
    while (jm->queues != NULL) {
        q = jm->queues;
        jm->queues = q->next;
        (void)pthread_cond_destroy(&q->cv);
        if (q->rr != NULL) {
            struct jobq *jq = q->rr->next;

            q->rr->next = NULL; /* break the ring, then free the chain */
            while (jq != NULL) {
                struct jobq *next = jq->next;

                sl_free(jq);
                jq = next;
            }
        }
        sl_free(q);
    }
    while (jm->runs != NULL) {
        struct run *r = jm->runs;

        jm->runs = r->next;
        run_free(r);
    }
    while (jm->cleanups != NULL) {
        struct cleanup *c = jm->cleanups;

        jm->cleanups = c->next;
        json_decref(c->ended);
        sl_free(c->store);
        sl_free(c->id);
        sl_free(c->prefix);
        sl_free(c);
    }
    sl__jm_store_close(jm->st);
    sl__jm_defs_free(jm->defs);
    json_decref(jm->events);
    (void)pthread_mutex_destroy(&jm->mu);
    (void)pthread_cond_destroy(&jm->lease_cv);
    (void)pthread_cond_destroy(&jm->cleanup_cv);
    (void)pthread_cond_destroy(&jm->work_cv);
    sl_free(jm->state_dir);
    sl_free(jm->config_dir);
    sl_free(jm->workflows_dir);
    sl_free(jm);
}
