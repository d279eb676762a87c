/*
 * Start-up: sl_jm_start loads predefined and user definitions, rebuilds active
 * runs and their tasks from LMDB (tasks that were in progress in the dead
 * process simply become todo again: the in-progress state is never persisted),
 * completes pending events, and starts autoStart jobs.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

static const char *const kind_names[] = {"buckets", "workflows", "jobs"};

/* ------------------------------------------------------------------------
 * Recovery.
 * --------------------------------------------------------------------- */

struct load_ctx {
    struct sl_jm *jm;
    int pass; /* the kind loaded in this pass */
};

/* User definitions, in kind order so jobs find their workflows. */
static int
load_def(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct load_ctx *c = ctx;
    const char *k = key;
    json_t *def = NULL;
    struct sl_err err;
    int rc = 0;

    if (klen < 2 || k[0] - '0' != c->pass) {
        return 0;
    }
    def = json_loadb(val, vlen, 0, NULL);
    if (def == NULL) {
        SL_WARN("jobmanager: stored %s '%.*s' is not valid JSON; skipped",
                kind_names[c->pass],
                (int)(klen - 2),
                k + 2);
        return 0;
    }
    sl_err_clear(&err);
    (void)json_object_del(def, "readOnly");
    rc = sl__jm_defs_put(c->jm->defs,
                         (enum sl__jm_kind)c->pass,
                         def,
                         SL__JM_PUT_LENIENT,
                         NULL,
                         &err);
    if (rc != 0) {
        SL_WARN("jobmanager: stored %s '%.*s' no longer loads: %s (field %s)",
                kind_names[c->pass],
                (int)(klen - 2),
                k + 2,
                err.message,
                err.field);
    }
    json_decref(def);
    return 0;
}

/* Rebuild one run from its persisted JSON; only active runs come back. */
static int
load_run(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;
    json_t *j = json_loadb(val, vlen, 0, NULL);
    json_t *in = json_object_get(j, "_internal");
    struct run *r = NULL;
    enum run_state st = RS_PREPARING;
    size_t i = 0;
    json_t *v = NULL;

    (void)key;
    (void)klen;
    if (j == NULL || in == NULL ||
        sl__jm_state_parse(json_string_value(json_object_get(j, "state")),
                           &st) != 0 ||
        st == RS_SUCCEEDED || st == RS_FAILED || st == RS_CANCELED) {
        json_decref(j);
        return 0;
    }
    r = sl_calloc(1, sizeof(*r));
    (void)snprintf(r->job,
                   sizeof(r->job),
                   "%s",
                   json_string_value(json_object_get(in, "job")));
    (void)snprintf(r->id,
                   sizeof(r->id),
                   "%s",
                   json_string_value(json_object_get(j, "jobId")));
    r->runonce = strcmp(json_string_value(json_object_get(j, "runMode")),
                        "RUNONCE") == 0;
    r->continuous = strcmp(json_string_value(json_object_get(j, "runMode")),
                           "CONTINUOUS") == 0;
    r->state = st;
    r->start_ms = json_integer_value(json_object_get(in, "startMs"));
    r->finish_ms = json_integer_value(json_object_get(in, "finishMs"));
    r->jobdef = json_incref(json_object_get(in, "jobdef"));
    r->wfdef = json_incref(json_object_get(in, "wfdef"));
    r->buckets = json_incref(json_object_get(in, "buckets"));
    r->worker = json_incref(json_object_get(j, "worker"));
    r->errors = json_incref(json_object_get(j, "errors"));
    r->next_wfrun =
        (unsigned)json_integer_value(json_object_get(in, "nextWfRun"));
    r->had_fatal = json_is_true(json_object_get(in, "hadFatal"));
    r->paused = json_is_true(json_object_get(j, "paused"));
    r->incomplete =
        (uint64_t)json_integer_value(json_object_get(in, "incomplete"));
    if (r->incomplete > 0) {
        r->incomplete_why = sl_strdup(
            json_string_value(json_object_get(in, "incompleteWhy")) != NULL
                ? json_string_value(json_object_get(in, "incompleteWhy"))
                : "");
    }
    r->completion = json_incref(json_object_get(j, "completion"));
    sl__jm_run_counters_load(r, j);
    json_array_foreach(json_object_get(in, "wfruns"), i, v)
    {
        struct wfrun *w = sl_calloc(1, sizeof(*w));

        w->id = (unsigned)json_integer_value(json_object_get(v, "id"));
        w->failed = json_is_true(json_object_get(v, "failed"));
        w->completion = json_is_true(json_object_get(v, "completion"));
        w->pass = (unsigned)json_integer_value(json_object_get(v, "pass"));
        w->pass_reseed = json_is_true(json_object_get(v, "passReseed"));
        w->pass_ms = json_integer_value(json_object_get(v, "passMs"));
        w->incomplete =
            (unsigned)json_integer_value(json_object_get(v, "incomplete"));
        w->next = r->wfruns;
        r->wfruns = w;
        r->active_wfruns++;
    }
    {
        json_t *p = sl__jm_task_params(
            r->jobdef, r->wfdef, json_object_get(r->wfdef, "startAction"));

        if (json_is_string(json_object_get(p, "dataSource"))) {
            r->data_source =
                sl_strdup(json_string_value(json_object_get(p, "dataSource")));
        }
        if (r->continuous) {
            struct sl_err err;

            /* checked when it started; the defaults if it no longer reads */
            if (sl__jm_continuous_parse(json_object_get(p, "continuous"),
                                        &r->cont.cfg,
                                        &err) != 0) {
                (void)sl__jm_continuous_parse(NULL, &r->cont.cfg, &err);
            }
            sl__jm_continuous_load(r, json_object_get(in, "continuous"));
        }
        json_decref(p);
    }
    r->next = jm->runs;
    jm->runs = r;
    json_decref(j);
    return 0;
}

