/*
 * Purging a data source (docs/rest-api.md "Purge"): its delta entries and
 * visited links are forgotten, and a purge record goes to every running
 * processing job (a standard job whose start worker is the bulkbuilder).
 * The bulkbuilder journals it like any record, so the purge survives
 * kill -9; the job's indexWriter then deletes every document of the
 * source that no other source holds (docs/index.md "Sources").
 *
 * Used by DELETE /smila/importing/delta/<source>/?purge=true and
 * DELETE /smila/jobmanager/jobs/<job>/?purge=true.
 */
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

int
sl__api_purge_source(struct sl__req *req,
                     const char *source,
                     json_t **out,
                     struct sl_err *err)
{
    const struct sl_http_services *svc = req->svc;
    char crawler[SL_NAME_MAX + 1];
    json_t *jobs = NULL;
    json_t *v = NULL;
    uint64_t entries = 0;
    size_t i = 0;
    int rc = 0;

    *out = NULL;
    if (sl_jm_source_in_use(svc->jm, source, crawler)) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "source",
                          "source '%s' is being crawled by the active run of "
                          "job '%s'",
                          source,
                          crawler);
    }
    jobs = processing_jobs(svc->jm);
    if (json_array_size(jobs) == 0) {
        json_decref(jobs);
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "purge",
                          "no processing job is running to delete the "
                          "documents of source '%s' (start the job that "
                          "indexes them, e.g. indexUpdate)",
                          source);
    }
    rc = sl_delta_count(svc->delta, source, &entries, NULL, err);
    /* Forget first: a crash before the purge records leaves documents a
     * re-crawl pushes again, never entries without their documents. */
    if (rc == 0) {
        rc = sl_delta_forget(svc->delta, source, err);
    }
    if (rc == 0) {
        rc = sl_delta_visited_clear(svc->delta, source, err);
    }
    json_array_foreach(jobs, i, v)
    {
        if (rc == 0) {
            rc =
                push_purge(svc->bulkbuilder, json_string_value(v), source, err);
        }
    }
    if (rc != 0) {
        json_decref(jobs);
        return rc;
    }
    SL_INFO("purge: source %s: %llu delta entries forgotten; its documents "
            "leave the indexes of %zu processing jobs",
            source,
            (unsigned long long)entries,
            json_array_size(jobs));
    *out = json_pack("{s:s, s:b, s:I, s:o}",
                     "source",
                     source,
                     "purged",
                     1,
                     "deltaEntries",
                     (json_int_t)entries,
                     "processingJobs",
                     jobs);
    return 0;
}
