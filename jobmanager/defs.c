/*
 * The definitions registry of the jobmanager (docs/jobmanager-definitions.md):
 * worker descriptions, the data object types, buckets, workflows and jobs,
 * their validation and bucket resolution (task parameters and declarations:
 * params.c; the predefined files: defs_files.c).
 *
 * Storage: one jansson object per kind maps name -> stored definition.  A
 * stored definition is never changed in place; an update replaces it, and
 * getters hand out deep copies, so a reader never sees a half-made change.
 * Workers live in an array sorted by name and are never removed, which is
 * why sl__jm_defs_worker may return a borrowed pointer.
 *
 * Threading: one rwlock guards everything.  Validation runs under the write
 * lock of the put or delete that needs it and therefore uses only the
 * unlocked helpers (find_worker, bucket_resolve_locked ...), never the
 * public getters, which take the lock themselves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "jobmanager/jobmanager_int.h"

/*
 * Bounded formatting of field paths and messages: truncation is fine for
 * these (they are capped at their buffer), so the result is not checked.
 * A function of our own, because gcc's -Wformat-truncation would flag the
 * intended truncation of every direct snprintf at -O2.
 */
static void fmt_text(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fmt_text(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

#define NKINDS    3
#define FIELD_MAX 128 /* sizeof(struct sl_err.field) */

struct sl__jm_defs {
    pthread_rwlock_t lock;          /* guards every field below */
    json_t *defs[NKINDS];           /* per kind: name -> stored definition */
    json_t *dots;                   /* array of the data object types */
    struct sl__jm_worker **workers; /* sorted by name, never removed */
    size_t nworkers;
    sl__jm_def_check_fn check; /* the workers' definition check or NULL */
    void *check_arg;
};

/* One action of a workflow, as validation sees it. */
struct actx {
    const char *wf;                /* workflow name */
    const json_t *act;             /* the action object */
    const struct sl__jm_worker *w; /* its worker (NULL until checked) */
    char path[32];                 /* "startAction" or "actions[3]" */
    char label[32];                /* "start action" or "action 4" */
    int is_start;                  /* 1 for the start action */
};

static const char *const kind_names[NKINDS] = {"bucket", "workflow", "job"};
static const char *const worker_modes[] = {
    "bulkSource", "requestsCompletion", "autoCommit"};
static const char *const slot_modes[] = {"optional", "multiple"};
static const char *const dot_names[] = {"recordBulks"};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

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

static const char *
str_member(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int
is_known_dot(const char *type)
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
 * Worker descriptions.
 * --------------------------------------------------------------------- */

/*
 * Parse a list of mode names into flags: names[k] gives bit k.  Used for
 * worker modes and output slot modes, whose flag values follow the order of
 * the name tables.
 */
static int
parse_flags(const json_t *arr,
            const char *field,
            const char *wname,
            const char *const *names,
            size_t nnames,
            unsigned *out,
            struct sl_err *err)
{
    size_t i = 0;
    size_t k = 0;
    const json_t *v = NULL;
    char f[FIELD_MAX];

    *out = 0;
    if (arr == NULL) {
        return 0;
    }
    if (!json_is_array(arr)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          field,
                          "worker '%s': %s must be an array of strings",
                          wname,
                          field);
    }
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);

        fmt_text(f, sizeof(f), "%s[%zu]", field, i);
        for (k = 0; s != NULL && k < nnames; k++) {
            if (strcmp(s, names[k]) == 0) {
                break;
            }
        }
        if (s == NULL || k == nnames) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              f,
                              "worker '%s': unknown mode '%s' in %s",
                              wname,
                              s != NULL ? s : "(not a string)",
                              field);
        }
        *out |= 1u << k;
    }
    return 0;
}

/* One slot {"name","type","modes","group"}; modes and group on outputs only. */
static int
parse_slot(const json_t *j,
           const char *path,
           const char *wname,
           int output,
           struct sl__jm_slot *s,
           struct sl_err *err)
{
    int rc = 0;
    const char *name = str_member(j, "name");
    const char *type = str_member(j, "type");
    const json_t *group = json_object_get(j, "group");
    char f[FIELD_MAX];
    struct sl_err nerr;

    fmt_text(f, sizeof(f), "%s.name", path);
    if (!json_is_object(j) || name == NULL) {
        return sl_err_set(
            err, SL_EINVALDEF, f, "worker '%s': slot has no name", wname);
    }
    rc = sl_name_check_entity(name, &nerr);
    if (rc != 0) {
        return sl_err_set(
            err, SL_EINVALDEF, f, "worker '%s': slot %s", wname, nerr.message);
    }
    s->name = sl_strdup(name);
    fmt_text(f, sizeof(f), "%s.type", path);
    if (!is_known_dot(type)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': slot '%s' has unknown type '%s'",
                          wname,
                          name,
                          type != NULL ? type : "(none)");
    }
    s->type = sl_strdup(type);
    if (!output && (json_object_get(j, "modes") != NULL || group != NULL)) {
        fmt_text(
            f, sizeof(f), "%s.%s", path, group != NULL ? "group" : "modes");
        return sl_err_set(
            err,
            SL_EINVALDEF,
            f,
            "worker '%s': input slot '%s' takes no modes or group",
            wname,
            name);
    }
    fmt_text(f, sizeof(f), "%s.modes", path);
    rc = parse_flags(json_object_get(j, "modes"),
                     f,
                     wname,
                     slot_modes,
                     NELEMS(slot_modes),
                     &s->modes,
                     err);
    if (rc != 0) {
        return rc;
    }
    if (group != NULL) {
        if (!json_is_string(group) || json_string_length(group) == 0) {
            fmt_text(f, sizeof(f), "%s.group", path);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              f,
                              "worker '%s': group of slot '%s' must be a "
                              "non-empty string",
                              wname,
                              name);
        }
        s->group = sl_strdup(json_string_value(group));
    }
    return 0;
}

/* The "input" or "output" array; slot names are unique within it. */
static int
parse_slots(const json_t *arr,
            const char *field,
            const char *wname,
            int output,
            struct sl__jm_slot **slots,
            size_t *nslots,
            struct sl_err *err)
{
    int rc = 0;
    size_t i = 0;
    size_t k = 0;
    const json_t *v = NULL;
    char path[FIELD_MAX];

