/*
 * Parameter declarations of worker descriptions and the checks the
 * jobmanager does with them when a workflow or job is defined
 * (docs/jobmanager-definitions.md, "Parameter declarations" and "Checks
 * that catch mistakes"): every key a definition sets is declared by a
 * worker that receives it, or is one the jobmanager itself reads; values
 * have the declared JSON shape, nested members included.  What a string
 * means (a size, a regex) is left to the workers' definition check.
 *
 * The functions are pure: the registry (defs.c) calls them under its lock
 * with the definitions and workers they need.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jobmanager/jobmanager_int.h"

#define FIELD_MAX 128 /* sizeof(struct sl_err.field) */
#define MAX_CANDS 256 /* names offered as suggestions at one level */

/* Job parameters the jobmanager reads itself, whatever the workers:
 * dataSource (one runOnce crawl per source, engine.c), continuous (the
 * passes of a continuous run, continuous.c). */
static const char *const engine_keys[] = {"dataSource", "continuous"};

static const char *const type_names[] = {"string",
                                         "integer",
                                         "number",
                                         "boolean",
                                         "regex",
                                         "object",
                                         "array",
                                         "any"};

static const char *const type_texts[] = {
    "a string, number or boolean",
    "an integer (a JSON integer or a string of one)",
    "a number (a JSON number or a string of one)",
    "a boolean (true, false, \"true\" or \"false\")",
    "a string (a POSIX extended regular expression)",
    "an object",
    "an array",
    "any JSON value"};

static const char *const ref_kinds[] = {"buckets", "workflows", "jobs"};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static void fmt_text(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Bounded formatting; truncated field paths are fine (as in defs.c). */
static void
fmt_text(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * Suggestions.
 * --------------------------------------------------------------------- */

size_t
sl__jm_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a);
    size_t lb = strlen(b);
    size_t *prev2 = NULL; /* row i - 2 */
    size_t *prev = NULL;  /* row i - 1 */
    size_t *cur = NULL;
    size_t *tmp = NULL;
    size_t i = 0;
    size_t j = 0;
    size_t d = 0;

    prev2 = sl_calloc(lb + 1, sizeof(*prev2));
    prev = sl_calloc(lb + 1, sizeof(*prev));
    cur = sl_calloc(lb + 1, sizeof(*cur));
    for (j = 0; j <= lb; j++) {
        prev[j] = j;
    }
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = prev[j - 1] + cost;

            if (prev[j] + 1 < best) {
                best = prev[j] + 1;
            }
            if (cur[j - 1] + 1 < best) {
                best = cur[j - 1] + 1;
            }
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best) {
                best = prev2[j - 2] + 1;
            }
            cur[j] = best;
        }
        tmp = prev2;
        prev2 = prev;
        prev = cur;
        cur = tmp;
    }
    d = prev[lb];
    sl_free(prev2);
    sl_free(prev);
    sl_free(cur);
    return d;
}

const char *
sl__jm_suggest(const char *name, const char *const *cands, size_t n)
{
    size_t len = strlen(name);
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    const char *best = NULL;
    size_t bestd = limit + 1;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        size_t d = 0;

        if (cands[i] == NULL || strcmp(cands[i], name) == 0) {
            continue;
        }
        d = sl__jm_edit_distance(name, cands[i]);
        if (d < bestd && d < strlen(cands[i])) {
            best = cands[i];
            bestd = d;
        }
    }
    return best;
}

/* ------------------------------------------------------------------------
 * Declarations.
 * --------------------------------------------------------------------- */

int
sl__jm_param_is_wildcard(const char *name)
{
    size_t n = strlen(name);

    return n >= 3 && name[0] == '<' && name[n - 1] == '>';
}

static int parse_decl(const json_t *j,
                      const char *path,
                      const char *wname,
                      int member,
                      struct sl__jm_param_decl *p,
                      struct sl_err *err);

/* "values": an optional non-empty array of the strings a parameter may
 * take (for example deltaImportStrategy). */
static int
parse_values(const json_t *j,
             const char *path,
             const char *wname,
             struct sl__jm_param_decl *p,
             struct sl_err *err)
{
    const json_t *values = json_object_get(j, "values");
    char f[FIELD_MAX];
    size_t i = 0;
    const json_t *v = NULL;
    int bad = 0;

