/*
 * Helpers shared by the jobmanager definitions unit tests (test_jm_defs,
 * test_jm_params): test JSON written with single quotes, putting a
 * definition, and a registry made from a list of worker descriptions.
 * Include after cmocka.h.
 */
#ifndef SL_TESTS_JM_FIXTURE_H
#define SL_TESTS_JM_FIXTURE_H

#include <stddef.h>

#include "jobmanager/jobmanager_int.h"

/* Parse @p s with ' for "; new reference, the test fails on bad JSON. */
static inline json_t *
jq(const char *s)
{
    char *copy = sl_strdup(s);
    json_t *j = NULL;
    json_error_t jerr;
    size_t i = 0;

    for (i = 0; copy[i] != '\0'; i++) {
        if (copy[i] == '\'') {
            copy[i] = '"';
        }
    }
    j = json_loads(copy, 0, &jerr);
    if (j == NULL) {
        fail_msg("bad test JSON (%s): %s", jerr.text, copy);
    }
    sl_free(copy);
    return j;
}

/* Put @p json (quoted as for jq) with @p flags (SL__JM_PUT_*) and return
 * the code. */
static inline int
put(struct sl__jm_defs *d,
    enum sl__jm_kind kind,
    const char *json,
    int flags,
    struct sl_err *err)
{
    json_t *j = jq(json);
    int rc = 0;

    sl_err_clear(err);
    rc = sl__jm_defs_put(d, kind, j, flags, NULL, err);
    json_decref(j);
    return rc;
}

/* A new registry with the @p n worker descriptions @p workers (quoted as
 * for jq); the test fails when one does not parse or add. */
static inline struct sl__jm_defs *
jm_defs_with_workers(const char *const *workers, size_t n)
{
    struct sl__jm_defs *d = sl__jm_defs_new();
    size_t i = 0;

    for (i = 0; i < n; i++) {
        json_t *j = jq(workers[i]);
        struct sl__jm_worker *w = NULL;
        struct sl_err err;

        if (sl__jm_worker_parse(j, &w, &err) != 0) {
            fail_msg("worker %zu: %s (%s)", i, err.message, err.field);
        }
        assert_int_equal(sl__jm_defs_add_worker(d, w), 0);
        json_decref(j);
    }
    return d;
}

#endif /* SL_TESTS_JM_FIXTURE_H */
