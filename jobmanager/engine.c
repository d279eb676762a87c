/*
 * The run engine: job runs and workflow runs, their states and the run
 * state machine (the completion phase included), the lease timer and the
 * life cycle of the jobmanager.  Elsewhere: the run data JSON
 * (run_json.c), the clean-up of ended runs (cleanup.c), starting runs
 * (run_start.c), run queries and transitions (run_query.c), events
 * (events.c), tasks (tasks.c), start-up (recover.c) and the definitions
 * API (defs_api.c).  See docs/jobmanager.md for the states and the task
 * protocol.
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

void
sl__jm_wfrun_unlink(struct run *r, struct wfrun *w)
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

void
sl__jm_run_free(struct run *r)
{
    while (r->wfruns != NULL) {
        sl__jm_wfrun_unlink(r, r->wfruns);
    }
    json_decref(r->jobdef);
    json_decref(r->wfdef);
    json_decref(r->buckets);
    json_decref(r->worker);
    json_decref(r->errors);
    json_decref(r->completion);
    sl_free(r->incomplete_why);
    sl_free(r->data_source);
    sl__jm_flow_free(r);
    sl_free(r);
}

void
sl__jm_run_unlink(struct sl_jm *jm, struct run *r)
{
    struct run **pp = &jm->runs;
    struct wqueue *q = NULL;

    while (*pp != NULL && *pp != r) {
        pp = &(*pp)->next;
    }
    if (*pp == r) {
        *pp = r->next;
        sl__jm_metrics_run_ended(jm, r);
    }
    for (q = jm->queues; q != NULL; q = q->next) {
        SL_ASSERT(q->rr == NULL || q->todo > 0);
    }
    sl__jm_run_free(r);
}

/* ------------------------------------------------------------------------
 * Run state machine.
 * --------------------------------------------------------------------- */

void
sl__jm_run_requeue_cleanup(struct sl_jm *jm, struct run *r)
{
    sl__jm_cleanup_transient(jm, r, 0, 1);
}

static json_t *completion_skip(const struct run *r);

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
        sl__jm_wfrun_unlink(r, r->wfruns);
    }
    r->had_fatal = 1;
    sl__jm_note_skipped(jm, r, completion_skip(r));
    r->state = RS_CLEANINGUP;
    if (!r->cleanup_queued) {
        r->cleanup_queued = 1;
        sl__jm_cleanup_transient(jm, r, 0, 1);
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
const struct sl__jm_worker *
sl__jm_completion_worker(struct sl_jm *jm, struct run *r, size_t a)
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
void
sl__jm_note_skipped(struct sl_jm *jm, struct run *r, json_t *why)
{
    size_t n = json_array_size(json_object_get(r->wfdef, "actions")) + 1;
    size_t a = 0;

    for (a = 0; why != NULL && r->completion == NULL && a < n; a++) {
        if (sl__jm_completion_worker(jm, r, a) != NULL) {
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

void
sl__jm_completion_tasks(struct sl_jm *jm,
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

    /* a continuous run deletes by expiry after its reseed passes, never
     * what its last pass did not see */
    for (a = 0; r->state == RS_FINISHING && !r->continuous && a < n; a++) {
        const struct sl__jm_worker *w = sl__jm_completion_worker(jm, r, a);

        if (w == NULL) {
            continue;
        }
        if (wf == NULL && (skip = completion_skip(r)) != NULL) {
            sl__jm_note_skipped(jm, r, skip);
            break;
        }
        if (wf == NULL) {
            wf = sl__jm_wfrun_new(r);
            wf->completion = 1;
            json_decref(r->completion);
            r->completion = json_pack("{s:b}", "ran", 1);
        }
        sl__jm_completion_tasks(jm, r, wf, a, w);
    }
    if (wf != NULL && wf->open > 0) {
        r->state = RS_COMPLETING;
        return;
    }
    if (wf != NULL) {
        r->wc[WC_SUCCESSFUL]++;
        sl__jm_wfrun_unlink(r, wf);
    }
    r->state = RS_CLEANINGUP;
    if (!r->cleanup_queued) {
        r->cleanup_queued = 1;
        sl__jm_cleanup_transient(jm, r, 0, 1);
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
            if (r->continuous) {
                sl__jm_continuous_pass_done(jm, r, w);
            }
            r->wc[w->failed ? WC_FAILED : WC_SUCCESSFUL]++;
            if (!r->runonce && !w->completion) {
                sl__jm_cleanup_transient(jm, r, w->id, 0);
            }
            sl__jm_wfrun_unlink(r, w);
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
            sl__jm_cleanup_transient(jm, r, 0, 1);
        }
    }
}

int64_t
sl__jm_clock(struct sl_jm *jm)
{
    return jm->sched_now > 0 ? jm->sched_now : sl_time_ms();
}

/* ------------------------------------------------------------------------
 * Lease timer.
 * --------------------------------------------------------------------- */

#define PRUNE_EVERY_MS (3600 * 1000) /* history retention (history.c) */

void *
sl__jm_lease_main(void *arg)
{
    struct sl_jm *jm = arg;

    (void)pthread_mutex_lock(&jm->mu);
    while (!jm->stopping) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += LEASE_TICK_MS * 1000 * 1000;
        if (ts.tv_nsec >= 1000 * 1000 * 1000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000 * 1000 * 1000;
        }
        (void)pthread_cond_timedwait(&jm->lease_cv, &jm->mu, &ts);
        if (!jm->stopping) {
            int64_t now = sl_mono_ms();

            sl__jm_lease_tick(jm, now);
            sl__jm_nospace_tick(jm, now);
            if (jm->prune_ms == 0 || now - jm->prune_ms >= PRUNE_EVERY_MS) {
                jm->prune_ms = now; /* at start-up, then hourly */
                sl__jm_cleanup_prune(jm);
            }
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
        sl__jm_run_free(r);
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
    json_decref(jm->sched_states);
    json_decref(jm->ended_counters);
    (void)pthread_mutex_destroy(&jm->mu);
    (void)pthread_cond_destroy(&jm->lease_cv);
    (void)pthread_cond_destroy(&jm->cleanup_cv);
    (void)pthread_cond_destroy(&jm->work_cv);
    sl_free(jm->state_dir);
    sl_free(jm->config_dir);
    sl_free(jm->workflows_dir);
    sl_free(jm);
}