    if (values == NULL) {
        return 0;
    }
    fmt_text(f, sizeof(f), "%s.values", path);
    bad = !json_is_array(values) || json_array_size(values) == 0;
    json_array_foreach(values, i, v)
    {
        bad |= !json_is_string(v);
    }
    if (bad) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': 'values' of parameter '%s' must be a "
                          "non-empty array of strings",
                          wname,
                          p->name);
    }
    p->values = json_deep_copy(values);
    return 0;
}

static int
parse_type(const json_t *j,
           const char *path,
           const char *wname,
           struct sl__jm_param_decl *p,
           struct sl_err *err)
{
    const json_t *type = json_object_get(j, "type");
    const char *t = json_string_value(type);
    char f[FIELD_MAX];
    size_t i = 0;

    p->type = SL__JM_PT_STRING;
    if (type == NULL) {
        return 0;
    }
    for (i = 0; t != NULL && i < NELEMS(type_names); i++) {
        if (strcmp(t, type_names[i]) == 0) {
            p->type = (enum sl__jm_ptype)i;
            return 0;
        }
    }
    fmt_text(f, sizeof(f), "%s.type", path);
    return sl_err_set(err,
                      SL_EINVALDEF,
                      f,
                      "worker '%s': parameter '%s' has unknown type '%s' "
                      "(allowed: any, array, boolean, integer, number, "
                      "object, regex, string)",
                      wname,
                      p->name,
                      t != NULL ? t : "(not a string)");
}

/* "members" of an object and "items" of an array, each only there. */
static int
parse_nested(const json_t *j,
             const char *path,
             const char *wname,
             struct sl__jm_param_decl *p,
             struct sl_err *err)
{
    const json_t *members = json_object_get(j, "members");
    const json_t *items = json_object_get(j, "items");
    char f[FIELD_MAX];
    int rc = 0;

    if (members != NULL) {
        fmt_text(f, sizeof(f), "%s.members", path);
        if (p->type != SL__JM_PT_OBJECT || !json_is_array(members)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              f,
                              "worker '%s': 'members' of parameter '%s' "
                              "must be an array, and only for type object",
                              wname,
                              p->name);
        }
        p->has_members = 1;
        rc = sl__jm_params_parse(
            members, f, wname, &p->members, &p->nmembers, err);
        if (rc != 0) {
            return rc;
        }
    }
    if (items != NULL) {
        fmt_text(f, sizeof(f), "%s.items", path);
        if (p->type != SL__JM_PT_ARRAY || !json_is_object(items)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              f,
                              "worker '%s': 'items' of parameter '%s' must be "
                              "an object, and only for type array",
                              wname,
                              p->name);
        }
        p->items = sl_calloc(1, sizeof(*p->items));
        return parse_decl(items, f, wname, 2, p->items, err);
    }
    return 0;
}

static int
parse_references(const json_t *j,
                 const char *path,
                 const char *wname,
                 struct sl__jm_param_decl *p,
                 struct sl_err *err)
{
    const json_t *r = json_object_get(j, "references");
    char f[FIELD_MAX];
    size_t i = 0;

    p->references = -1;
    if (r == NULL) {
        return 0;
    }
    for (i = 0; json_is_string(r) && i < NELEMS(ref_kinds); i++) {
        if (strcmp(json_string_value(r), ref_kinds[i]) == 0 &&
            p->type == SL__JM_PT_STRING) {
            p->references = (int)i;
            return 0;
        }
    }
    fmt_text(f, sizeof(f), "%s.references", path);
    return sl_err_set(err,
                      SL_EINVALDEF,
                      f,
                      "worker '%s': 'references' of parameter '%s' must be "
                      "buckets, workflows or jobs, on a string parameter",
                      wname,
                      p->name);
}

/*
 * "sameForJob": true asks every worker of a job that declares the
 * parameter to get the same value (sl__jm_params_check_same); "default"
 * is the value a worker takes when it is not set, one of "values" if
 * those are given.  Both only at the top level.
 */
static int
parse_same(const json_t *j,
           const char *path,
           const char *wname,
           int member,
           struct sl__jm_param_decl *p,
           struct sl_err *err)
{
    const json_t *same = json_object_get(j, "sameForJob");
    const json_t *dflt = json_object_get(j, "default");
    char allowed[256];
    char f[FIELD_MAX];

