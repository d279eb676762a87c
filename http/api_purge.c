/*
 * Purging a data source (docs/deltaservice.md "Purging a source"): its
 * delta entries and visited links are forgotten, and its documents leave
 * every index, except those another source holds (docs/index.md
 * "Sources").
 *
 * An index that a running processing job (a standard job whose start
 * worker is the bulkbuilder) writes gets a purge record through that
 * job: the bulkbuilder journals it like any record, and the job's
 * indexWriter deletes the documents after the records pushed before it.
 * Every other index is purged here, directly.  The purge is marked in the
 * delta service before its first step and unmarked after its last, so
 * one that kill -9 interrupted is carried out again at the next start
 * (sl_http_purges_resume); every step may be repeated.  A purge that
 * fails keeps its mark: it is repeated by the user or at the next start,
 * and meanwhile no run crawling the source may start (the server's start
 * check), so a repeated purge never forgets what a later crawl recorded.
 * Purges run one at a time (purge_mu): two of one source share its mark.
 *
 * Used by DELETE /smila/importing/delta/<source>/?purge=true and
 * DELETE /smila/jobmanager/jobs/<job>/?purge=true.
 */
#include <pthread.h>
#include <string.h>

#include "bulkbuilder/bulkbuilder.h"
#include "deltaservice/deltaservice.h"
#include "http/http_int.h"
#include "index/index.h"
#include "jobmanager/jobmanager.h"

int
sl__api_purge_flag(struct sl__req *req, int *purge)
{
    const char *v = sl__req_query(req, "purge");

    *purge = 0;
    if (v == NULL || strcmp(v, "false") == 0) {
        return 0;
    }
    if (strcmp(v, "true") == 0) {
        *purge = 1;
        return 0;
    }
    return sl__reply_error(
        req, SL_EINVAL, "purge", "purge must be true or false, not '%s'", v);
}

/* The running processing jobs, as a new array of names. */
static json_t *
processing_jobs(struct sl_jm *jm)
{
    json_t *active = sl_jm_active_jobs(jm);
    json_t *out = json_array();
    json_t *v = NULL;
    size_t i = 0;

    json_array_foreach(active, i, v)
    {
        if (sl_jm_bulk_source_ready(
                jm, json_string_value(v), SL_BB_WORKER, NULL) == 0) {
            (void)json_array_append(out, v);
        }
    }
    json_decref(active);
    return out;
}

/* Push the purge record of @source to job @job. */
static int
push_purge(struct sl_bb *bb,
           const char *job,
           const char *source,
           struct sl_err *err)
{
    char *id = sl_asprintf("sluice:purge:%s", source);
    json_t *meta =
        json_pack("{s:s, s:s}", "_recordid", id, SL_INDEX_PURGE_FIELD, source);
    int rc = sl_bb_add(bb, job, meta, 1, err);

    json_decref(meta);
    sl_free(id);
    return rc;
}

/* Is index @name written by one of the running processing @jobs? */
static int
written_by(struct sl_jm *jm, const json_t *jobs, const char *name)
{
    char job[SL_NAME_MAX + 1];
    const json_t *v = NULL;
    size_t i = 0;

    if (!sl_jm_param_in_use(jm,
                            SL__WRITER_WORKER,
                            SL__WRITER_PARAM,
                            SL__WRITER_INDEX,
                            name,
                            job)) {
        return 0;
    }
    json_array_foreach(jobs, i, v)
    {
        if (strcmp(json_string_value(v), job) == 0) {
            return 1;
        }
    }
    return 0;
}

/*
 * Purge @source from every index that none of the running processing
 * @jobs writes; each one purged is appended to @done as {"index",
 * "deleted", "kept"}.
 */
static int
purge_indexes(const struct sl_http_services *svc,
              const json_t *jobs,
              const char *source,
              json_t *done,
              struct sl_err *err)
{
    json_t *list = NULL;
    json_t *v = NULL;
    size_t i = 0;
    int rc = svc->index != NULL ? sl_index_list(svc->index, &list, err) : 0;

    json_array_foreach(list, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        uint64_t deleted = 0;
        uint64_t kept = 0;

        if (rc != 0 || name == NULL || written_by(svc->jm, jobs, name)) {
            continue;
        }
        rc = sl_index_purge_source(
            svc->index, name, source, 0, &deleted, &kept, err);
        if (rc == 0 && deleted + kept > 0) {
            (void)json_array_append_new(done,
                                        json_pack("{s:s, s:I, s:I}",
                                                  "index",
                                                  name,
                                                  "deleted",
                                                  (json_int_t)deleted,
                                                  "kept",
                                                  (json_int_t)kept));
        }
    }
    json_decref(list);
    return rc;
}

