/*
 * Validation of definitions against the registry as it is
 * (docs/jobmanager-definitions.md, the rules B*, W* and J*, and "Checks
 * that catch mistakes"): buckets, workflows and their actions, jobs with
 * their resolved parameters and buckets, and what depends on a definition
 * that changes.  Called by the registry (defs.c) under its write lock, so
 * only unlocked helpers are used here.
 */
#include <stdio.h>
#include <string.h>

#include "jobmanager/defs_int.h"
#include "jobmanager/sched_int.h"

/* One action of a workflow, as validation sees it. */
struct actx {
    const char *wf;                /* workflow name */
    const json_t *act;             /* the action object */
    const struct sl__jm_worker *w; /* its worker (NULL until checked) */
    char path[32];                 /* "startAction" or "actions[3]" */
    char label[32];                /* "start action" or "action 4" */
    int is_start;                  /* 1 for the start action */
};

/* ------------------------------------------------------------------------
 * Validation.
 * --------------------------------------------------------------------- */

/* A bucket: a known DOT and string-valued parameters. */
static int
validate_bucket(const struct sl__jm_defs *d,
                const json_t *b,
                struct sl_err *err)
{
    const char *name = sl__jm_str(b, "name");
    const char *type = sl__jm_str(b, "type");
    const json_t *params = json_object_get(b, "parameters");
    const char *key = NULL;
    const json_t *v = NULL;
    char field[FIELD_MAX];

