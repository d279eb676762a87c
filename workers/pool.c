/*
 * The worker pool: threads that take tasks, run them through a task
 * context and finish them, plus one keep-alive thread that renews the
 * leases of the tasks being performed (every leaseSeconds/3) and marks a
 * task canceled when the server says it is gone.  The same pool runs over
 * the in-process backend (`sluice serve`) and the REST backend (`sluice
 * worker`).
 *
 * Threading: pool->mu guards `stopping`, `ka_stopping` and each thread's
 * published task (struct wthread: ctx, task_id, worker, next_ka_ms).  A
 * worker thread owns its conn; the keep-alive thread owns ka_conn.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "workers/workers_int.h"

#define IDLE_MIN_MS     5    /* first sleep when there is no task */
#define IDLE_MAX_MS     200  /* longest sleep when there is no task */
#define ERROR_MIN_MS    100  /* first sleep after a transport error */
#define ERROR_MAX_MS    5000 /* longest sleep after transport errors */
#define KA_TICK_MS      100  /* keep-alive thread wake-up */
#define KA_RETRY_MS     1000 /* retry of a failed keep-alive */
#define DEFAULT_LEASE_S 120

struct wtype {
    const struct sl_worker_type *type;
    unsigned flags; /* SL__WK_* */
    int nice;       /* workers.nice of the type: its threads' niceness */
};

/* One worker thread and the task it publishes for the keep-alive thread. */
struct wthread {
    struct sl_worker_pool *pool;
    const struct wtype *wt;
    pthread_t thread;
    int started;
    void *conn;              /* this thread's backend conn */
    struct sl_task_ctx *ctx; /* task being performed or NULL (mu) */
    char task_id[64];        /* its id (mu) */
    int64_t next_ka_ms;      /* next keep-alive due (mu) */
    int64_t lease_ms;        /* the task's lease (mu) */
};

struct sl_worker_pool {
    struct sl__wk_backend *b;
    void (*free_backend)(struct sl__wk_backend *);
    int remote; /* REST backend: give up on unknown workers */
    struct wtype *types;
    size_t ntypes;
    struct wthread *threads;
    size_t nthreads;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled on stop */
    int stopping;      /* no new tasks (mu) */
    int ka_stopping;   /* keep-alive thread ends (mu) */
    pthread_t ka_thread;
    int ka_started;
    void *ka_conn;
    atomic_int failed; /* sl_worker_pool_failed */
};

/* Sleep up to @ms unless the pool stops meanwhile; returns `stopping`. */
static int
pool_sleep(struct sl_worker_pool *p, int64_t ms, int ka)
{
    struct timespec ts;
    int stop = 0;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_mutex_lock(&p->mu);
    stop = ka ? p->ka_stopping : p->stopping;
    if (!stop) {
        (void)pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        stop = ka ? p->ka_stopping : p->stopping;
    }
    (void)pthread_mutex_unlock(&p->mu);
    return stop;
}

/* Publish (or withdraw, with ctx NULL) the task of @wt for keep-alives. */
static void
publish(struct wthread *wt,
        struct sl_task_ctx *ctx,
        const char *task_id,
        int64_t lease_ms)
{
    (void)pthread_mutex_lock(&wt->pool->mu);
    wt->ctx = ctx;
    if (ctx != NULL) {
        (void)snprintf(wt->task_id, sizeof(wt->task_id), "%s", task_id);
        wt->lease_ms = lease_ms;
        wt->next_ka_ms = sl_mono_ms() + lease_ms / 3;
    } else {
        wt->task_id[0] = '\0';
    }
    (void)pthread_mutex_unlock(&wt->pool->mu);
}

/*
 * Report @result.  Over the network a failed finish (server restarting,
 * connection refused), and in-process one the server could not take yet
 * (SL_ENOTREADY: the object store busy) is retried while the lease lasts: the
 * task stays published, so keep-alives go on meanwhile.  After that the lease
 * expires and the server retries the task (at least once).
 */
