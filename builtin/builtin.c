/*
 * The table of the built-in worker types and the definition check that
 * `sluice serve` installs for them (builtin.h).
 */
#include <string.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

/*
 * The built-in worker types, one `const struct sl_worker_type
 * sl_worker_<name>` per worker (docs/workers.md): the crawlers
 * (fileCrawler, webCrawler), the fetchers (fileFetcher, webFetcher), the
 * extractors (fileExtractor, webExtractor, textExtractor), deltaChecker,
 * updatePusher and indexWriter.  A new one goes here, before the NULL
 * that keeps the array non-empty.
 */
static const struct sl_worker_type *const builtin[] = {
    &sl_worker_fileCrawler,
    &sl_worker_webCrawler,
    &sl_worker_webFetcher,
    &sl_worker_webExtractor,
    &sl_worker_fileFetcher,
    &sl_worker_fileExtractor,
    &sl_worker_deltaChecker,
    &sl_worker_updatePusher,
    &sl_worker_textExtractor,
    &sl_worker_indexWriter,
    NULL,
};

const struct sl_worker_type *const *
sl_builtin_workers(size_t *n)
{
    *n = sizeof(builtin) / sizeof(builtin[0]) - 1;
    return builtin;
}

/*
 * The dataSource a job gives its workers names a delta source (what the
 * crawlers, the deltaChecker and the updatePusher pass to the delta
 * service): refused when the job is defined, not at the run's first delta
 * call.
 */
static int
check_source(const json_t *params, struct sl_err *err)
{
    const json_t *v = json_object_get(params, "dataSource");
    struct sl_err why;

    if (v == NULL) {
        return 0;
    }
    sl_err_clear(&why);
    if (!json_is_string(v) ||
        sl_delta_source_check(json_string_value(v), &why) != 0) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters.dataSource",
                          "%s",
                          json_is_string(v) ? why.message
                                            : "dataSource must be a string");
    }
    return 0;
}

/* Does worker description @desc declare top-level parameter @name? */
static int
declares(const json_t *desc, const char *name)
{
    const json_t *p = NULL;
    size_t i = 0;

    json_array_foreach(json_object_get(desc, "parameters"), i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));

        if (n != NULL && strcmp(n, name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* recheck: minSeconds <= maxSeconds (each one's range is declared). */
static int
check_recheck(const json_t *r, struct sl_err *err)
{
    uint64_t min_s = 0;
    uint64_t max_s = 0;

    if (r == NULL || sl__bi_recheck_bounds(r, &min_s, &max_s) != 0 ||
        min_s <= max_s) {
        return 0; /* absent, or as declared: the shape check says */
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      "parameters.recheck.maxSeconds",
                      "recheck.maxSeconds (%llu) is below minSeconds (%llu)",
                      (unsigned long long)max_s,
                      (unsigned long long)min_s);
}

/* recheckDue: a pass over the due files only, so its run must not delete
 * what it did not see (deltaImportStrategy additive), and it needs the
 * next checks it reads (recheck). */
static int
check_recheck_due(const json_t *params, struct sl_err *err)
{
    const json_t *due = json_object_get(params, "recheckDue");
    const char *strategy =
        json_string_value(json_object_get(params, "deltaImportStrategy"));

    if (!sl__bi_json_true(due)) {
        return 0;
    }
    if (strategy == NULL || strcmp(strategy, "additive") != 0) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters.deltaImportStrategy",
                          "recheckDue needs deltaImportStrategy \"additive\": "
                          "a pass over the due files must not delete the "
                          "documents it did not look at");
    }
    if (json_object_get(params, "recheck") == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters.recheck",
                          "recheckDue needs the parameter recheck (the "
                          "intervals of the next checks it reads and sets)");
    }
    return 0;
}

int
sl_builtin_def_check(void *arg,
                     const char *job,
                     const char *worker,
                     const json_t *desc,
                     const json_t *params,
                     struct sl_err *err)
{
    const json_t *throttle = json_object_get(params, "throttle");
    int rc = check_source(params, err);

    if (rc == 0 && throttle != NULL && declares(desc, "throttle") &&
        sl_throttle_rules_check(throttle, "parameters.throttle", err) != 0) {
        if (err != NULL) {
            err->code = SL_EINVALDEF;
        }
        rc = SL_EINVALDEF;
    }
    if (rc == 0 && declares(desc, "recheck")) {
        rc = check_recheck(json_object_get(params, "recheck"), err);
    }
    if (rc == 0 && declares(desc, "recheckDue")) {
        rc = check_recheck_due(params, err);
    }
    if (rc != 0) {
        return rc;
    }
    return sl_worker_def_check(arg, job, worker, desc, params, err);
}
