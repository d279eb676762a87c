/*
 * Set-up shared by the embedded index unit tests (test_index,
 * test_index_drop): each test gets an index set opened on a fresh
 * directory under $TMPDIR.  A test file defines its setup as a call of
 * index_setup with its own directory prefix; teardown is this one.
 * Include after cmocka.h.
 */
#ifndef SL_TESTS_INDEX_FIXTURE_H
#define SL_TESTS_INDEX_FIXTURE_H

#include <stdint.h>

#include "index/index.h"
#include "tmpdir.h"

struct fixture {
    char dir[512];
    struct sl_index_set *set;
};

/* The fixture in *state: sl_index_open on the directory
 * "<$TMPDIR>/<@prefix>XXXXXX". */
static inline int
index_setup(void **state, const char *prefix)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), prefix));
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);
    *state = f;
    return 0;
}

/* Close the set, remove the directory, free the fixture. */
static inline int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_index_close(f->set);
    (void)tmpdir_remove(f->dir);
    sl_free(f);
    return 0;
}

/* The documents of @index. */
static inline uint64_t
count(struct sl_index_set *set, const char *index)
{
    uint64_t n = 0;

    assert_int_equal(sl_index_count(set, index, &n, NULL), 0);
    return n;
}

#endif /* SL_TESTS_INDEX_FIXTURE_H */