    if (arr == NULL) {
        return 0;
    }
    if (!json_is_array(arr)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          field,
                          "worker '%s': %s must be an array",
                          wname,
                          field);
    }
    /* Zeroed and counted up front so sl__jm_worker_free cleans up halves. */
    *slots = sl_calloc(json_array_size(arr) + 1, sizeof(**slots));
    *nslots = json_array_size(arr);
    json_array_foreach(arr, i, v)
    {
        fmt_text(path, sizeof(path), "%s[%zu]", field, i);
        rc = parse_slot(v, path, wname, output, &(*slots)[i], err);
        if (rc != 0) {
            return rc;
        }
        for (k = 0; k < i; k++) {
            if (strcmp((*slots)[k].name, (*slots)[i].name) == 0) {
                fmt_text(path, sizeof(path), "%s[%zu].name", field, i);
                return sl_err_set(err,
                                  SL_EINVALDEF,
                                  path,
                                  "worker '%s': duplicate %s slot '%s'",
                                  wname,
                                  field,
                                  (*slots)[i].name);
            }
        }
    }
    return 0;
}

static int
parse_generator(const json_t *desc, struct sl__jm_worker *w, struct sl_err *err)
{
    const json_t *g = json_object_get(desc, "taskGenerator");
    const char *s = json_string_value(g);

    w->generator = SL__JM_GEN_DEFAULT;
    if (g == NULL || (s != NULL && strcmp(s, "default") == 0)) {
        return 0;
    }
    if (s != NULL && strcmp(s, "runOnceTrigger") == 0) {
        w->generator = SL__JM_GEN_RUN_ONCE_TRIGGER;
        return 0;
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      "taskGenerator",
                      "worker '%s': unknown task generator '%s' (allowed: "
                      "default, runOnceTrigger)",
                      w->name,
                      s != NULL ? s : "(not a string)");
}

int
sl__jm_worker_parse(const json_t *desc,
                    struct sl__jm_worker **out,
                    struct sl_err *err)
{
    int rc = 0;
    struct sl__jm_worker *w = NULL;
    const char *name = str_member(desc, "name");
    struct sl_err nerr;

    *out = NULL;
    if (!json_is_object(desc)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          NULL,
                          "worker description must be a JSON object");
    }
    if (name == NULL) {
        return sl_err_set(
            err, SL_EINVALDEF, "name", "worker description has no name");
    }
    rc = sl_name_check_entity(name, &nerr);
    if (rc != 0) {
        return sl_err_set(
            err, SL_EINVALDEF, "name", "worker '%s': %s", name, nerr.message);
    }
    w = sl_calloc(1, sizeof(*w));
    w->name = sl_strdup(name);
    rc = parse_flags(json_object_get(desc, "modes"),
                     "modes",
                     name,
                     worker_modes,
                     NELEMS(worker_modes),
                     &w->modes,
                     err);
    if (rc != 0) {
        goto fail;
    }
    rc = parse_generator(desc, w, err);
    if (rc != 0) {
        goto fail;
    }
    rc = sl__jm_params_parse(json_object_get(desc, "parameters"),
                             "parameters",
                             name,
                             &w->params,
                             &w->nparams,
                             err);
    if (rc != 0) {
        goto fail;
    }
    rc = parse_slots(json_object_get(desc, "input"),
                     "input",
                     name,
                     0,
                     &w->input,
                     &w->ninput,
                     err);
    if (rc != 0) {
        goto fail;
    }
    rc = parse_slots(json_object_get(desc, "output"),
                     "output",
                     name,
                     1,
                     &w->output,
                     &w->noutput,
                     err);
    if (rc != 0) {
        goto fail;
    }
    w->json = json_deep_copy(desc);
    (void)json_object_set_new(w->json, "readOnly", json_true());
    (void)json_object_set_new(
        w->json,
        "taskGenerator",
        json_string(w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER
                        ? "runOnceTrigger"
                        : "default"));
    if (json_object_get(w->json, "modes") == NULL) {
        (void)json_object_set_new(w->json, "modes", json_array());
    }
    *out = w;
    return 0;

fail:
    sl__jm_worker_free(w);
    return rc;
}

static void
slots_free(struct sl__jm_slot *slots, size_t n)
{
    size_t i = 0;

    for (i = 0; slots != NULL && i < n; i++) {
        sl_free(slots[i].name);
        sl_free(slots[i].type);
        sl_free(slots[i].group);
    }
    sl_free(slots);
}

void
sl__jm_worker_free(struct sl__jm_worker *w)
{
    if (w == NULL) {
        return;
    }
    sl__jm_params_free(w->params, w->nparams);
    slots_free(w->input, w->ninput);
    slots_free(w->output, w->noutput);
    json_decref(w->json);
    sl_free(w->name);
    sl_free(w);
}

static const struct sl__jm_slot *
find_slot(const struct sl__jm_slot *slots, size_t n, const char *name)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (strcmp(slots[i].name, name) == 0) {
            return &slots[i];
        }
    }
    return NULL;
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