static void
finish_task(struct wthread *wt,
            const char *task_id,
            const json_t *result,
            int64_t lease_ms)
{
    struct sl_worker_pool *p = wt->pool;
    const char *name = wt->wt->type->name;
    int64_t deadline = sl_mono_ms() + lease_ms;
    int64_t backoff = ERROR_MIN_MS;
    struct sl_err err;
    int rc = 0;

    for (;;) {
        sl_err_clear(&err);
        rc = p->b->ops->finish(wt->conn, name, task_id, result, &err);
        if (rc == 0 || rc == SL_EGONE || rc == SL_EINVAL ||
            (!p->remote && rc != SL_ENOTREADY) ||
            sl_mono_ms() + backoff > deadline) {
            break;
        }
        SL_WARN("worker %s: finishing task %s failed (%s), retrying",
                name,
                task_id,
                err.message);
        /* in-process, a stop ends the wait: the task stays in progress
         * in the state and is retried after the restart */
        if (pool_sleep(p, backoff, p->remote) && !p->remote) {
            break;
        }
        backoff = backoff * 2 > ERROR_MAX_MS ? ERROR_MAX_MS : backoff * 2;
    }
    if (rc == SL_EGONE) {
        SL_INFO("worker %s: task %s is no longer ours (%s)",
                name,
                task_id,
                err.message);
    } else if (rc != 0) {
        SL_ERROR(
            "worker %s: cannot finish task %s: %s", name, task_id, err.message);
    }
}

/* Perform one taken task and report it. */
static void
run_task(struct wthread *wt, json_t *task)
{
    struct sl_worker_pool *p = wt->pool;
    const char *task_id = json_string_value(json_object_get(task, "taskId"));
    json_int_t lease =
        json_integer_value(json_object_get(task, "leaseSeconds"));
    struct sl_task_ctx *ctx = NULL;
    json_t *result = NULL;
    const char *status = NULL;

    if (task_id == NULL) {
        SL_ERROR("worker %s: task without taskId", wt->wt->type->name);
        return;
    }
    if (lease <= 0) {
        lease = DEFAULT_LEASE_S;
    }
    SL_DEBUG("worker %s: took task %s", wt->wt->type->name, task_id);
    ctx = sl__task_ctx_new(p->b, wt->conn, wt->wt->type, wt->wt->flags, task);
    publish(wt, ctx, task_id, (int64_t)lease * 1000);
    result = sl__task_ctx_run(ctx);
    status = json_string_value(json_object_get(result, "status"));
    if (sl_task_is_canceled(ctx)) {
        SL_INFO("worker %s: task %s was canceled or lost its lease; result "
                "dropped",
                wt->wt->type->name,
                task_id);
    } else {
        if (strcmp(status, "SUCCESSFUL") != 0) {
            SL_WARN("worker %s: task %s: %s: %s",
                    wt->wt->type->name,
                    task_id,
                    status,
                    json_string_value(json_object_get(result, "errorMessage")));
        }
        finish_task(wt, task_id, result, (int64_t)lease * 1000);
    }
    publish(wt, NULL, NULL, 0);
    json_decref(result);
    sl__task_ctx_free(ctx);
}

static void *
worker_main(void *arg)
{
    struct wthread *wt = arg;
    struct sl_worker_pool *p = wt->pool;
    const char *name = wt->wt->type->name;
    int64_t idle = IDLE_MIN_MS;
    int64_t backoff = ERROR_MIN_MS;
    int64_t last_log = 0;
    uint64_t seen = 0;
    json_t *task = NULL;
    struct sl_err err;
    char tname[16];
    int rc = 0;

    /* Linux keeps a niceness per thread: this one only; before the name,
     * so a thread seen by its name has its niceness */
    if (wt->wt->nice > 0 &&
        setpriority(PRIO_PROCESS, (id_t)gettid(), wt->wt->nice) != 0) {
        SL_WARN("worker %s: cannot lower the priority: %s",
                name,
                sl_errno_str(errno));
    }
    /* the worker type in top -H, ps -L and gdb (15 bytes at most) */
    (void)snprintf(tname, sizeof(tname), "%s", name);
    (void)pthread_setname_np(pthread_self(), tname);
    for (;;) {
        (void)pthread_mutex_lock(&p->mu);
        rc = p->stopping;
        (void)pthread_mutex_unlock(&p->mu);
        if (rc) {
            break;
        }
        sl_err_clear(&err);
        rc = p->b->ops->take(wt->conn, name, &task, &err);
        if (rc == 0) {
            idle = IDLE_MIN_MS;
            backoff = ERROR_MIN_MS;
            run_task(wt, task);
            json_decref(task);
            task = NULL;
            continue;
        }
        if (rc == SL_ENOENT && strcmp(err.field, "worker") == 0) {
            SL_ERROR("worker %s: %s", name, err.message);
            atomic_store(&p->failed, SL_ENOENT);
            break;
        }
        if (rc == SL_ENOENT && p->b->ops->wait_work != NULL) {
            /* In-process: woken as soon as tasks are queued. */
            p->b->ops->wait_work(wt->conn, name, &seen, IDLE_MAX_MS);
            continue;
        }
        if (rc == SL_ENOENT) {
            (void)pool_sleep(p, idle, 0);
            idle = idle * 2 > IDLE_MAX_MS ? IDLE_MAX_MS : idle * 2;
            continue;
        }
        /* Transport errors: log the first and then every 30 s. */
        if (sl_mono_ms() - last_log > 30000) {
            SL_WARN("worker %s: cannot take tasks: %s (retrying)",
                    name,
                    err.message);
            last_log = sl_mono_ms();
        }
        (void)pool_sleep(p, backoff, 0);
        backoff = backoff * 2 > ERROR_MAX_MS ? ERROR_MAX_MS : backoff * 2;
    }
    return NULL;
}

