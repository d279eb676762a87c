/*
 * Tasks: creation with resolved parameters and pre-assigned output ids,
 * per-worker queues with round-robin across runs, leases, and finishing
 * with follow-up generation.  All functions here run with jm->mu held,
 * except the public entry points, which take it.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

/* ------------------------------------------------------------------------
 * The task index: a chained hash table by task id.
 * --------------------------------------------------------------------- */

static size_t
hash_id(const char *id, size_t cap)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (; *id != '\0'; id++) {
        h ^= (unsigned char)*id;
        h *= 1099511628211ULL;
    }
    return (size_t)(h & (cap - 1));
}

static void
index_grow(struct sl_jm *jm)
{
    size_t ncap = jm->tasks_cap ? jm->tasks_cap * 2 : 1024;
    struct task **nt = sl_calloc(ncap, sizeof(*nt));
    size_t i = 0;

    for (i = 0; i < jm->tasks_cap; i++) {
        struct task *t = jm->tasks[i];

        while (t != NULL) {
            struct task *next = t->hnext;
            size_t h = hash_id(t->id, ncap);

            t->hnext = nt[h];
            nt[h] = t;
            t = next;
        }
    }
    sl_free(jm->tasks);
    jm->tasks = nt;
    jm->tasks_cap = ncap;
}

void
sl__jm_task_index(struct sl_jm *jm, struct task *t)
{
    size_t h = 0;

    if (jm->ntasks + 1 > jm->tasks_cap) {
        index_grow(jm);
    }
    h = hash_id(t->id, jm->tasks_cap);
    t->hnext = jm->tasks[h];
    jm->tasks[h] = t;
    jm->ntasks++;
}

struct task *
sl__jm_task_get(struct sl_jm *jm, const char *id)
{
    struct task *t = NULL;

    if (jm->tasks_cap == 0) {
        return NULL;
    }
    for (t = jm->tasks[hash_id(id, jm->tasks_cap)]; t != NULL; t = t->hnext) {
        if (strcmp(t->id, id) == 0) {
            return t;
        }
    }
    return NULL;
}

static void
index_remove(struct sl_jm *jm, struct task *t)
{
    struct task **pp = &jm->tasks[hash_id(t->id, jm->tasks_cap)];

    while (*pp != NULL && *pp != t) {
        pp = &(*pp)->hnext;
    }
    if (*pp == t) {
        *pp = t->hnext;
        jm->ntasks--;
    }
}

/* ------------------------------------------------------------------------
 * Queues.
 * --------------------------------------------------------------------- */

struct wqueue *
sl__jm_wqueue(struct sl_jm *jm, const char *worker)
{
    struct wqueue *q = NULL;
    const struct sl__jm_worker *w = NULL;

    for (q = jm->queues; q != NULL; q = q->next) {
        if (strcmp(q->worker->name, worker) == 0) {
            return q;
        }
    }
    w = sl__jm_defs_worker(jm->defs, worker);
    if (w == NULL) {
        return NULL;
    }
    q = sl_calloc(1, sizeof(*q));
    q->worker = w;
    (void)pthread_cond_init(&q->cv, NULL);
    q->next = jm->queues;
    jm->queues = q;
    return q;
}

static struct jobq *
jobq_for(struct wqueue *q, struct run *r)
{
    struct jobq *jq = q->rr;

    if (jq != NULL) {
        do {
            if (jq->run == r) {
                return jq;
            }
            jq = jq->next;
        } while (jq != q->rr);
    }
    jq = sl_calloc(1, sizeof(*jq));
    jq->run = r;
    if (q->rr == NULL) {
        jq->next = jq;
        q->rr = jq;
    } else {
        jq->next = q->rr->next;
        q->rr->next = jq;
    }
    return jq;
}

static void
jobq_unlink(struct wqueue *q, struct jobq *jq)
{
    struct jobq *p = q->rr;

    if (jq->next == jq) {
        q->rr = NULL;
    } else {
        while (p->next != jq) {
            p = p->next;
        }
        p->next = jq->next;
        if (q->rr == jq) {
            q->rr = jq->next;
        }
    }
    sl_free(jq);
}

/*
 * Wake the idle takers of queue @q only (mu held): a task of one worker
 * used to wake every pool thread of every worker type, 16 threads that
 * then queued on mu to find nothing (14% of the CPU samples of a web
 * crawl with small bulks were futex calls; docs/jobmanager.md).
 */
void
sl__jm_wake_queue(struct wqueue *q)
{
    q->gen++;
    (void)pthread_cond_broadcast(&q->cv);
}

/* Wake the idle takers of every worker (mu held). */
void
sl__jm_wake_all(struct sl_jm *jm)
{
    struct wqueue *q = NULL;

    jm->work_gen++;
    (void)pthread_cond_broadcast(&jm->work_cv);
    for (q = jm->queues; q != NULL; q = q->next) {
        (void)pthread_cond_broadcast(&q->cv);
    }
}

/* Persist the new task @t (its creation's store sequence); its queue's
 * takers are woken once that is committed (work_committed). */
static void
persist_new(struct sl_jm *jm, struct task *t)
{
    t->created_seq = sl__jm_store_put_json(
        jm->st, SL__JM_DB_TASKS, t->id, strlen(t->id), t->json);
    if (t->created_seq > t->wq->await_seq) {
        t->wq->await_seq = t->created_seq;
    }
}