static const struct sl__jm_worker *
find_worker(const struct sl__jm_defs *d, const char *name)
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
    if (find_worker(d, w->name) != NULL) {
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
    w = find_worker(d, name);
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

static const json_t *
find_dot(const struct sl__jm_defs *d, const char *type)
{
    size_t i = 0;
    const json_t *v = NULL;

    json_array_foreach(d->dots, i, v)
    {
        const char *n = str_member(v, "name");

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

static size_t
action_count(const json_t *wf)
{
    return 1 + json_array_size(json_object_get(wf, "actions"));
}

static const json_t *
action_at(const json_t *wf, size_t i)
{
    if (i == 0) {
        return json_object_get(wf, "startAction");
    }
    return json_array_get(json_object_get(wf, "actions"), i - 1);
}

static void
action_names(size_t i, char *path, size_t pcap, char *label, size_t lcap)
{
    if (i == 0) {
        fmt_text(path, pcap, "startAction");
        fmt_text(label, lcap, "start action");
    } else {
        fmt_text(path, pcap, "actions[%zu]", i - 1);
        fmt_text(label, lcap, "action %zu", i);
    }
}

/* 1 if any action of @p wf reads or writes bucket @p name. */
static int
uses_bucket(const json_t *wf, const char *name)
{
    size_t i = 0;
    size_t n = action_count(wf);
    static const char *const dirs[] = {"input", "output"};

    for (i = 0; i < n; i++) {
        const json_t *act = action_at(wf, i);
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
static const char *
transient_type(const struct sl__jm_defs *d, const json_t *wf, const char *b)
{
    size_t i = 0;
    size_t n = action_count(wf);

    for (i = 0; i < n; i++) {
        const json_t *act = action_at(wf, i);
        const struct sl__jm_worker *w =
            find_worker(d, str_member(act, "worker"));
        const char *key = NULL;
        const json_t *v = NULL;
        const struct sl__jm_slot *s = NULL;

        if (w == NULL) {
            continue;
        }
        json_object_foreach((json_t *)json_object_get(act, "input"), key, v)
        {
            s = find_slot(w->input, w->ninput, key);
            if (s != NULL && json_is_string(v) &&
                strcmp(json_string_value(v), b) == 0) {
                return s->type;
            }
        }
        json_object_foreach((json_t *)json_object_get(act, "output"), key, v)
        {
            s = find_slot(w->output, w->noutput, key);
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
        fmt_text(name, sizeof(name), "%.*s", (int)n, p + 2);
        fmt_text(field, sizeof(field), "parameters.%s", name);
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
static int
bucket_resolve_locked(const struct sl__jm_defs *d,
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
    type =
        bdef != NULL ? str_member(bdef, "type") : transient_type(d, wf, bucket);
    dot = find_dot(d, type);
    if (dot == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          NULL,
                          "bucket '%s' is not used by workflow '%s'",
                          bucket,
                          str_member(wf, "name"));
    }
    /* Priority: bucket parameters > workflow parameters > job parameters. */
    if (bdef != NULL) {
        src[nsrc++] = json_object_get(bdef, "parameters");
    }
    src[nsrc++] = json_object_get(wf, "parameters");
    src[nsrc++] = json_object_get(job, "parameters");
    tmpl = str_member(json_object_get(dot, bdef ? "persistent" : "transient"),
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
    fmt_text(out->name, sizeof(out->name), "%s", bucket);
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
    rc = bucket_resolve_locked(d, job, workflow, bucket, out, err);
    unlock(d);
    return rc;
}

/* ------------------------------------------------------------------------
 * Validation.
 * --------------------------------------------------------------------- */

/* A bucket: a known DOT and string-valued parameters. */
static int
validate_bucket(const struct sl__jm_defs *d,
                const json_t *b,
                struct sl_err *err)
{
    const char *name = str_member(b, "name");
    const char *type = str_member(b, "type");
    const json_t *params = json_object_get(b, "parameters");
    const char *key = NULL;
    const json_t *v = NULL;
    char field[FIELD_MAX];

    if (type == NULL) {
        return sl_err_set(
            err, SL_EINVALDEF, "type", "bucket '%s': type is required", name);
    }
    if (find_dot(d, type) == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "type",
                          "bucket '%s': unknown data object type '%s'",
                          name,
                          type);
    }
    if (params != NULL && !json_is_object(params)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters",
                          "bucket '%s': parameters must be an object",
                          name);
    }
    json_object_foreach((json_t *)params, key, v)
    {
        if (!json_is_string(v)) {
            fmt_text(field, sizeof(field), "parameters.%s", key);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "bucket '%s': parameter '%s' must be a string",
                              name,
                              key);
        }
    }
    return 0;
}

static void
actx_init(struct actx *a, const json_t *wf, size_t i)
{
    memset(a, 0, sizeof(*a));
    a->wf = str_member(wf, "name");
    a->act = action_at(wf, i);
    a->is_start = i == 0;
    action_names(i, a->path, sizeof(a->path), a->label, sizeof(a->label));
}

static int act_err(const struct actx *a,
                   struct sl_err *err,
                   const char *sub,
                   const char *key,
                   const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

/*
 * Report a workflow error in action @p a: the field is the action's path
 * plus ".<sub>" and ".<key>" when given, the message names workflow,
 * action and worker, as in "workflow 'w': action 2 (fetcher): ...".
 */
static int
act_err(const struct actx *a,
        struct sl_err *err,
        const char *sub,
        const char *key,
        const char *fmt,
        ...)
{
    char field[FIELD_MAX];
    char msg[384];
    const char *worker = str_member(a->act, "worker");
    va_list ap;

    fmt_text(field,
             sizeof(field),
             "%s%s%s%s%s",
             a->path,
             sub != NULL ? "." : "",
             sub != NULL ? sub : "",
             key != NULL ? "." : "",
             key != NULL ? key : "");
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "workflow '%s': %s (%s): %s",
                      a->wf,
                      a->label,
                      worker != NULL ? worker : "no worker",
                      msg);
}

/* "modes", "parameters", "startAction" and "actions" have the right shape. */
static int
check_wf_shape(const json_t *wf, const char *name, struct sl_err *err)
{
    const json_t *modes = json_object_get(wf, "modes");
    const json_t *params = json_object_get(wf, "parameters");
    const json_t *actions = json_object_get(wf, "actions");
    const json_t *v = NULL;
    size_t i = 0;
    size_t k = 0;
    char field[FIELD_MAX];

    if (modes != NULL &&
        (!json_is_array(modes) || json_array_size(modes) == 0)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "modes",
                          "workflow '%s': modes must be a non-empty array",
                          name);
    }
    json_array_foreach(modes, i, v)
    {
        const char *m = json_string_value(v);

        fmt_text(field, sizeof(field), "modes[%zu]", i);
        if (m == NULL ||
            (strcmp(m, "runOnce") != 0 && strcmp(m, "standard") != 0)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "workflow '%s': unknown mode '%s' (allowed: "
                              "runOnce, standard)",
                              name,
                              m != NULL ? m : "(not a string)");
        }
        for (k = 0; k < i; k++) {
            if (strcmp(m, json_string_value(json_array_get(modes, k))) == 0) {
                return sl_err_set(err,
                                  SL_EINVALDEF,
                                  field,
                                  "workflow '%s': duplicate mode '%s'",
                                  name,
                                  m);
            }
        }
    }
    if (params != NULL && !json_is_object(params)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters",
                          "workflow '%s': parameters must be an object",
                          name);
    }
    if (!json_is_object(json_object_get(wf, "startAction"))) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "startAction",
                          "workflow '%s': startAction is required and must "
                          "be an object",
                          name);
    }
    if (actions != NULL && !json_is_array(actions)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "actions",
                          "workflow '%s': actions must be an array",
                          name);
    }
    json_array_foreach(actions, i, v)
    {
        if (!json_is_object(v)) {
            fmt_text(field, sizeof(field), "actions[%zu]", i);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "workflow '%s': action %zu must be an object",
                              name,
                              i + 1);
        }
    }
    return 0;
}