/* Send the keep-alive of thread @wt (due now); called without the lock. */
static void
keepalive_one(struct sl_worker_pool *p, struct wthread *wt, const char *task_id)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = p->b->ops->keepalive(p->ka_conn, wt->wt->type->name, task_id, &err);
    (void)pthread_mutex_lock(&p->mu);
    if (wt->ctx != NULL && strcmp(wt->task_id, task_id) == 0) {
        if (rc == SL_EGONE) {
            sl__task_ctx_cancel(wt->ctx);
        } else if (rc != 0) {
            wt->next_ka_ms = sl_mono_ms() + KA_RETRY_MS;
        }
    }
    (void)pthread_mutex_unlock(&p->mu);
    if (rc == SL_EGONE) {
        SL_INFO(
            "worker %s: task %s: %s", wt->wt->type->name, task_id, err.message);
    } else if (rc != 0) {
        SL_WARN("worker %s: keep-alive of task %s failed: %s",
                wt->wt->type->name,
                task_id,
                err.message);
    }
}

static void *
keepalive_main(void *arg)
{
    struct sl_worker_pool *p = arg;
    char task_id[64];
    size_t i = 0;

    do {
        for (i = 0; i < p->nthreads; i++) {
            struct wthread *wt = &p->threads[i];
            int due = 0;

            (void)pthread_mutex_lock(&p->mu);
            if (wt->ctx != NULL && !sl_task_is_canceled(wt->ctx) &&
                sl_mono_ms() >= wt->next_ka_ms) {
                due = 1;
                (void)snprintf(task_id, sizeof(task_id), "%s", wt->task_id);
                wt->next_ka_ms = sl_mono_ms() + wt->lease_ms / 3;
            }
            (void)pthread_mutex_unlock(&p->mu);
            if (due) {
                keepalive_one(p, wt, task_id);
            }
        }
    } while (!pool_sleep(p, KA_TICK_MS, 1));
    return NULL;
}

/* Stop and join whatever was started, free everything. */
static void
pool_free(struct sl_worker_pool *p)
{
    size_t i = 0;

    (void)pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    (void)pthread_cond_broadcast(&p->cv);
    (void)pthread_mutex_unlock(&p->mu);
    for (i = 0; i < p->nthreads; i++) {
        if (p->threads[i].started) {
            (void)pthread_join(p->threads[i].thread, NULL);
        }
    }
    (void)pthread_mutex_lock(&p->mu);
    p->ka_stopping = 1;
    (void)pthread_cond_broadcast(&p->cv);
    (void)pthread_mutex_unlock(&p->mu);
    if (p->ka_started) {
        (void)pthread_join(p->ka_thread, NULL);
    }
    for (i = 0; i < p->nthreads; i++) {
        if (p->threads[i].conn != NULL) {
            p->b->ops->conn_free(p->threads[i].conn);
        }
    }
    if (p->ka_conn != NULL) {
        p->b->ops->conn_free(p->ka_conn);
    }
    p->free_backend(p->b);
    (void)pthread_cond_destroy(&p->cv);
    (void)pthread_mutex_destroy(&p->mu);
    sl_free(p->threads);
    sl_free(p->types);
    sl_free(p);
}

/*
 * The niceness workers.nice (@spec: "type=n,type=n", n 0-19; NULL or ""
 * for none) gives worker type @name into *nice (0 when not named).
 * SL_EINVAL (logged) for a malformed spec.
 */
