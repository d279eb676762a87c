/*
 * Clean-up: the transient objects of ended workflow runs and job runs,
 * removed by the clean-up thread, after the run end hook; and the history
 * entries the retention rules drop (history.c).
 */
#include <string.h>

#include "jobmanager/defs_int.h"
#include "jobmanager/engine_int.h"

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

void
sl__jm_cleanup_prune(struct sl_jm *jm)
{
    struct cleanup *c = sl_calloc(1, sizeof(*c));

    c->prune = 1;
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
void
sl__jm_cleanup_transient(struct sl_jm *jm,
                         struct run *r,
                         unsigned wfrun,
                         int finalize)
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

/* How many input slots of @r's actions read @bucket. */
static unsigned
readers(const struct run *r, const char *bucket)
{
    size_t n = sl__jm_wf_nactions(r->wfdef);
    unsigned count = 0;
    size_t a = 0;

    for (a = 0; a < n; a++) {
        const char *slot = NULL;
        json_t *b = NULL;

        json_object_foreach(
            json_object_get(sl__jm_wf_action(r->wfdef, a), "input"), slot, b)
        {
            count +=
                json_is_string(b) && strcmp(json_string_value(b), bucket) == 0;
        }
    }
    return count;
}

/*
 * A bulk in a transient bucket becomes one task of each action that reads
 * the bucket.  When that is one action, the bulk is of no further use once
 * its task succeeded: it is deleted then, after the finish is committed,
 * rather than with its workflow run (a runOnce run is one workflow run, so
 * a crawl kept every intermediate bulk until its end: 22 GB for a million
 * files).  A task that failed keeps its input for the retry; the end of
 * the workflow run deletes what is left.
 */
void
sl__jm_cleanup_inputs(struct sl_jm *jm, const struct run *r, const json_t *task)
{
    const char *slot = NULL;
    json_t *bulks = NULL;

    json_object_foreach(json_object_get(task, "input"), slot, bulks)
    {
        size_t i = 0;
        json_t *b = NULL;

        json_array_foreach(bulks, i, b)
        {
            const char *bucket =
                json_string_value(json_object_get(b, "bucket"));
            const char *id = json_string_value(json_object_get(b, "id"));
            json_t *bi = json_object_get(r->buckets, bucket);

            if (bucket == NULL || id == NULL || bi == NULL ||
                json_is_true(json_object_get(bi, "persistent")) ||
                readers(r, bucket) != 1) {
                continue;
            }
            sl__jm_cleanup_push(jm,
                                json_string_value(json_object_get(b, "store")),
                                id,
                                NULL,
                                NULL);
        }
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
        struct sl_err err = {0};
        size_t n = 0;
        int rc =
            sl_obj_list(jm->cfg.store, store, prefix, collect_id, &c, &err);

        if (rc < 0 && rc != SL_ENOENT) { /* 1: a page of 1000 ids */
            /* nothing is lost, but the transient objects stay */
            SL_WARN("jobmanager: clean-up of %s/%s: %s; objects may be left",
                    store,
                    prefix,
                    err.message);
        }
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
        state = sl__jm_state_name(r->state);
        sl__jm_run_unlink(jm, r);
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
        sl__jm_history_prune(jm, job); /* the newest runs of it are kept */
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
        if (c->prune) {
            sl__jm_history_prune(jm, NULL); /* stops early when stopping */
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
