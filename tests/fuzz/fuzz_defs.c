/*
 * The validation of jobmanager definitions (jobmanager/defs*.c): worker
 * descriptions, buckets, workflows and jobs, as REST PUTs them.  The input
 * is JSON: an object with any of "workers", "buckets", "workflows" and
 * "jobs" (arrays, put in that order; "predefined": true puts them as
 * read-only, as the files are), else one definition, put as each kind.
 * The registry starts with the built-in workers and a bulkbuilder.
 * Checks: every answer is a documented code with the error filled in; a
 * stored definition is what get gives and puts again unchanged (the REST
 * round trip); every bucket of a stored job's workflow resolves to a valid
 * store; the task parameters of its actions are objects; lists are sorted;
 * deleting answers a documented code.
 */
#include "core/sl.h"
#include "builtin/builtin.h"
#include "jobmanager/jobmanager_int.h"
#include "workers/workers.h"

#include "fuzz.h"

#define MAX_PER_KIND 32

/* The bulkbuilder's worker description (bulkbuilder/bulkbuilder.c), which
 * the standard workflows start with; a test fixture here. */
static const char bulkbuilder_desc[] =
    "{\"name\": \"bulkbuilder\", \"modes\": [\"bulkSource\", \"autoCommit\"],"
    " \"parameters\": [{\"name\": \"bulkLimitSize\", \"optional\": true},"
    "  {\"name\": \"bulkLimitTime\", \"optional\": true}],"
    " \"output\": [{\"name\": \"insertedRecords\", \"type\": \"recordBulks\","
    "  \"modes\": [\"optional\"]},"
    "  {\"name\": \"deletedRecords\", \"type\": \"recordBulks\","
    "  \"modes\": [\"optional\"]}]}";

static json_t *workers; /* descriptions of the built-in workers */

static const char *const kind_keys[] = {"buckets", "workflows", "jobs"};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const struct sl_worker_type *const *types = NULL;
    size_t n = 0;
    size_t i = 0;

    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    workers = json_array();
    types = sl_builtin_workers(&n);
    for (i = 0; i < n; i++) {
        (void)json_array_append_new(workers,
                                    json_loads(types[i]->description, 0, NULL));
    }
    (void)json_array_append_new(workers, json_loads(bulkbuilder_desc, 0, NULL));
    return 0;
}

static void
add_worker(struct sl__jm_defs *d, const json_t *desc, int fuzzed)
{
    struct sl__jm_worker *w = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl__jm_worker_parse(desc, &w, &err);
    SL_FUZZ_CHECK(fuzzed || rc == 0, "built-in worker: %s", err.message);
    if (rc != 0) {
        SL_FUZZ_CHECK(rc == SL_EINVALDEF && err.code == rc &&
                          err.message[0] != '\0' && w == NULL,
                      "worker: %s (%s)",
                      sl_err_name(rc),
                      err.message);
        return;
    }
    rc = sl__jm_defs_add_worker(d, w);
    SL_FUZZ_CHECK(rc == 0 || (fuzzed && rc == SL_EEXIST),
                  "add worker: %s",
                  sl_err_name(rc));
}

static void
check_err(const char *what, int rc, const struct sl_err *err)
{
    SL_FUZZ_CHECK(err->code == rc && err->message[0] != '\0',
                  "%s: %s, err says %s '%s'",
                  what,
                  sl_err_name(rc),
                  sl_err_name(err->code),
                  err->message);
}

/* Put @def as @kind; on success the stored copy must come back from get
 * and put again unchanged. */
static void
put(struct sl__jm_defs *d, enum sl__jm_kind kind, const json_t *def, int ro)
{
    struct sl_err err;
    json_t *stored = NULL;
    json_t *got = NULL;
    json_t *again = NULL;
    const char *name = NULL;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl__jm_defs_put(d, kind, def, ro, &stored, &err);
    if (rc != 0) {
        SL_FUZZ_CHECK(rc == SL_EINVALDEF || rc == SL_EBADNAME ||
                          rc == SL_EREADONLY,
                      "put: %s (%s)",
                      sl_err_name(rc),
                      err.message);
        SL_FUZZ_CHECK(stored == NULL, "put failed with a stored copy");
        check_err("put", rc, &err);
        return;
    }
    SL_FUZZ_CHECK(json_is_object(stored), "stored is not an object");
    name = json_string_value(json_object_get(stored, "name"));
    SL_FUZZ_CHECK(name != NULL, "stored without a name");
    SL_FUZZ_CHECK(json_is_true(json_object_get(stored, "readOnly")) == ro,
                  "readOnly");
    got = sl__jm_defs_get(d, kind, name);
    SL_FUZZ_CHECK(got != NULL && json_equal(got, stored),
                  "get '%s' is not what was stored",
                  name);
    sl_err_clear(&err);
    rc = sl__jm_defs_put(d, kind, stored, ro, &again, &err);
    SL_FUZZ_CHECK(rc == 0,
                  "the stored '%s' does not put again: %s (%s at %s)",
                  name,
                  sl_err_name(rc),
                  err.message,
                  err.field);
    json_decref(again);
    json_decref(got);
    json_decref(stored);
}