/* The steps of a purge of @source, between its mark and its unmark. */
static int
purge_steps(const struct sl_http_services *svc,
            const char *source,
            const json_t *jobs,
            json_t *done,
            struct sl_err *err)
{
    const json_t *v = NULL;
    size_t i = 0;
    /* Forget first: a crash before the documents are deleted leaves the
     * mark, and the purge is done again at the next start. */
    int rc = sl_delta_forget(svc->delta, source, err);

    if (rc == 0) {
        rc = sl_delta_visited_clear(svc->delta, source, err);
    }
    if (rc == 0) {
        rc = sl_jm_documents_forget(svc->jm, source, err);
    }
    sl_test_delay("purge.forgotten"); /* a crash may come here */
    json_array_foreach(jobs, i, v)
    {
        if (rc == 0) {
            rc =
                push_purge(svc->bulkbuilder, json_string_value(v), source, err);
        }
    }
    if (rc == 0) {
        rc = purge_indexes(svc, jobs, source, done, err);
    }
    return rc;
}

static pthread_mutex_t purge_mu = PTHREAD_MUTEX_INITIALIZER;

/* Purge @source; the reply body in *out.  purge_mu held. */
static int
purge_locked(const struct sl_http_services *svc,
             const char *source,
             json_t **out,
             struct sl_err *err)
{
    char crawler[SL_NAME_MAX + 1];
    json_t *jobs = processing_jobs(svc->jm);
    json_t *done = json_array();
    uint64_t entries = 0;
    int marked = 0;
    int was = 0;
    int rc = sl_delta_count(svc->delta, source, &entries, NULL, err);

    *out = NULL;
    if (rc == 0) {
        was = sl_delta_purge_is_marked(svc->delta, source);
        rc = sl_delta_purge_mark(svc->delta, source, 1, err);
        marked = rc == 0;
    }
    if (rc == 0 && sl_jm_source_in_use(svc->jm, source, crawler)) {
        /* a run started before the mark could refuse it: it goes first
         * (a mark left by an earlier purge stays) */
        if (!was) {
            (void)sl_delta_purge_mark(svc->delta, source, 0, NULL);
            marked = 0;
        }
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "source",
                        "source '%s' is being crawled by the active run of "
                        "job '%s'",
                        source,
                        crawler);
    }
    if (rc == 0) {
        rc = purge_steps(svc, source, jobs, done, err);
    }
    if (rc == 0) {
        rc = sl_delta_purge_mark(svc->delta, source, 0, err);
    }
    if (rc != 0) {
        if (marked) {
            struct sl_err why = *err;

            (void)sl_err_set(err,
                             why.code,
                             why.field[0] != '\0' ? why.field : NULL,
                             "%s (the purge of source '%s' is not finished: "
                             "repeat it; crawls of the source are refused "
                             "until then)",
                             why.message,
                             source);
        }
        json_decref(jobs);
        json_decref(done);
        return rc;
    }
    SL_INFO("purge: source %s: %llu delta entries forgotten; its documents "
            "leave the indexes of %zu processing jobs and %zu other indexes",
            source,
            (unsigned long long)entries,
            json_array_size(jobs),
            json_array_size(done));
    *out = json_pack("{s:s, s:b, s:I, s:o, s:o}",
                     "source",
                     source,
                     "purged",
                     1,
                     "deltaEntries",
                     (json_int_t)entries,
                     "processingJobs",
                     jobs,
                     "indexes",
                     done);
    return 0;
}

static int
purge(const struct sl_http_services *svc,
      const char *source,
      json_t **out,
      struct sl_err *err)
{
    int rc = 0;

    (void)pthread_mutex_lock(&purge_mu);
    rc = purge_locked(svc, source, out, err);
    (void)pthread_mutex_unlock(&purge_mu);
    return rc;
}

int
sl__api_purge_source(struct sl__req *req,
                     const char *source,
                     json_t **out,
                     struct sl_err *err)
{
    return purge(req->svc, source, out, err);
}

/* A purge a crash interrupted (a callback of sl_delta_purges_pending). */
static int
resume_one(void *ctx, const char *source)
{
    const struct sl_http_services *svc = ctx;
    json_t *out = NULL;
    struct sl_err err;

    sl_err_clear(&err);
    if (sl_jm_source_in_use(svc->jm, source, NULL)) {
        SL_ERROR("purge: source %s: the purge a stop interrupted waits: an "
                 "active run crawls the source (purge it again after that "
                 "run)",
                 source);
        return 0;
    }
    SL_INFO("purge: source %s: the purge a stop interrupted goes on", source);
    if (purge(svc, source, &out, &err) != 0) {
        SL_ERROR("purge: source %s: %s (purge it again)", source, err.message);
    }
    json_decref(out);
    return 0;
}

void
sl_http_purges_resume(const struct sl_http_services *svc)
{
    struct sl_err err;

    sl_err_clear(&err);
    if (svc->delta != NULL &&
        sl_delta_purges_pending(svc->delta, resume_one, (void *)svc, &err) !=
            0) {
        SL_ERROR("purge: the purges under way: %s", err.message);
    }
}