/* Append @t to the end of its run's todo list for its worker. */
void
sl__jm_task_enqueue(struct task *t)
{
    struct jobq *jq = jobq_for(t->wq, t->run);

    sl__jm_wake_queue(t->wq);
    t->inprogress = 0;
    t->jq = jq;
    t->next = NULL;
    t->prev = jq->tail;
    if (jq->tail != NULL) {
        jq->tail->next = t;
    } else {
        jq->head = t;
    }
    jq->tail = t;
    jq->count++;
    t->wq->todo++;
    sl__jm_flow_queued(t);
}

/* Take @t off whichever list it is on. */
static void
unlink_task(struct sl_jm *jm, struct task *t)
{
    if (t->inprogress) {
        if (t->prev != NULL) {
            t->prev->next = t->next;
        } else {
            t->wq->ip = t->next;
        }
        if (t->next != NULL) {
            t->next->prev = t->prev;
        }
        t->wq->inprogress--;
        jm->inprogress--;
        t->inprogress = 0;
    } else if (t->jq != NULL) {
        struct jobq *jq = t->jq;

        if (t->prev != NULL) {
            t->prev->next = t->next;
        } else {
            jq->head = t->next;
        }
        if (t->next != NULL) {
            t->next->prev = t->prev;
        } else {
            jq->tail = t->prev;
        }
        jq->count--;
        t->wq->todo--;
        t->jq = NULL;
        sl__jm_flow_unqueued(jm, t);
        if (jq->count == 0) {
            jobq_unlink(t->wq, jq);
        }
    }
    t->prev = NULL;
    t->next = NULL;
}

static void
mark_inprogress(struct sl_jm *jm, struct task *t)
{
    unlink_task(jm, t);
    t->inprogress = 1;
    t->prev = NULL;
    t->next = t->wq->ip;
    if (t->wq->ip != NULL) {
        t->wq->ip->prev = t;
    }
    t->wq->ip = t;
    t->wq->inprogress++;
    t->wq->taken++;
    jm->inprogress++;
    t->lease_until = sl_mono_ms() + (int64_t)jm->cfg.lease_seconds * 1000;
}

/* Remove @t everywhere; with @persist its key is deleted in LMDB. */
void
sl__jm_task_remove(struct sl_jm *jm, struct task *t, int persist)
{
    /* A slot under a worker limit may have become free: under the
     * jobmanager-wide limit, for any worker. */
    if (jm->cfg.max_in_progress != 0) {
        sl__jm_wake_all(jm);
    } else {
        sl__jm_wake_queue(t->wq);
    }
    struct wfrun *wf = sl__jm_wfrun_find(t->run, t->wfrun);

    unlink_task(jm, t);
    index_remove(jm, t);
    if (persist) {
        (void)sl__jm_store_del(jm->st, SL__JM_DB_TASKS, t->id, strlen(t->id));
    }
    if (wf != NULL && wf->open > 0) {
        wf->open--;
    }
    json_decref(t->json);
    json_decref(t->events);
    sl_free(t);
}

/* ------------------------------------------------------------------------
 * Creating tasks.
 * --------------------------------------------------------------------- */

/*
 * The output bulks of a new task: one pre-assigned object id per connected
 * output slot.  Persistent buckets get "<bucket>/<uuid>", transient ones
 * "<bucket>/<run>/<wfrun>/<uuid>" so a workflow run's transient objects can
 * be deleted by prefix; "multiple" slots get ".../0" and the worker adds
 * ".../1", ".../2" (docs/jobmanager.md).
 */
static json_t *
make_outputs(const struct run *r,
             unsigned wfrun,
             const json_t *action,
             const struct sl__jm_worker *w)
{
    json_t *out = json_object();
    json_t *map = json_object_get(action, "output");
    size_t i = 0;

    for (i = 0; i < w->noutput; i++) {
        const char *bucket =
            json_string_value(json_object_get(map, w->output[i].name));
        json_t *bi = NULL;
        char uuid[37];
        char *id = NULL;
        int persistent = 0;

        if (bucket == NULL) {
            continue;
        }
        bi = json_object_get(r->buckets, bucket);
        persistent = json_is_true(json_object_get(bi, "persistent"));
        sl_uuid(uuid);
        if (persistent) {
            id = sl_asprintf("%s/%s%s",
                             bucket,
                             uuid,
                             w->output[i].modes & SL__JM_SLOT_MULTIPLE ? "/0"
                                                                       : "");
        } else {
            id = sl_asprintf("%s/%s/%u/%s%s",
                             bucket,
                             r->id,
                             wfrun,
                             uuid,
                             w->output[i].modes & SL__JM_SLOT_MULTIPLE ? "/0"
                                                                       : "");
        }
        (void)json_object_set_new(out,
                                  w->output[i].name,
                                  json_pack("[{s:s, s:O, s:s}]",
                                            "bucket",
                                            bucket,
                                            "store",
                                            json_object_get(bi, "store"),
                                            "id",
                                            id));
        sl_free(id);
    }
    return out;
}

