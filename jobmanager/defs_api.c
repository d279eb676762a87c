/*
 * The public definitions API of the jobmanager (jobmanager.h): list, get,
 * put and delete buckets, workflows and jobs (validated by the registry,
 * defs.c and defs_check.c, and persisted here in the LMDB "defs"
 * database), the worker descriptions and data object types as REST shows
 * them, and the registration of workers and of the workers' definition
 * check before the start.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

static const char *const kind_names[] = {"buckets", "workflows", "jobs"};

static int
kind_parse(const char *name, enum sl__jm_kind *out)
{
    size_t i = 0;

    for (i = 0; name != NULL && i < 3; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (enum sl__jm_kind)i;
            return 0;
        }
    }
    return SL_EINVAL;
}

/* Key of a user definition: "<kind digit>\0<name>". */
static size_t
def_key(char *buf, size_t cap, enum sl__jm_kind kind, const char *name)
{
    size_t n = strlen(name);

    if (n + 2 > cap) {
        sl_panic("jobmanager: definition name too long");
    }
    buf[0] = (char)('0' + (int)kind);
    buf[1] = '\0';
    memcpy(buf + 2, name, n);
    return n + 2;
}

/* ------------------------------------------------------------------------
 * Definitions.
 * --------------------------------------------------------------------- */

json_t *
sl_jm_defs_list(struct sl_jm *jm, const char *kind)
{
    enum sl__jm_kind k = SL__JM_BUCKET;

    if (kind_parse(kind, &k) != 0) {
        return NULL;
    }
    return sl__jm_defs_list(jm->defs, k);
}

json_t *
sl_jm_defs_get(struct sl_jm *jm, const char *kind, const char *name)
{
    enum sl__jm_kind k = SL__JM_BUCKET;

    if (kind_parse(kind, &k) != 0) {
        return NULL;
    }
    return sl__jm_defs_get(jm->defs, k, name);
}

int
sl_jm_defs_put(struct sl_jm *jm,
               const char *kind,
               const json_t *def,
               json_t **stored,
               struct sl_err *err)
{
    enum sl__jm_kind k = SL__JM_BUCKET;
    json_t *copy = NULL;
    const char *name = NULL;
    char key[SL_NAME_MAX + 3];
    uint64_t seq = 0;
    int rc = 0;

    if (stored != NULL) {
        *stored = NULL;
    }
    if (kind_parse(kind, &k) != 0) {
        return sl_err_set(err, SL_EINVAL, "kind", "unknown kind '%s'", kind);
    }
    name = json_string_value(json_object_get(def, "name"));
    if (k == SL__JM_JOB && name != NULL &&
        sl_jm_run_state(jm, name, NULL) != NULL) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "name",
                          "job '%s' is running; change it after the run",
                          name);
    }
    (void)pthread_mutex_lock(&jm->mu);
    rc = sl__jm_defs_put(jm->defs, k, def, 0, &copy, err);
    if (rc == 0) {
        name = json_string_value(json_object_get(copy, "name"));
        seq = sl__jm_store_put_json(jm->st,
                                    SL__JM_DB_DEFS,
                                    key,
                                    def_key(key, sizeof(key), k, name),
                                    copy);
    }
    (void)pthread_mutex_unlock(&jm->mu);
    if (rc != 0) {
        return rc;
    }
    rc = sl__jm_store_wait(jm->st, seq, err);
    if (rc == 0 && stored != NULL) {
        *stored = copy;
    } else {
        json_decref(copy);
    }
    return rc;
}

/* The checks of a delete before the definitions' own: kind, name, a
 * running job.  The kind in *k. */
static int
delete_precheck(struct sl_jm *jm,
                const char *kind,
                const char *name,
                enum sl__jm_kind *k,
                struct sl_err *err)
{
    if (kind_parse(kind, k) != 0) {
        return sl_err_set(err, SL_EINVAL, "kind", "unknown kind '%s'", kind);
    }
    if (strlen(name) > SL_NAME_MAX) {
        return sl_err_set(err, SL_ENOENT, "name", "no %s '%s'", kind, name);
    }
    if (*k == SL__JM_JOB && sl_jm_run_state(jm, name, NULL) != NULL) {
        return sl_err_set(err,
                          SL_ECONFLICT,
                          "name",
                          "job '%s' is running; delete it after the run",
                          name);
    }
    return 0;
}