/* Action parameters: an object; declared non-"any" ones are scalars. */
static int
check_action_params(const struct actx *a, struct sl_err *err)
{
    const json_t *params = json_object_get(a->act, "parameters");
    const char *key = NULL;
    const json_t *v = NULL;

    if (params != NULL && !json_is_object(params)) {
        return act_err(
            a, err, "parameters", NULL, "parameters must be an object");
    }
    json_object_foreach((json_t *)params, key, v)
    {
        const struct sl__jm_param_decl *p =
            sl__jm_param_find(a->w->params, a->w->nparams, key);

        if (p != NULL && !sl__jm_param_shape_ok(p, v)) {
            return act_err(a,
                           err,
                           "parameters",
                           key,
                           "parameter '%s' must be %s",
                           key,
                           sl__jm_param_type_text(p));
        }
    }
    return 0;
}

/* Every key of "input"/"output" is a slot, every value a bucket name. */
static int
check_connections(const struct actx *a, int output, struct sl_err *err)
{
    const char *dir = output ? "output" : "input";
    const json_t *map = json_object_get(a->act, dir);
    const char *key = NULL;
    const json_t *v = NULL;
    struct sl_err nerr;

    if (map != NULL && !json_is_object(map)) {
        return act_err(a, err, dir, NULL, "%s must be an object", dir);
    }
    json_object_foreach((json_t *)map, key, v)
    {
        const struct sl__jm_slot *s =
            output ? find_slot(a->w->output, a->w->noutput, key)
                   : find_slot(a->w->input, a->w->ninput, key);

        if (s == NULL) {
            return act_err(a,
                           err,
                           dir,
                           key,
                           "worker '%s' has no %s slot '%s'",
                           a->w->name,
                           dir,
                           key);
        }
        if (!json_is_string(v)) {
            return act_err(
                a, err, dir, key, "bucket of slot '%s' must be a string", key);
        }
        if (sl_name_check_entity(json_string_value(v), &nerr) != 0) {
            return act_err(
                a, err, dir, key, "bucket of slot '%s': %s", key, nerr.message);
        }
    }
    return 0;
}

/*
 * Every input slot is connected, except at the start action of a worker
 * that makes its own first task (bulkSource, or the runOnceTrigger
 * generator of crawlers).
 */
static int
check_inputs(const struct actx *a, struct sl_err *err)
{
    const json_t *in = json_object_get(a->act, "input");
    size_t i = 0;

    if (a->is_start && ((a->w->modes & SL__JM_WORKER_BULK_SOURCE) != 0 ||
                        a->w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER)) {
        return 0;
    }
    for (i = 0; i < a->w->ninput; i++) {
        if (json_object_get(in, a->w->input[i].name) == NULL) {
            return act_err(a,
                           err,
                           "input",
                           a->w->input[i].name,
                           "input slot '%s' is not connected",
                           a->w->input[i].name);
        }
    }
    return 0;
}

static int
group_has_required(const struct sl__jm_worker *w, const char *group)
{
    size_t i = 0;

    for (i = 0; i < w->noutput; i++) {
        const struct sl__jm_slot *s = &w->output[i];

        if (s->group != NULL && strcmp(s->group, group) == 0 &&
            (s->modes & SL__JM_SLOT_OPTIONAL) == 0) {
            return 1;
        }
    }
    return 0;
}

/* 1 if output slot @p i is the first one of its group. */
static int
first_of_group(const struct sl__jm_worker *w, size_t i)
{
    size_t k = 0;

    for (k = 0; k < i; k++) {
        if (w->output[k].group != NULL &&
            strcmp(w->output[k].group, w->output[i].group) == 0) {
            return 0;
        }
    }
    return 1;
}

/*
 * SMILA's output slot-group rules, numbered as in SMILA.md 3.3: groupless
 * required slots are connected (1), optional groupless ones are free (2),
 * a used group is complete (3), groups are not mixed (4), and when every
 * group has a required slot one group must be used (5).
 */
static int
check_output_groups(const struct actx *a, struct sl_err *err)
{
    const struct sl__jm_worker *w = a->w;
    const json_t *out = json_object_get(a->act, "output");
    const char *used = NULL;
    char groups[256] = "";
    size_t glen = 0;
    int every_required = 1;
    size_t i = 0;

    for (i = 0; i < w->noutput; i++) {
        const struct sl__jm_slot *s = &w->output[i];
        int connected = json_object_get(out, s->name) != NULL;
        int optional = (s->modes & SL__JM_SLOT_OPTIONAL) != 0;

        if (s->group == NULL && !optional && !connected) {
            return act_err(a,
                           err,
                           "output",
                           s->name,
                           "output slot '%s' is not connected",
                           s->name);
        }
        if (s->group != NULL && connected && used == NULL) {
            used = s->group;
        } else if (s->group != NULL && connected &&
                   strcmp(used, s->group) != 0) {
            return act_err(a,
                           err,
                           "output",
                           s->name,
                           "output slot '%s' of group '%s' cannot be "
                           "combined with group '%s'",
                           s->name,
                           s->group,
                           used);
        }
    }
    for (i = 0; used != NULL && i < w->noutput; i++) {
        const struct sl__jm_slot *s = &w->output[i];

        if (s->group != NULL && strcmp(s->group, used) == 0 &&
            (s->modes & SL__JM_SLOT_OPTIONAL) == 0 &&
            json_object_get(out, s->name) == NULL) {
            return act_err(a,
                           err,
                           "output",
                           s->name,
                           "output slot '%s' must be connected because "
                           "group '%s' is used",
                           s->name,
                           used);
        }
    }
    for (i = 0; used == NULL && i < w->noutput; i++) {
        const char *g = w->output[i].group;

        if (g != NULL && first_of_group(w, i)) {
            glen += (size_t)snprintf(groups + glen,
                                     sizeof(groups) - glen,
                                     "%s'%s'",
                                     glen ? ", " : "",
                                     g);
            glen = glen < sizeof(groups) ? glen : sizeof(groups) - 1;
            every_required = every_required && group_has_required(w, g);
        }
    }
    if (used == NULL && glen > 0 && every_required) {
        return act_err(a,
                       err,
                       "output",
                       NULL,
                       "one of the output slot groups %s must be connected",
                       groups);
    }
    return 0;
}