struct task *
sl__jm_task_create(struct sl_jm *jm,
                   struct run *r,
                   struct wfrun *wf,
                   int action,
                   json_t *input,
                   json_t *extra_props)
{
    json_t *act = sl__jm_action(r, action);
    const char *wname = json_string_value(json_object_get(act, "worker"));
    struct wqueue *q = sl__jm_wqueue(jm, wname);
    struct task *t = NULL;
    char ts[32];

    if (q == NULL) {
        json_decref(input);
        json_decref(extra_props);
        return NULL;
    }
    t = sl_calloc(1, sizeof(*t));
    sl_uuid(t->id);
    t->run = r;
    t->wq = q;
    t->wfrun = wf->id;
    t->action = action;
    sl_time_format(sl_time_ms(), ts, sizeof(ts));
    t->json =
        json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:I, s:i, s:s, s:i}, s:o, s:o}",
                  "taskId",
                  t->id,
                  "workerName",
                  wname,
                  "parameters",
                  sl__jm_task_params(r->jobdef, r->wfdef, act),
                  "properties",
                  "jobName",
                  r->job,
                  "jobRunId",
                  r->id,
                  "workflowRunId",
                  (json_int_t)wf->id,
                  "actionIndex",
                  action,
                  "createdTime",
                  ts,
                  "retries",
                  0,
                  "input",
                  input ? input : json_object(),
                  "output",
                  make_outputs(r, wf->id, act, q->worker));
    if (t->json == NULL) {
        sl_panic("jobmanager: cannot build a task");
    }
    if (extra_props != NULL) {
        (void)json_object_update(json_object_get(t->json, "properties"),
                                 extra_props);
        json_decref(extra_props);
    }
    if (wf->pass != 0) {
        json_t *pp = sl__jm_continuous_props(r, wf);

        (void)json_object_update(json_object_get(t->json, "properties"), pp);
        json_decref(pp);
    }
    wf->open++;
    sl__jm_tc_add(r, t, TC_CREATED);
    sl__jm_task_index(jm, t);
    sl__jm_task_enqueue(t);
    persist_new(jm, t);
    return t;
}

/* Drop every task of run @r (of workflow run @wfrun, or all when 0). */
void
sl__jm_tasks_drop_run(struct sl_jm *jm,
                      struct run *r,
                      int wfrun,
                      enum task_counter counter)
{
    size_t i = 0;

    for (i = 0; i < jm->tasks_cap; i++) {
        struct task *t = jm->tasks[i];

        while (t != NULL) {
            struct task *next = t->hnext;

            if (t->run == r && (wfrun == 0 || t->wfrun == (unsigned)wfrun)) {
                sl__jm_tc_add(r, t, counter);
                sl__jm_task_remove(jm, t, 1);
            }
            t = next;
        }
    }
}

/*
 * A new bulk in @bucket: every action of the run's workflow that reads the
 * bucket gets a task with the bulk as input, in workflow run @wf.
 * Returns the number of tasks created.
 */
int
sl__jm_input_triggers(struct sl_jm *jm,
                      struct run *r,
                      struct wfrun *wf,
                      const char *bucket,
                      const json_t *bulk)
{
    json_t *actions = json_object_get(r->wfdef, "actions");
    size_t n = json_array_size(actions) + 1;
    size_t a = 0;
    int created = 0;

    for (a = 0; a < n; a++) {
        json_t *act = sl__jm_action(r, (int)a);
        json_t *in = json_object_get(act, "input");
        const char *slot = NULL;
        json_t *b = NULL;

        json_object_foreach(in, slot, b)
        {
            if (json_is_string(b) &&
                strcmp(json_string_value(b), bucket) == 0) {
                json_t *input = json_pack("{s:[O]}", slot, bulk);

                if (sl__jm_task_create(jm, r, wf, (int)a, input, NULL) !=
                    NULL) {
                    created++;
                }
            }
        }
    }
    return created;
}

/* ------------------------------------------------------------------------
 * Taking tasks.
 * --------------------------------------------------------------------- */

static int
events_clear(const struct sl_jm *jm, const struct task *t)
{
    size_t i = 0;
    json_t *e = NULL;

    json_array_foreach(t->events, i, e)
    {
        if (json_object_get(jm->events, json_string_value(e)) != NULL) {
            return 0;
        }
    }
    return 1;
}

static int
qualifier_ok(const struct task *t, const json_t *qualifiers)
{
    const char *q = json_string_value(json_object_get(t->json, "qualifier"));
    size_t i = 0;
    json_t *v = NULL;

    if (qualifiers == NULL || json_array_size(qualifiers) == 0) {
        return 1;
    }
    if (q == NULL) {
        return 0;
    }
    json_array_foreach(qualifiers, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), q) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Round robin over the runs with todo tasks for this worker. */
static struct task *
pick(struct sl_jm *jm, struct wqueue *q, const json_t *qualifiers)
{
    struct jobq *jq = q->rr;
    uint64_t committed = 0;

    if (jq == NULL) {
        return NULL;
    }
    committed = sl__jm_store_committed(jm->st);
    do {
        struct task *t = NULL;
        int held_action = -1; /* the last action found held back */

        /* a paused run's tasks wait (sl_jm_run_pause) */
        for (t = sl__jm_run_paused(jq->run) ? NULL : jq->head; t != NULL;
             t = t->next) {
            /* Not yet durable: a crash now would forget the task while
             * its outputs (in a persistent bucket) stayed. */
            if (t->created_seq > committed || t->action == held_action) {
                continue;
            }
            if (sl__jm_flow_held(jm, t->run, t->action)) {
                held_action = t->action;
                continue;
            }
            if (events_clear(jm, t) && qualifier_ok(t, qualifiers)) {
                q->rr = jq->next;
                return t;
            }
        }
        jq = jq->next;
    } while (jq != q->rr);
    return NULL;
}

