/*
 * Unit tests of sl_index_drop (docs/index.md "Deleting an index"): every
 * file of the index goes (all shards, -wal and -shm), other indexes and
 * indexes whose names start alike stay, a later write creates it again
 * empty (also a writer that read the shard count before the drop, which
 * must not leave a lone shard file), an index only on disk (not open) is
 * dropped too, and drops while other threads write and query the index
 * never touch a closed connection (run under ASan) and leave every call
 * with 0 or SL_ENOENT.  Each test works in its own temporary directory
 * under $TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "index/index.h"
#include "index_fixture.h"

static int
setup(void **state)
{
    return index_setup(state, "test_index_drop.");
}

/* Upsert {"_recordid": id, "text": text}; returns the result. */
static int
put(struct sl_index_set *set, const char *index, const char *id)
{
    json_t *doc = json_pack("{s:s, s:s}", "_recordid", id, "text", "words");
    int rc = sl_index_upsert(set, index, doc, NULL);

    json_decref(doc);
    return rc;
}

/* The files of @dir whose names start with @prefix, joined by spaces. */
static void
files(const char *dir, const char *prefix, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    size_t len = 0;

    assert_non_null(d);
    out[0] = '\0';
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
            len += (size_t)snprintf(
                out + len, cap - len, "%s%s", len ? " " : "", de->d_name);
            assert_true(len < cap);
        }
    }
    (void)closedir(d);
}

/* Is there a file @name in @dir? */
static int
has_file(const char *dir, const char *name)
{
    char path[1024];
    struct stat sb;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &sb) == 0;
}

/* The names in sl_index_list, joined by spaces. */
static void
names(struct sl_index_set *set, char *out, size_t cap)
{
    json_t *list = NULL;
    json_t *item = NULL;
    size_t len = 0;
    size_t i = 0;

    assert_int_equal(sl_index_list(set, &list, NULL), 0);
    out[0] = '\0';
    json_array_foreach(list, i, item)
    {
        len +=
            (size_t)snprintf(out + len,
                             cap - len,
                             "%s%s",
                             len ? " " : "",
                             json_string_value(json_object_get(item, "name")));
    }
    json_decref(list);
}

/* ------------------------------------------------------------------------
 * Tests
 * --------------------------------------------------------------------- */

static void
test_drop_removes_files_and_recreates(void **state)
{
    struct fixture *f = *state;
    json_t *res = NULL;
    char buf[512];
    struct sl_err err;
    uint64_t n = 0;
    int i = 0;

    for (i = 0; i < 20; i++) {
        (void)snprintf(buf, sizeof(buf), "doc-%d", i);
        assert_int_equal(put(f->set, "docs", buf), 0);
    }
    assert_int_equal(put(f->set, "docsx", "x"), 0);
    for (i = 0; i < 10; i++) { /* both shards */
        (void)snprintf(buf, sizeof(buf), "y-%d", i);
        assert_int_equal(put(f->set, "docs.db", buf), 0);
    }
    /* open the readers too */
    assert_int_equal(sl_index_search(f->set, "docs", "words", 5, 0, &res, NULL),
                     0);
    json_decref(res);
    assert_true(has_file(f->dir, "docs.db-wal")); /* open: WAL mode */
    assert_true(has_file(f->dir, "docs~1.db"));
    sl_err_clear(&err);
    assert_int_equal(sl_index_drop(f->set, "docs", &err), 0);
    files(f->dir, "docs.db", buf, sizeof(buf));
    assert_int_equal(strncmp(buf, "docs.db.db", 10), 0); /* "docs.db"'s */
    files(f->dir, "docs~", buf, sizeof(buf));
    assert_string_equal(buf, "");
    /* the indexes whose names start alike stay */
    assert_true(has_file(f->dir, "docsx.db"));
    assert_true(has_file(f->dir, "docs.db.db"));
    assert_true(has_file(f->dir, "docs.db~1.db"));
    names(f->set, buf, sizeof(buf));
    assert_string_equal(buf, "docs.db docsx");
    assert_int_equal(sl_index_count(f->set, "docs", &n, &err), SL_ENOENT);
    assert_int_equal(sl_index_drop(f->set, "docs", &err), SL_ENOENT);
    assert_string_equal(err.field, "index");
    assert_int_equal(sl_index_drop(f->set, "nosuch", &err), SL_ENOENT);
    assert_int_equal(sl_index_drop(f->set, "bad name", &err), SL_EBADNAME);
    /* a write creates it again, empty */
    assert_int_equal(put(f->set, "docs", "new"), 0);
    assert_int_equal(count(f->set, "docs"), 1);
    assert_int_equal(count(f->set, "docsx"), 1);
    assert_int_equal(count(f->set, "docs.db"), 10);
}