/* All per-action rules, in the order the documentation lists them. */
static int
check_action(const struct sl__jm_defs *d, struct actx *a, struct sl_err *err)
{
    int rc = 0;
    const char *worker = str_member(a->act, "worker");

    if (worker == NULL) {
        return act_err(a, err, "worker", NULL, "worker is required");
    }
    a->w = find_worker(d, worker);
    if (a->w == NULL) {
        return act_err(a, err, "worker", NULL, "unknown worker '%s'", worker);
    }
    if (!a->is_start && (a->w->modes & SL__JM_WORKER_BULK_SOURCE) != 0) {
        return act_err(a,
                       err,
                       "worker",
                       NULL,
                       "worker '%s' is a bulkSource worker and can only be "
                       "the start action",
                       worker);
    }
    rc = check_action_params(a, err);
    if (rc == 0) {
        rc = check_connections(a, 0, err);
    }
    if (rc == 0) {
        rc = check_connections(a, 1, err);
    }
    if (rc == 0) {
        rc = check_inputs(a, err);
    }
    if (rc == 0) {
        rc = check_output_groups(a, err);
    }
    return rc;
}

/*
 * A persistent bucket has the DOT of its definition, which every slot it
 * is connected to must have; a transient bucket takes the DOT of its
 * slots, which must agree.  @p seen maps transient buckets to their type.
 */
static int
check_slot_type(const struct sl__jm_defs *d,
                const struct actx *a,
                const char *dir,
                const char *slot,
                const char *type,
                const char *bucket,
                json_t *seen,
                struct sl_err *err)
{
    const json_t *bdef = json_object_get(d->defs[SL__JM_BUCKET], bucket);
    const char *have = NULL;

    if (bdef != NULL) {
        have = str_member(bdef, "type");
        if (have != NULL && strcmp(have, type) != 0) {
            return act_err(a,
                           err,
                           dir,
                           slot,
                           "bucket '%s' has type '%s', but slot '%s' needs "
                           "'%s'",
                           bucket,
                           have,
                           slot,
                           type);
        }
        return 0;
    }
    have = str_member(seen, bucket);
    if (have == NULL) {
        (void)json_object_set_new(seen, bucket, json_string(type));
    } else if (strcmp(have, type) != 0) {
        return act_err(a,
                       err,
                       dir,
                       slot,
                       "transient bucket '%s' is connected to slots of types "
                       "'%s' and '%s'",
                       bucket,
                       have,
                       type);
    }
    return 0;
}

static int
check_bucket_types(const struct sl__jm_defs *d,
                   const json_t *wf,
                   struct sl_err *err)
{
    int rc = 0;
    json_t *seen = json_object();
    size_t i = 0;
    size_t n = action_count(wf);

    for (i = 0; i < n && rc == 0; i++) {
        struct actx a;
        const char *key = NULL;
        const json_t *v = NULL;
        const struct sl__jm_slot *s = NULL;

        actx_init(&a, wf, i);
        a.w = find_worker(d, str_member(a.act, "worker"));
        if (SL_NEVER(a.w == NULL)) {
            rc = act_err(&a, err, "worker", NULL, "unknown worker");
            break;
        }
        json_object_foreach((json_t *)json_object_get(a.act, "input"), key, v)
        {
            s = find_slot(a.w->input, a.w->ninput, key);
            rc = check_slot_type(
                d, &a, "input", key, s->type, json_string_value(v), seen, err);
            if (rc != 0) {
                break;
            }
        }
        json_object_foreach((json_t *)json_object_get(a.act, "output"), key, v)
        {
            if (rc != 0) {
                break;
            }
            s = find_slot(a.w->output, a.w->noutput, key);
            rc = check_slot_type(
                d, &a, "output", key, s->type, json_string_value(v), seen, err);
        }
    }
    json_decref(seen);
    return rc;
}

/*
 * In runOnce mode a start worker that is neither a bulkSource nor a
 * runOnceTrigger crawler gets one task per object already in its input
 * bucket; a transient bucket is always empty then, so it is refused.
 */
static int
check_runonce_start(const struct sl__jm_defs *d,
                    const json_t *wf,
                    struct sl_err *err)
{
    const json_t *modes = json_object_get(wf, "modes");
    int runonce = modes == NULL;
    size_t i = 0;
    const json_t *v = NULL;
    const char *key = NULL;
    struct actx a;