    if (same != NULL && (!json_is_boolean(same) || member != 0)) {
        fmt_text(f, sizeof(f), "%s.sameForJob", path);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': 'sameForJob' of parameter '%s' must "
                          "be a boolean, and only on a top-level parameter",
                          wname,
                          p->name);
    }
    p->same_for_job = json_is_true(same);
    if (dflt == NULL) {
        return 0;
    }
    fmt_text(f, sizeof(f), "%s.default", path);
    if (member != 0 || !sl__jm_param_shape_ok(p, dflt)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': 'default' of parameter '%s' must be "
                          "%s, and only on a top-level parameter",
                          wname,
                          p->name,
                          sl__jm_param_type_text(p));
    }
    if (sl__jm_param_value_refused(p, dflt, allowed, sizeof(allowed))) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': 'default' of parameter '%s' must be "
                          "one of %s",
                          wname,
                          p->name,
                          allowed);
    }
    p->dflt = json_deep_copy(dflt);
    return 0;
}

/*
 * One declaration {"name", "optional", "type", "values", "members",
 * "items", "references", "sameForJob", "default"}.  @p member: 0 at the top
 * level (required unless "optional": true), 1 for an object member (optional
 * unless "optional": false), 2 for "items" (no name).
 */
static int
parse_decl(const json_t *j,
           const char *path,
           const char *wname,
           int member,
           struct sl__jm_param_decl *p,
           struct sl_err *err)
{
    const char *name = json_string_value(json_object_get(j, "name"));
    const json_t *opt = json_object_get(j, "optional");
    char f[FIELD_MAX];
    struct sl_err nerr;
    int rc = 0;

    fmt_text(f, sizeof(f), "%s.name", path);
    if (member == 2) {
        name = "items";
    } else if (!json_is_object(j) || name == NULL) {
        return sl_err_set(
            err, SL_EINVALDEF, f, "worker '%s': parameter has no name", wname);
    } else if (!sl__jm_param_is_wildcard(name) &&
               sl_name_check_entity(name, &nerr) != 0) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': parameter %s",
                          wname,
                          nerr.message);
    }
    p->name = sl_strdup(name);
    if (opt != NULL && !json_is_boolean(opt)) {
        fmt_text(f, sizeof(f), "%s.optional", path);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          f,
                          "worker '%s': 'optional' of parameter '%s' must be "
                          "a boolean",
                          wname,
                          name);
    }
    p->optional = member != 0 ? !json_is_false(opt) : json_is_true(opt);
    rc = parse_type(j, path, wname, p, err);
    if (rc == 0) {
        rc = parse_values(j, path, wname, p, err);
    }
    if (rc == 0) {
        rc = parse_nested(j, path, wname, p, err);
    }
    if (rc == 0) {
        rc = parse_references(j, path, wname, p, err);
    }
    if (rc == 0) {
        rc = parse_same(j, path, wname, member, p, err);
    }
    return rc;
}

int
sl__jm_params_parse(const json_t *arr,
                    const char *path,
                    const char *wname,
                    struct sl__jm_param_decl **out,
                    size_t *n,
                    struct sl_err *err)
{
    struct sl__jm_param_decl *p = NULL;
    char f[FIELD_MAX];
    const json_t *v = NULL;
    size_t i = 0;
    size_t k = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    if (arr == NULL) {
        return 0;
    }
    if (!json_is_array(arr)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          path,
                          "worker '%s': %s must be an array",
                          wname,
                          path);
    }
    p = sl_calloc(json_array_size(arr) + 1, sizeof(*p));
    json_array_foreach(arr, i, v)
    {
        fmt_text(f, sizeof(f), "%s[%zu]", path, i);
        rc = parse_decl(
            v, f, wname, strcmp(path, "parameters") != 0, &p[i], err);
        for (k = 0; rc == 0 && k < i; k++) {
            if (strcmp(p[k].name, p[i].name) == 0) {
                fmt_text(f, sizeof(f), "%s[%zu].name", path, i);
                rc = sl_err_set(err,
                                SL_EINVALDEF,
                                f,
                                "worker '%s': duplicate parameter '%s'",
                                wname,
                                p[i].name);
            }
        }
        if (rc != 0) {
            sl__jm_params_free(p, i + 1);
            return rc;
        }
    }
    *out = p;
    *n = json_array_size(arr);
    return 0;
}

