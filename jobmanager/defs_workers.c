/*
 * Worker descriptions of the definitions registry
 * (docs/jobmanager-definitions.md "Worker descriptions"): parsing and
 * checking a description into a struct sl__jm_worker, with its modes,
 * input and output slots, task generator and parameter declarations
 * (params.c).  Pure functions: the registry (defs.c) adds the result.
 */
#include <stdio.h>
#include <string.h>

#include "jobmanager/defs_int.h"

static const char *const worker_modes[] = {
    "bulkSource", "requestsCompletion", "autoCommit"};
static const char *const slot_modes[] = {"optional", "multiple"};

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

        sl__jm_fmt(f, sizeof(f), "%s[%zu]", field, i);
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
    const char *name = sl__jm_str(j, "name");
    const char *type = sl__jm_str(j, "type");
    const json_t *group = json_object_get(j, "group");
    char f[FIELD_MAX];
    struct sl_err nerr;

    sl__jm_fmt(f, sizeof(f), "%s.name", path);
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
    sl__jm_fmt(f, sizeof(f), "%s.type", path);
    if (!sl__jm_dot_known(type)) {
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
        sl__jm_fmt(
            f, sizeof(f), "%s.%s", path, group != NULL ? "group" : "modes");
        return sl_err_set(
            err,
            SL_EINVALDEF,
            f,
            "worker '%s': input slot '%s' takes no modes or group",
            wname,
            name);
    }
    sl__jm_fmt(f, sizeof(f), "%s.modes", path);
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
            sl__jm_fmt(f, sizeof(f), "%s.group", path);
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
        sl__jm_fmt(path, sizeof(path), "%s[%zu]", field, i);
        rc = parse_slot(v, path, wname, output, &(*slots)[i], err);
        if (rc != 0) {
            return rc;
        }
        for (k = 0; k < i; k++) {
            if (strcmp((*slots)[k].name, (*slots)[i].name) == 0) {
                sl__jm_fmt(path, sizeof(path), "%s[%zu].name", field, i);
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
    const char *name = sl__jm_str(desc, "name");
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

const struct sl__jm_slot *
sl__jm_find_slot(const struct sl__jm_slot *slots, size_t n, const char *name)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (strcmp(slots[i].name, name) == 0) {
            return &slots[i];
        }
    }
    return NULL;
}