    json_array_foreach(modes, i, v)
    {
        runonce = runonce || strcmp(json_string_value(v), "runOnce") == 0;
    }
    actx_init(&a, wf, 0);
    a.w = find_worker(d, str_member(a.act, "worker"));
    if (!runonce || a.w == NULL ||
        (a.w->modes & SL__JM_WORKER_BULK_SOURCE) != 0 ||
        a.w->generator == SL__JM_GEN_RUN_ONCE_TRIGGER) {
        return 0;
    }
    json_object_foreach((json_t *)json_object_get(a.act, "input"), key, v)
    {
        const char *b = json_string_value(v);

        if (json_object_get(d->defs[SL__JM_BUCKET], b) == NULL) {
            return act_err(&a,
                           err,
                           "input",
                           key,
                           "transient bucket '%s' cannot be a runOnce start "
                           "bucket (workflow modes allow runOnce)",
                           b);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Checks that catch mistakes (docs/jobmanager-definitions.md): unknown
 * parameters, nested shapes, the workers' own check, references to other
 * definitions, and input buckets nothing writes.  A stored user definition
 * reloaded at start (SL__JM_PUT_LENIENT) only gets a warning for them.
 * --------------------------------------------------------------------- */

/* The worker of every action (NULL for unknown ones); caller sl_free's. */
static const struct sl__jm_worker **
workers_of(const struct sl__jm_defs *d, const json_t *wf, size_t *n)
{
    const struct sl__jm_worker **ws = NULL;
    size_t i = 0;

    *n = action_count(wf);
    ws = sl_calloc(*n, sizeof(*ws));
    for (i = 0; i < *n; i++) {
        ws[i] = find_worker(d, str_member(action_at(wf, i), "worker"));
    }
    return ws;
}

/* Add the "${var}" names of template @p tmpl to @p known ("_..." ones are
 * the engine's). */
static void
template_vars(const char *tmpl, json_t *known)
{
    const char *p = tmpl;
    char name[SL_NAME_MAX + 1];

    while (p != NULL && (p = strstr(p, "${")) != NULL) {
        const char *end = strchr(p, '}');

        if (end == NULL) {
            break;
        }
        fmt_text(name, sizeof(name), "%.*s", (int)(end - p - 2), p + 2);
        if (name[0] != '_' && name[0] != '\0') {
            (void)json_object_set_new(known, name, json_true());
        }
        p = end + 1;
    }
}

/*
 * The names a job or workflow may set although no worker declares them:
 * the variables of the data object types' store templates (store,
 * tempStore: whether the workflow's buckets need them changes with bucket
 * definitions, so all are fine), @p wf's own parameter names and the
 * jobmanager's keys.  @p with_wf: also @p wf's own parameter names (for
 * jobs of it).  A new object.
 */
static json_t *
known_names(const struct sl__jm_defs *d, const json_t *wf, int with_wf)
{
    static const char *const kinds[] = {"persistent", "transient"};
    json_t *known = json_object();
    const char *key = NULL;
    const json_t *v = NULL;
    size_t i = 0;
    size_t k = 0;

    json_array_foreach(d->dots, i, v)
    {
        for (k = 0; k < NELEMS(kinds); k++) {
            const json_t *t = json_object_get(v, kinds[k]);

            template_vars(str_member(t, "store"), known);
            template_vars(str_member(t, "object"), known);
        }
    }
    json_object_foreach(
        json_object_get(with_wf ? wf : NULL, "parameters"), key, v)
    {
        (void)json_object_set_new(known, key, json_true());
    }
    sl__jm_params_add_engine_keys(known);
    return known;
}

/* 1 if some action of @p wf writes bucket @p b. */
static int
written(const json_t *wf, const char *b)
{
    size_t i = 0;
    const char *key = NULL;
    const json_t *v = NULL;

    for (i = 0; i < action_count(wf); i++) {
        json_object_foreach(json_object_get(action_at(wf, i), "output"), key, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), b) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/*
 * W18: an action's input bucket is written by some action, or is an input
 * bucket of the start action (filled from outside: a runOnce start bucket,
 * or the standard trigger); else the action would never get a task.
 */
static int
check_unwritten(const json_t *wf, struct sl_err *err)
{
    const json_t *start_in = json_object_get(action_at(wf, 0), "input");
    size_t i = 0;
    const char *key = NULL;
    const json_t *v = NULL;
    struct actx a;

    for (i = 1; i < action_count(wf); i++) {
        actx_init(&a, wf, i);
        json_object_foreach(json_object_get(a.act, "input"), key, v)
        {
            const char *b = json_string_value(v);
            const char *sk = NULL;
            const json_t *sv = NULL;
            int from_start = 0;

            json_object_foreach((json_t *)start_in, sk, sv)
            {
                from_start |=
                    json_is_string(sv) && strcmp(json_string_value(sv), b) == 0;
            }
            if (!from_start && !written(wf, b)) {
                return act_err(&a,
                               err,
                               "input",
                               key,
                               "input bucket '%s' of slot '%s' is written by "
                               "no action and is not an input bucket of the "
                               "start action, so the action would never run",
                               b,
                               key);
            }
        }
    }
    return 0;
}

/* A mistake found on a lenient put: logged, not refused. */
static int
lenient(unsigned flags, int rc, const char *kind, const struct sl_err *e)
{
    if (rc == 0 || (flags & SL__JM_PUT_LENIENT) == 0) {
        return rc;
    }
    SL_WARN("jobmanager: stored %s kept despite: %s (field %s)",
            kind,
            e->message,
            e->field[0] != '\0' ? e->field : "-");
    return 0;
}

static int
workflow_mistakes(const struct sl__jm_defs *d,
                  const json_t *wf,
                  unsigned flags,
                  struct sl_err *err)
{
    size_t n = 0;
    const struct sl__jm_worker **ws = workers_of(d, wf, &n);
    json_t *known = known_names(d, wf, 0);
    int rc = 0;

    rc = check_unwritten(wf, err);
    if (rc == 0) {
        rc = sl__jm_params_check_workflow(wf, ws, n, known, err);
    }
    json_decref(known);
    sl_free(ws);
    return lenient(flags, rc, "workflow", err);
}

/* A workflow against the workers and buckets registered now. */
static int
validate_workflow(const struct sl__jm_defs *d,
                  const json_t *wf,
                  unsigned flags,
                  struct sl_err *err)
{
    int rc = 0;
    size_t i = 0;
    size_t n = 0;
    struct actx a;

    rc = check_wf_shape(wf, str_member(wf, "name"), err);
    if (rc != 0) {
        return rc;
    }
    n = action_count(wf);
    for (i = 0; i < n; i++) {
        actx_init(&a, wf, i);
        rc = check_action(d, &a, err);
        if (rc != 0) {
            return rc;
        }
    }
    rc = check_bucket_types(d, wf, err);
    if (rc == 0) {
        rc = check_runonce_start(d, wf, err);
    }
    if (rc == 0) {
        rc = workflow_mistakes(d, wf, flags, err);
    }
    return rc;
}

/* The job field a task parameter came from, for error messages. */
static void
job_param_field(const json_t *job,
                const char *worker,
                const char *param,
                char *field,
                size_t cap)
{
    char prefixed[FIELD_MAX];

    fmt_text(prefixed, sizeof(prefixed), "%s.%s", worker, param);
    if (json_object_get(json_object_get(job, "parameters"), prefixed) != NULL) {
        fmt_text(field, cap, "parameters.%s", prefixed);
    } else {
        fmt_text(field, cap, "parameters.%s", param);
    }
}

/*
 * The resolved task parameters of action @p i hold every required
 * parameter its worker declares, and declared non-"any" ones are scalars.
 */
static int
check_job_action(const struct sl__jm_defs *d,
                 const json_t *job,
                 const json_t *wf,
                 size_t i,
                 struct sl_err *err)
{
    int rc = 0;
    const json_t *act = action_at(wf, i);
    const struct sl__jm_worker *w = find_worker(d, str_member(act, "worker"));
    const char *jname = str_member(job, "name");
    json_t *params = NULL;
    char path[32];
    char label[32];
    char field[FIELD_MAX];
    char allowed[256];
    size_t k = 0;

    action_names(i, path, sizeof(path), label, sizeof(label));
    if (SL_NEVER(w == NULL)) {
        return sl_err_set(
            err, SL_EINVALDEF, "workflow", "job '%s': unknown worker", jname);
    }
    params = sl__jm_task_params(job, wf, act);
    for (k = 0; k < w->nparams; k++) {
        const struct sl__jm_param_decl *p = &w->params[k];
        const json_t *v = json_object_get(params, p->name);

        if (sl__jm_param_is_wildcard(p->name)) {
            continue;
        }
        job_param_field(job, w->name, p->name, field, sizeof(field));
        if (v == NULL && !p->optional) {
            rc = sl_err_set(err,
                            SL_EINVALDEF,
                            field,
                            "job '%s': worker '%s' (%s) needs parameter '%s'",
                            jname,
                            w->name,
                            label,
                            p->name);
            goto out;
        }
        if (v != NULL && !sl__jm_param_shape_ok(p, v)) {
            rc = sl_err_set(err,
                            SL_EINVALDEF,
                            field,
                            "job '%s': parameter '%s' of worker '%s' (%s) "
                            "must be %s",
                            jname,
                            p->name,
                            w->name,
                            label,
                            sl__jm_param_type_text(p));
            goto out;
        }
        if (v != NULL &&
            sl__jm_param_value_refused(p, v, allowed, sizeof(allowed))) {
            rc = sl_err_set(err,
                            SL_EINVALDEF,
                            field,
                            "job '%s': parameter '%s' of worker '%s' (%s) "
                            "must be one of %s",
                            jname,
                            p->name,
                            w->name,
                            label,
                            allowed);
            goto out;
        }
    }

out:
    json_decref(params);
    return rc;
}

/* Every bucket the workflow reads or writes resolves to a valid store. */
static int
check_job_buckets(const struct sl__jm_defs *d,
                  const json_t *job,
                  const json_t *wf,
                  struct sl_err *err)
{
    static const char *const dirs[] = {"input", "output"};
    size_t n = action_count(wf);
    size_t i = 0;
    size_t k = 0;
    struct sl__jm_bucket_info info;
    struct sl_err nerr;

    for (i = 0; i < n; i++) {
        for (k = 0; k < NELEMS(dirs); k++) {
            const char *key = NULL;
            const json_t *v = NULL;

            json_object_foreach(
                (json_t *)json_object_get(action_at(wf, i), dirs[k]), key, v)
            {
                sl_err_clear(&nerr);
                if (bucket_resolve_locked(
                        d, job, wf, json_string_value(v), &info, &nerr) != 0) {
                    return sl_err_set(err,
                                      SL_EINVALDEF,
                                      nerr.field,
                                      "job '%s': %s",
                                      str_member(job, "name"),
                                      nerr.message);
                }
            }
        }
    }
    return 0;
}

/* The closest name of a definition of @p kind to @p name, or NULL. */
static const char *
closest_def(const struct sl__jm_defs *d, int kind, const char *name)
{
    size_t n = json_object_size(d->defs[kind]);
    const char **cands = sl_calloc(n + 1, sizeof(*cands));
    const char *key = NULL;
    const json_t *v = NULL;
    const char *best = NULL;
    size_t i = 0;

    json_object_foreach(d->defs[kind], key, v)
    {
        cands[i++] = key;
    }
    best = sl__jm_suggest(name, cands, i);
    sl_free(cands);
    return best;
}

/*
 * A parameter declared with "references" (the updatePusher's jobToPushTo:
 * "jobs") names a definition of that kind that exists now.
 */
static int
check_job_refs(const struct sl__jm_defs *d,
               const json_t *job,
               const json_t *wf,
               size_t i,
               struct sl_err *err)
{
    const json_t *act = action_at(wf, i);
    const struct sl__jm_worker *w = find_worker(d, str_member(act, "worker"));
    json_t *params = sl__jm_task_params(job, wf, act);
    char path[32];
    char label[32];
    char field[FIELD_MAX];
    size_t k = 0;
    int rc = 0;

    action_names(i, path, sizeof(path), label, sizeof(label));
    for (k = 0; w != NULL && rc == 0 && k < w->nparams; k++) {
        const struct sl__jm_param_decl *p = &w->params[k];
        const char *v = str_member(params, p->name);
        const char *best = NULL;

        if (p->references < 0 || v == NULL ||
            json_object_get(d->defs[p->references], v) != NULL) {
            continue;
        }
        best = closest_def(d, p->references, v);
        job_param_field(job, w->name, p->name, field, sizeof(field));
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        field,
                        "job '%s': parameter '%s' of worker '%s' (%s) names "
                        "%s '%s', which is not defined%s%s%s",
                        str_member(job, "name"),
                        p->name,
                        w->name,
                        label,
                        kind_names[p->references],
                        v,
                        best != NULL ? " (did you mean '" : "",
                        best != NULL ? best : "",
                        best != NULL ? "'?)" : "");
    }
    json_decref(params);
    return rc;
}

/*
 * The workers' definition check (sl_jm_set_def_check) on the resolved
 * parameters of action @p i.  Its field "parameters.<p>..." is turned
 * into "parameters.<worker>.<p>..." when the job set <p> that way.
 */
static int
check_job_hook(const struct sl__jm_defs *d,
               const json_t *job,
               const json_t *wf,
               size_t i,
               struct sl_err *err)
{
    const json_t *act = action_at(wf, i);
    const struct sl__jm_worker *w = find_worker(d, str_member(act, "worker"));
    json_t *params = NULL;
    char path[32];
    char label[32];
    char field[FIELD_MAX];
    char first[FIELD_MAX];
    struct sl_err e;
    int rc = 0;

    if (d->check == NULL || w == NULL) {
        return 0;
    }
    action_names(i, path, sizeof(path), label, sizeof(label));
    params = sl__jm_task_params(job, wf, act);
    sl_err_clear(&e);
    rc = d->check(
        d->check_arg, str_member(job, "name"), w->name, w->json, params, &e);
    json_decref(params);
    if (rc == 0) {
        return 0;
    }
    fmt_text(field, sizeof(field), "%s", e.field);
    if (strncmp(e.field, "parameters.", 11) == 0) {
        const char *rest = e.field + 11;
        size_t n = strcspn(rest, ".[");

        fmt_text(first, sizeof(first), "%.*s", (int)n, rest);
        job_param_field(job, w->name, first, field, sizeof(field));
        fmt_text(field + strlen(field),
                 sizeof(field) - strlen(field),
                 "%s",
                 rest + n);
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "job '%s': worker '%s' (%s): %s",
                      str_member(job, "name"),
                      w->name,
                      label,
                      e.message);
}

static int
job_mistakes(const struct sl__jm_defs *d,
             const json_t *job,
             const json_t *wf,
             unsigned flags,
             struct sl_err *err)
{
    size_t n = 0;
    const struct sl__jm_worker **ws = workers_of(d, wf, &n);
    json_t *known = known_names(d, wf, 1);
    size_t i = 0;
    int rc = 0;

    rc = sl__jm_params_check_job(job, wf, ws, n, known, err);
    for (i = 0; rc == 0 && i < n; i++) {
        rc = check_job_refs(d, job, wf, i, err);
    }
    for (i = 0; rc == 0 && i < n; i++) {
        rc = check_job_hook(d, job, wf, i, err);
    }
    json_decref(known);
    sl_free(ws);
    return lenient(flags, rc, "job", err);
}

/*
 * A job against the registry as it is now: its workflow exists, and the
 * parameters it resolves to satisfy every worker and every bucket.
 */
static int
validate_job(const struct sl__jm_defs *d,
             const json_t *job,
             unsigned flags,
             struct sl_err *err)
{
    int rc = 0;
    const char *name = str_member(job, "name");
    const char *wname = str_member(job, "workflow");
    const json_t *wf = NULL;
    const json_t *params = json_object_get(job, "parameters");
    const json_t *auto_start = json_object_get(job, "autoStart");
    const struct sl__jm_worker **ws = NULL;
    size_t i = 0;
    size_t n = 0;

    if (wname == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "workflow",
                          "job '%s': workflow is required",
                          name);
    }
    wf = json_object_get(d->defs[SL__JM_WORKFLOW], wname);
    if (wf == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "workflow",
                          "job '%s': workflow '%s' is not defined",
                          name,
                          wname);
    }
    if (params != NULL && !json_is_object(params)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "parameters",
                          "job '%s': parameters must be an object",
                          name);
    }
    if (auto_start != NULL && !json_is_boolean(auto_start)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "autoStart",
                          "job '%s': autoStart must be a boolean",
                          name);
    }
    n = action_count(wf);
    for (i = 0; rc == 0 && i < n; i++) {
        rc = check_job_action(d, job, wf, i, err);
    }
    if (rc == 0) {
        ws = workers_of(d, wf, &n);
        rc = sl__jm_params_check_same(job, wf, ws, n, err);
        sl_free(ws);
    }
    if (rc == 0) {
        rc = check_job_buckets(d, job, wf, err);
    }
    if (rc == 0) {
        rc = job_mistakes(d, job, wf, flags, err);
    }
    return rc;
}