static int
nice_of(const char *spec, const char *name, int *nice)
{
    const char *p = spec;
    size_t len = strlen(name);

    *nice = 0;
    while (p != NULL && *p != '\0') {
        const char *eq = strchr(p, '=');
        const char *end = strchr(p, ',');
        char *num_end = NULL;
        long v = 0;

        end = end != NULL ? end : p + strlen(p);
        if (eq == NULL || eq > end || eq == p) {
            SL_ERROR("workers.nice: '%.*s' is not type=n", (int)(end - p), p);
            return SL_EINVAL;
        }
        v = strtol(eq + 1, &num_end, 10);
        if (num_end != end || eq + 1 == end || v < 0 || v > 19) {
            SL_ERROR(
                "workers.nice: '%.*s': n must be 0 to 19", (int)(end - p), p);
            return SL_EINVAL;
        }
        if ((size_t)(eq - p) == len && strncmp(p, name, len) == 0) {
            *nice = (int)v;
        }
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int
sl__wk_pool_start(struct sl__wk_backend *b,
                  void (*free_backend)(struct sl__wk_backend *),
                  const struct sl_worker_type *const *types,
                  size_t n,
                  unsigned threads_per_worker,
                  int remote,
                  const char *nice,
                  struct sl_worker_pool **out)
{
    struct sl_worker_pool *p = sl_calloc(1, sizeof(*p));
    pthread_condattr_t ca;
    struct sl_err err;
    size_t i = 0;
    size_t k = 0;
    int rc = 0;

    *out = NULL;
    sl_err_clear(&err);
    p->b = b;
    p->free_backend = free_backend;
    p->remote = remote;
    atomic_init(&p->failed, 0);
    (void)pthread_mutex_init(&p->mu, NULL);
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&p->cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    p->types = sl_calloc(n + 1, sizeof(*p->types));
    p->ntypes = n;
    p->threads = sl_calloc(n * threads_per_worker + 1, sizeof(*p->threads));
    for (i = 0; i < n; i++) {
        p->types[i].type = types[i];
        rc = sl__wk_type_flags(types[i], &p->types[i].flags, &err);
        if (rc != 0) {
            SL_ERROR("%s", err.message);
            goto fail;
        }
        rc = nice_of(nice, types[i]->name, &p->types[i].nice);
        if (rc != 0) {
            goto fail;
        }
        for (k = 0; k < threads_per_worker; k++) {
            struct wthread *wt = &p->threads[p->nthreads++];

            wt->pool = p;
            wt->wt = &p->types[i];
            wt->conn = b->ops->conn_new(b->impl);
        }
    }
    /* what a type needs of the services, before its threads start */
    for (i = 0; i < n; i++) {
        if (types[i]->start == NULL) {
            continue;
        }
        rc = types[i]->start(&b->services, &err);
        if (rc != 0) {
            SL_ERROR("worker %s: %s",
                     types[i]->name,
                     err.message[0] != '\0' ? err.message : sl_strerror(rc));
            goto fail;
        }
    }
    p->ka_conn = b->ops->conn_new(b->impl);
    for (i = 0; i < p->nthreads; i++) {
        if (pthread_create(
                &p->threads[i].thread, NULL, worker_main, &p->threads[i]) !=
            0) {
            rc = SL_EINTERNAL;
            SL_ERROR("worker pool: cannot create a thread");
            goto fail;
        }
        p->threads[i].started = 1;
    }
    if (pthread_create(&p->ka_thread, NULL, keepalive_main, p) != 0) {
        rc = SL_EINTERNAL;
        SL_ERROR("worker pool: cannot create the keep-alive thread");
        goto fail;
    }
    p->ka_started = 1;
    *out = p;
    return 0;

fail:
    pool_free(p);
    return rc;
}

int
sl_worker_pool_start(struct sl_jm *jm,
                     struct sl_obj *store,
                     const struct sl_worker_services *services,
                     const struct sl_worker_type *const *types,
                     size_t n,
                     unsigned threads_per_worker,
                     const char *nice,
                     struct sl_worker_pool **out)
{
    struct sl__wk_backend *b = sl__wk_local_new(jm, store);

    if (services != NULL) {
        b->services = *services;
    }
    return sl__wk_pool_start(
        b, sl__wk_local_free, types, n, threads_per_worker, 0, nice, out);
}

int
sl_worker_remote_start(const struct sl_worker_remote_config *cfg,
                       const struct sl_worker_type *type,
                       unsigned threads,
                       struct sl_worker_pool **out)
{
    const struct sl_worker_type *types[1] = {type};

    *out = NULL;
    if (cfg->server == NULL || cfg->server[0] == '\0' || threads == 0) {
        return SL_EINVAL;
    }
    return sl__wk_pool_start(sl__wk_remote_new(cfg),
                             sl__wk_remote_free,
                             types,
                             1,
                             threads,
                             1,
                             NULL,
                             out);
}

int
sl_worker_pool_failed(struct sl_worker_pool *p)
{
    return atomic_load(&p->failed);
}

void
sl_worker_pool_stop(struct sl_worker_pool *p)
{
    if (p == NULL) {
        return;
    }
    pool_free(p);
}