static void
decl_clear(struct sl__jm_param_decl *p)
{
    sl_free(p->name);
    json_decref(p->values);
    json_decref(p->dflt);
    sl__jm_params_free(p->members, p->nmembers);
    if (p->items != NULL) {
        decl_clear(p->items);
        sl_free(p->items);
    }
}

void
sl__jm_params_free(struct sl__jm_param_decl *p, size_t n)
{
    size_t i = 0;

    for (i = 0; p != NULL && i < n; i++) {
        decl_clear(&p[i]);
    }
    sl_free(p);
}

const struct sl__jm_param_decl *
sl__jm_param_find(const struct sl__jm_param_decl *p, size_t n, const char *name)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (strcmp(p[i].name, name) == 0 &&
            !sl__jm_param_is_wildcard(p[i].name)) {
            return &p[i];
        }
    }
    return NULL;
}

const struct sl__jm_param_decl *
sl__jm_param_wildcard(const struct sl__jm_param_decl *p, size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (sl__jm_param_is_wildcard(p[i].name)) {
            return &p[i];
        }
    }
    return NULL;
}

int
sl__jm_param_shape_ok(const struct sl__jm_param_decl *p, const json_t *v)
{
    const char *s = json_string_value(v);

    switch (p->type) {
    case SL__JM_PT_STRING:
        return json_is_string(v) || json_is_number(v) || json_is_boolean(v);
    case SL__JM_PT_INTEGER:
        return json_is_integer(v) || json_is_string(v);
    case SL__JM_PT_NUMBER:
        return json_is_number(v) || json_is_string(v);
    case SL__JM_PT_BOOLEAN:
        return json_is_boolean(v) || (s != NULL && (strcmp(s, "true") == 0 ||
                                                    strcmp(s, "false") == 0));
    case SL__JM_PT_REGEX:
        return json_is_string(v);
    case SL__JM_PT_OBJECT:
        return json_is_object(v);
    case SL__JM_PT_ARRAY:
        return json_is_array(v);
    case SL__JM_PT_ANY:
        return 1;
    }
    return 0;
}

const char *
sl__jm_param_type_text(const struct sl__jm_param_decl *p)
{
    return (size_t)p->type < NELEMS(type_texts) ? type_texts[p->type] : "?";
}

