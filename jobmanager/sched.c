/*
 * Job schedules, the clock (docs/jobmanager.md "Schedules"): at each tick
 * every job whose definition has a "schedule" is looked at, as
 * ManifoldCF's job start thread does:
 *
 * - a start time that came since the last tick starts a run, unless one
 *   is active: a paused run is resumed, a running one makes the start
 *   skipped (counted, logged);
 * - a start that came while the server was down (the last tick is older
 *   than the start by more than a tick's slack) is run once at the first
 *   tick, its window counted from then, unless the schedule says
 *   runMissed false (then counted as missed);
 * - when the window of the last start ends, the job's active run is
 *   paused (its todo tasks wait; the next start resumes it) or finished,
 *   as atWindowEnd says.
 *
 * What a job's schedule did is kept in the jobmanager's store (META,
 * "schedule\0<job>": the last tick, the open window's end, the counts),
 * so a restart goes on from it; the next start is computed afresh from
 * the definition at every tick.
 *
 * Threads: sl_jm_sched_tick is called from one thread at a time (the
 * server's clock); it takes jm->mu only through the public calls.
 */
#include <stdio.h>
#include <string.h>

#include "jobmanager/engine_int.h"
#include "jobmanager/jobmanager_int.h"
#include "jobmanager/sched_int.h"

#define SLACK_MS 90000 /* a start older than this at a tick was missed */

/* The store key of @job's schedule state into @key: its length. */
static size_t
state_key(char *key, size_t cap, const char *job)
{
    int n = snprintf(key, cap, "schedule%c%s", '\0', job);

    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* @job's schedule state (a new object: an empty one when there is none). */
static json_t *
state_get(struct sl_jm *jm, const char *job)
{
    char key[SL_NAME_MAX + 16];
    size_t klen = state_key(key, sizeof(key), job);
    json_t *st = NULL;

    if (klen == 0 ||
        sl__jm_store_get_json(jm->st, SL__JM_DB_META, key, klen, &st) != 0 ||
        !json_is_object(st)) {
        json_decref(st);
        st = json_object();
    }
    return st;
}

/* Write @job's state, committed before the next tick reads it. */
static void
state_put(struct sl_jm *jm, const char *job, const json_t *st)
{
    char key[SL_NAME_MAX + 16];
    size_t klen = state_key(key, sizeof(key), job);
    struct sl_err err;

    if (klen > 0) {
        uint64_t seq =
            sl__jm_store_put_json(jm->st, SL__JM_DB_META, key, klen, st);

        (void)sl__jm_store_wait(jm->st, seq, &err);
    }
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

/* A start of @job came at @at (now @now): start a run, or resume the
 * paused one, or skip it. */
static void
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

    sl_err_clear(&err);
    if (active(jm, job, run_id, &paused) && paused) {
        if (sl_jm_run_pause(jm, job, run_id, 0, &err) == 0) {
            bump(st, "resumed");
        }
        return;
    }
    if (run_id[0] != '\0') {
        SL_WARN("jobmanager: scheduled start of job '%s' skipped: run %s is "
                "active",
                job,
                run_id);
        bump(st, "skipped");
        return;
    }
    if (sl_jm_run_start(jm, job, s->mode[0] ? s->mode : NULL, run_id, &err) !=
        0) {
        SL_WARN("jobmanager: scheduled start of job '%s' failed: %s",
                job,
                err.message);
        bump(st, "failed");
        return;
    }
    SL_INFO("jobmanager: job '%s' started by its schedule: run %s%s",
            job,
            run_id,
            now - at > SLACK_MS ? " (a start missed while down)" : "");
    bump(st, "started");
    (void)json_object_set_new(st, "lastStart", json_integer(now));
    (void)json_object_set_new(st, "lastRun", json_string(run_id));
}

/* The window of @job ended: pause or finish its active run. */
static void
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
    if (!active(jm, job, run_id, &paused)) {
        return;
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
    } else if (rc != SL_EBADSTATE) {
        SL_WARN("jobmanager: job '%s' at the end of its window: %s",
                job,
                err.message);
    }
}

/* One tick for @job with schedule @s at @now. */
static void
tick_job(struct sl_jm *jm,
         const char *job,
         const struct sl__jm_sched *s,
         int64_t now)
{
    json_t *st = state_get(jm, job);
    char *before = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
    int64_t last = json_object_get(st, "last") != NULL ? num(st, "last") : now;
    int64_t wend = num(st, "windowEnd");
    int64_t w = 0;
    int64_t next = sl__jm_sched_next(s, last, &w);
    char *after = NULL;

    if (wend > 0 && now >= wend && (next < 0 || next > now || next >= wend)) {
        window_end(jm, job, s, st); /* before a start that reopens it */
        wend = 0;
    }
    if (next >= 0 && next <= now) {
        int missed = now - next > SLACK_MS;

        if (missed && !s->run_missed) {
            bump(st, "missed");
        } else {
            start_due(jm, job, s, next, now, st);
            wend = w > 0 ? (missed ? now : next) + w : 0;
        }
    }
    (void)json_object_set_new(st, "last", json_integer(now));
    (void)json_object_set_new(st, "windowEnd", json_integer(wend));
    after = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
    if (before == NULL || after == NULL || strcmp(before, after) != 0) {
        state_put(jm, job, st);
    }
    sl_free(before);
    sl_free(after);
    json_decref(st);
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
    const json_t *job = NULL;
    size_t i = 0;

    (void)pthread_mutex_lock(&jm->mu);
    jm->sched_now = now;
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
        tick_job(jm, name, &s, now);
    }
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
    now = jm->sched_now > 0 ? jm->sched_now : sl_time_ms();
    (void)pthread_mutex_unlock(&jm->mu);
    st = state_get(jm, name);
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
