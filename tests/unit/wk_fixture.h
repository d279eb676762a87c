/*
 * Set-up shared by the worker unit tests (test_workers, test_file_*,
 * test_text_extractor, test_index_writer): a temporary directory under
 * $TMPDIR (default /tmp), a filesystem object store in it with store "s",
 * and the in-process task backend over that store.  Include after
 * cmocka.h and workers/workers_int.h.
 */
#ifndef SL_TESTS_WK_FIXTURE_H
#define SL_TESTS_WK_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/* Make "<$TMPDIR>/<name>.XXXXXX" in @dir (@cap bytes), then *store (caller
 * closes with wk_env_close) and *b over it. */
static void
wk_env_open(char *dir,
            size_t cap,
            const char *name,
            struct sl_obj **store,
            struct sl__wk_backend **b)
{
    const char *tmp = getenv("TMPDIR");

    (void)snprintf(dir, cap, "%s/%s.XXXXXX", tmp != NULL ? tmp : "/tmp", name);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(sl_obj_open_fs(dir, SL_DURABILITY_PROCESS, store, NULL),
                     0);
    assert_int_equal(sl_obj_store_create(*store, "s", NULL, NULL), 0);
    *b = sl__wk_local_new(NULL, *store);
}

/* Free @b, close @store and remove @dir with everything in it. */
static void
wk_env_close(const char *dir, struct sl_obj *store, struct sl__wk_backend *b)
{
    char *cmd = sl_asprintf("rm -rf '%s'", dir);

    sl__wk_local_free(b);
    sl_obj_close(store);
    assert_int_equal(system(cmd), 0);
    sl_free(cmd);
}

#endif /* SL_TESTS_WK_FIXTURE_H */