int
sl_jm_defs_delete_check(struct sl_jm *jm,
                        const char *kind,
                        const char *name,
                        struct sl_err *err)
{
    enum sl__jm_kind k = SL__JM_BUCKET;
    int rc = delete_precheck(jm, kind, name, &k, err);

    return rc != 0 ? rc : sl__jm_defs_deletable(jm->defs, k, name, err);
}

int
sl_jm_defs_delete(struct sl_jm *jm,
                  const char *kind,
                  const char *name,
                  struct sl_err *err)
{
    enum sl__jm_kind k = SL__JM_BUCKET;
    char key[SL_NAME_MAX + 3];
    uint64_t seq = 0;
    int rc = delete_precheck(jm, kind, name, &k, err);

    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&jm->mu);
    rc = sl__jm_defs_delete(jm->defs, k, name, err);
    if (rc == 0) {
        seq = sl__jm_store_del(
            jm->st, SL__JM_DB_DEFS, key, def_key(key, sizeof(key), k, name));
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return rc != 0 ? rc : sl__jm_store_wait(jm->st, seq, err);
}

static json_t *
find_named(json_t *list, const char *name)
{
    size_t i = 0;
    json_t *v = NULL;

    json_array_foreach(list, i, v)
    {
        const char *n = json_string_value(json_object_get(v, "name"));

        if (n != NULL && strcmp(n, name) == 0) {
            return json_incref(v);
        }
    }
    return NULL;
}

json_t *
sl_jm_workers(struct sl_jm *jm, const char *name)
{
    json_t *all = sl__jm_defs_workers_json(jm->defs);
    json_t *one = NULL;

    if (name == NULL) {
        return all;
    }
    one = find_named(all, name);
    json_decref(all);
    return one;
}

json_t *
sl_jm_dots(struct sl_jm *jm, const char *name)
{
    json_t *all = sl__jm_defs_dots_json();
    json_t *one = NULL;

    (void)jm;
    if (name == NULL) {
        return all;
    }
    one = find_named(all, name);
    json_decref(all);
    return one;
}

/* ------------------------------------------------------------------------
 * Workers, before the start.
 * --------------------------------------------------------------------- */

int
sl_jm_register_worker(struct sl_jm *jm,
                      const json_t *desc,
                      unsigned (*partitions)(const json_t *params),
                      struct sl_err *err)
{
    struct sl__jm_worker *w = NULL;
    int rc = 0;

    if (jm->started) {
        return sl_err_set(err,
                          SL_EBADSTATE,
                          NULL,
                          "workers must be registered before the start");
    }
    rc = sl__jm_worker_parse(desc, &w, err);
    if (rc != 0) {
        return rc;
    }
    w->completion_partitions = partitions;
    rc = sl__jm_defs_add_worker(jm->defs, w);
    if (rc != 0) {
        return sl_err_set(err,
                          rc,
                          "name",
                          "worker '%s' is registered twice",
                          json_string_value(json_object_get(desc, "name")));
    }
    return 0;
}

int
sl_jm_register_workers_file(struct sl_jm *jm,
                            const char *path,
                            struct sl_err *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    json_t *list = NULL;
    size_t i = 0;
    json_t *w = NULL;
    int failed = 0;

    if (root == NULL) {
        if (strstr(jerr.text, "unable to open") != NULL) {
            return 0;
        }
        return sl_err_set(err,
                          SL_EBADJSON,
                          path,
                          "%s: line %d, column %d: %s",
                          path,
                          jerr.line,
                          jerr.column,
                          jerr.text);
    }
    list = json_object_get(root, "workers");
    if (!json_is_array(list)) {
        json_decref(root);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "workers",
                          "%s: expected {\"workers\": [...]}",
                          path);
    }
    json_array_foreach(list, i, w)
    {
        struct sl_err e;

        sl_err_clear(&e);
        if (sl_jm_register_worker(jm, w, NULL, &e) != 0) {
            SL_WARN("%s: worker %zu ('%s'): %s (field %s)",
                    path,
                    i,
                    json_string_value(json_object_get(w, "name")),
                    e.message,
                    e.field);
            failed++;
        }
    }
    json_decref(root);
    return failed;
}

void
sl_jm_set_def_check(struct sl_jm *jm,
                    int (*check)(void *arg,
                                 const char *job,
                                 const char *worker,
                                 const json_t *desc,
                                 const json_t *params,
                                 struct sl_err *err),
                    void *arg)
{
    sl__jm_defs_set_check(jm->defs, check, arg);
}
