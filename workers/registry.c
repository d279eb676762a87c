/*
 * Worker type tables: finding a type by name, checking a table (ABI
 * version, description) and registering the descriptions with the
 * jobmanager.  The tables are the caller's (builtin/'s built-in workers,
 * the test workers of sluice-test): the runtime keeps no list of its own.
 */
#include <string.h>

#include "workers/workers_int.h"

const struct sl_worker_type *
sl_worker_find(const struct sl_worker_type *const *types,
               size_t n,
               const char *name)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (types[i] != NULL && strcmp(types[i]->name, name) == 0) {
            return types[i];
        }
    }
    return NULL;
}

/* Parse the description text of @type and check it names @type. */
static int
parse_desc(const struct sl_worker_type *type, json_t **out, struct sl_err *err)
{
    json_error_t jerr;
    json_t *d = NULL;

    *out = NULL;
    if (type->abi_version != SL_WORKER_ABI_VERSION || type->name == NULL ||
        type->perform == NULL || type->description == NULL) {
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "abi_version",
                          "worker type '%s': ABI version %u (want %u) or "
                          "missing name, perform or description",
                          type->name ? type->name : "?",
                          type->abi_version,
                          SL_WORKER_ABI_VERSION);
    }
    d = json_loads(type->description, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(d)) {
        json_decref(d);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "description",
                          "worker type '%s': description is not a JSON "
                          "object (%s)",
                          type->name,
                          jerr.text);
    }
    if (!json_is_string(json_object_get(d, "name")) ||
        strcmp(json_string_value(json_object_get(d, "name")), type->name) !=
            0) {
        json_decref(d);
        return sl_err_set(err,
                          SL_EINVALDEF,
                          "description.name",
                          "worker type '%s': the description has another name",
                          type->name);
    }
    *out = d;
    return 0;
}

int
sl__wk_type_flags(const struct sl_worker_type *type,
                  unsigned *flags,
                  struct sl_err *err)
{
    json_t *d = NULL;
    json_t *m = NULL;
    size_t i = 0;
    int rc = 0;

    *flags = 0;
    rc = parse_desc(type, &d, err);
    if (rc != 0) {
        return rc;
    }
    json_array_foreach(json_object_get(d, "modes"), i, m)
    {
        if (json_is_string(m) &&
            strcmp(json_string_value(m), "autoCommit") == 0) {
            *flags |= SL__WK_AUTO_COMMIT;
        }
    }
    json_decref(d);
    return 0;
}

int
sl_worker_register_all(struct sl_jm *jm,
                       const struct sl_worker_type *const *types,
                       size_t n,
                       struct sl_err *err)
{
    json_t *d = NULL;
    size_t i = 0;
    int rc = 0;

    for (i = 0; i < n; i++) {
        rc = parse_desc(types[i], &d, err);
        if (rc == 0) {
            rc = sl_jm_register_worker(jm, d, types[i]->partitions, err);
            json_decref(d);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
