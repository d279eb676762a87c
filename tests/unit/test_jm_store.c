/*
 * Unit tests of the jobmanager's LMDB state store (group commit) on a real
 * environment in a temporary directory: a change that LMDB refuses on its
 * own is left out and the rest of its group commits, and the store keeps
 * taking changes afterwards; a conditional delete keeps a value that
 * starts with its bytes and deletes any other.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobmanager/jobmanager_int.h"
#include "tmpdir.h"

static void
test_store_bad_key_alone(void **state)
{
    char tmpl[256];
    char *dir = NULL;
    char key[600];
    struct sl__jm_store *st = NULL;
    struct sl_err err;
    json_t *j = NULL;
    uint64_t seq = 0;
    pthread_mutex_t swap = PTHREAD_MUTEX_INITIALIZER;

    (void)state;
    dir = tmpdir_make(tmpl, sizeof(tmpl), "jmstore.");
    assert_non_null(dir);
    sl_err_clear(&err);
    assert_int_equal(sl__jm_store_open(dir, SL_DURABILITY_PROCESS, &st, &err),
                     0);

    /* One group: a good put, a key over LMDB's 511 bytes, a good put.
     * The writer takes a group only with the swap lock, which is held
     * while the three are queued, so they are one group. */
    sl__jm_store_set_swap_lock(st, &swap);
    memset(key, 'k', sizeof(key));
    (void)pthread_mutex_lock(&swap);
    (void)sl__jm_store_put(st, SL__JM_DB_EVENTS, "before", 6, "[1]", 3);
    (void)sl__jm_store_put(st, SL__JM_DB_EVENTS, key, sizeof(key), "[1]", 3);
    seq = sl__jm_store_put(st, SL__JM_DB_EVENTS, "after", 5, "[2]", 3);
    (void)pthread_mutex_unlock(&swap);
    assert_int_equal(sl__jm_store_wait(st, seq, &err), 0);
    assert_int_equal(
        sl__jm_store_get_json(st, SL__JM_DB_EVENTS, "before", 6, &j), 0);
    json_decref(j);
    assert_int_equal(
        sl__jm_store_get_json(st, SL__JM_DB_EVENTS, "after", 5, &j), 0);
    assert_int_equal(json_integer_value(json_array_get(j, 0)), 2);
    json_decref(j);

    /* The store still takes changes. */
    seq = sl__jm_store_put(st, SL__JM_DB_EVENTS, "later", 5, "[3]", 3);
    assert_int_equal(sl__jm_store_wait(st, seq, &err), 0);
    assert_int_equal(
        sl__jm_store_get_json(st, SL__JM_DB_EVENTS, "later", 5, &j), 0);
    json_decref(j);
    seq = sl__jm_store_del(st, SL__JM_DB_EVENTS, key, sizeof(key));
    assert_int_equal(sl__jm_store_wait(st, seq, &err), 0);
    sl__jm_store_close(st);

    assert_int_equal(tmpdir_remove(dir), 0);
}

static void
test_store_del_unless(void **state)
{
    char tmpl[256];
    char *dir = NULL;
    struct sl__jm_store *st = NULL;
    struct sl_err err;
    json_t *j = NULL;
    uint64_t seq = 0;

    (void)state;
    dir = tmpdir_make(tmpl, sizeof(tmpl), "jmstore.");
    assert_non_null(dir);
    sl_err_clear(&err);
    assert_int_equal(sl__jm_store_open(dir, SL_DURABILITY_PROCESS, &st, &err),
                     0);
    (void)sl__jm_store_put(st, SL__JM_DB_DOCS, "a", 1, "{\"r\":\"1\"}", 9);
    (void)sl__jm_store_put(st, SL__JM_DB_DOCS, "b", 1, "{\"r\":\"2\"}", 9);
    /* the same group: queued after the puts, applied after them */
    (void)sl__jm_store_del_unless(
        st, SL__JM_DB_DOCS, "a", 1, "{\"r\":\"1\"", 8);
    (void)sl__jm_store_del_unless(
        st, SL__JM_DB_DOCS, "b", 1, "{\"r\":\"1\"", 8);
    seq = sl__jm_store_del_unless(
        st, SL__JM_DB_DOCS, "absent", 6, "{\"r\":\"1\"", 8);
    assert_int_equal(sl__jm_store_wait(st, seq, &err), 0);
    assert_int_equal(sl__jm_store_get_json(st, SL__JM_DB_DOCS, "a", 1, &j), 0);
    assert_string_equal(json_string_value(json_object_get(j, "r")), "1");
    json_decref(j);
    j = NULL;
    assert_int_not_equal(sl__jm_store_get_json(st, SL__JM_DB_DOCS, "b", 1, &j),
                         0);
    assert_null(j);
    /* a prefix longer than the value deletes it */
    seq = sl__jm_store_del_unless(
        st, SL__JM_DB_DOCS, "a", 1, "{\"r\":\"1\"}   ", 12);
    assert_int_equal(sl__jm_store_wait(st, seq, &err), 0);
    assert_int_not_equal(sl__jm_store_get_json(st, SL__JM_DB_DOCS, "a", 1, &j),
                         0);
    sl__jm_store_close(st);
    assert_int_equal(tmpdir_remove(dir), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_bad_key_alone),
        cmocka_unit_test(test_store_del_unless),
    };

    json_set_alloc_funcs(sl_malloc, sl_free);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