    if (type == NULL) {
        return sl_err_set(
            err, SL_EINVALDEF, "type", "bucket '%s': type is required", name);
    }
    if (sl__jm_find_dot(d, type) == NULL) {
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
            sl__jm_fmt(field, sizeof(field), "parameters.%s", key);
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
    a->wf = sl__jm_str(wf, "name");
    a->act = sl__jm_wf_action(wf, i);
    a->is_start = i == 0;
    sl__jm_action_names(
        i, a->path, sizeof(a->path), a->label, sizeof(a->label));
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
    const char *worker = sl__jm_str(a->act, "worker");
    va_list ap;

    sl__jm_fmt(field,
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

        sl__jm_fmt(field, sizeof(field), "modes[%zu]", i);
        if (m == NULL ||
            (strcmp(m, "runOnce") != 0 && strcmp(m, "standard") != 0 &&
             strcmp(m, "continuous") != 0)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "workflow '%s': unknown mode '%s' (allowed: "
                              "runOnce, standard, continuous)",
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
            sl__jm_fmt(field, sizeof(field), "actions[%zu]", i);
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
            output ? sl__jm_find_slot(a->w->output, a->w->noutput, key)
                   : sl__jm_find_slot(a->w->input, a->w->ninput, key);

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
 * SMILA's output slot-group rules (docs/jobmanager-definitions.md): groupless
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
    const char *worker = sl__jm_str(a->act, "worker");

    if (worker == NULL) {
        return act_err(a, err, "worker", NULL, "worker is required");
    }
    a->w = sl__jm_find_worker(d, worker);
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
        have = sl__jm_str(bdef, "type");
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
    have = sl__jm_str(seen, bucket);
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
    size_t n = sl__jm_wf_nactions(wf);

    for (i = 0; i < n && rc == 0; i++) {
        struct actx a;
        const char *key = NULL;
        const json_t *v = NULL;
        const struct sl__jm_slot *s = NULL;

        actx_init(&a, wf, i);
        a.w = sl__jm_find_worker(d, sl__jm_str(a.act, "worker"));
        if (SL_NEVER(a.w == NULL)) {
            rc = act_err(&a, err, "worker", NULL, "unknown worker");
            break;
        }
        json_object_foreach((json_t *)json_object_get(a.act, "input"), key, v)
        {
            s = sl__jm_find_slot(a.w->input, a.w->ninput, key);
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
            s = sl__jm_find_slot(a.w->output, a.w->noutput, key);
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
    a.w = sl__jm_find_worker(d, sl__jm_str(a.act, "worker"));
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

    *n = sl__jm_wf_nactions(wf);
    ws = sl_calloc(*n, sizeof(*ws));
    for (i = 0; i < *n; i++) {
        ws[i] = sl__jm_find_worker(
            d, sl__jm_str(sl__jm_wf_action(wf, i), "worker"));
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
        sl__jm_fmt(name, sizeof(name), "%.*s", (int)(end - p - 2), p + 2);
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

            template_vars(sl__jm_str(t, "store"), known);
            template_vars(sl__jm_str(t, "object"), known);
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

    for (i = 0; i < sl__jm_wf_nactions(wf); i++) {
        json_object_foreach(
            json_object_get(sl__jm_wf_action(wf, i), "output"), key, v)
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
    const json_t *start_in = json_object_get(sl__jm_wf_action(wf, 0), "input");
    size_t i = 0;
    const char *key = NULL;
    const json_t *v = NULL;
    struct actx a;

    for (i = 1; i < sl__jm_wf_nactions(wf); i++) {
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

    rc = check_wf_shape(wf, sl__jm_str(wf, "name"), err);
    if (rc != 0) {
        return rc;
    }
    n = sl__jm_wf_nactions(wf);
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

    sl__jm_fmt(prefixed, sizeof(prefixed), "%s.%s", worker, param);
    if (json_object_get(json_object_get(job, "parameters"), prefixed) != NULL) {
        sl__jm_fmt(field, cap, "parameters.%s", prefixed);
    } else {
        sl__jm_fmt(field, cap, "parameters.%s", param);
    }
}

/* One action of a job's workflow as the job checks see it. */
struct job_action {
    const char *jname;             /* the job's name */
    const struct sl__jm_worker *w; /* NULL: a worker not registered */
    json_t *params;                /* the resolved task parameters, owned */
    char label[32];                /* how messages name the action */
};

typedef int (*job_action_check)(const struct sl__jm_defs *d,
                                const json_t *job,
                                const struct job_action *a,
                                struct sl_err *err);

/* @p check on each action of @p wf in order, up to the first error. */
static int
each_action(const struct sl__jm_defs *d,
            const json_t *job,
            const json_t *wf,
            job_action_check check,
            struct sl_err *err)
{
    size_t n = sl__jm_wf_nactions(wf);
    size_t i = 0;
    int rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        const json_t *act = sl__jm_wf_action(wf, i);
        struct job_action a;
        char path[32];

        a.jname = sl__jm_str(job, "name");
        a.w = sl__jm_find_worker(d, sl__jm_str(act, "worker"));
        a.params = sl__jm_task_params(job, wf, act);
        sl__jm_action_names(i, path, sizeof(path), a.label, sizeof(a.label));
        rc = check(d, job, &a, err);
        json_decref(a.params);
    }
    return rc;
}

/*
 * The resolved task parameters of action @p a hold every required
 * parameter its worker declares, and declared non-"any" ones are scalars.
 */
static int
check_job_action(const struct sl__jm_defs *d,
                 const json_t *job,
                 const struct job_action *a,
                 struct sl_err *err)
{
    const struct sl__jm_worker *w = a->w;
    const char *jname = a->jname;
    const json_t *params = a->params;
    const char *label = a->label;
    char field[FIELD_MAX];
    char allowed[256];
    size_t k = 0;

    (void)d;
    if (SL_NEVER(w == NULL)) {
        return sl_err_set(
            err, SL_EINVALDEF, "workflow", "job '%s': unknown worker", jname);
    }
    for (k = 0; k < w->nparams; k++) {
        const struct sl__jm_param_decl *p = &w->params[k];
        const json_t *v = json_object_get(params, p->name);

        if (sl__jm_param_is_wildcard(p->name)) {
            continue;
        }
        job_param_field(job, w->name, p->name, field, sizeof(field));
        if (v == NULL && !p->optional) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "job '%s': worker '%s' (%s) needs parameter '%s'",
                              jname,
                              w->name,
                              label,
                              p->name);
        }
        if (v != NULL && !sl__jm_param_shape_ok(p, v)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "job '%s': parameter '%s' of worker '%s' (%s) "
                              "must be %s",
                              jname,
                              p->name,
                              w->name,
                              label,
                              sl__jm_param_type_text(p));
        }
        if (v != NULL &&
            sl__jm_param_value_refused(p, v, allowed, sizeof(allowed))) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "job '%s': parameter '%s' of worker '%s' (%s) "
                              "must be one of %s",
                              jname,
                              p->name,
                              w->name,
                              label,
                              allowed);
        }
    }
    return 0;
}

/* Every bucket the workflow reads or writes resolves to a valid store. */
static int
check_job_buckets(const struct sl__jm_defs *d,
                  const json_t *job,
                  const json_t *wf,
                  struct sl_err *err)
{
    static const char *const dirs[] = {"input", "output"};
    size_t n = sl__jm_wf_nactions(wf);
    size_t i = 0;
    size_t k = 0;
    struct sl__jm_bucket_info info;
    struct sl_err nerr;

    for (i = 0; i < n; i++) {
        for (k = 0; k < NELEMS(dirs); k++) {
            const char *key = NULL;
            const json_t *v = NULL;

            json_object_foreach(
                (json_t *)json_object_get(sl__jm_wf_action(wf, i), dirs[k]),
                key,
                v)
            {
                sl_err_clear(&nerr);
                if (sl__jm_bucket_resolve_locked(
                        d, job, wf, json_string_value(v), &info, &nerr) != 0) {
                    return sl_err_set(err,
                                      SL_EINVALDEF,
                                      nerr.field,
                                      "job '%s': %s",
                                      sl__jm_str(job, "name"),
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
               const struct job_action *a,
               struct sl_err *err)
{
    const struct sl__jm_worker *w = a->w;
    char field[FIELD_MAX];
    size_t k = 0;
    int rc = 0;

    for (k = 0; w != NULL && rc == 0 && k < w->nparams; k++) {
        const struct sl__jm_param_decl *p = &w->params[k];
        const char *v = sl__jm_str(a->params, p->name);
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
                        a->jname,
                        p->name,
                        w->name,
                        a->label,
                        sl__jm_kind_names[p->references],
                        v,
                        best != NULL ? " (did you mean '" : "",
                        best != NULL ? best : "",
                        best != NULL ? "'?)" : "");
    }
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
               const struct job_action *a,
               struct sl_err *err)
{
    const struct sl__jm_worker *w = a->w;
    char field[FIELD_MAX];
    char first[FIELD_MAX];
    struct sl_err e;
    int rc = 0;

    if (d->check == NULL || w == NULL) {
        return 0;
    }
    sl_err_clear(&e);
    rc = d->check(d->check_arg, a->jname, w->name, w->json, a->params, &e);
    if (rc == 0) {
        return 0;
    }
    sl__jm_fmt(field, sizeof(field), "%s", e.field);
    if (strncmp(e.field, "parameters.", 11) == 0) {
        const char *rest = e.field + 11;
        size_t n = strcspn(rest, ".[");

        sl__jm_fmt(first, sizeof(first), "%.*s", (int)n, rest);
        job_param_field(job, w->name, first, field, sizeof(field));
        sl__jm_fmt(field + strlen(field),
                   sizeof(field) - strlen(field),
                   "%s",
                   rest + n);
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "job '%s': worker '%s' (%s): %s",
                      a->jname,
                      w->name,
                      a->label,
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
    int rc = 0;

    rc = sl__jm_params_check_job(job, wf, ws, n, known, err);
    if (rc == 0) {
        rc = each_action(d, job, wf, check_job_refs, err);
    }
    if (rc == 0) {
        rc = each_action(d, job, wf, check_job_hook, err);
    }
    json_decref(known);
    sl_free(ws);
    return lenient(flags, rc, "job", err);
}

/* A job's "schedule" (docs/jobmanager.md "Schedules"): readable, and its
 * mode one the workflow allows. */
static int
check_schedule(const json_t *job, const json_t *wf, struct sl_err *err)
{
    const json_t *sj = json_object_get(job, "schedule");
    const json_t *modes = json_object_get(wf, "modes");
    struct sl__jm_sched s;
    size_t i = 0;
    int rc = 0;

    if (sj == NULL) {
        return 0;
    }
    rc = sl__jm_sched_parse(sj, &s, err);
    if (rc != 0 || s.mode[0] == '\0' || !json_is_array(modes) ||
        json_array_size(modes) == 0) {
        return rc;
    }
    for (i = 0; i < json_array_size(modes); i++) {
        const char *m = json_string_value(json_array_get(modes, i));

        if (m != NULL && strcmp(m, s.mode) == 0) {
            return 0;
        }
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      "schedule",
                      "job '%s': schedule.mode '%s' is not one of workflow "
                      "'%s''s modes",
                      sl__jm_str(job, "name"),
                      s.mode,
                      sl__jm_str(wf, "name"));
}

/* A job's parameter "continuous" (docs/jobmanager.md "Continuous
 * crawling"), whatever mode its runs will have: checked when defined. */
static int
check_continuous(const json_t *job, struct sl_err *err)
{
    const json_t *v =
        json_object_get(json_object_get(job, "parameters"), "continuous");
    struct sl__jm_cont_cfg c;

    return v == NULL ? 0 : sl__jm_continuous_parse(v, &c, err);
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
    const char *name = sl__jm_str(job, "name");
    const char *wname = sl__jm_str(job, "workflow");
    const json_t *wf = NULL;
    const json_t *params = json_object_get(job, "parameters");
    const json_t *auto_start = json_object_get(job, "autoStart");
    const struct sl__jm_worker **ws = NULL;
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
    rc = check_schedule(job, wf, err);
    if (rc == 0) {
        rc = check_continuous(job, err);
    }
    if (rc == 0) {
        rc = each_action(d, job, wf, check_job_action, err);
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

int
sl__jm_defs_validate(const struct sl__jm_defs *d,
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
int
sl__jm_defs_check_dependents(const struct sl__jm_defs *d,
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
        if (kind == SL__JM_BUCKET && sl__jm_wf_uses_bucket(v, name) &&
            validate_workflow(d, v, 0, &nerr) != 0) {
            return sl_err_set(err,
                              code,
                              NULL,
                              "%s '%s': workflow '%s' would become invalid: "
                              "%s",
                              sl__jm_kind_names[kind],
                              name,
                              key,
                              nerr.message);
        }
    }
    json_object_foreach(d->defs[SL__JM_JOB], key, v)
    {
        const char *wname = sl__jm_str(v, "workflow");
        const json_t *wf = json_object_get(d->defs[SL__JM_WORKFLOW], wname);
        int uses = kind == SL__JM_WORKFLOW
                       ? wname != NULL && strcmp(wname, name) == 0
                       : wf != NULL && sl__jm_wf_uses_bucket(wf, name);

        if (uses && validate_job(d, v, 0, &nerr) != 0) {
            return sl_err_set(err,
                              code,
                              NULL,
                              "%s '%s': job '%s' would become invalid: %s",
                              sl__jm_kind_names[kind],
                              name,
                              key,
                              nerr.message);
        }
    }
    return 0;
}