int
sl_jm_task_take(struct sl_jm *jm,
                const char *worker,
                const char *host,
                const json_t *qualifiers,
                json_t **out,
                struct sl_err *err)
{
    struct wqueue *q = NULL;
    struct task *t = NULL;
    int rc = 0;

    *out = NULL;
    (void)pthread_mutex_lock(&jm->mu);
    q = sl__jm_wqueue(jm, worker);
    if (q == NULL) {
        rc = sl_err_set(err, SL_ENOENT, "worker", "no worker '%s'", worker);
        goto out;
    }
    if ((q->limit != 0 && q->inprogress >= q->limit) ||
        (jm->cfg.max_in_progress != 0 &&
         jm->inprogress >= jm->cfg.max_in_progress) ||
        sl_backoff_left(&jm->nospace, sl_mono_ms()) > 0) {
        rc = SL_ENOENT; /* at a limit, or paused for want of space */
        goto out;
    }
    t = pick(jm, q, qualifiers);
    if (t == NULL) {
        rc = SL_ENOENT;
        goto out;
    }
    mark_inprogress(jm, t);
    *out = json_deep_copy(t->json);
    if (host != NULL) {
        (void)json_object_set_new(json_object_get(*out, "properties"),
                                  "workerHost",
                                  json_string(host));
    }
    (void)json_object_set_new(
        *out, "leaseSeconds", json_integer(jm->cfg.lease_seconds));
out:
    (void)pthread_mutex_unlock(&jm->mu);
    return rc;
}

/* The active standard run of @job if it starts with bulk source @worker;
 * called with jm->mu held. */
static struct run *
bulk_source_run(struct sl_jm *jm,
                const char *job,
                const char *worker,
                struct sl_err *err)
{
    struct run *r = sl__jm_run_find(jm, job);
    const struct sl__jm_worker *w = NULL;

    if (r == NULL || r->runonce || r->continuous || r->state != RS_RUNNING) {
        (void)sl_err_set(err,
                         SL_ENOTREADY,
                         "job",
                         "job '%s' is not running in standard mode",
                         job);
        return NULL;
    }
    w = sl__jm_defs_worker(
        jm->defs,
        json_string_value(json_object_get(sl__jm_action(r, 0), "worker")));
    if (w == NULL || strcmp(w->name, worker) != 0 ||
        !(w->modes & SL__JM_WORKER_BULK_SOURCE)) {
        (void)sl_err_set(err,
                         SL_EINVAL,
                         "job",
                         "job '%s' does not start with bulk source '%s'",
                         job,
                         worker);
        return NULL;
    }
    return r;
}

int
sl_jm_bulk_source_ready(struct sl_jm *jm,
                        const char *job,
                        const char *worker,
                        struct sl_err *err)
{
    struct sl_err mine;
    int rc = 0;

    if (err == NULL) { /* the caller wants the answer only */
        sl_err_clear(&mine);
        err = &mine;
    }
    (void)pthread_mutex_lock(&jm->mu);
    if (bulk_source_run(jm, job, worker, err) == NULL) {
        rc = err->code;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc;
}

int
sl_jm_task_initial(struct sl_jm *jm,
                   const char *job,
                   const char *worker,
                   json_t **out,
                   struct sl_err *err)
{
    struct run *r = NULL;
    struct task *t = NULL;
    uint64_t seq = 0;
    int rc = 0;

    *out = NULL;
    (void)pthread_mutex_lock(&jm->mu);
    r = bulk_source_run(jm, job, worker, err);
    if (r == NULL) {
        rc = err->code;
        goto out;
    }
    t = sl__jm_task_create(jm, r, sl__jm_wfrun_new(r), 0, NULL, NULL);
    if (t == NULL) {
        rc = sl_err_set(
            err, SL_EINTERNAL, "worker", "no queue for '%s'", worker);
        goto out;
    }
    mark_inprogress(jm, t);
    *out = json_deep_copy(t->json);
    (void)json_object_set_new(
        *out, "leaseSeconds", json_integer(jm->cfg.lease_seconds));
    sl__jm_run_persist(jm, r);
out:
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (rc == 0) {
        rc = sl__jm_store_wait(jm->st, seq, err);
        if (rc != 0) {
            json_decref(*out);
            *out = NULL;
        }
    }
    return rc;
}

int
sl_jm_task_reclaim(struct sl_jm *jm,
                   const char *worker,
                   const char *task_id,
                   json_t **out,
                   struct sl_err *err)
{
    struct task *t = NULL;
    int rc = 0;

    *out = NULL;
    (void)pthread_mutex_lock(&jm->mu);
    t = sl__jm_task_get(jm, task_id);
    if (t == NULL || strcmp(t->wq->worker->name, worker) != 0) {
        rc = sl_err_set(err, SL_EGONE, "taskId", "task %s is gone", task_id);
    } else {
        if (t->inprogress) {
            t->lease_until =
                sl_mono_ms() + (int64_t)jm->cfg.lease_seconds * 1000;
        } else {
            mark_inprogress(jm, t);
        }
        *out = json_deep_copy(t->json);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc;
}

uint64_t
sl_jm_work_wait(struct sl_jm *jm,
                const char *worker,
                uint64_t seen,
                unsigned timeout_ms)
{
    struct timespec ts;
    struct wqueue *q = NULL;
    uint64_t gen = 0;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(timeout_ms / 1000);
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_mutex_lock(&jm->mu);
    q = worker != NULL ? sl__jm_wqueue(jm, worker) : NULL;
    if (jm->work_gen + (q != NULL ? q->gen : 0) == seen) {
        (void)pthread_cond_timedwait(
            q != NULL ? &q->cv : &jm->work_cv, &jm->mu, &ts);
    }
    gen = jm->work_gen + (q != NULL ? q->gen : 0);
    (void)pthread_mutex_unlock(&jm->mu);
    return gen;
}

int
sl_jm_task_keepalive(struct sl_jm *jm,
                     const char *worker,
                     const char *task_id,
                     struct sl_err *err)
{
    struct task *t = NULL;
    int rc = 0;

