/*
 * The definitions registry of the jobmanager (docs/jobmanager-definitions.md):
 * the data object types, buckets, workflows and jobs, stored, listed and
 * resolved into bucket stores here.  The rest of the registry: worker
 * descriptions (defs_workers.c), the validation of definitions
 * (defs_check.c), task parameters and declarations (params.c), the
 * predefined files (defs_files.c) and the public definitions API that
 * persists them (defs_api.c).
 *
 * Storage: one jansson object per kind maps name -> stored definition.  A
 * stored definition is never changed in place; an update replaces it, and
 * getters hand out deep copies, so a reader never sees a half-made change.
 * Workers live in an array sorted by name and are never removed, which is
 * why sl__jm_defs_worker may return a borrowed pointer.
 *
 * Threading: one rwlock guards everything.  Validation runs under the write
 * lock of the put or delete that needs it and therefore uses only the
 * unlocked helpers (sl__jm_find_worker, sl__jm_bucket_resolve_locked ...),
 * never the public getters, which take the lock themselves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "jobmanager/defs_int.h"

const char *const sl__jm_kind_names[NKINDS] = {"bucket", "workflow", "job"};
static const char *const dot_names[] = {"recordBulks"};

/*
 * Bounded formatting of field paths and messages: truncation is fine for
 * these (they are capped at their buffer), so the result is not checked.
 * A function of our own, because gcc's -Wformat-truncation would flag the
 * intended truncation of every direct snprintf at -O2.
 */
void
sl__jm_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * Small helpers.
 * --------------------------------------------------------------------- */

static void
wrlock(struct sl__jm_defs *d)
{
    int rc = pthread_rwlock_wrlock(&d->lock);

    if (rc != 0) {
        sl_panic("defs: wrlock failed: %d", rc);
    }
}

static void
rdlock(const struct sl__jm_defs *d)
{
    int rc = pthread_rwlock_rdlock((pthread_rwlock_t *)&d->lock);

    if (rc != 0) {
        sl_panic("defs: rdlock failed: %d", rc);
    }
}

static void
unlock(const struct sl__jm_defs *d)
{
    int rc = pthread_rwlock_unlock((pthread_rwlock_t *)&d->lock);

    if (rc != 0) {
        sl_panic("defs: unlock failed: %d", rc);
    }
}