int
sl__jm_param_value_refused(const struct sl__jm_param_decl *p,
                           const json_t *v,
                           char *allowed,
                           size_t cap)
{
    size_t i = 0;
    const json_t *a = NULL;
    size_t used = 0;

    if (p->values == NULL) {
        return 0;
    }
    json_array_foreach(p->values, i, a)
    {
        if (json_is_string(v) &&
            strcmp(json_string_value(v), json_string_value(a)) == 0) {
            return 0;
        }
    }
    allowed[0] = '\0';
    json_array_foreach(p->values, i, a)
    {
        if (used < cap) {
            fmt_text(allowed + used,
                     cap - used,
                     "%s%s",
                     i ? ", " : "",
                     json_string_value(a));
            used += strlen(allowed + used);
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * Checking values against declarations.
 *
 * One value may reach several workers (a plain job key reaches every
 * action), each with its own declaration of it.  The checks take all of
 * them: the value must have every declared shape, and a member is unknown
 * only when no declaration has it (nor lets further members through).
 * --------------------------------------------------------------------- */

/* Where a value is: the message prefix and the field path so far. */
struct where {
    const char *who;      /* "job 'j'" or "workflow 'w'" */
    const char *base;     /* "parameters" or "actions[0].parameters" */
    char path[FIELD_MAX]; /* relative: "filters.filePatterns" */
};

/* Room for the declarations of one value; a workflow has few actions. */
struct decls {
    const struct sl__jm_param_decl *d[64];
    size_t n;
    int open; /* some receiver takes undeclared keys here */
};

static void
decls_add(struct decls *ds, const struct sl__jm_param_decl *p)
{
    size_t i = 0;

    for (i = 0; i < ds->n; i++) {
        if (ds->d[i] == p) {
            return;
        }
    }
    if (ds->n < NELEMS(ds->d)) {
        ds->d[ds->n++] = p;
    }
}

/* An unknown key @p key under @p w->path; @p prefix is put before the
 * whole path ("fileCrawler." for a worker-prefixed job key). */
static int
unknown_key(const struct where *w,
            const char *prefix,
            const char *key,
            const char *const *cands,
            size_t ncands,
            struct sl_err *err)
{
    const char *s = sl__jm_suggest(key, cands, ncands);
    const char *sep = w->path[0] != '\0' ? "." : "";
    char field[FIELD_MAX];
    char hint[FIELD_MAX * 2];

    fmt_text(field,
             sizeof(field),
             "%s.%s%s%s%s",
             w->base,
             prefix,
             w->path,
             sep,
             key);
    hint[0] = '\0';
    if (s != NULL) {
        fmt_text(hint,
                 sizeof(hint),
                 " (did you mean '%s%s%s%s'?)",
                 prefix,
                 w->path,
                 sep,
                 s);
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "%s: unknown parameter '%s%s%s%s'%s",
                      w->who,
                      prefix,
                      w->path,
                      sep,
                      key,
                      hint);
}

static int check_value(const struct decls *ds,
                       const json_t *v,
                       struct where *w,
                       struct sl_err *err);

/* The members of object @p v against the member lists of @p ds. */
static int
check_members(const struct decls *ds,
              const json_t *v,
              struct where *w,
              struct sl_err *err)
{
    const char *key = NULL;
    const json_t *m = NULL;
    const char *cands[MAX_CANDS];
    size_t ncands = 0;
    size_t len = strlen(w->path);
    size_t i = 0;
    size_t k = 0;
    int rc = 0;

    for (i = 0; i < ds->n; i++) {
        for (k = 0; k < ds->d[i]->nmembers && ncands < MAX_CANDS; k++) {
            if (!sl__jm_param_is_wildcard(ds->d[i]->members[k].name)) {
                cands[ncands++] = ds->d[i]->members[k].name;
            }
        }
    }
    json_object_foreach((json_t *)v, key, m)
    {
        struct decls sub;

        memset(&sub, 0, sizeof(sub));
        for (i = 0; i < ds->n; i++) {
            const struct sl__jm_param_decl *p = ds->d[i];
            const struct sl__jm_param_decl *f =
                sl__jm_param_find(p->members, p->nmembers, key);

            if (f == NULL) {
                f = sl__jm_param_wildcard(p->members, p->nmembers);
            }
            if (f != NULL) {
                decls_add(&sub, f);
            }
            sub.open |= !p->has_members;
        }
        if (sub.n == 0 && !sub.open) {
            return unknown_key(w, "", key, cands, ncands, err);
        }
        fmt_text(w->path + len,
                 sizeof(w->path) - len,
                 "%s%s",
                 len > 0 ? "." : "",
                 key);
        rc = check_value(&sub, m, w, err);
        w->path[len] = '\0';
        if (rc != 0) {
            return rc;
        }
    }
    for (i = 0; i < ds->n; i++) {
        for (k = 0; k < ds->d[i]->nmembers; k++) {
            const struct sl__jm_param_decl *p = &ds->d[i]->members[k];
            char field[FIELD_MAX];

            if (p->optional || sl__jm_param_is_wildcard(p->name) ||
                json_object_get(v, p->name) != NULL) {
                continue;
            }
            fmt_text(field, sizeof(field), "%s.%s", w->base, w->path);
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "%s: parameter '%s' needs member '%s'",
                              w->who,
                              w->path,
                              p->name);
        }
    }
    return 0;
}

static int
check_value(const struct decls *ds,
            const json_t *v,
            struct where *w,
            struct sl_err *err)
{
    char field[FIELD_MAX];
    char allowed[256];
    struct decls sub;
    const json_t *e = NULL;
    size_t len = strlen(w->path);
    size_t i = 0;
    int rc = 0;

    fmt_text(field, sizeof(field), "%s.%s", w->base, w->path);
    memset(&sub, 0, sizeof(sub));
    for (i = 0; i < ds->n; i++) {
        const struct sl__jm_param_decl *p = ds->d[i];

        if (!sl__jm_param_shape_ok(p, v)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "%s: parameter '%s' must be %s",
                              w->who,
                              w->path,
                              sl__jm_param_type_text(p));
        }
        if (sl__jm_param_value_refused(p, v, allowed, sizeof(allowed))) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "%s: parameter '%s' must be one of %s",
                              w->who,
                              w->path,
                              allowed);
        }
        if (p->items != NULL) {
            decls_add(&sub, p->items);
        }
    }
    if (json_is_object(v)) {
        for (i = 0; i < ds->n; i++) {
            if (ds->d[i]->type == SL__JM_PT_OBJECT) {
                return check_members(ds, v, w, err);
            }
        }
    }
    json_array_foreach(v, i, e)
    {
        if (sub.n == 0) {
            break;
        }
        fmt_text(w->path + len, sizeof(w->path) - len, "[%zu]", i);
        rc = check_value(&sub, e, w, err);
        w->path[len] = '\0';
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Top-level keys of jobs and workflows.
 * --------------------------------------------------------------------- */

/* The jobmanager reads these from every action's resolved parameters, so
 * they count with a worker prefix too. */
static int
is_engine_key(const char *name)
{
    size_t i = 0;

    for (i = 0; i < NELEMS(engine_keys); i++) {
        if (strcmp(name, engine_keys[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

void
sl__jm_params_add_engine_keys(json_t *known)
{
    size_t i = 0;

    for (i = 0; i < NELEMS(engine_keys); i++) {
        (void)json_object_set_new(known, engine_keys[i], json_true());
    }
}

/* The declared names of @p w (not wildcards), appended to @p cands. */
static void
add_names(const struct sl__jm_worker *w, const char **cands, size_t *n)
{
    size_t k = 0;

    for (k = 0; w != NULL && k < w->nparams && *n < MAX_CANDS; k++) {
        if (!sl__jm_param_is_wildcard(w->params[k].name)) {
            cands[(*n)++] = w->params[k].name;
        }
    }
}

/*
 * One top-level key @p key = @p v that reaches the workers @p ws[i] for
 * which @p reach(i) holds, under the name @p name.  @p known (may be NULL)
 * are further names that are fine without a declaration.
 */
static int
check_key(const char *key,
          const char *name,
          const json_t *v,
          const struct sl__jm_worker *const *ws,
          size_t nact,
          const char *only, /* a worker name, or NULL: all */
          const json_t *known,
          struct where *w,
          struct sl_err *err)
{
    struct decls ds;
    const char *cands[MAX_CANDS];
    size_t ncands = 0;
    const char *jk = NULL;
    const json_t *jv = NULL;
    size_t i = 0;

    memset(&ds, 0, sizeof(ds));
    for (i = 0; i < nact; i++) {
        const struct sl__jm_param_decl *p = NULL;

        if (ws[i] == NULL || (only != NULL && strcmp(ws[i]->name, only) != 0)) {
            continue;
        }
        p = sl__jm_param_find(ws[i]->params, ws[i]->nparams, name);
        if (p == NULL) {
            /* "any further parameters": the value is checked against
             * the wildcard's type ("any": not looked into) */
            p = sl__jm_param_wildcard(ws[i]->params, ws[i]->nparams);
        }
        if (p != NULL) {
            decls_add(&ds, p);
        }
    }
    if (ds.n == 0 && (only != NULL ? !is_engine_key(name)
                                   : json_object_get(known, name) == NULL)) {
        for (i = 0; i < nact; i++) {
            if (ws[i] != NULL &&
                (only == NULL || strcmp(ws[i]->name, only) == 0)) {
                add_names(ws[i], cands, &ncands);
            }
        }
        json_object_foreach((json_t *)(only == NULL ? known : NULL), jk, jv)
        {
            if (ncands < MAX_CANDS) {
                cands[ncands++] = jk;
            }
        }
        w->path[0] = '\0';
        if (only != NULL) {
            char prefix[FIELD_MAX];

            fmt_text(prefix, sizeof(prefix), "%s.", only);
            return unknown_key(w, prefix, name, cands, ncands, err);
        }
        return unknown_key(w, "", key, cands, ncands, err);
    }
    fmt_text(w->path, sizeof(w->path), "%s", key);
    return check_value(&ds, v, w, err);
}

int
sl__jm_params_check_job(const json_t *job,
                        const json_t *wf,
                        const struct sl__jm_worker *const *ws,
                        size_t nact,
                        const json_t *known,
                        struct sl_err *err)
{
    const json_t *params = json_object_get(job, "parameters");
    char who[FIELD_MAX + 8];
    struct where w;
    const char *key = NULL;
    const json_t *v = NULL;
    int rc = 0;

    fmt_text(who,
             sizeof(who),
             "job '%s'",
             json_string_value(json_object_get(job, "name")));
    memset(&w, 0, sizeof(w));
    w.who = who;
    w.base = "parameters";
    json_object_foreach((json_t *)params, key, v)
    {
        const char *owner = sl__jm_key_owner(wf, key);
        const char *name = owner != NULL ? key + strlen(owner) + 1 : key;

        rc = check_key(key, name, v, ws, nact, owner, known, &w, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int
sl__jm_params_check_workflow(const json_t *wf,
                             const struct sl__jm_worker *const *ws,
                             size_t nact,
                             const json_t *known,
                             struct sl_err *err)
{
    const json_t *actions = json_object_get(wf, "actions");
    json_t *engine = json_object();
    char who[FIELD_MAX + 16];
    char base[FIELD_MAX];
    struct where w;
    const char *key = NULL;
    const json_t *v = NULL;
    size_t i = 0;
    int rc = 0;

    sl__jm_params_add_engine_keys(engine);
    memset(&w, 0, sizeof(w));
    w.who = who;
    w.base = "parameters";
    fmt_text(who,
             sizeof(who),
             "workflow '%s'",
             json_string_value(json_object_get(wf, "name")));
    json_object_foreach(json_object_get(wf, "parameters"), key, v)
    {
        rc = check_key(key, key, v, ws, nact, NULL, known, &w, err);
        if (rc != 0) {
            goto out;
        }
    }
    w.base = base;
    for (i = 0; i < nact; i++) {
        const json_t *act = i == 0 ? json_object_get(wf, "startAction")
                                   : json_array_get(actions, i - 1);

        if (i == 0) {
            fmt_text(base, sizeof(base), "startAction.parameters");
            fmt_text(who,
                     sizeof(who),
                     "workflow '%s': start action (%s)",
                     json_string_value(json_object_get(wf, "name")),
                     json_string_value(json_object_get(act, "worker")));
        } else {
            fmt_text(base, sizeof(base), "actions[%zu].parameters", i - 1);
            fmt_text(who,
                     sizeof(who),
                     "workflow '%s': action %zu (%s)",
                     json_string_value(json_object_get(wf, "name")),
                     i,
                     json_string_value(json_object_get(act, "worker")));
        }
        json_object_foreach(json_object_get(act, "parameters"), key, v)
        {
            rc = check_key(key, key, v, &ws[i], 1, NULL, engine, &w, err);
            if (rc != 0) {
                goto out;
            }
        }
    }

out:
    json_decref(engine);
    return rc;
}

/* ------------------------------------------------------------------------
 * Task parameters (docs/jobmanager-definitions.md "Parameter resolution").
 * --------------------------------------------------------------------- */

/* Action @p i of @p wf: 0 is the start action, then actions[i - 1]. */
static const json_t *
action_of(const json_t *wf, size_t i)
{
    if (i == 0) {
        return json_object_get(wf, "startAction");
    }
    return json_array_get(json_object_get(wf, "actions"), i - 1);
}

/*
 * The worker of @p wf that a job parameter key is meant for: the longest
 * worker name W used in the workflow such that the key is "W.<something>".
 * Longest match keeps worker names that contain dots unambiguous.
 */
const char *
sl__jm_key_owner(const json_t *wf, const char *key)
{
    const char *best = NULL;
    size_t bestlen = 0;
    size_t i = 0;
    size_t n =
        wf != NULL ? 1 + json_array_size(json_object_get(wf, "actions")) : 0;

    for (i = 0; wf != NULL && i < n; i++) {
        const char *w =
            json_string_value(json_object_get(action_of(wf, i), "worker"));
        size_t len = w != NULL ? strlen(w) : 0;

        if (len > bestlen && strncmp(key, w, len) == 0 && key[len] == '.' &&
            key[len + 1] != '\0') {
            best = w;
            bestlen = len;
        }
    }
    return best;
}

static void
merge_params(json_t *out, const json_t *params)
{
    const char *key = NULL;
    const json_t *v = NULL;

    json_object_foreach((json_t *)params, key, v)
    {
        (void)json_object_set_new(out, key, json_deep_copy(v));
    }
}

json_t *
sl__jm_task_params(const json_t *job,
                   const json_t *workflow,
                   const json_t *action)
{
    json_t *out = json_object();
    const json_t *jp = json_object_get(job, "parameters");
    const char *worker = json_string_value(json_object_get(action, "worker"));
    const char *key = NULL;
    const json_t *v = NULL;

    /* Plain job parameters; keys meant for some worker are held back. */
    json_object_foreach((json_t *)jp, key, v)
    {
        if (sl__jm_key_owner(workflow, key) == NULL) {
            (void)json_object_set_new(out, key, json_deep_copy(v));
        }
    }
    /* "<worker>.<param>" for this worker, prefix stripped. */
    json_object_foreach((json_t *)jp, key, v)
    {
        const char *owner = sl__jm_key_owner(workflow, key);

        if (owner != NULL && worker != NULL && strcmp(owner, worker) == 0) {
            (void)json_object_set_new(
                out, key + strlen(owner) + 1, json_deep_copy(v));
        }
    }
    merge_params(out, json_object_get(workflow, "parameters"));
    merge_params(out, json_object_get(action, "parameters"));
    return out;
}

/* ------------------------------------------------------------------------
 * One value per job ("sameForJob" declarations).
 * --------------------------------------------------------------------- */

/* The action label of messages: "start action" or "action <i>". */
static void
action_label(size_t i, char *label, size_t cap)
{
    if (i == 0) {
        fmt_text(label, cap, "the start action");
    } else {
        fmt_text(label, cap, "action %zu", i);
    }
}

/* @p v for a message: a string as it is, anything else as JSON. */
static void
value_text(const json_t *v, char *out, size_t cap)
{
    char *dump = NULL;

    if (json_is_string(v)) {
        fmt_text(out, cap, "%s", json_string_value(v));
        return;
    }
    dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    fmt_text(out, cap, "%s", dump != NULL ? dump : "?");
    sl_free(dump);
}

/* The value action @p i resolves @p p to: set, else the default (new
 * reference, or NULL when neither). */
static json_t *
same_value(const json_t *job,
           const json_t *wf,
           size_t i,
           const struct sl__jm_param_decl *p)
{
    json_t *params = sl__jm_task_params(job, wf, action_of(wf, i));
    json_t *v = json_incref(json_object_get(params, p->name));

    json_decref(params);
    if (v == NULL && p->dflt != NULL) {
        v = json_incref(p->dflt);
    }
    return v;
}

/* Parameter @p p of action @p i against the first earlier action whose
 * worker declares it sameForJob and resolves it to a value. */
static int
check_same_one(const json_t *job,
               const json_t *wf,
               const struct sl__jm_worker *const *ws,
               size_t i,
               const struct sl__jm_param_decl *p,
               struct sl_err *err)
{
    json_t *v = same_value(job, wf, i, p);
    json_t *first = NULL;
    char vt[128];
    char ft[128];
    char l0[32];
    char l1[32];
    char field[FIELD_MAX];
    size_t j = 0;
    int rc = 0;

    for (j = 0; v != NULL && j < i && first == NULL; j++) {
        const struct sl__jm_param_decl *q =
            ws[j] != NULL
                ? sl__jm_param_find(ws[j]->params, ws[j]->nparams, p->name)
                : NULL;

        if (q != NULL && q->same_for_job) {
            first = same_value(job, wf, j, q);
        }
    }
    if (first != NULL && !json_equal(first, v)) {
        j--;
        value_text(v, vt, sizeof(vt));
        value_text(first, ft, sizeof(ft));
        action_label(i, l1, sizeof(l1));
        action_label(j, l0, sizeof(l0));
        fmt_text(field, sizeof(field), "parameters.%s", p->name);
        rc = sl_err_set(err,
                        SL_EINVALDEF,
                        field,
                        "job '%s': %s is '%s' for %s (%s) but '%s' for %s "
                        "(%s): it is one value per job (sameForJob), set it "
                        "in the job's parameters",
                        json_string_value(json_object_get(job, "name")),
                        p->name,
                        vt,
                        l1,
                        ws[i]->name,
                        ft,
                        l0,
                        ws[j]->name);
    }
    json_decref(first);
    json_decref(v);
    return rc;
}

int
sl__jm_params_check_same(const json_t *job,
                         const json_t *wf,
                         const struct sl__jm_worker *const *ws,
                         size_t nact,
                         struct sl_err *err)
{
    size_t i = 0;
    size_t k = 0;
    int rc = 0;

    for (i = 1; rc == 0 && i < nact; i++) {
        for (k = 0; rc == 0 && ws[i] != NULL && k < ws[i]->nparams; k++) {
            if (ws[i]->params[k].same_for_job) {
                rc = check_same_one(job, wf, ws, i, &ws[i]->params[k], err);
            }
        }
    }
    return rc;
}