    (void)pthread_mutex_lock(&jm->mu);
    t = sl__jm_task_get(jm, task_id);
    if (t == NULL || !t->inprogress ||
        strcmp(t->wq->worker->name, worker) != 0) {
        rc = sl_err_set(err,
                        SL_EGONE,
                        "taskId",
                        "task '%s' of worker '%s' is not in progress (it "
                        "expired, was canceled or finished)",
                        task_id,
                        worker);
    } else {
        t->lease_until = sl_mono_ms() + (int64_t)jm->cfg.lease_seconds * 1000;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc;
}

json_t *
sl_jm_task_counts(struct sl_jm *jm, const char *worker)
{
    json_t *all = NULL;
    json_t *list = NULL;
    struct wqueue *q = NULL;

    (void)pthread_mutex_lock(&jm->mu);
    if (worker != NULL) {
        q = sl__jm_wqueue(jm, worker);
        if (q != NULL) {
            all = json_pack("{s:s, s:{s:I}, s:{s:I}, s:I}",
                            "name",
                            worker,
                            "todo",
                            "count",
                            (json_int_t)q->todo,
                            "inprogress",
                            "count",
                            (json_int_t)q->inprogress,
                            "limit",
                            (json_int_t)q->limit);
        }
        (void)pthread_mutex_unlock(&jm->mu);
        return all;
    }
    (void)pthread_mutex_unlock(&jm->mu);
    list = sl__jm_defs_workers_json(jm->defs);
    all = json_array();
    {
        size_t i = 0;
        json_t *w = NULL;

        json_array_foreach(list, i, w)
        {
            const char *name = json_string_value(json_object_get(w, "name"));
            json_t *one = sl_jm_task_counts(jm, name);

            if (one != NULL) {
                (void)json_array_append_new(all, one);
            }
        }
    }
    json_decref(list);
    return json_pack("{s:o}", "workers", all);
}

/* ------------------------------------------------------------------------
 * Finishing tasks.
 * --------------------------------------------------------------------- */

/* Counter key of a task's action: "<index>_<worker>". */
static json_t *
worker_counters(struct run *r, const struct task *t)
{
    char key[SL_NAME_MAX + 16];
    json_t *c = NULL;

    (void)snprintf(key, sizeof(key), "%d_%s", t->action, t->wq->worker->name);
    c = json_object_get(r->worker, key);
    if (c == NULL) {
        c = json_object();
        (void)json_object_set_new(r->worker, key, c);
    }
    return c;
}

static void
counter_add(json_t *c, const char *name, double v)
{
    json_t *old = json_object_get(c, name);

    if (json_is_integer(old) && v == (double)(json_int_t)v) {
        (void)json_object_set_new(
            c, name, json_integer(json_integer_value(old) + (json_int_t)v));
    } else if (old != NULL) {
        (void)json_object_set_new(
            c, name, json_real(json_number_value(old) + v));
    } else if (v == (double)(json_int_t)v) {
        (void)json_object_set_new(c, name, json_integer((json_int_t)v));
    } else {
        (void)json_object_set_new(c, name, json_real(v));
    }
}

static void
record_error(struct sl_jm *jm,
             struct run *r,
             const struct task *t,
             const char *status,
             const char *message)
{
    char ts[32];

    sl_time_format(sl_time_ms(), ts, sizeof(ts));
    (void)json_array_append_new(r->errors,
                                json_pack("{s:s, s:s, s:s, s:s, s:s}",
                                          "taskId",
                                          t->id,
                                          "worker",
                                          t->wq->worker->name,
                                          "status",
                                          status,
                                          "message",
                                          message ? message : "",
                                          "time",
                                          ts));
    while (json_array_size(r->errors) > jm->cfg.max_errors) {
        (void)json_array_remove(r->errors, 0);
    }
}

/*
 * A successful task that says part of its input could not be read (a
 * directory it may not list, a file it could not open though it exists):
 * the run's view of its source is partial, so its completion phase will
 * not delete anything (engine.c, completion_skip).
 */
static void
note_incomplete(struct sl_jm *jm,
                struct run *r,
                const struct task *t,
                const json_t *result)
{
    const char *why = json_string_value(json_object_get(result, "incomplete"));

    if (why == NULL) {
        return;
    }
    r->incomplete++;
    if (sl__jm_wfrun_find(r, t->wfrun) != NULL) {
        sl__jm_wfrun_find(r, t->wfrun)->incomplete++;
    }
    if (r->incomplete_why == NULL) {
        size_t n = strnlen(why, 512);

        while (n > 0 && ((unsigned char)why[n] & 0xc0) == 0x80) {
            n--; /* not inside a UTF-8 sequence */
        }
        r->incomplete_why = sl_strndup(why, n);
    }
    record_error(jm, r, t, "INCOMPLETE", why);
}

/* The committed outputs found by the caller, per slot: {slot: [bulk]}. */
static void
commit_outputs(struct sl_jm *jm, struct task *t, const json_t *found)
{
    struct run *r = t->run;
    struct wfrun *wf = sl__jm_wfrun_find(r, t->wfrun);
    json_t *counters = worker_counters(r, t);
    const char *slot = NULL;
    json_t *bulks = NULL;
    char name[SL_NAME_MAX + 40];

    json_object_foreach((json_t *)found, slot, bulks)
    {
        size_t i = 0;
        json_t *b = NULL;

        json_array_foreach(bulks, i, b)
        {
            const char *bucket =
                json_string_value(json_object_get(b, "bucket"));
            json_t *bi = json_object_get(r->buckets, bucket);
            json_t *bulk = json_pack("{s:O, s:O, s:O}",
                                     "bucket",
                                     json_object_get(b, "bucket"),
                                     "store",
                                     json_object_get(b, "store"),
                                     "id",
                                     json_object_get(b, "id"));

            (void)snprintf(
                name, sizeof(name), "output.%s.dataObjectCount", slot);
            counter_add(counters, name, 1);
            (void)snprintf(name, sizeof(name), "output.%s.size", slot);
            counter_add(counters,
                        name,
                        (double)json_integer_value(json_object_get(b, "size")));
            if (wf != NULL) {
                (void)sl__jm_input_triggers(jm, r, wf, bucket, bulk);
            }
            if (json_is_true(json_object_get(bi, "persistent"))) {
                struct run *o = NULL;

                for (o = jm->runs; o != NULL; o = o->next) {
                    json_t *start = sl__jm_action(o, 0);
                    json_t *in = json_object_get(start, "input");
                    const char *s2 = NULL;
                    json_t *b2 = NULL;

                    if (o == r || o->runonce || o->continuous ||
                        o->state != RS_RUNNING) {
                        continue;
                    }
                    json_object_foreach(in, s2, b2)
                    {
                        if (strcmp(json_string_value(b2), bucket) == 0) {
                            struct wfrun *nw = sl__jm_wfrun_new(o);

                            (void)sl__jm_task_create(
                                jm,
                                o,
                                nw,
                                0,
                                json_pack("{s:[O]}", s2, bulk),
                                NULL);
                            sl__jm_run_persist(jm, o);
                        }
                    }
                }
            }
            json_decref(bulk);
        }
    }
}

/* Fold the worker's counters and the input counts into the run. */
static void
add_counters(struct run *r, const struct task *t, const json_t *counters)
{
    json_t *c = worker_counters(r, t);
    json_t *in = json_object_get(t->json, "input");
    const char *k = NULL;
    json_t *v = NULL;
    char name[SL_NAME_MAX + 40];

    json_object_foreach((json_t *)counters, k, v)
    {
        if (json_is_number(v)) {
            counter_add(c, k, json_number_value(v));
        }
    }
    json_object_foreach(in, k, v)
    {
        (void)snprintf(name, sizeof(name), "input.%s.dataObjectCount", k);
        counter_add(c, name, (double)json_array_size(v));
    }
}

/*
 * Put a copy of @t back at the end of its queue under a new id, with new
 * output ids and @retries in its properties, and remove @t: a late holder
 * of the old id gets 410, and what the failed attempt wrote (deleted by
 * its finish) is never the new attempt's output.  jm->mu held.
 */
static void
requeue_copy(struct sl_jm *jm, struct task *t, json_int_t retries)
{
    struct run *r = t->run;
    struct task *n = sl_calloc(1, sizeof(*n));
    struct wfrun *wf = NULL;

    *n = *t;
    n->hnext = n->prev = n->next = NULL;
    n->jq = NULL;
    n->inprogress = 0;
    sl_uuid(n->id);
    n->json = json_deep_copy(t->json);
    n->events = t->events ? json_incref(t->events) : NULL;
    (void)json_object_set_new(n->json, "taskId", json_string(n->id));
    (void)json_object_set_new(json_object_get(n->json, "properties"),
                              "retries",
                              json_integer(retries));
    (void)json_object_set_new(
        n->json,
        "output",
        make_outputs(r, t->wfrun, sl__jm_action(r, t->action), t->wq->worker));
    wf = sl__jm_wfrun_find(r, t->wfrun);
    if (wf != NULL) {
        wf->open++;
    }
    sl__jm_task_remove(jm, t, 1);
    sl__jm_task_index(jm, n);
    sl__jm_task_enqueue(n);
    persist_new(jm, n);
}

/*
 * A task failed for want of space (errorCode NO_SPACE: a full disk, a full
 * index or delta shard): a temporary condition, not the task's fault.  It
 * goes back to its queue without counting a retry, and no task of any
 * worker is handed out until the pause of jm->nospace is over (1 s,
 * doubling while the failures go on, up to the configured maximum), so
 * the workers wait instead of failing every task in turn.  jm->mu held.
 */
static void
nospace_give_back(struct sl_jm *jm, struct task *t, const char *message)
{
    struct run *r = t->run;
    json_int_t retries = json_integer_value(
        json_object_get(json_object_get(t->json, "properties"), "retries"));

    sl__jm_tc_add(r, t, TC_RETRIED_NOSPACE);
    counter_add(worker_counters(r, t), "noSpaceTaskCount", 1);
    if (sl_backoff_fail(&jm->nospace, sl_mono_ms())) {
        jm->nospace_paused = 1;
        record_error(jm, r, t, "NO_SPACE", message);
        SL_WARN("jobmanager: no space left (task %s of worker %s: %s); no "
                "task is handed out for %u ms",
                t->id,
                t->wq->worker->name,
                message != NULL ? message : "NO_SPACE",
                jm->nospace.cur_ms);
    }
    requeue_copy(jm, t, retries);
}

void
sl__jm_nospace_tick(struct sl_jm *jm, int64_t now)
{
    if (jm->nospace_paused && sl_backoff_left(&jm->nospace, now) == 0) {
        jm->nospace_paused = 0;
        SL_INFO("jobmanager: the pause for want of space is over; tasks are "
                "handed out again");
        sl__jm_wake_all(jm);
    }
}

/*
 * A task failed (or its lease expired): retry it under a new id while
 * retries last, else fail it, and with it its workflow run (and a runOnce
 * job run).  Runs with jm->mu held.
 */
static void
fail_task(struct sl_jm *jm,
          struct task *t,
          int fatal,
          int timeout,
          const char *message)
{
    struct run *r = t->run;
    json_t *props = json_object_get(t->json, "properties");
    json_int_t retries = json_integer_value(json_object_get(props, "retries"));
    struct wfrun *wf = NULL;

    if (!fatal && (unsigned)retries < jm->cfg.max_retries) {
        sl__jm_tc_add(r, t, timeout ? TC_RETRIED_TIMEOUT : TC_RETRIED_ERROR);
        requeue_copy(jm, t, retries + 1);
        return;
    }
    sl__jm_tc_add(r, t, fatal ? TC_FAILED_NO_RETRY : TC_FAILED_AFTER_RETRY);
    record_error(
        jm, r, t, fatal ? "FATAL_ERROR" : "FAILED_AFTER_RETRY", message);
    wf = sl__jm_wfrun_find(r, t->wfrun);
    if (wf != NULL) {
        wf->failed = 1;
    }
    r->had_fatal = 1;
    {
        unsigned wfid = t->wfrun;

        sl__jm_task_remove(jm, t, 1);
        /* a continuous run's expiry fails alone: the next reseed's
         * expiry tries again */
        if (r->runonce || (wf != NULL && wf->completion && !r->continuous)) {
            sl__jm_run_fail(jm, r);
            return;
        }
        /* Standard mode: the workflow run fails, the job run goes on. */
        sl__jm_tasks_drop_run(jm, r, (int)wfid, TC_OBSOLETE);
    }
}

/* Every in-progress task's lease moved on by @ms. */
static void
leases_extend(struct sl_jm *jm, int64_t ms)
{
    struct wqueue *q = NULL;
    struct task *t = NULL;

    for (q = jm->queues; q != NULL; q = q->next) {
        for (t = q->ip; t != NULL; t = t->next) {
            t->lease_until += ms;
        }
    }
}

void
sl__jm_lease_tick(struct sl_jm *jm, int64_t now)
{
    struct wqueue *q = NULL;
    int64_t late = now - jm->lease_tick_ms - LEASE_TICK_MS;

    jm->lease_tick_ms = now;
    if (late > LEASE_STALL_MS) {
        SL_WARN("jobmanager: the lease timer ran %lld ms late (the process "
                "stalled); the leases in progress are moved on by as much",
                (long long)late);
        leases_extend(jm, late);
    }
    for (q = jm->queues; q != NULL; q = q->next) {
        struct task *t = q->ip;

        while (t != NULL) {
            struct task *next = t->next;

            if (t->lease_until < now) {
                struct run *r = t->run;

                SL_WARN("jobmanager: task %s of worker %s: lease expired",
                        t->id,
                        q->worker->name);
                fail_task(jm, t, 0, 1, "lease expired");
                sl__jm_run_check_done(jm, r);
                sl__jm_run_persist(jm, r);
                /* The list may have changed: start over. */
                next = q->ip;
            }
            t = next;
        }
    }
}

/* Parse and check a finish request; fills the out parameters. */
static int
parse_result(const json_t *result,
             const char **status,
             const char **message,
             const char **code,
             json_t **counters,
             json_t **events,
             struct sl_err *err)
{
    static const char *const ok[] = {
        "SUCCESSFUL", "RECOVERABLE_ERROR", "FATAL_ERROR", "POSTPONE"};
    json_t *s = json_object_get(result, "status");
    json_t *m = json_object_get(result, "errorMessage");
    json_t *v = NULL;
    const char *k = NULL;
    size_t i = 0;

