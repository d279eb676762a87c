/*
 * Starting runs: bucket resolution, the run mode, the initial tasks and
 * sl_jm_run_start.
 */
#include <string.h>
#include <time.h>

#include "jobmanager/engine_int.h"

static void
make_run_id(char out[SL_JM_RUN_ID_MAX])
{
    int64_t ms = sl_time_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char base[32];
    char uuid[37];

    (void)gmtime_r(&secs, &tm);
    (void)strftime(base, sizeof(base), "%Y%m%d-%H%M%S", &tm);
    sl_uuid(uuid);
    (void)snprintf(
        out, SL_JM_RUN_ID_MAX, "%s%03d-%.8s", base, (int)(ms % 1000), uuid);
}

/*
 * Resolve every bucket the workflow uses (slot maps of all actions) into
 * {"store","persistent"}; creates the stores of transient buckets.
 */
static int
resolve_buckets(struct sl_jm *jm,
                const json_t *job,
                const json_t *wf,
                json_t **out,
                struct sl_err *err)
{
    json_t *buckets = json_object();
    json_t *actions = json_object_get(wf, "actions");
    size_t n = json_array_size(actions) + 1;
    size_t a = 0;
    int rc = 0;

    for (a = 0; a < n && rc == 0; a++) {
        json_t *act = a == 0 ? json_object_get(wf, "startAction")
                             : json_array_get(actions, a - 1);
        const char *maps[2] = {"input", "output"};
        size_t m = 0;

        for (m = 0; m < 2 && rc == 0; m++) {
            const char *slot = NULL;
            json_t *b = NULL;

            json_object_foreach(json_object_get(act, maps[m]), slot, b)
            {
                struct sl__jm_bucket_info bi;

                if (json_object_get(buckets, json_string_value(b)) != NULL) {
                    continue;
                }
                rc = sl__jm_bucket_resolve(
                    jm->defs, job, wf, json_string_value(b), &bi, err);
                if (rc != 0) {
                    break;
                }
                if (!bi.persistent) {
                    (void)sl_obj_store_create(
                        jm->cfg.store, bi.store, NULL, NULL);
                }
                (void)json_object_set_new(buckets,
                                          bi.name,
                                          json_pack("{s:s, s:b}",
                                                    "store",
                                                    bi.store,
                                                    "persistent",
                                                    bi.persistent));
            }
        }
    }
    if (rc != 0) {
        json_decref(buckets);
        return rc;
    }
    *out = buckets;
    return 0;
}

/* The objects of the start bucket, for a runOnce run from a bucket. */
static int
list_start_bucket(void *ctx, const struct sl_obj_info *info)
{
    (void)json_array_append_new(ctx, json_string(info->id));
    return 0;
}

/* Decide the mode: @mode or the workflow's first mode; check it. */
static int
choose_mode(const json_t *wf,
            const char *mode,
            struct run *r,
            struct sl_err *err)
{
    json_t *modes = json_object_get(wf, "modes");
    size_t i = 0;
    json_t *m = NULL;

    if (mode == NULL) {
        mode = json_is_array(modes) && json_array_size(modes) > 0
                   ? json_string_value(json_array_get(modes, 0))
                   : "standard";
    }
    if (strcmp(mode, "runOnce") != 0 && strcmp(mode, "standard") != 0 &&
        strcmp(mode, "continuous") != 0) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "mode",
                          "mode must be 'runOnce', 'standard' or "
                          "'continuous', not '%s'",
                          mode);
    }
    r->runonce = strcmp(mode, "runOnce") == 0;
    r->continuous = strcmp(mode, "continuous") == 0;
    if (!json_is_array(modes) || json_array_size(modes) == 0) {
        return r->continuous
                   ? sl_err_set(err,
                                SL_EINVAL,
                                "mode",
                                "workflow '%s' does not list mode "
                                "'continuous' in its modes",
                                json_string_value(json_object_get(wf, "name")))
                   : 0;
    }
    json_array_foreach(modes, i, m)
    {
        if (strcmp(json_string_value(m), mode) == 0) {
            return 0;
        }
    }
    return sl_err_set(err,
                      SL_EINVAL,
                      "mode",
                      "workflow '%s' does not allow mode '%s'",
                      json_string_value(json_object_get(wf, "name")),
                      mode);
}