int
sl__jm_dot_known(const char *type)
{
    size_t i = 0;

    for (i = 0; type != NULL && i < NELEMS(dot_names); i++) {
        if (strcmp(type, dot_names[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Registry basics.
 * --------------------------------------------------------------------- */

json_t *
sl__jm_defs_dots_json(void)
{
    return json_pack("[{s:s, s:b, s:{s:s, s:s}, s:{s:s, s:s}}]",
                     "name",
                     "recordBulks",
                     "readOnly",
                     1,
                     "persistent",
                     "store",
                     "${store}",
                     "object",
                     "${_bucketName}/${_uuid}",
                     "transient",
                     "store",
                     "${tempStore}",
                     "object",
                     "${_bucketName}/${_uuid}");
}

struct sl__jm_defs *
sl__jm_defs_new(void)
{
    struct sl__jm_defs *d = sl_calloc(1, sizeof(*d));
    size_t k = 0;

    if (pthread_rwlock_init(&d->lock, NULL) != 0) {
        sl_panic("defs: rwlock init failed");
    }
    for (k = 0; k < NKINDS; k++) {
        d->defs[k] = json_object();
    }
    d->dots = sl__jm_defs_dots_json();
    return d;
}

void
sl__jm_defs_free(struct sl__jm_defs *d)
{
    size_t i = 0;

    if (d == NULL) {
        return;
    }
    for (i = 0; i < d->nworkers; i++) {
        sl__jm_worker_free(d->workers[i]);
    }
    sl_free(d->workers);
    for (i = 0; i < NKINDS; i++) {
        json_decref(d->defs[i]);
    }
    json_decref(d->dots);
    (void)pthread_rwlock_destroy(&d->lock);
    sl_free(d);
}

const struct sl__jm_worker *
sl__jm_find_worker(const struct sl__jm_defs *d, const char *name)
{
    size_t i = 0;

    for (i = 0; name != NULL && i < d->nworkers; i++) {
        if (strcmp(d->workers[i]->name, name) == 0) {
            return d->workers[i];
        }
    }
    return NULL;
}

int
sl__jm_defs_add_worker(struct sl__jm_defs *d, struct sl__jm_worker *w)
{
    int rc = 0;
    size_t pos = 0;

    wrlock(d);
    if (sl__jm_find_worker(d, w->name) != NULL) {
        rc = SL_EEXIST;
        goto out;
    }
    while (pos < d->nworkers && strcmp(d->workers[pos]->name, w->name) < 0) {
        pos++;
    }
    d->workers =
        sl_realloc(d->workers, (d->nworkers + 1) * sizeof(*d->workers));
    memmove(&d->workers[pos + 1],
            &d->workers[pos],
            (d->nworkers - pos) * sizeof(*d->workers));
    d->workers[pos] = w;
    d->nworkers++;
    w = NULL;

out:
    unlock(d);
    sl__jm_worker_free(w);
    return rc;
}

void
sl__jm_defs_set_check(struct sl__jm_defs *d,
                      sl__jm_def_check_fn check,
                      void *arg)
{
    wrlock(d);
    d->check = check;
    d->check_arg = arg;
    unlock(d);
}

const struct sl__jm_worker *
sl__jm_defs_worker(const struct sl__jm_defs *d, const char *name)
{
    const struct sl__jm_worker *w = NULL;

    rdlock(d);
    w = sl__jm_find_worker(d, name);
    unlock(d);
    return w;
}

json_t *
sl__jm_defs_workers_json(const struct sl__jm_defs *d)
{
    json_t *arr = json_array();
    size_t i = 0;

    rdlock(d);
    for (i = 0; i < d->nworkers; i++) {
        (void)json_array_append_new(arr, json_deep_copy(d->workers[i]->json));
    }
    unlock(d);
    return arr;
}

const json_t *
sl__jm_find_dot(const struct sl__jm_defs *d, const char *type)
{
    size_t i = 0;
    const json_t *v = NULL;

    json_array_foreach(d->dots, i, v)
    {
        const char *n = sl__jm_str(v, "name");

        if (type != NULL && n != NULL && strcmp(n, type) == 0) {
            return v;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Workflow walking.  Action 0 is the start action, action i > 0 is
 * actions[i - 1].
 * --------------------------------------------------------------------- */

void
sl__jm_action_names(size_t i, char *path, size_t pcap, char *label, size_t lcap)
{
    if (i == 0) {
        sl__jm_fmt(path, pcap, "startAction");
        sl__jm_fmt(label, lcap, "start action");
    } else {
        sl__jm_fmt(path, pcap, "actions[%zu]", i - 1);
        sl__jm_fmt(label, lcap, "action %zu", i);
    }
}

/* 1 if any action of @p wf reads or writes bucket @p name. */
int
sl__jm_wf_uses_bucket(const json_t *wf, const char *name)
{
    size_t i = 0;
    size_t n = sl__jm_wf_nactions(wf);
    static const char *const dirs[] = {"input", "output"};

    for (i = 0; i < n; i++) {
        const json_t *act = sl__jm_wf_action(wf, i);
        size_t k = 0;

        for (k = 0; k < NELEMS(dirs); k++) {
            const char *key = NULL;
            const json_t *v = NULL;

            json_object_foreach((json_t *)json_object_get(act, dirs[k]), key, v)
            {
                const char *b = json_string_value(v);

                if (b != NULL && strcmp(b, name) == 0) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/*
 * The DOT of a transient bucket is the type of the slots it is connected
 * to; validation made sure they agree, so the first one found is it.
 */
const char *
sl__jm_transient_type(const struct sl__jm_defs *d,
                      const json_t *wf,
                      const char *b)
{
    size_t i = 0;
    size_t n = sl__jm_wf_nactions(wf);

    for (i = 0; i < n; i++) {
        const json_t *act = sl__jm_wf_action(wf, i);
        const struct sl__jm_worker *w =
            sl__jm_find_worker(d, sl__jm_str(act, "worker"));
        const char *key = NULL;
        const json_t *v = NULL;
        const struct sl__jm_slot *s = NULL;

        if (w == NULL) {
            continue;
        }
        json_object_foreach((json_t *)json_object_get(act, "input"), key, v)
        {
            s = sl__jm_find_slot(w->input, w->ninput, key);
            if (s != NULL && json_is_string(v) &&
                strcmp(json_string_value(v), b) == 0) {
                return s->type;
            }
        }
        json_object_foreach((json_t *)json_object_get(act, "output"), key, v)
        {
            s = sl__jm_find_slot(w->output, w->noutput, key);
            if (s != NULL && json_is_string(v) &&
                strcmp(json_string_value(v), b) == 0) {
                return s->type;
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Bucket stores (task parameters: params.c).
 * --------------------------------------------------------------------- */

static int
append(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + n >= cap) {
        return -1;
    }
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

/*
 * Expand the "${var}" references of a DOT store template.  Each variable is
 * looked up in @p src in order (first found wins); "_bucketName" is the
 * bucket.  A missing variable is reported at field "parameters.<var>".
 */
static int
expand_store(const char *tmpl,
             const json_t *const *src,
             size_t nsrc,
             const char *bucket,
             char *out,
             size_t cap,
             struct sl_err *err)
{
    const char *p = tmpl;
    size_t len = 0;
    char name[SL_NAME_MAX + 1];
    char field[SL_NAME_MAX + 16]; /* sl_err_set cuts it to the field size */

    out[0] = '\0';
    while (*p != '\0') {
        const char *end = strchr(p, '}');
        const char *val = NULL;
        const json_t *v = NULL;
        size_t k = 0;
        size_t n = 0;

        if (p[0] != '$' || p[1] != '{' || end == NULL) {
            if (append(out, cap, &len, p, 1) != 0) {
                goto toolong;
            }
            p++;
            continue;
        }
        n = (size_t)(end - (p + 2));
        sl__jm_fmt(name, sizeof(name), "%.*s", (int)n, p + 2);
        sl__jm_fmt(field, sizeof(field), "parameters.%s", name);
        for (k = 0; k < nsrc && v == NULL; k++) {
            v = json_object_get(src[k], name);
        }
        val = strcmp(name, "_bucketName") == 0 ? bucket : json_string_value(v);
        if (val == NULL) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              v == NULL ? "bucket '%s': parameter '%s' is "
                                          "not set"
                                        : "bucket '%s': parameter '%s' must "
                                          "be a string",
                              bucket,
                              name);
        }
        if (append(out, cap, &len, val, strlen(val)) != 0) {
            goto toolong;
        }
        p = end + 1;
    }
    return 0;

toolong:
    return sl_err_set(
        err, SL_EINVALDEF, NULL, "bucket '%s': store name is too long", bucket);
}

/*
 * sl__jm_bucket_resolve without the lock, for validation under the write
 * lock.  The DOT comes from the bucket definition or, for a transient
 * bucket, from the slots it is connected to in @p wf.
 */
int
sl__jm_bucket_resolve_locked(const struct sl__jm_defs *d,
                             const json_t *job,
                             const json_t *wf,
                             const char *bucket,
                             struct sl__jm_bucket_info *out,
                             struct sl_err *err)
{
    const json_t *bdef = json_object_get(d->defs[SL__JM_BUCKET], bucket);
    const char *type = NULL;
    const json_t *dot = NULL;
    const char *tmpl = NULL;
    const json_t *src[3] = {NULL, NULL, NULL};
    size_t nsrc = 0;
    int rc = 0;
    struct sl_err nerr;

    memset(out, 0, sizeof(*out));
    type = bdef != NULL ? sl__jm_str(bdef, "type")
                        : sl__jm_transient_type(d, wf, bucket);
    dot = sl__jm_find_dot(d, type);
    if (dot == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          NULL,
                          "bucket '%s' is not used by workflow '%s'",
                          bucket,
                          sl__jm_str(wf, "name"));
    }
    /* Priority: bucket parameters > workflow parameters > job parameters. */
    if (bdef != NULL) {
        src[nsrc++] = json_object_get(bdef, "parameters");
    }
    src[nsrc++] = json_object_get(wf, "parameters");
    src[nsrc++] = json_object_get(job, "parameters");
    tmpl = sl__jm_str(json_object_get(dot, bdef ? "persistent" : "transient"),
                      "store");
    if (SL_NEVER(tmpl == NULL)) {
        return sl_err_set(err, SL_EINTERNAL, NULL, "DOT without a store");
    }
    rc = expand_store(
        tmpl, src, nsrc, bucket, out->store, sizeof(out->store), err);
    if (rc != 0) {
        return rc;
    }
    if (sl_name_check_store(out->store, &nerr) != 0) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          bdef != NULL ? "parameters.store"
                                       : "parameters.tempStore",
                          "bucket '%s': store name '%s' is invalid: %s",
                          bucket,
                          out->store,
                          nerr.message);
    }
    sl__jm_fmt(out->name, sizeof(out->name), "%s", bucket);
    out->persistent = bdef != NULL;
    return 0;
}

int
sl__jm_bucket_resolve(const struct sl__jm_defs *d,
                      const json_t *job,
                      const json_t *workflow,
                      const char *bucket,
                      struct sl__jm_bucket_info *out,
                      struct sl_err *err)
{
    int rc = 0;

    rdlock(d);
    rc = sl__jm_bucket_resolve_locked(d, job, workflow, bucket, out, err);
    unlock(d);
    return rc;
}

/* ------------------------------------------------------------------------
 * Registry operations.
 * --------------------------------------------------------------------- */

static int
check_def_name(const json_t *def, enum sl__jm_kind kind, struct sl_err *err)
{
    const char *name = sl__jm_str(def, "name");
    struct sl_err nerr;

    if (!json_is_object(def)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          NULL,
                          "%s definition must be a JSON object",
                          sl__jm_kind_names[kind]);
    }
    if (name == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "name",
                          "%s definition has no name",
                          sl__jm_kind_names[kind]);
    }
    if (sl_name_check_entity(name, &nerr) != 0) {
        return sl_err_set(err,
                          SL_EBADNAME,
                          "name",
                          "%s '%s': %s",
                          sl__jm_kind_names[kind],
                          name,
                          nerr.message);
    }
    return 0;
}

/* The copy that is stored: "readOnly" set, "timestamp" for user ones. */
static json_t *
normalize(const json_t *def, int readonly)
{
    json_t *copy = json_deep_copy(def);
    char ts[32];

    (void)json_object_set_new(copy, "readOnly", json_boolean(readonly));
    if (readonly) {
        (void)json_object_del(copy, "timestamp");
    } else {
        sl_time_format(sl_time_ms(), ts, sizeof(ts));
        (void)json_object_set_new(copy, "timestamp", json_string(ts));
    }
    return copy;
}

int
sl__jm_defs_put(struct sl__jm_defs *d,
                enum sl__jm_kind kind,
                const json_t *def,
                int flags,
                json_t **stored,
                struct sl_err *err)
{
    int readonly = (flags & SL__JM_PUT_READONLY) != 0;
    int rc = 0;
    json_t *copy = NULL;
    json_t *old = NULL;
    const char *name = NULL;

    if (stored != NULL) {
        *stored = NULL;
    }
    if ((unsigned)kind >= NKINDS) {
        return sl_err_set(err, SL_EINVAL, NULL, "unknown definition kind");
    }
    rc = check_def_name(def, kind, err);
    if (rc != 0) {
        return rc;
    }
    name = sl__jm_str(def, "name");
    copy = normalize(def, readonly);
    wrlock(d);
    old = json_object_get(d->defs[kind], name);
    if (old != NULL && json_is_true(json_object_get(old, "readOnly")) &&
        !readonly) {
        old = NULL;
        rc = sl_err_set(err,
                        SL_EREADONLY,
                        "name",
                        "%s '%s' is predefined and cannot be changed",
                        sl__jm_kind_names[kind],
                        name);
        goto out;
    }
    old = json_incref(old);
    rc = sl__jm_defs_validate(d, kind, copy, (unsigned)flags, err);
    if (rc != 0) {
        goto out;
    }
    (void)json_object_set(d->defs[kind], name, copy);
    rc = sl__jm_defs_check_dependents(d, kind, name, SL_EINVALDEF, err);
    if (rc != 0 && old != NULL) {
        (void)json_object_set(d->defs[kind], name, old);
    } else if (rc != 0) {
        (void)json_object_del(d->defs[kind], name);
    }

out:
    if (rc == 0 && stored != NULL) {
        *stored = json_deep_copy(copy);
    }
    json_decref(old);
    json_decref(copy);
    unlock(d);
    return rc;
}

json_t *
sl__jm_defs_get(const struct sl__jm_defs *d,
                enum sl__jm_kind kind,
                const char *name)
{
    json_t *out = NULL;
    const json_t *v = NULL;

    if ((unsigned)kind >= NKINDS || name == NULL) {
        return NULL;
    }
    rdlock(d);
    v = json_object_get(d->defs[kind], name);
    if (v != NULL) {
        out = json_deep_copy(v);
    }
    unlock(d);
    return out;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
sl__jm_defs_list(const struct sl__jm_defs *d, enum sl__jm_kind kind)
{
    json_t *arr = NULL;
    const char **keys = NULL;
    const char *key = NULL;
    const json_t *v = NULL;
    size_t n = 0;
    size_t i = 0;

    if ((unsigned)kind >= NKINDS) {
        return NULL;
    }
    arr = json_array();
    rdlock(d);
    keys = sl_calloc(json_object_size(d->defs[kind]) + 1, sizeof(*keys));
    json_object_foreach(d->defs[kind], key, v)
    {
        keys[n++] = key;
    }
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (i = 0; i < n; i++) {
        (void)json_array_append_new(
            arr, json_deep_copy(json_object_get(d->defs[kind], keys[i])));
    }
    unlock(d);
    sl_free(keys);
    return arr;
}

/* The first job that uses workflow @p name, or a workflow using bucket
 * @p name; NULL if none. */
static const char *
job_using(const struct sl__jm_defs *d, enum sl__jm_kind kind, const char *name)
{
    const char *key = NULL;
    const json_t *v = NULL;

    json_object_foreach(d->defs[SL__JM_JOB], key, v)
    {
        const char *wname = sl__jm_str(v, "workflow");
        const json_t *wf = json_object_get(d->defs[SL__JM_WORKFLOW], wname);

        if (kind == SL__JM_WORKFLOW && wname != NULL &&
            strcmp(wname, name) == 0) {
            return key;
        }
        if (kind == SL__JM_BUCKET && wf != NULL &&
            sl__jm_wf_uses_bucket(wf, name)) {
            return key;
        }
    }
    return NULL;
}

/* Delete definition @name, or with @dry only say whether it could be. */
static int
defs_delete(struct sl__jm_defs *d,
            enum sl__jm_kind kind,
            const char *name,
            int dry,
            struct sl_err *err)
{
    int rc = 0;
    json_t *old = NULL;
    const char *job = NULL;

    if ((unsigned)kind >= NKINDS || name == NULL) {
        return sl_err_set(err, SL_EINVAL, NULL, "unknown definition kind");
    }
    wrlock(d);
    old = json_object_get(d->defs[kind], name);
    if (old == NULL) {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        "name",
                        "no %s named '%s'",
                        sl__jm_kind_names[kind],
                        name);
        goto out;
    }
    if (json_is_true(json_object_get(old, "readOnly"))) {
        old = NULL;
        rc = sl_err_set(err,
                        SL_EREADONLY,
                        "name",
                        "%s '%s' is predefined and cannot be deleted",
                        sl__jm_kind_names[kind],
                        name);
        goto out;
    }
    job = kind == SL__JM_JOB ? NULL : job_using(d, kind, name);
    if (job != NULL) {
        old = NULL;
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        "name",
                        "%s '%s' is used by job '%s'",
                        sl__jm_kind_names[kind],
                        name,
                        job);
        goto out;
    }
    old = json_incref(old);
    (void)json_object_del(d->defs[kind], name);
    rc = sl__jm_defs_check_dependents(d, kind, name, SL_ECONFLICT, err);
    if (rc != 0 || dry) {
        (void)json_object_set(d->defs[kind], name, old);
    }

out:
    json_decref(old);
    unlock(d);
    return rc;
}

int
sl__jm_defs_delete(struct sl__jm_defs *d,
                   enum sl__jm_kind kind,
                   const char *name,
                   struct sl_err *err)
{
    return defs_delete(d, kind, name, 0, err);
}

int
sl__jm_defs_deletable(struct sl__jm_defs *d,
                      enum sl__jm_kind kind,
                      const char *name,
                      struct sl_err *err)
{
    return defs_delete(d, kind, name, 1, err);
}