    if (!json_is_object(result)) {
        return sl_err_set(
            err, SL_EINVAL, "body", "the finish request must be a JSON object");
    }
    if (!json_is_string(s)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "status",
                          "status must be SUCCESSFUL, RECOVERABLE_ERROR, "
                          "FATAL_ERROR or POSTPONE");
    }
    *status = NULL;
    for (i = 0; i < 4; i++) {
        if (strcmp(json_string_value(s), ok[i]) == 0) {
            *status = ok[i];
        }
    }
    if (*status == NULL) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "status",
                          "unknown status '%s'",
                          json_string_value(s));
    }
    if (m != NULL && !json_is_string(m) && !json_is_null(m)) {
        return sl_err_set(
            err, SL_EINVAL, "errorMessage", "errorMessage must be a string");
    }
    *message = json_string_value(m);
    v = json_object_get(result, "errorCode");
    if (v != NULL && !json_is_string(v) && !json_is_null(v)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "errorCode",
                          "errorCode must be an error code string such as "
                          "\"NO_SPACE\"");
    }
    *code = json_string_value(v);
    *counters = json_object_get(result, "counters");
    if (*counters != NULL && !json_is_object(*counters)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "counters",
                          "counters must be an object of numbers");
    }
    json_object_foreach(*counters, k, v)
    {
        if (!json_is_number(v)) {
            return sl_err_set(
                err, SL_EINVAL, "counters", "counter '%s' is not a number", k);
        }
    }
    v = json_object_get(result, "incomplete");
    if (v != NULL && !json_is_string(v) && !json_is_null(v)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "incomplete",
                          "incomplete must be a string saying what could "
                          "not be read");
    }
    *events = json_object_get(result, "prerequisiteEvents");
    if (*events != NULL && !json_is_array(*events)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "prerequisiteEvents",
                          "prerequisiteEvents must be an array of names");
    }
    json_array_foreach(*events, i, v)
    {
        char field[48];

        if (!json_is_string(v)) {
            return sl_err_set(err,
                              SL_EINVAL,
                              "prerequisiteEvents",
                              "prerequisiteEvents[%zu] is not a string",
                              i);
        }
        (void)snprintf(field, sizeof(field), "prerequisiteEvents[%zu]", i);
        if (sl_jm_event_name_check(json_string_value(v), field, err) != 0) {
            return SL_EINVAL;
        }
    }
    return 0;
}

