/*
 * Continuous runs (docs/jobmanager.md "Continuous crawling").  A run in
 * mode continuous stays RUNNING and starts passes on the schedules' clock,
 * one at a time: a pass is one workflow run with one start task, a reseed
 * (the crawler reads its whole source) every reseedSeconds, else a due
 * pass (the crawler checks the documents whose next check is due).  Every
 * task of a pass carries the pass in its properties (passId, passKind,
 * passTime), so the workers keep one delta-service run per pass and take
 * the pass's time as "now".  A reseed pass that completed without a
 * failed task and without input it could not read starts an expiry phase:
 * the completion tasks of the workflow (the deltaChecker's), which delete
 * what no pass has seen for expirySeconds.  The jobmanager knows nothing
 * of what a pass reads: that is the crawler's.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

#define CHECK_DEFAULT_S  60
#define RESEED_DEFAULT_S 86400
#define EXPIRY_DEFAULT_S (7 * 86400)
#define SECONDS_MAX      (10LL * 366 * 86400)

/* Integer @key of @v in [@min, SECONDS_MAX] seconds into *@ms, or its
 * default @def when absent. */
static int
seconds(const json_t *v,
        const char *key,
        long long min,
        long long def,
        int64_t *ms,
        struct sl_err *err)
{
    const json_t *x = json_object_get(v, key);
    long long s = def;

    if (x != NULL) {
        if (!json_is_integer(x) || json_integer_value(x) < min ||
            json_integer_value(x) > SECONDS_MAX) {
            char field[64];

            (void)snprintf(
                field, sizeof(field), "parameters.continuous.%s", key);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "continuous.%s must be an integer from %lld "
                              "to %lld (seconds)",
                              key,
                              min,
                              SECONDS_MAX);
        }
        s = (long long)json_integer_value(x);
    }
    *ms = (int64_t)s * 1000;
    return 0;
}

int
sl__jm_continuous_parse(const json_t *v,
                        struct sl__jm_cont_cfg *c,
                        struct sl_err *err)
{
    static const char *const keys[] = {
        "checkSeconds", "reseedSeconds", "expirySeconds"};
    const char *key = NULL;
    const json_t *x = NULL;
    size_t i = 0;
    int rc = 0;

    if (v != NULL && !json_is_object(v)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters.continuous",
                          "continuous must be an object {checkSeconds, "
                          "reseedSeconds, expirySeconds}");
    }
    json_object_foreach((json_t *)v, key, x)
    {
        for (i = 0; i < 3 && strcmp(key, keys[i]) != 0; i++) {
        }
        if (i == 3) {
            char field[96];

            (void)snprintf(
                field, sizeof(field), "parameters.continuous.%.60s", key);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "continuous: unknown key '%s' (allowed: "
                              "checkSeconds, reseedSeconds, expirySeconds)",
                              key);
        }
    }
    rc = seconds(v, "checkSeconds", 1, CHECK_DEFAULT_S, &c->check_ms, err);
    if (rc == 0) {
        rc = seconds(
            v, "reseedSeconds", 1, RESEED_DEFAULT_S, &c->reseed_ms, err);
    }
    if (rc == 0) {
        rc = seconds(
            v, "expirySeconds", 1, EXPIRY_DEFAULT_S, &c->expiry_ms, err);
    }
    if (rc == 0 && c->reseed_ms < c->check_ms) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "parameters.continuous.reseedSeconds",
                        "continuous.reseedSeconds (%lld) must not be below "
                        "checkSeconds (%lld)",
                        (long long)(c->reseed_ms / 1000),
                        (long long)(c->check_ms / 1000));
    }
    if (rc == 0 && c->expiry_ms <= c->reseed_ms) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "parameters.continuous.expirySeconds",
                        "continuous.expirySeconds (%lld) must be above "
                        "reseedSeconds (%lld): a document that still exists "
                        "is seen by every reseed",
                        (long long)(c->expiry_ms / 1000),
                        (long long)(c->reseed_ms / 1000));
    }
    return rc;
}

/* Start a pass of @r at @now. */
static void
pass_start(struct sl_jm *jm, struct run *r, int64_t now)
{
    struct continuous *c = &r->cont;
    struct wfrun *w = sl__jm_wfrun_new(r);
    int reseed =
        c->last_reseed_ms == 0 || now - c->last_reseed_ms >= c->cfg.reseed_ms;

    w->pass = w->id;
    w->pass_ms = now;
    w->pass_reseed = reseed;
    c->next_pass_ms = now + c->cfg.check_ms;
    if (sl__jm_task_create(jm, r, w, 0, NULL, NULL) == NULL) {
        SL_WARN("jobmanager: run %s of job %s: no pass: the start worker "
                "has no queue",
                r->id,
                r->job);
        r->wc[WC_FAILED]++;
        sl__jm_wfrun_unlink(r, w);
        sl__jm_run_persist(jm, r);
        return;
    }
    if (reseed) {
        c->last_reseed_ms = now;
    }
    c->passes++;
    SL_INFO("jobmanager: run %s of job %s: pass %llu, a %s (workflow run %u)",
            r->id,
            r->job,
            (unsigned long long)c->passes,
            reseed ? "reseed" : "due pass",
            w->id);
    sl__jm_run_persist(jm, r);
}