/* Rebuild one task: todo again, whatever it was. */
static int
load_task(void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;
    json_t *j = json_loadb(val, vlen, 0, NULL);
    json_t *props = json_object_get(j, "properties");
    struct run *r = NULL;
    struct wfrun *w = NULL;
    struct task *t = NULL;
    struct wqueue *q = NULL;

    r = j ? sl__jm_run_find(
                jm, json_string_value(json_object_get(props, "jobName")))
          : NULL;
    q = j ? sl__jm_wqueue(jm,
                          json_string_value(json_object_get(j, "workerName")))
          : NULL;
    if (r == NULL || q == NULL || klen >= sizeof(t->id) ||
        strcmp(r->id, json_string_value(json_object_get(props, "jobRunId")))) {
        (void)sl__jm_store_del(jm->st, SL__JM_DB_TASKS, key, klen);
        json_decref(j);
        return 0;
    }
    t = sl_calloc(1, sizeof(*t));
    memcpy(t->id, key, klen);
    t->run = r;
    t->wq = q;
    t->wfrun =
        (unsigned)json_integer_value(json_object_get(props, "workflowRunId"));
    t->action = (int)json_integer_value(json_object_get(props, "actionIndex"));
    t->json = j;
    w = sl__jm_wfrun_find(r, t->wfrun);
    if (w == NULL) {
        w = sl_calloc(1, sizeof(*w));
        w->id = t->wfrun;
        w->pass =
            (unsigned)json_integer_value(json_object_get(props, "passId"));
        w->pass_reseed =
            json_is_string(json_object_get(props, "passKind")) &&
            strcmp(json_string_value(json_object_get(props, "passKind")),
                   "reseed") == 0;
        w->pass_ms = json_integer_value(json_object_get(props, "passTime"));
        w->completion = json_is_true(json_object_get(props, "completion"));
        if (r->next_wfrun < w->id) {
            r->next_wfrun = w->id; /* the run's state was not committed */
        }
        w->next = r->wfruns;
        r->wfruns = w;
        r->active_wfruns++;
    }
    w->open++;
    sl__jm_task_index(jm, t);
    sl__jm_task_enqueue(t);
    return 0;
}

static int
drop_event(
    void *ctx, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct sl_jm *jm = ctx;

    (void)val;
    (void)vlen;
    SL_INFO("jobmanager: pending event '%.*s' completed at restart",
            (int)klen,
            (const char *)key);
    (void)sl__jm_store_del(jm->st, SL__JM_DB_EVENTS, key, klen);
    return 0;
}

/* Move every recovered run on: runs whose work is done finish now. */
static void
resume_runs(struct sl_jm *jm)
{
    struct run *r = jm->runs;

    while (r != NULL) {
        struct run *next = r->next;

        SL_INFO("jobmanager: resuming run %s of job %s (%s)",
                r->id,
                r->job,
                sl__jm_state_name(r->state));
        if (r->state == RS_CLEANINGUP || r->state == RS_CANCELING) {
            r->cleanup_queued = 1;
            sl__jm_run_requeue_cleanup(jm, r);
        } else {
            sl__jm_run_check_done(jm, r);
            sl__jm_run_persist(jm, r);
        }
        r = next;
    }
}

static void
autostart(struct sl_jm *jm)
{
    json_t *jobs = sl__jm_defs_list(jm->defs, SL__JM_JOB);
    size_t i = 0;
    json_t *j = NULL;

    json_array_foreach(jobs, i, j)
    {
        const char *name = json_string_value(json_object_get(j, "name"));
        char id[SL_JM_RUN_ID_MAX];
        struct sl_err err;

        if (!json_is_true(json_object_get(j, "autoStart")) ||
            sl_jm_run_state(jm, name, NULL) != NULL) {
            continue;
        }
        sl_err_clear(&err);
        if (sl_jm_run_start(jm, name, "standard", id, &err) != 0) {
            SL_WARN("jobmanager: autoStart of job '%s' failed: %s",
                    name,
                    err.message);
        }
    }
    json_decref(jobs);
}

int
sl_jm_start(struct sl_jm *jm, struct sl_err *err)
{
    struct load_ctx lc = {jm, 0};
    uint64_t seq = 0;
    int failed = 0;

    failed =
        sl__jm_defs_load_files(jm->defs, jm->config_dir, jm->workflows_dir);
    if (failed > 0) {
        SL_WARN("jobmanager: %d predefined definition(s) failed to load",
                failed);
    }
    for (lc.pass = 0; lc.pass < 3; lc.pass++) {
        (void)sl__jm_store_scan(jm->st, SL__JM_DB_DEFS, NULL, 0, load_def, &lc);
    }
    (void)pthread_mutex_lock(&jm->mu);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_RUNS, NULL, 0, load_run, jm);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_TASKS, NULL, 0, load_task, jm);
    (void)sl__jm_store_scan(jm->st, SL__JM_DB_EVENTS, NULL, 0, drop_event, jm);
    jm->started = 1;
    /* the lease timer's clock starts now, not when its thread first runs:
     * a thread that starts late must still see the stall it missed */
    jm->lease_tick_ms = sl_mono_ms();
    if (pthread_create(&jm->lease_thread, NULL, sl__jm_lease_main, jm) != 0 ||
        pthread_create(&jm->cleanup_thread, NULL, sl__jm_cleanup_main, jm) !=
            0) {
        sl_panic("jobmanager: cannot start threads");
    }
    resume_runs(jm);
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (sl__jm_store_wait(jm->st, seq, err) != 0) {
        return err ? err->code : SL_EIO;
    }
    autostart(jm);
    return 0;
}