/* Look the task up for a finish: in progress, by this worker. */
static struct task *
finishing_task(struct sl_jm *jm,
               const char *worker,
               const char *task_id,
               struct sl_err *err)
{
    struct task *t = sl__jm_task_get(jm, task_id);

    if (t == NULL || !t->inprogress ||
        strcmp(t->wq->worker->name, worker) != 0) {
        (void)sl_err_set(err,
                         SL_EGONE,
                         "taskId",
                         "task '%s' of worker '%s' is not in progress (it "
                         "expired, was canceled or finished)",
                         task_id,
                         worker);
        return NULL;
    }
    return t;
}

int
sl_jm_task_finish(struct sl_jm *jm,
                  const char *worker,
                  const char *task_id,
                  const json_t *result,
                  struct sl_err *err)
{
    const char *status = NULL;
    const char *message = NULL;
    const char *code = NULL;
    json_t *counters = NULL;
    json_t *events = NULL;
    json_t *outputs = NULL;
    json_t *found = NULL;
    struct task *t = NULL;
    struct run *r = NULL;
    int discard = 0;
    int nospace = 0;
    int rc = 0;
    uint64_t seq = 0;

    rc =
        parse_result(result, &status, &message, &code, &counters, &events, err);
    if (rc == 0) {
        rc = sl__jm_history_check(json_object_get(result, "documents"), err);
    }
    if (rc != 0) {
        return rc;
    }
    nospace = strcmp(status, "RECOVERABLE_ERROR") == 0 && code != NULL &&
              strcmp(code, sl_err_api_code(SL_ENOSPC)) == 0;
    (void)pthread_mutex_lock(&jm->mu);
    t = finishing_task(jm, worker, task_id, err);
    if (t != NULL) {
        outputs = json_incref(json_object_get(t->json, "output"));
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (t == NULL) {
        return SL_EGONE;
    }
    rc = sl__jm_outputs_find(jm, outputs, &found, err);
    json_decref(outputs);
    if (rc != 0) {
        return rc; /* the task stays in progress: its worker tries again */
    }

    (void)pthread_mutex_lock(&jm->mu);
    t = finishing_task(jm, worker, task_id, err); /* the lease may be gone */
    if (t == NULL) {
        (void)pthread_mutex_unlock(&jm->mu);
        json_decref(found);
        return SL_EGONE;
    }
    r = t->run;
    add_counters(r, t, counters);
    if (strcmp(status, "SUCCESSFUL") == 0 ||
        (t->wq->worker->modes & SL__JM_WORKER_AUTO_COMMIT)) {
        commit_outputs(jm, t, found);
    } else {
        discard = 1;
    }
    if (strcmp(status, "SUCCESSFUL") == 0) {
        unsigned bad = sl__jm_history_add(
            jm, r, worker, json_object_get(result, "documents"));

        if (bad > 0) {
            counter_add(worker_counters(r, t), "documents.invalid", bad);
        }
        note_incomplete(jm, r, t, result);
        sl__jm_tc_add(r, t, TC_SUCCESSFUL);
        counter_add(worker_counters(r, t), "successfulTaskCount", 1);
        sl__jm_cleanup_inputs(jm, r, t->json);
        sl__jm_task_remove(jm, t, 1);
    } else if (strcmp(status, "POSTPONE") == 0) {
        unlink_task(jm, t);
        json_decref(t->events);
        t->events = json_array_size(events) ? json_deep_copy(events) : NULL;
        sl__jm_task_enqueue(t);
    } else if (nospace) {
        nospace_give_back(jm, t, message);
    } else {
        counter_add(worker_counters(r, t), "failedTaskCount", 1);
        fail_task(jm, t, strcmp(status, "FATAL_ERROR") == 0, 0, message);
    }
    sl__jm_run_check_done(jm, r);
    sl__jm_run_persist(jm, r);
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    if (discard) {
        /* no state refers to a failed attempt's outputs (a redone task
         * rewrites them), so this need not wait for the commit; a
         * postponed task keeps its ids, so it must not wait either */
        sl__jm_outputs_discard(jm, found);
    }
    json_decref(found);
    return sl__jm_store_wait(jm->st, seq, err);
}