/* An index that is on disk but not open in the set, and a lone shard
 * file that is no index. */
static void
test_drop_not_open(void **state)
{
    struct fixture *f = *state;
    char buf[1024];
    struct sl_err err;
    FILE *fp = NULL;

    assert_int_equal(put(f->set, "docs", "a"), 0);
    assert_int_equal(put(f->set, "docs", "b"), 0);
    sl_index_close(f->set);
    assert_int_equal(sl_index_open(f->dir, &f->set, &err), 0);
    assert_int_equal(sl_index_drop(f->set, "docs", &err), 0);
    files(f->dir, "docs", buf, sizeof(buf));
    assert_string_equal(buf, "");
    (void)snprintf(buf, sizeof(buf), "%s/lone~1.db", f->dir);
    fp = fopen(buf, "w");
    assert_non_null(fp);
    (void)fclose(fp);
    assert_int_equal(sl_index_drop(f->set, "lone", &err), SL_ENOENT);
}

/* A writer that read the shard count, then the index was dropped: its
 * write to shard 1 creates shard 0 first, so the index exists again. */
static void
test_drop_between_count_and_write(void **state)
{
    struct fixture *f = *state;
    struct sl_index_op op;
    json_t *doc = NULL;
    char id[32];
    unsigned n = 0;
    int i = 0;

    assert_int_equal(put(f->set, "docs", "a"), 0);
    assert_int_equal(sl_index_shards(f->set, "docs", 0, &n, NULL), 0);
    assert_int_equal(n, 2);
    do {
        (void)snprintf(id, sizeof(id), "id-%d", i++);
    } while (sl_index_shard_of(id, n) != 1);
    assert_int_equal(sl_index_drop(f->set, "docs", NULL), 0);
    doc = json_pack("{s:s}", "_recordid", id);
    memset(&op, 0, sizeof(op));
    op.doc = doc;
    assert_int_equal(sl_index_apply_shard(f->set, "docs", 1, &op, 1, 0, NULL),
                     0);
    json_decref(doc);
    assert_int_equal(count(f->set, "docs"), 1);
}

/* Threads writing and querying one index while it is dropped again and
 * again: every call answers 0 or SL_ENOENT, none touches a freed shard. */
struct worker {
    struct sl_index_set *set;
    int writer;
    atomic_int *stop;
    int bad; /* a result other than 0 and SL_ENOENT */
    unsigned ops;
};

static void *
worker_main(void *arg)
{
    struct worker *w = arg;
    char id[32];
    unsigned i = 0;

    for (i = 0; !*w->stop; i++) {
        json_t *res = NULL;
        uint64_t n = 0;
        int rc = 0;

        (void)snprintf(id, sizeof(id), "id-%u", i % 50);
        if (w->writer) {
            rc = put(w->set, "docs", id);
        } else if (i % 3 == 0) {
            rc = sl_index_search(w->set, "docs", "words", 10, 0, &res, NULL);
        } else if (i % 3 == 1) {
            rc = sl_index_count(w->set, "docs", &n, NULL);
        } else {
            rc = sl_index_get(w->set, "docs", id, &res, NULL);
            rc = rc == SL_ENOENT ? 0 : rc;
        }
        json_decref(res);
        if (rc != 0 && rc != SL_ENOENT) {
            w->bad = rc;
        }
        w->ops++;
    }
    return NULL;
}

static void
test_drop_while_in_use(void **state)
{
    struct fixture *f = *state;
    struct worker w[4];
    pthread_t th[4];
    atomic_int stop = 0;
    int dropped = 0;
    int i = 0;

    assert_int_equal(put(f->set, "docs", "seed"), 0);
    for (i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].set = f->set;
        w[i].writer = i < 2;
        w[i].stop = &stop;
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 0; i < 40; i++) {
        int rc = sl_index_drop(f->set, "docs", NULL);

        assert_true(rc == 0 || rc == SL_ENOENT);
        dropped += rc == 0;
        if (rc == SL_ENOENT) {
            (void)put(f->set, "docs", "again");
        }
    }
    stop = 1;
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(w[i].bad, 0);
        assert_true(w[i].ops > 0);
    }
    assert_true(dropped > 0);
    /* what is left is a working index */
    assert_int_equal(put(f->set, "docs", "last"), 0);
    assert_true(count(f->set, "docs") >= 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_drop_removes_files_and_recreates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_not_open, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_drop_between_count_and_write, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_drop_while_in_use, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
