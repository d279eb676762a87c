/*
 * Job schedules, the clock (docs/jobmanager.md "Schedules"): at each tick
 * every job whose definition has a "schedule" is looked at, as
 * ManifoldCF's job start thread does:
 *
 * - a start time that came since the last one handled starts a run,
 *   unless one is active: a paused run is resumed, a running one makes the
 *   start skipped (counted, logged; the open window stays as it is);
 * - a start the tick sees more than SLACK_MS after it came (the server was
 *   down, or stopped) runs once, its window counted from then, unless the
 *   schedule says runMissed false (then counted as missed); several such
 *   starts make one;
 * - when the open window ends, the job's active run is paused (its todo
 *   tasks wait; the next start resumes it) or finished, as atWindowEnd
 *   says; a pause or finish that fails (not for the run's state) is
 *   tried again at the next tick.
 *
 * Each job's state lives in memory (jm->sched_states, the ticks') and in the
 * jobmanager's store (META, "schedule\0<job>"), written when a start is
 * handled or the window changes, not at every tick: the last start
 * handled, the open window's end, the counts, and the definition it
 * belongs to (a changed schedule, or a job deleted or left without one and
 * defined again, starts afresh: it does not run the starts of the past).  A
 * restart reads it and goes on from the last start handled.
 *
 * Threads: ticks are serialised (g_tick_mu), on the caller's thread (the
 * server's schedule thread, or a test's clock request); a tick takes
 * jm->mu only briefly, through the public calls, never while it waits for
 * the store.
 */
#include <stdio.h>
#include <string.h>

#include "jobmanager/engine_int.h"
#include "jobmanager/jobmanager_int.h"
#include "jobmanager/sched_int.h"

#define SLACK_MS 90000 /* a start older than this at a tick was missed */

/* One tick at a time (the server's schedule thread, or a test's clock
 * requests on several HTTP threads); it guards jm->sched_states. */
static pthread_mutex_t g_tick_mu = PTHREAD_MUTEX_INITIALIZER;

/* The store key of @job's schedule state into @key: its length. */
static size_t
state_key(char *key, size_t cap, const char *job)
{
    int n = snprintf(key, cap, "schedule%c%s", '\0', job);

    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* @job's state as committed into *out (a new object, empty when there is
 * none): 0, or the store's error. */
static int
state_load(struct sl_jm *jm, const char *job, json_t **out)
{
    char key[SL_NAME_MAX + 16];
    size_t klen = state_key(key, sizeof(key), job);
    int rc = SL_ENOENT;

    *out = NULL;
    if (klen > 0) {
        rc = sl__jm_store_get_json(jm->st, SL__JM_DB_META, key, klen, out);
    }
    if (rc == 0 && !json_is_object(*out)) {
        json_decref(*out);
        rc = SL_ENOENT;
    }
    if (rc == SL_ENOENT) {
        *out = json_object();
        rc = 0;
    }
    return rc;
}

/* @job's state (borrowed from jm->sched_states): from memory, else the
 * store; NULL when the store cannot be read (the job is left alone this
 * tick). */
static json_t *
state_get(struct sl_jm *jm, const char *job)
{
    json_t *st = json_object_get(jm->sched_states, job);
    int rc = 0;

    if (st != NULL) {
        return st;
    }
    rc = state_load(jm, job, &st);
    if (rc != 0) {
        SL_WARN("jobmanager: the schedule state of job '%s' cannot be read "
                "(%s); looked at again at the next tick",
                job,
                sl_strerror(rc));
        return NULL;
    }
    (void)json_object_set_new(jm->sched_states, job, st);
    return st;
}

