/*
 * The run data JSON of a job run (docs/jobmanager.md), also its persisted
 * form (with "_internal"), and the run counters loaded back from it.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

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

const char *
sl__jm_tc_name(enum task_counter c)
{
    return tc_names[c];
}

static const char *const wc_names[WC_N] = {"startedWorkflowRunCount",
                                           "successfulWorkflowRunCount",
                                           "failedWorkflowRunCount",
                                           "canceledWorkflowRunCount"};

/* Key of a run in the runs database: "<job>\0<runId>". */
size_t
sl__jm_run_key(char *buf, size_t cap, const char *job, const char *id)
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

/* ------------------------------------------------------------------------
 * Run data JSON (docs/jobmanager.md), also the persisted form (with
 * "_internal").
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
                  r->runonce      ? "RUNONCE"
                  : r->continuous ? "CONTINUOUS"
                                  : "STANDARD",
                  "state",
                  sl__jm_state_name(r->state),
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
    if (sl__jm_run_paused(r)) {
        (void)json_object_set_new(j, "paused", json_true());
    }
    (void)json_object_set_new(j, "documents", sl__jm_history_counts(r));
    if (r->continuous) {
        (void)json_object_set_new(
            j, "continuous", sl__jm_continuous_json(r, 0));
    }
    if (internal) {
        json_t *active = json_array();
        struct wfrun *w = NULL;

        for (w = r->wfruns; w != NULL; w = w->next) {
            (void)json_array_append_new(
                active,
                json_pack("{s:i, s:b, s:b, s:i, s:b, s:I, s:i}",
                          "id",
                          (int)w->id,
                          "failed",
                          w->failed,
                          "completion",
                          w->completion,
                          "pass",
                          (int)w->pass,
                          "passReseed",
                          w->pass_reseed,
                          "passMs",
                          (json_int_t)w->pass_ms,
                          "incomplete",
                          (int)w->incomplete));
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
        sl__jm_history_persist(r, json_object_get(j, "_internal"));
        if (r->continuous) {
            (void)json_object_set_new(json_object_get(j, "_internal"),
                                      "continuous",
                                      sl__jm_continuous_json(r, 1));
        }
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
    sl__jm_history_load(r, j);
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
    size_t klen = sl__jm_run_key(key, sizeof(key), r->job, r->id);
    json_t *j = run_json(r, 1, 1); /* serialised here, under jm->mu */

    (void)sl__jm_store_put_json(jm->st, SL__JM_DB_RUNS, key, klen, j);
    json_decref(j);
}