/* The initial tasks of a new run; called with jm->mu held. */
static int
initial_tasks(struct sl_jm *jm,
              struct run *r,
              const json_t *objects,
              struct sl_err *err)
{
    json_t *start = sl__jm_action(r, 0);
    const struct sl__jm_worker *w = sl__jm_defs_worker(
        jm->defs, json_string_value(json_object_get(start, "worker")));
    struct wfrun *wf = NULL;
    const char *slot = NULL;
    json_t *b = NULL;
    size_t i = 0;
    json_t *id = NULL;

    if (r->continuous) {
        if (w->generator != SL__JM_GEN_RUN_ONCE_TRIGGER) {
            return sl_err_set(err,
                              SL_EINVAL,
                              "mode",
                              "worker '%s' cannot start continuous runs: "
                              "only a crawler that starts by itself can",
                              w->name);
        }
        r->state = RS_RUNNING; /* the first pass at the next tick */
        return 0;
    }
    if (!r->runonce) {
        if (w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER) {
            return sl_err_set(err,
                              SL_EINVAL,
                              "mode",
                              "worker '%s' starts only runOnce runs",
                              w->name);
        }
        r->state = RS_RUNNING;
        return 0;
    }
    if (w->modes & SL__JM_WORKER_BULK_SOURCE) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "mode",
                          "bulk source '%s' runs only in standard mode",
                          w->name);
    }
    wf = sl__jm_wfrun_new(r);
    if (w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER) {
        (void)sl__jm_task_create(jm, r, wf, 0, NULL, NULL);
    } else {
        json_object_foreach(json_object_get(start, "input"), slot, b)
        {
            json_t *bi = json_object_get(r->buckets, json_string_value(b));

            json_array_foreach(objects, i, id)
            {
                (void)sl__jm_task_create(jm,
                                         r,
                                         wf,
                                         0,
                                         json_pack("{s:[{s:O, s:O, s:O}]}",
                                                   slot,
                                                   "bucket",
                                                   b,
                                                   "store",
                                                   json_object_get(bi, "store"),
                                                   "id",
                                                   id),
                                         NULL);
            }
            break; /* one input slot drives a runOnce from a bucket */
        }
    }
    r->state = RS_FINISHING;
    r->finish_ms = sl_time_ms();
    return 0;
}

/* Another active run crawling the same dataSource? */
static const struct run *
data_source_busy(struct sl_jm *jm, const char *ds)
{
    struct run *r = NULL;

    for (r = jm->runs; ds != NULL && r != NULL; r = r->next) {
        if (r->data_source != NULL && strcmp(r->data_source, ds) == 0) {
            return r;
        }
    }
    return NULL;
}

/* Everything that does not need the engine lock: definitions, buckets and
 * the start bucket's objects.  Fills a new run (not yet linked). */
static int
prepare_run(struct sl_jm *jm,
            const char *job,
            const char *mode,
            struct run **out,
            json_t **objects,
            struct sl_err *err)
{
    struct run *r = sl_calloc(1, sizeof(*r));
    json_t *params = NULL;
    json_t *start = NULL;
    const char *slot = NULL;
    json_t *b = NULL;
    int rc = 0;