/* Write @job's state @st (without its "tick") to the store. */
static void
state_put(struct sl_jm *jm, const char *job, const json_t *st)
{
    char key[SL_NAME_MAX + 16];
    size_t klen = state_key(key, sizeof(key), job);
    json_t *copy = json_copy((json_t *)st);
    struct sl_err err;

    (void)json_object_del(copy, "tick");
    if (klen > 0) {
        uint64_t seq =
            sl__jm_store_put_json(jm->st, SL__JM_DB_META, key, klen, copy);

        (void)sl__jm_store_wait(jm->st, seq, &err);
    }
    json_decref(copy);
}

/* Whether @job has an active run: its id into @id, and whether it is
 * paused. */
static int
active(struct sl_jm *jm,
       const char *job,
       char id[SL_JM_RUN_ID_MAX],
       int *paused)
{
    struct run *r = NULL;

    (void)pthread_mutex_lock(&jm->mu);
    r = sl__jm_run_find(jm, job);
    if (r != NULL) {
        (void)snprintf(id, SL_JM_RUN_ID_MAX, "%s", r->id);
        *paused = r->paused;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return r != NULL;
}

static int64_t
num(const json_t *st, const char *name)
{
    return (int64_t)json_integer_value(json_object_get(st, name));
}

static void
bump(json_t *st, const char *name)
{
    (void)json_object_set_new(st, name, json_integer(num(st, name) + 1));
}

/* What a start did: a run started or resumed (its window opens), or
 * nothing (skipped, failed: the open window stays as it is). */
enum start_done { S_NONE, S_OPENED };

static enum start_done
skipped(const char *job, const char *why, json_t *st)
{
    SL_WARN("jobmanager: scheduled start of job '%s' skipped: %s", job, why);
    bump(st, "skipped");
    return S_NONE;
}

/* A start of @job came at @at (now @now): start a run, or resume the
 * paused one, or skip it. */
static enum start_done
start_due(struct sl_jm *jm,
          const char *job,
          const struct sl__jm_sched *s,
          int64_t at,
          int64_t now,
          json_t *st)
{
    char run_id[SL_JM_RUN_ID_MAX] = "";
    struct sl_err err;
    int paused = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (active(jm, job, run_id, &paused)) {
        if (!paused) {
            return skipped(job, "a run is going", st);
        }
        if (sl_jm_run_pause(jm, job, run_id, 0, &err) == 0) {
            bump(st, "resumed");
            return S_OPENED;
        }
        SL_WARN("jobmanager: scheduled start of job '%s' could not resume "
                "run %s: %s",
                job,
                run_id,
                err.message);
        bump(st, "failed");
        return S_NONE;
    }
    rc = sl_jm_run_start(jm, job, s->mode[0] ? s->mode : NULL, run_id, &err);
    if (rc == SL_ECONFLICT) { /* started meanwhile, or its source busy */
        return skipped(job, err.message, st);
    }
    if (rc != 0) {
        SL_WARN("jobmanager: scheduled start of job '%s' failed: %s",
                job,
                err.message);
        bump(st, "failed");
        return S_NONE;
    }
    SL_INFO("jobmanager: job '%s' started by its schedule: run %s%s",
            job,
            run_id,
            now - at > SLACK_MS ? " (a start missed while down)" : "");
    bump(st, "started");
    (void)json_object_set_new(st, "lastStart", json_integer(now));
    (void)json_object_set_new(st, "lastRun", json_string(run_id));
    return S_OPENED;
}

/* The window of @job ended: pause or finish its active run.  0 when that
 * is done or there is nothing to do, -1 to try again at the next tick. */
static int
window_end(struct sl_jm *jm,
           const char *job,
           const struct sl__jm_sched *s,
           json_t *st)
{
    char run_id[SL_JM_RUN_ID_MAX] = "";
    struct sl_err err;
    int paused = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (!active(jm, job, run_id, &paused) || paused) {
        return 0;
    }
    if (s->finish_at_end) {
        rc = jm->sched_finish != NULL
                 ? jm->sched_finish(jm->sched_finish_arg, job, run_id, &err)
                 : sl_jm_run_finish(jm, job, run_id, &err);
    } else {
        rc = sl_jm_run_pause(jm, job, run_id, 1, &err);
    }
    if (rc == 0) {
        bump(st,
             s->finish_at_end ? "finishedAtWindowEnd" : "pausedAtWindowEnd");
        return 0;
    }
    if (rc == SL_EBADSTATE) { /* finishing already, completing, ended */
        return 0;
    }
    SL_WARN("jobmanager: job '%s' at the end of its window: %s (tried again "
            "at the next tick)",
            job,
            err.message);
    return -1;
}

/* Whether @st belongs to the schedule of job definition @def; else it is
 * made anew for it (a changed schedule starts afresh). */
static void
state_owner(json_t *st, const json_t *def, int64_t now)
{
    char *sched = json_dumps(json_object_get(def, "schedule"),
                             JSON_COMPACT | JSON_SORT_KEYS);
    const char *was = json_string_value(json_object_get(st, "schedule"));

    if (sched != NULL && (was == NULL || strcmp(was, sched) != 0)) {
        (void)json_object_clear(st);
        (void)json_object_set_new(st, "schedule", json_string(sched));
        (void)json_object_set_new(st, "lastDue", json_integer(now));
        (void)json_object_set_new(st, "tick", json_integer(now));
        (void)json_object_set_new(st, "dirty", json_true());
    }
    sl_free(sched);
}

/* Forget the state of the jobs of @had that are not in @have (deleted,
 * or without a schedule now): one defined again starts afresh. */
static void
state_forget(struct sl_jm *jm, const json_t *have)
{
    const char *job = NULL;
    json_t *v = NULL;
    void *tmp = NULL;

    json_object_foreach_safe(jm->sched_states, tmp, job, v)
    {
        char key[SL_NAME_MAX + 16];
        size_t klen = 0;

        if (json_object_get(have, job) != NULL) {
            continue;
        }
        klen = state_key(key, sizeof(key), job);
        if (klen > 0) {
            (void)sl__jm_store_del(jm->st, SL__JM_DB_META, key, klen);
        }
        (void)json_object_del(jm->sched_states, job);
    }
}

/* One tick for job definition @def, of schedule @s, at @now. */
static void
tick_job(struct sl_jm *jm,
         const json_t *def,
         const struct sl__jm_sched *s,
         int64_t now)
{
    const char *job = json_string_value(json_object_get(def, "name"));
    json_t *st = state_get(jm, job);
    int64_t last = 0;
    int64_t wend = 0;
    int64_t w = 0;
    int64_t next = 0;
    int dirty = 0;

    if (st == NULL) {
        return;
    }
    state_owner(st, def, now);
    /* the starts after the last one handled and the last tick (a clock
     * set back does not run them again) */
    last = num(st, "lastDue");
    if (num(st, "tick") > last) {
        last = num(st, "tick");
    }
    wend = num(st, "windowEnd");
    next = sl__jm_sched_next(s, last, &w);
    if (wend > 0 && now >= wend && (next < 0 || next > now || next >= wend) &&
        window_end(jm, job, s, st) == 0) {
        wend = 0; /* before a start that reopens it */
        dirty = 1;
    }
    if (next >= 0 && next <= now) {
        int missed = now - next > SLACK_MS;

        if (missed && !s->run_missed) {
            bump(st, "missed");
        } else if (start_due(jm, job, s, next, now, st) == S_OPENED) {
            wend = w > 0 ? (missed ? now : next) + w : 0;
        }
        /* never back: a clock set back does not run it again */
        (void)json_object_set_new(
            st, "lastDue", json_integer(now > last ? now : last));
        dirty = 1;
    }
    (void)json_object_set_new(st, "windowEnd", json_integer(wend));
    if (now > num(st, "tick")) {
        (void)json_object_set_new(st, "tick", json_integer(now));
    }
    if (dirty || json_object_get(st, "dirty") != NULL) {
        (void)json_object_del(st, "dirty");
        state_put(jm, job, st);
    }
}

void
sl_jm_set_sched_finish(struct sl_jm *jm,
                       int (*finish)(void *arg,
                                     const char *job,
                                     const char *run_id,
                                     struct sl_err *err),
                       void *arg)
{
    jm->sched_finish = finish;
    jm->sched_finish_arg = arg;
}

void
sl_jm_sched_tick(struct sl_jm *jm, int64_t now)
{
    json_t *jobs = sl__jm_defs_list(jm->defs, SL__JM_JOB);
    json_t *have = json_object(); /* the jobs with a schedule */
    const json_t *job = NULL;
    size_t i = 0;

    (void)pthread_mutex_lock(&g_tick_mu);
    if (jm->sched_states == NULL) {
        jm->sched_states = json_object();
    }
    (void)pthread_mutex_lock(&jm->mu);
    jm->sched_now = now;
    sl__jm_continuous_tick(jm, now);
    (void)pthread_mutex_unlock(&jm->mu);

    json_array_foreach(jobs, i, job)
    {
        const json_t *sj = json_object_get(job, "schedule");
        const char *name = json_string_value(json_object_get(job, "name"));
        struct sl__jm_sched s;
        struct sl_err err;

        if (sj == NULL || name == NULL ||
            sl__jm_sched_parse(sj, &s, &err) != 0) {
            continue; /* refused when defined; an older one is skipped */
        }
        (void)json_object_set_new(have, name, json_true());
        tick_job(jm, job, &s, now);
    }
    state_forget(jm, have);
    (void)pthread_mutex_unlock(&g_tick_mu);
    json_decref(have);
    json_decref(jobs);
}

json_t *
sl__jm_sched_info(struct sl_jm *jm, const json_t *jobdef)
{
    const json_t *sj = json_object_get(jobdef, "schedule");
    const char *name = json_string_value(json_object_get(jobdef, "name"));
    struct sl__jm_sched s;
    struct sl_err err;
    char ts[40];
    json_t *st = NULL;
    json_t *out = NULL;
    int64_t now = 0;
    int64_t w = 0;
    int64_t next = 0;
    static const char *const counts[] = {"started",
                                         "skipped",
                                         "missed",
                                         "resumed",
                                         "failed",
                                         "pausedAtWindowEnd",
                                         "finishedAtWindowEnd"};
    size_t i = 0;

    if (sj == NULL || name == NULL || sl__jm_sched_parse(sj, &s, &err) != 0) {
        return NULL;
    }
    /* the schedules' time: the last tick's (a test's clock), else now */
    (void)pthread_mutex_lock(&jm->mu);
    now = sl__jm_clock(jm);
    (void)pthread_mutex_unlock(&jm->mu);
    /* as committed: what a tick wrote, without waiting for one */
    if (state_load(jm, name, &st) != 0) {
        st = json_object();
    }
    next = sl__jm_sched_next(&s, now, &w);
    out = json_pack("{s:s}", "timeZone", s.tz);
    if (next >= 0) {
        sl_time_format(next, ts, sizeof(ts));
        (void)json_object_set_new(out, "nextStart", json_string(ts));
    }
    if (num(st, "windowEnd") > now) {
        sl_time_format(num(st, "windowEnd"), ts, sizeof(ts));
        (void)json_object_set_new(out, "windowEnd", json_string(ts));
    }
    if (num(st, "lastStart") > 0) {
        sl_time_format(num(st, "lastStart"), ts, sizeof(ts));
        (void)json_object_set_new(out, "lastStart", json_string(ts));
        (void)json_object_set(out, "lastRun", json_object_get(st, "lastRun"));
    }
    for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        (void)json_object_set_new(
            out, counts[i], json_integer(num(st, counts[i])));
    }
    json_decref(st);
    return out;
}