/* Every action of @wf in @job: its parameters and buckets resolve. */
static void
check_job(struct sl__jm_defs *d, const json_t *job)
{
    const char *wname = json_string_value(json_object_get(job, "workflow"));
    json_t *wf = sl__jm_defs_get(d, SL__JM_WORKFLOW, wname);
    json_t *actions = NULL;
    const json_t *a = NULL;
    size_t i = 0;

    SL_FUZZ_CHECK(wf != NULL,
                  "stored job without its workflow '%s'",
                  wname != NULL ? wname : "(none)");
    actions = json_array();
    if (json_object_get(wf, "startAction") != NULL) {
        (void)json_array_append(actions, json_object_get(wf, "startAction"));
    }
    if (json_is_array(json_object_get(wf, "actions"))) {
        (void)json_array_extend(actions, json_object_get(wf, "actions"));
    }
    json_array_foreach(actions, i, a)
    {
        static const char *const dirs[] = {"input", "output"};
        json_t *params = sl__jm_task_params(job, wf, a);
        size_t k = 0;

        SL_FUZZ_CHECK(json_is_object(params), "task parameters");
        json_decref(params);
        for (k = 0; k < 2; k++) {
            const char *slot = NULL;
            const json_t *b = NULL;

            json_object_foreach((json_t *)json_object_get(a, dirs[k]), slot, b)
            {
                struct sl__jm_bucket_info info;
                struct sl_err err;
                int rc = 0;

                sl_err_clear(&err);
                memset(&info, 0, sizeof(info));
                rc = sl__jm_bucket_resolve(
                    d, job, wf, json_string_value(b), &info, &err);
                SL_FUZZ_CHECK(rc == 0,
                              "bucket '%s' of a stored job: %s (%s)",
                              json_string_value(b),
                              sl_err_name(rc),
                              err.message);
                SL_FUZZ_CHECK(sl_name_check_store(info.store, NULL) == 0,
                              "bucket '%s': store '%s'",
                              info.name,
                              info.store);
            }
        }
    }
    json_decref(actions);
    json_decref(wf);
}

/* Sorted by name, and every job checked. */
static void
check_lists(struct sl__jm_defs *d)
{
    int k = 0;

    for (k = SL__JM_BUCKET; k <= SL__JM_JOB; k++) {
        json_t *list = sl__jm_defs_list(d, (enum sl__jm_kind)k);
        const json_t *v = NULL;
        const char *prev = NULL;
        size_t i = 0;

        SL_FUZZ_CHECK(json_is_array(list), "list");
        json_array_foreach(list, i, v)
        {
            const char *name = json_string_value(json_object_get(v, "name"));

            SL_FUZZ_CHECK(name != NULL, "listed without a name");
            SL_FUZZ_CHECK(prev == NULL || strcmp(prev, name) < 0,
                          "list not sorted: '%s' before '%s'",
                          prev,
                          name);
            prev = name;
            if (k == SL__JM_JOB) {
                check_job(d, v);
            }
        }
        json_decref(list);
    }
}

/* Delete everything, jobs first. */
static void
delete_all(struct sl__jm_defs *d)
{
    int k = 0;

    for (k = SL__JM_JOB; k >= SL__JM_BUCKET; k--) {
        json_t *list = sl__jm_defs_list(d, (enum sl__jm_kind)k);
        const json_t *v = NULL;
        size_t i = 0;

        json_array_foreach(list, i, v)
        {
            struct sl_err err;
            const char *name = json_string_value(json_object_get(v, "name"));
            int rc = 0;

            sl_err_clear(&err);
            rc = sl__jm_defs_delete(d, (enum sl__jm_kind)k, name, &err);
            SL_FUZZ_CHECK(rc == 0 || rc == SL_EREADONLY || rc == SL_ECONFLICT,
                          "delete '%s': %s",
                          name,
                          sl_err_name(rc));
            if (rc != 0) {
                check_err("delete", rc, &err);
            }
        }
        json_decref(list);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl__jm_defs *d = NULL;
    json_t *in = json_loadb((const char *)data, size, 0, NULL);
    const json_t *v = NULL;
    size_t i = 0;
    int k = 0;
    int any = 0;
    int ro = 0;

    if (!json_is_object(in)) {
        json_decref(in);
        return 0;
    }
    d = sl__jm_defs_new();
    json_array_foreach(workers, i, v)
    {
        add_worker(d, v, 0);
    }
    json_array_foreach(json_object_get(in, "workers"), i, v)
    {
        if (i < MAX_PER_KIND) {
            add_worker(d, v, 1);
        }
    }
    ro = json_is_true(json_object_get(in, "predefined"));
    for (k = SL__JM_BUCKET; k <= SL__JM_JOB; k++) {
        const json_t *list = json_object_get(in, kind_keys[k]);

        any |= list != NULL || json_object_get(in, "workers") != NULL;
        json_array_foreach(list, i, v)
        {
            if (i < MAX_PER_KIND) {
                put(d, (enum sl__jm_kind)k, v, ro);
            }
        }
    }
    if (!any) {
        for (k = SL__JM_BUCKET; k <= SL__JM_JOB; k++) {
            put(d, (enum sl__jm_kind)k, in, 0);
        }
    }
    check_lists(d);
    delete_all(d);
    check_lists(d);
    sl__jm_defs_free(d);
    json_decref(in);
    return 0;
}