static int
validate(const struct sl__jm_defs *d,
         enum sl__jm_kind kind,
         const json_t *def,
         unsigned flags,
         struct sl_err *err)
{
    switch (kind) {
    case SL__JM_BUCKET:
        return validate_bucket(d, def, err);
    case SL__JM_WORKFLOW:
        return validate_workflow(d, def, flags, err);
    case SL__JM_JOB:
        return validate_job(d, def, flags, err);
    }
    return sl_err_set(err, SL_EINVAL, NULL, "unknown definition kind");
}

/*
 * After bucket or workflow @p name changed in the maps (put, or delete
 * tried out), check that what depends on it is still valid: workflows using
 * a bucket, then jobs using the workflow or bucket.  Fails with @p code
 * naming the first definition that would become invalid.
 */
static int
check_dependents(const struct sl__jm_defs *d,
                 enum sl__jm_kind kind,
                 const char *name,
                 int code,
                 struct sl_err *err)
{
    const char *key = NULL;
    const json_t *v = NULL;
    struct sl_err nerr;

    if (kind == SL__JM_JOB) {
        return 0;
    }
    json_object_foreach(d->defs[SL__JM_WORKFLOW], key, v)
    {
        if (kind == SL__JM_BUCKET && uses_bucket(v, name) &&
            validate_workflow(d, v, 0, &nerr) != 0) {
            return sl_err_set(err,
                              code,
                              NULL,
                              "%s '%s': workflow '%s' would become invalid: "
                              "%s",
                              kind_names[kind],
                              name,
                              key,
                              nerr.message);
        }
    }
    json_object_foreach(d->defs[SL__JM_JOB], key, v)
    {
        const char *wname = str_member(v, "workflow");
        const json_t *wf = json_object_get(d->defs[SL__JM_WORKFLOW], wname);
        int uses = kind == SL__JM_WORKFLOW
                       ? wname != NULL && strcmp(wname, name) == 0
                       : wf != NULL && uses_bucket(wf, name);

        if (uses && validate_job(d, v, 0, &nerr) != 0) {
            return sl_err_set(err,
                              code,
                              NULL,
                              "%s '%s': job '%s' would become invalid: %s",
                              kind_names[kind],
                              name,
                              key,
                              nerr.message);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Registry operations.
 * --------------------------------------------------------------------- */

static int
check_def_name(const json_t *def, enum sl__jm_kind kind, struct sl_err *err)
{
    const char *name = str_member(def, "name");
    struct sl_err nerr;

    if (!json_is_object(def)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          NULL,
                          "%s definition must be a JSON object",
                          kind_names[kind]);
    }
    if (name == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "name",
                          "%s definition has no name",
                          kind_names[kind]);
    }
    if (sl_name_check_entity(name, &nerr) != 0) {
        return sl_err_set(err,
                          SL_EBADNAME,
                          "name",
                          "%s '%s': %s",
                          kind_names[kind],
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
    name = str_member(def, "name");
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
                        kind_names[kind],
                        name);
        goto out;
    }
    old = json_incref(old);
    rc = validate(d, kind, copy, (unsigned)flags, err);
    if (rc != 0) {
        goto out;
    }
    (void)json_object_set(d->defs[kind], name, copy);
    rc = check_dependents(d, kind, name, SL_EINVALDEF, err);
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
        const char *wname = str_member(v, "workflow");
        const json_t *wf = json_object_get(d->defs[SL__JM_WORKFLOW], wname);

        if (kind == SL__JM_WORKFLOW && wname != NULL &&
            strcmp(wname, name) == 0) {
            return key;
        }
        if (kind == SL__JM_BUCKET && wf != NULL && uses_bucket(wf, name)) {
            return key;
        }
    }
    return NULL;
}

int
sl__jm_defs_delete(struct sl__jm_defs *d,
                   enum sl__jm_kind kind,
                   const char *name,
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
        rc = sl_err_set(
            err, SL_ENOENT, "name", "no %s named '%s'", kind_names[kind], name);
        goto out;
    }
    if (json_is_true(json_object_get(old, "readOnly"))) {
        old = NULL;
        rc = sl_err_set(err,
                        SL_EREADONLY,
                        "name",
                        "%s '%s' is predefined and cannot be deleted",
                        kind_names[kind],
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
                        kind_names[kind],
                        name,
                        job);
        goto out;
    }
    old = json_incref(old);
    (void)json_object_del(d->defs[kind], name);
    rc = check_dependents(d, kind, name, SL_ECONFLICT, err);
    if (rc != 0) {
        (void)json_object_set(d->defs[kind], name, old);
    }

out:
    json_decref(old);
    unlock(d);
    return rc;
}