void
sl__jm_continuous_tick(struct sl_jm *jm, int64_t now)
{
    struct run *r = NULL;

    for (r = jm->runs; r != NULL; r = r->next) {
        if (r->continuous && r->state == RS_RUNNING && !r->paused &&
            r->active_wfruns == 0 && now >= r->cont.next_pass_ms) {
            pass_start(jm, r, now);
        }
    }
}

void
sl__jm_continuous_pass_done(struct sl_jm *jm, struct run *r, struct wfrun *w)
{
    size_t n = json_array_size(json_object_get(r->wfdef, "actions")) + 1;
    struct wfrun *e = NULL;
    size_t a = 0;

    if (w->pass == 0 || w->completion || !w->pass_reseed ||
        r->state != RS_RUNNING) {
        return; /* after a finish: nothing deleted */
    }
    if (w->failed || w->incomplete > 0) {
        SL_WARN("jobmanager: run %s of job %s: reseed pass %u was not "
                "complete (%s): no expiry after it",
                r->id,
                r->job,
                w->id,
                w->failed ? "a task failed" : "input not read");
        return;
    }
    for (a = 0; a < n; a++) {
        const struct sl__jm_worker *cw = sl__jm_completion_worker(jm, r, a);

        if (cw == NULL) {
            continue;
        }
        if (e == NULL) {
            e = sl__jm_wfrun_new(r);
            e->completion = 1;
            e->pass = w->pass;
            e->pass_reseed = 1;
            e->pass_ms = w->pass_ms;
            r->cont.expiries++;
        }
        sl__jm_completion_tasks(jm, r, e, a, cw);
    }
    if (e != NULL && e->open == 0) {
        r->wc[WC_SUCCESSFUL]++;
        sl__jm_wfrun_unlink(r, e);
    }
}

json_t *
sl__jm_continuous_props(const struct run *r, const struct wfrun *w)
{
    json_t *p = NULL;

    if (w->pass == 0) {
        return NULL;
    }
    p = json_pack("{s:i, s:s, s:I}",
                  "passId",
                  (int)w->pass,
                  "passKind",
                  w->pass_reseed ? "reseed" : "due",
                  "passTime",
                  (json_int_t)w->pass_ms);
    if (w->completion) {
        /* the expiry: what no pass since then has seen goes */
        (void)json_object_set_new(
            p,
            "expireBefore",
            json_integer((json_int_t)(w->pass_ms - r->cont.cfg.expiry_ms)));
    }
    return p;
}

/* @ms as an ISO time into @j's @key, when set. */
static void
set_time(json_t *j, const char *key, int64_t ms)
{
    char ts[32];

    if (ms > 0) {
        sl_time_format(ms, ts, sizeof(ts));
        (void)json_object_set_new(j, key, json_string(ts));
    }
}

json_t *
sl__jm_continuous_json(const struct run *r, int internal)
{
    const struct continuous *c = &r->cont;
    const struct wfrun *w = NULL;
    json_t *j = NULL;

    if (internal) {
        return json_pack("{s:I, s:I, s:I, s:I}",
                         "nextPassMs",
                         (json_int_t)c->next_pass_ms,
                         "lastReseedMs",
                         (json_int_t)c->last_reseed_ms,
                         "passes",
                         (json_int_t)c->passes,
                         "expiries",
                         (json_int_t)c->expiries);
    }
    j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
                  "checkSeconds",
                  (json_int_t)(c->cfg.check_ms / 1000),
                  "reseedSeconds",
                  (json_int_t)(c->cfg.reseed_ms / 1000),
                  "expirySeconds",
                  (json_int_t)(c->cfg.expiry_ms / 1000),
                  "passes",
                  (json_int_t)c->passes,
                  "expiryPhases",
                  (json_int_t)c->expiries,
                  "activeWorkflowRuns",
                  (json_int_t)r->active_wfruns);
    set_time(j, "lastReseedTime", c->last_reseed_ms);
    if (r->state == RS_RUNNING) {
        set_time(j, "nextPassTime", c->next_pass_ms);
    }
    for (w = r->wfruns; w != NULL; w = w->next) {
        if (w->pass != 0) {
            json_t *p = json_pack("{s:i, s:s, s:b}",
                                  "workflowRunId",
                                  (int)w->id,
                                  "kind",
                                  w->completion    ? "expiry"
                                  : w->pass_reseed ? "reseed"
                                                   : "due",
                                  "failed",
                                  w->failed);

            set_time(p, "time", w->pass_ms);
            (void)json_object_set_new(j, "currentPass", p);
        }
    }
    return j;
}

void
sl__jm_continuous_load(struct run *r, const json_t *j)
{
    struct continuous *c = &r->cont;

    c->next_pass_ms = json_integer_value(json_object_get(j, "nextPassMs"));
    c->last_reseed_ms = json_integer_value(json_object_get(j, "lastReseedMs"));
    c->passes = (uint64_t)json_integer_value(json_object_get(j, "passes"));
    c->expiries = (uint64_t)json_integer_value(json_object_get(j, "expiries"));
}