    r->jobdef = sl__jm_defs_get(jm->defs, SL__JM_JOB, job);
    if (r->jobdef == NULL) {
        rc = sl_err_set(err, SL_ENOENT, "job", "no job '%s'", job);
        goto fail;
    }
    r->wfdef = sl__jm_defs_get(
        jm->defs,
        SL__JM_WORKFLOW,
        json_string_value(json_object_get(r->jobdef, "workflow")));
    if (r->wfdef == NULL) {
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        "workflow",
                        "the workflow of job '%s' does not exist",
                        job);
        goto fail;
    }
    rc = choose_mode(r->wfdef, mode, r, err);
    if (rc == 0) {
        rc = resolve_buckets(jm, r->jobdef, r->wfdef, &r->buckets, err);
    }
    if (rc != 0) {
        goto fail;
    }
    (void)snprintf(r->job, sizeof(r->job), "%s", job);
    make_run_id(r->id);
    r->start_ms = sl_time_ms();
    r->worker = json_object();
    r->errors = json_array();
    start = json_object_get(r->wfdef, "startAction");
    params = sl__jm_task_params(r->jobdef, r->wfdef, start);
    if (json_is_string(json_object_get(params, "dataSource"))) {
        r->data_source =
            sl_strdup(json_string_value(json_object_get(params, "dataSource")));
    }
    if (r->continuous) {
        rc = sl__jm_continuous_parse(
            json_object_get(params, "continuous"), &r->cont.cfg, err);
    }
    json_decref(params);
    if (rc != 0) {
        goto fail;
    }
    if (jm->start_check != NULL) {
        size_t i = 0;
        json_t *act = NULL;

        for (i = 0; (act = sl__jm_action(r, (int)i)) != NULL; i++) {
            params = sl__jm_task_params(r->jobdef, r->wfdef, act);
            rc = jm->start_check(
                jm->start_check_arg,
                job,
                json_string_value(json_object_get(act, "worker")),
                params,
                err);
            json_decref(params);
            if (rc != 0) {
                goto fail;
            }
        }
    }
    *objects = json_array();
    json_object_foreach(json_object_get(start, "input"), slot, b)
    {
        json_t *bi = json_object_get(r->buckets, json_string_value(b));
        char *prefix = sl_asprintf("%s/", json_string_value(b));

        if (r->runonce && json_is_true(json_object_get(bi, "persistent"))) {
            rc = sl_obj_list(jm->cfg.store,
                             json_string_value(json_object_get(bi, "store")),
                             prefix,
                             list_start_bucket,
                             *objects,
                             err);
            /* a run over part of the bucket would succeed with objects
             * left out; an empty or missing store is nothing to do */
            if (rc == SL_ENOENT) {
                sl_err_clear(err);
                rc = 0;
            }
        }
        sl_free(prefix);
        break;
    }
    if (rc != 0) {
        json_decref(*objects);
        *objects = NULL;
        goto fail;
    }
    *out = r;
    return 0;
fail:
    sl__jm_run_free(r);
    return rc;
}

int
sl_jm_run_start(struct sl_jm *jm,
                const char *job,
                const char *mode,
                char run_id[SL_JM_RUN_ID_MAX],
                struct sl_err *err)
{
    struct run *r = NULL;
    const struct run *busy = NULL;
    json_t *objects = NULL;
    uint64_t seq = 0;
    int rc = 0;

    rc = prepare_run(jm, job, mode, &r, &objects, err);
    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&jm->mu);
    if (sl__jm_run_find(jm, job) != NULL) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "job",
                        "job '%s' already has an active run (%s)",
                        job,
                        sl__jm_run_find(jm, job)->id);
        goto unlock;
    }
    busy = data_source_busy(jm, r->data_source);
    if (busy != NULL) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "dataSource",
                        "data source '%s' is being crawled by run %s of job "
                        "'%s'",
                        r->data_source,
                        busy->id,
                        busy->job);
        goto unlock;
    }
    rc = initial_tasks(jm, r, objects, err);
    if (rc != 0) {
        sl__jm_tasks_drop_run(jm, r, 0, TC_OBSOLETE);
        goto unlock;
    }
    r->next = jm->runs;
    jm->runs = r;
    (void)snprintf(run_id, SL_JM_RUN_ID_MAX, "%s", r->id);
    SL_INFO("jobmanager: run %s of job %s started (%s)",
            r->id,
            job,
            r->runonce      ? "runOnce"
            : r->continuous ? "continuous"
                            : "standard");
    sl__jm_run_check_done(jm, r);
    sl__jm_run_persist(jm, r);
    r = NULL;
unlock:
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    json_decref(objects);
    if (r != NULL) {
        sl__jm_run_free(r);
        return rc;
    }
    return sl__jm_store_wait(jm->st, seq, err);
}
