/*
 * The workers' definition check (sl_worker_def_check, installed with
 * sl_jm_set_def_check): when a job is defined, the values the jobmanager
 * found well-shaped are read the way the workers read them at run time,
 * so a job that a task would refuse is refused at once
 * (docs/jobmanager-definitions.md "Checks that catch mistakes").
 *
 * It walks the parameter declarations of the worker's description and
 * applies the workers' own parsers by declared type (param_values.c):
 * "integer" goes through sl_worker_json_u64 (what the filters use, and
 * the rules of sl_task_param_u64), "regex" through
 * sl_worker_regex_compile (what the include/exclude lists use);
 * "minimum", "maximum" and "maxItems" of a declaration bound them.  The
 * rules of the built-in workers' shared parameters (a dataSource) are
 * builtin/'s, sl_builtin_def_check, which calls this one.
 */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "workers/workers.h"

#define PATH_MAX_LEN 128 /* sizeof(struct sl_err.field) */

static int check_value(const json_t *decl,
                       const json_t *v,
                       char *path,
                       struct sl_err *err);

/* Bounds of an unsigned declaration: "minimum", "maximum" (if given). */
static int
check_range(const json_t *decl,
            uint64_t x,
            const char *path,
            const char *field,
            struct sl_err *err)
{
    const json_t *min = json_object_get(decl, "minimum");
    const json_t *max = json_object_get(decl, "maximum");
    int below = json_is_integer(min) && json_integer_value(min) > 0 &&
                x < (uint64_t)json_integer_value(min);
    int above = json_is_integer(max) && json_integer_value(max) >= 0 &&
                x > (uint64_t)json_integer_value(max);

    if (!below && !above) {
        return 0;
    }
    if (json_is_integer(max)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          field,
                          "parameter '%s' is %llu, must be from %lld to %lld",
                          path,
                          (unsigned long long)x,
                          json_is_integer(min) ? json_integer_value(min) : 0,
                          json_integer_value(max));
    }
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "parameter '%s' is %llu, must be at least %lld",
                      path,
                      (unsigned long long)x,
                      json_integer_value(min));
}

static int
check_integer(const json_t *decl,
              const json_t *v,
              const char *path,
              const char *field,
              struct sl_err *err)
{
    uint64_t x = 0;

    if (sl_worker_json_u64(v, 0, &x) != 0) {
        if (json_is_string(v)) {
            return sl_err_set(err,
                              SL_EINVALDEF,
                              field,
                              "parameter '%s' must be an unsigned integer "
                              "(digits only, no unit), not '%s'",
                              path,
                              json_string_value(v));
        }
        return sl_err_set(err,
                          SL_EINVALDEF,
                          field,
                          "parameter '%s' must be an unsigned integer",
                          path);
    }
    return check_range(decl, x, path, field, err);
}

static int
check_regex(const json_t *v,
            const char *path,
            const char *field,
            struct sl_err *err)
{
    regex_t re;
    char why[128];
    int rc = 0;

    if (!json_is_string(v)) {
        return 0; /* the jobmanager's shape check reports it */
    }
    rc = sl_worker_regex_compile(&re, json_string_value(v));
    if (rc == 0) {
        regfree(&re);
        return 0;
    }
    (void)regerror(rc, NULL, why, sizeof(why));
    return sl_err_set(err,
                      SL_EINVALDEF,
                      field,
                      "parameter '%s' is not a valid POSIX extended regular "
                      "expression ('%s'): %s",
                      path,
                      json_string_value(v),
                      why);
}

/* The declaration named @p name in array @p decls, else its "<...>" one. */
static const json_t *
find_decl(const json_t *decls, const char *name)
{
    const json_t *d = NULL;
    const json_t *wild = NULL;
    size_t i = 0;

    json_array_foreach(decls, i, d)
    {
        const char *n = json_string_value(json_object_get(d, "name"));
        size_t len = n != NULL ? strlen(n) : 0;

        if (n != NULL && strcmp(n, name) == 0) {
            return d;
        }
        if (len >= 3 && n[0] == '<' && n[len - 1] == '>') {
            wild = d;
        }
    }
    return wild;
}

/* Each member of object @p v that @p decls declares. */
static int
check_members(const json_t *decls,
              const json_t *v,
              char *path,
              struct sl_err *err)
{
    size_t len = strlen(path);
    const char *key = NULL;
    const json_t *m = NULL;
    int rc = 0;

    json_object_foreach((json_t *)v, key, m)
    {
        const json_t *d = find_decl(decls, key);

        if (d == NULL) {
            continue;
        }
        (void)snprintf(
            path + len, PATH_MAX_LEN - len, "%s%s", len > 0 ? "." : "", key);
        rc = check_value(d, m, path, err);
        path[len] = '\0';
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int
check_value(const json_t *decl, const json_t *v, char *path, struct sl_err *err)
{
    const char *type = json_string_value(json_object_get(decl, "type"));
    const json_t *max = json_object_get(decl, "maxItems");
    const json_t *e = NULL;
    char field[PATH_MAX_LEN + 16];
    size_t len = strlen(path);
    size_t i = 0;
    int rc = 0;

    (void)snprintf(field, sizeof(field), "parameters.%s", path);
    if (type == NULL) {
        return 0;
    }
    if (strcmp(type, "integer") == 0) {
        return check_integer(decl, v, path, field, err);
    }
    if (strcmp(type, "regex") == 0) {
        return check_regex(v, path, field, err);
    }
    if (strcmp(type, "object") == 0 && json_is_object(v)) {
        return check_members(json_object_get(decl, "members"), v, path, err);
    }
    if (strcmp(type, "array") != 0 || !json_is_array(v)) {
        return 0;
    }
    if (json_is_integer(max) &&
        json_array_size(v) > (size_t)json_integer_value(max)) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          field,
                          "parameter '%s' has %zu elements, at most %lld "
                          "are allowed",
                          path,
                          json_array_size(v),
                          json_integer_value(max));
    }
    json_array_foreach(v, i, e)
    {
        if (json_object_get(decl, "items") == NULL) {
            break;
        }
        (void)snprintf(path + len, PATH_MAX_LEN - len, "[%zu]", i);
        rc = check_value(json_object_get(decl, "items"), e, path, err);
        path[len] = '\0';
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int
sl_worker_def_check(void *arg,
                    const char *job,
                    const char *worker,
                    const json_t *desc,
                    const json_t *params,
                    struct sl_err *err)
{
    const json_t *decls = json_object_get(desc, "parameters");
    const json_t *d = NULL;
    char path[PATH_MAX_LEN];
    size_t i = 0;
    int rc = 0;

    (void)arg;
    (void)job;
    (void)worker;
    json_array_foreach(decls, i, d)
    {
        const char *name = json_string_value(json_object_get(d, "name"));
        const json_t *v = name != NULL ? json_object_get(params, name) : NULL;

        if (v == NULL || name[0] == '<') {
            continue;
        }
        (void)snprintf(path, sizeof(path), "%s", name);
        rc = check_value(d, v, path, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
