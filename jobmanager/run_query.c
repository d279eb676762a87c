/*
 * Run queries and transitions: run data, job info, finish, cancel and
 * delete of runs and workflow runs, and what active runs use.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

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
        rc =
            sl__jm_store_get_json(jm->st,
                                  SL__JM_DB_RUNS,
                                  key,
                                  sl__jm_run_key(key, sizeof(key), job, run_id),
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
    json_t *sched = NULL;

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
                            sl__jm_run_key(prefix, sizeof(prefix), job, ""),
                            collect_run_id,
                            &c);
    runs = json_pack("{s:o}", "completed", c.ids);
    if (active[0]) {
        (void)json_object_set_new(runs, "current", json_string(active));
    }
    *out = json_pack("{s:O, s:o}", "definition", def, "runs", runs);
    sched = sl__jm_sched_info(jm, def);
    if (sched != NULL) {
        (void)json_object_set_new(*out, "scheduling", sched);
    }
    json_decref(def);
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
        s = sl__jm_state_name(r->state);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return s;
}

unsigned
sl_jm_run_active_wfruns(struct sl_jm *jm, const char *job)
{
    struct run *r = NULL;
    unsigned n = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL) {
        n = r->active_wfruns;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return n;
}

/* Run @run_id of @job is not active: 404 when it does not exist, else
 * 409 naming the state it ended in. */
static int
not_active(struct sl_jm *jm,
           const char *job,
           const char *run_id,
           struct sl_err *err)
{
    json_t *stored = NULL;
    int rc = sl_jm_run_get(jm, job, run_id, 0, &stored, err);

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

/* Common frame of finish and cancel: find the active run or explain. */
static int
transition(struct sl_jm *jm,
           const char *job,
           const char *run_id,
           int cancel,
           struct sl_err *err)
{
    struct run *r = NULL;
    uint64_t seq = 0;
    int rc = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = active_run(jm, job, run_id);
    if (r == NULL) {
        (void)pthread_mutex_unlock(&jm->mu);
        return not_active(jm, job, run_id, err);
    }
    if (!cancel) {
        if (r->state != RS_RUNNING) {
            rc = sl_err_set(err,
                            SL_EBADSTATE,
                            "state",
                            "run %s is %s; only a RUNNING run can be finished",
                            r->id,
                            sl__jm_state_name(r->state));
        } else {
            r->state = RS_FINISHING;
            r->paused = 0; /* a finished run's tasks are handed out */
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
                        sl__jm_state_name(r->state));
    } else {
        sl__jm_tasks_drop_run(jm, r, 0, TC_CANCELLED);
        while (r->wfruns != NULL) {
            r->wc[WC_CANCELED]++;
            sl__jm_wfrun_unlink(r, r->wfruns);
        }
        sl__jm_note_skipped(
            jm, r, json_pack("{s:s}", "skipped", "the job run was canceled"));
        r->state = RS_CANCELING;
        sl__jm_run_persist(jm, r);
        if (!r->cleanup_queued) {
            r->cleanup_queued = 1;
            sl__jm_cleanup_transient(jm, r, 0, 1);
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
sl_jm_run_pause(struct sl_jm *jm,
                const char *job,
                const char *run_id,
                int pause,
                struct sl_err *err)
{
    struct run *r = NULL;
    uint64_t seq = 0;

    (void)pthread_mutex_lock(&jm->mu);
    r = run_id != NULL ? active_run(jm, job, run_id) : sl__jm_run_find(jm, job);
    if (r == NULL) {
        (void)pthread_mutex_unlock(&jm->mu);
        return run_id != NULL ? not_active(jm, job, run_id, err)
                              : sl_err_set(err,
                                           SL_ENOENT,
                                           "job",
                                           "job '%s' has no run going",
                                           job);
    }
    if (pause && r->state != RS_RUNNING && r->state != RS_FINISHING) {
        (void)pthread_mutex_unlock(&jm->mu);
        return sl_err_set(err,
                          SL_EBADSTATE,
                          "state",
                          "run %s is %s; only a RUNNING or FINISHING run can "
                          "be paused",
                          r->id,
                          sl__jm_state_name(r->state));
    }
    if (r->paused != pause) {
        r->paused = pause;
        sl__jm_run_persist(jm, r);
        if (!pause) {
            sl__jm_wake_all(jm); /* its todo tasks can be taken again */
        }
        SL_INFO("jobmanager: run %s of job '%s' %s",
                r->id,
                job,
                pause ? "paused" : "resumed");
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    return sl__jm_store_wait(jm->st, seq, err);
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
    klen = sl__jm_run_key(key, sizeof(key), job, run_id);
    rc = sl__jm_store_get_json(jm->st, SL__JM_DB_RUNS, key, klen, &stored);
    if (rc != 0) {
        return sl_err_set(
            err, SL_ENOENT, "runId", "job '%s' has no run '%s'", job, run_id);
    }
    json_decref(stored);
    /* its history first: the prune finds runs by their records, so a
     * crash in between must leave the record, not the entries */
    if (sl__jm_history_drop(jm, job, run_id) != 0) {
        return sl_err_set(err,
                          SL_ENOTREADY,
                          "runId",
                          "the document history of run %s could not be "
                          "dropped (the server stops?); delete it again",
                          run_id);
    }
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
            sl__jm_cleanup_transient(jm, r, w->id, 0);
        }
        sl__jm_wfrun_unlink(r, w);
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
