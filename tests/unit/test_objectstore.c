/*
 * Unit tests for the object store: stores, objects of 0 bytes and several
 * MiB, list order and prefixes, atomic commit, shared and copied data,
 * names, deleted stores, threads; and for the filesystem backend also
 * commit against a writer killed with SIGKILL, the conflict rule,
 * traversal and symbolic links, folder clean-up and fsync durability.
 *
 * Each test gets a fresh directory made with mkdtemp under $TMPDIR that
 * holds the store root ("root") and a directory outside it ("outside").
 * The filesystem tests run twice: with paths resolved by openat2 where
 * the kernel has it (the default), then component by component only.
 * With SL_TEST_S3_ENDPOINT set (tests/s3/with-s3rver.sh sets it), the
 * tests that hold for every backend run against that S3 server instead:
 * each test in a store prefix of its own of the bucket "sluice-test"; the
 * checks of the filesystem's files are left out there (FS_ONLY).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "objectstore/objectstore.h"
#include "objectstore/objectstore_int.h"
#include "tmpdir.h"

#define MIB (1024u * 1024u)

struct fixture {
    char dir[512];     /* the mkdtemp directory */
    char root[600];    /* dir/root: the object store root */
    char outside[600]; /* dir/outside: must never be touched */
    struct sl_obj *o;  /* opened on root, process durability; or on S3 */
    int s3;            /* o is the S3 backend */
};

/* Checks of the filesystem backend's files, left out on S3. */
#define FS_ONLY(f, stmt)                                                       \
    do {                                                                       \
        if (!(f)->s3) {                                                        \
            stmt;                                                              \
        }                                                                      \
    } while (0)

#define S3_BUCKET "sluice-test"

/* s3rver lists in the order of its own files, not in S3's byte order of
 * the keys: on it, the ids listed are compared in byte order. */
static int lists_sorted;

/* The S3 server of SL_TEST_S3_ENDPOINT: @prefix in @bucket (NULL: stores
 * are buckets), opened into *@o.  0 or the error. */
static int
open_s3(const char *bucket, const char *prefix, struct sl_obj **o)
{
    struct sl_obj_s3_config c;
    struct sl_err err;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.endpoint = getenv("SL_TEST_S3_ENDPOINT");
    c.access_key = getenv("SL_TEST_S3_KEY");
    c.secret_key = getenv("SL_TEST_S3_SECRET");
    c.bucket = bucket;
    c.prefix = prefix;
    c.path_style = 1;
    c.part_size = 5u << 20;
    rc = sl_obj_open_s3(&c, o, &err);
    if (rc != 0) {
        print_error("open S3: %s\n", err.message);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------- */

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "objstore-"));
    (void)snprintf(f->root, sizeof(f->root), "%s/data/root", f->dir);
    (void)snprintf(f->outside, sizeof(f->outside), "%s/outside", f->dir);
    assert_int_equal(mkdir(f->outside, 0755), 0);
    if (getenv("SL_TEST_S3_ENDPOINT") != NULL) {
        static int n;
        struct sl_obj *buckets = NULL;
        char prefix[64];

        /* the bucket: a store of the backend whose stores are buckets */
        assert_int_equal(open_s3(NULL, NULL, &buckets), 0);
        assert_int_equal(sl_obj_store_create(buckets, S3_BUCKET, NULL, &err),
                         0);
        sl_obj_close(buckets);
        (void)snprintf(prefix, sizeof(prefix), "t%d-%d/", (int)getpid(), ++n);
        assert_int_equal(open_s3(S3_BUCKET, prefix, &f->o), 0);
        f->s3 = 1;
        lists_sorted = 1;
        *state = f;
        return 0;
    }
    assert_int_equal(
        sl_obj_open_fs(f->root, SL_DURABILITY_PROCESS, &f->o, &err), 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_obj_close(f->o);
    (void)tmpdir_remove(f->dir);
    sl_free(f);
    return 0;
}

/* Deterministic content: byte i of object "seed". */
static void
fill(unsigned char *buf, size_t len, size_t off, unsigned seed)
{
    size_t i = 0;

    for (i = 0; i < len; i++) {
        size_t x = (off + i) * 2654435761u + seed;

        buf[i] = (unsigned char)(x >> 13);
    }
}

/* Writes @p len bytes of pattern @p seed in odd-sized chunks, commits. */
static int
put(struct sl_obj *o,
    const char *store,
    const char *id,
    size_t len,
    unsigned seed,
    int *replaced,
    struct sl_err *err)
{
    struct sl_obj_writer *w = NULL;
    unsigned char *chunk = sl_malloc(65537);
    size_t off = 0;
    int rc = 0;

    rc = sl_obj_writer_open(o, store, id, &w, err);
    while (rc == 0 && off < len) {
        size_t n = len - off < 65537 ? len - off : 65537;

        fill(chunk, n, off, seed);
        rc = sl_obj_writer_write(w, chunk, n, err);
        off += n;
    }
    if (rc == 0) {
        assert_int_equal(sl_obj_writer_size(w), len);
        rc = sl_obj_writer_commit(w, replaced, err);
    }
    sl_obj_writer_free(w);
    sl_free(chunk);
    return rc;
}

/* Reads the object back with read and pread and compares with the pattern. */
static void
check_content(struct sl_obj *o,
              const char *store,
              const char *id,
              size_t len,
              unsigned seed)
{
    struct sl_obj_reader *r = NULL;
    struct sl_err err;
    unsigned char *buf = sl_malloc(len + 1);
    unsigned char *want = sl_malloc(len + 1);
    unsigned char small[100];
    size_t got = 0;
    size_t n = 0;

    fill(want, len, 0, seed);
    assert_int_equal(sl_obj_reader_open(o, store, id, &r, &err), 0);
    assert_int_equal(sl_obj_reader_size(r), len);
    for (;;) {
        size_t cap = len + 1 - got < 40000 ? len + 1 - got : 40000;

        assert_int_equal(sl_obj_reader_read(r, buf + got, cap, &n, &err), 0);
        if (n == 0) {
            break;
        }
        got += n;
        assert_true(got <= len);
    }
    assert_int_equal(got, len);
    assert_memory_equal(buf, want, len);
    if (len > 200) {
        assert_int_equal(
            sl_obj_reader_pread(r, len / 2, small, sizeof(small), &n, &err), 0);
        assert_int_equal(n, sizeof(small));
        assert_memory_equal(small, want + len / 2, sizeof(small));
    }
    assert_int_equal(sl_obj_reader_pread(r, len, small, 10, &n, &err), 0);
    assert_int_equal(n, 0);
    sl_obj_reader_free(r);
    sl_free(buf);
    sl_free(want);
}

/* Collects listed ids, newline-separated, to compare in one go. */
struct collect {
    char out[8192];
    int count;
    int stop_after; /* 0: never stop */
};

static int
collect_cb(void *ctx, const struct sl_obj_info *info)
{
    struct collect *c = ctx;
    size_t len = strlen(c->out);

    (void)snprintf(c->out + len, sizeof(c->out) - len, "%s\n", info->id);
    c->count++;
    if (c->stop_after != 0 && c->count == c->stop_after) {
        return 7;
    }
    return 0;
}

static int
by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of @out in byte order. */
static void
sort_lines(char *out, size_t cap)
{
    char *copy = sl_strdup(out);
    char *lines[256];
    char *save = NULL;
    char *l = NULL;
    size_t n = 0;
    size_t i = 0;

    for (l = strtok_r(copy, "\n", &save); l != NULL && n < 256;
         l = strtok_r(NULL, "\n", &save)) {
        lines[n++] = l;
    }
    qsort(lines, n, sizeof(lines[0]), by_bytes);
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        (void)snprintf(out + strlen(out), cap - strlen(out), "%s\n", lines[i]);
    }
    sl_free(copy);
}

static const char *
list_ids(struct sl_obj *o, const char *store, const char *prefix)
{
    static struct collect c;
    struct sl_err err;

    memset(&c, 0, sizeof(c));
    assert_int_equal(sl_obj_list(o, store, prefix, collect_cb, &c, &err), 0);
    if (lists_sorted) {
        sort_lines(c.out, sizeof(c.out));
    }
    return c.out;
}

static int
store_cb(void *ctx, const char *store)
{
    struct collect *c = ctx;
    size_t len = strlen(c->out);

    (void)snprintf(c->out + len, sizeof(c->out) - len, "%s\n", store);
    return 0;
}

/* Number of entries in @p dir (without . and ..), -1 if it cannot open. */
static int
count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    int n = 0;

    if (d == NULL) {
        return -1;
    }
    for (;;) {
        de = readdir(d);
        if (de == NULL) {
            break;
        }
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            n++;
        }
    }
    (void)closedir(d);
    return n;
}

static int path_exists(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* 1 if the path (printf-formatted) exists, without following a link. */
static int
path_exists(const char *fmt, ...)
{
    char path[1024];
    struct stat st;
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    return lstat(path, &st) == 0;
}

static void
write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

static void
assert_file_text(const char *path, const char *text)
{
    char buf[256];
    FILE *fp = fopen(path, "r");
    size_t n = 0;

    assert_non_null(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    (void)fclose(fp);
    assert_string_equal(buf, text);
}

/* ------------------------------------------------------------------------
 * Tests
 * --------------------------------------------------------------------- */

static void
test_obj_stores(void **state)
{
    struct fixture *f = *state;
    struct collect c;
    struct sl_err err;
    int created = -1;

    assert_int_equal(sl_obj_store_create(f->o, "s1", &created, &err), 0);
    assert_int_equal(created, 1);
    assert_int_equal(sl_obj_store_create(f->o, "s1", &created, &err), 0);
    assert_int_equal(created, 0);
    assert_int_equal(sl_obj_store_create(f->o, "B", NULL, &err), 0);
    assert_int_equal(sl_obj_store_create(f->o, "s-1", NULL, &err), 0);
    assert_int_equal(sl_obj_store_exists(f->o, "s1", &err), 0);
    assert_int_equal(sl_obj_store_exists(f->o, "nope", &err), SL_ENOENT);
    assert_non_null(strstr(err.message, "nope"));

    memset(&c, 0, sizeof(c));
    assert_int_equal(sl_obj_store_list(f->o, store_cb, &c, &err), 0);
    assert_string_equal(c.out, "B\ns-1\ns1\n"); /* .tmp is not a store */

    assert_int_equal(sl_obj_store_delete(f->o, "s1", &err), 0);
    assert_int_equal(sl_obj_store_exists(f->o, "s1", &err), SL_ENOENT);
    assert_int_equal(sl_obj_store_delete(f->o, "s1", &err), SL_ENOENT);
    assert_int_equal(sl_obj_list(f->o, "s1", NULL, collect_cb, &c, &err),
                     SL_ENOENT);

    assert_int_equal(sl_obj_store_create(f->o, "a/b", NULL, &err), SL_EBADNAME);
    assert_int_equal(sl_obj_store_create(f->o, ".tmp", NULL, &err),
                     SL_EBADNAME);
    assert_int_equal(sl_obj_store_create(f->o, "..", NULL, &err), SL_EBADNAME);
    assert_int_equal(sl_obj_store_delete(f->o, "..", &err), SL_EBADNAME);
    assert_int_equal(sl_obj_store_exists(f->o, "", &err), SL_EBADNAME);
}

static void
test_obj_put_get(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_info info;
    struct sl_obj_reader *r = NULL;
    struct sl_obj_writer *w = NULL;
    struct sl_err err;
    int replaced = -1;
    size_t n = 9;
    char c = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(sl_obj_writer_open(f->o, "nostore", "x", &w, &err),
                     SL_ENOENT);
    assert_null(w);
    assert_non_null(strstr(err.message, "nostore"));

    /* 0 bytes */
    assert_int_equal(put(f->o, "s", "empty", 0, 1, &replaced, &err), 0);
    assert_int_equal(replaced, 0);
    assert_int_equal(sl_obj_stat(f->o, "s", "empty", &info, &err), 0);
    assert_int_equal(info.size, 0);
    assert_null(info.id);
    assert_true(info.mtime_ms > 0);
    assert_int_equal(sl_obj_reader_open(f->o, "s", "empty", &r, &err), 0);
    assert_int_equal(sl_obj_reader_read(r, &c, 1, &n, &err), 0);
    assert_int_equal(n, 0);
    sl_obj_reader_free(r);

    /* several MiB, nested id */
    assert_int_equal(
        put(f->o, "s", "big/data.bin", 5 * MIB + 123, 2, &replaced, &err), 0);
    assert_int_equal(replaced, 0);
    assert_int_equal(sl_obj_stat(f->o, "s", "big/data.bin", &info, &err), 0);
    assert_int_equal(info.size, 5 * MIB + 123);
    check_content(f->o, "s", "big/data.bin", 5 * MIB + 123, 2);

    /* replace sets replaced and the new content wins */
    assert_int_equal(
        put(f->o, "s", "big/data.bin", 3 * MIB, 3, &replaced, &err), 0);
    assert_int_equal(replaced, 1);
    check_content(f->o, "s", "big/data.bin", 3 * MIB, 3);

    /* delete */
    assert_int_equal(sl_obj_delete(f->o, "s", "big/data.bin", &err), 0);
    assert_int_equal(sl_obj_stat(f->o, "s", "big/data.bin", &info, &err),
                     SL_ENOENT);
    assert_non_null(strstr(err.message, "big/data.bin"));
    assert_non_null(strstr(err.message, "'s'"));
    assert_int_equal(sl_obj_delete(f->o, "s", "big/data.bin", &err), SL_ENOENT);
    assert_int_equal(sl_obj_reader_open(f->o, "s", "big/data.bin", &r, &err),
                     SL_ENOENT);
    assert_null(r);
    assert_int_equal(sl_obj_delete(f->o, "s", "empty", &err), 0);
    assert_string_equal(list_ids(f->o, "s", NULL), "");
    FS_ONLY(f, assert_int_equal(count_entries(f->root), 2));
}

static void
test_obj_list_order(void **state)
{
    struct fixture *f = *state;
    static const char *ids[] = {
        "b",
        "a/y/z",
        "a-b",
        "a/x",
        "a.c",
        "a/x-1",
        "a0",
        "A",
        "a/x.y/q",
        "a/x.y-",
        "a b",
        "\xc3\xa9",
        "a/y-",
    };
    size_t nids = sizeof(ids) / sizeof(ids[0]);
    const char *sorted[sizeof(ids) / sizeof(ids[0])];
    char want[1024] = "";
    struct collect c;
    struct sl_err err;
    size_t i = 0;
    size_t j = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    for (i = 0; i < nids; i++) {
        assert_int_equal(put(f->o, "s", ids[i], i, (unsigned)i, NULL, &err), 0);
        sorted[i] = ids[i];
    }
    /* insertion sort by strcmp: the byte order of full ids */
    for (i = 1; i < nids; i++) {
        for (j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
            const char *t = sorted[j];

            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    }
    for (i = 0; i < nids; i++) {
        strncat(want, sorted[i], sizeof(want) - strlen(want) - 1);
        strncat(want, "\n", sizeof(want) - strlen(want) - 1);
    }
    assert_string_equal(list_ids(f->o, "s", NULL), want);
    assert_string_equal(list_ids(f->o, "s", ""), want);
    /* "a-b" sorts before "a/x" although a per-directory walk would not */
    assert_true(strstr(want, "a-b\n") < strstr(want, "a/x\n"));

    /* prefixes */
    assert_string_equal(list_ids(f->o, "s", "a/"),
                        "a/x\na/x-1\na/x.y-\na/x.y/q\na/y-\na/y/z\n");
    assert_string_equal(list_ids(f->o, "s", "a/x"),
                        "a/x\na/x-1\na/x.y-\na/x.y/q\n");
    assert_string_equal(list_ids(f->o, "s", "a/x.y/"), "a/x.y/q\n");
    assert_string_equal(list_ids(f->o, "s", "a-"), "a-b\n");
    assert_string_equal(list_ids(f->o, "s", "a/y"), "a/y-\na/y/z\n");
    assert_string_equal(list_ids(f->o, "s", "zzz"), "");
    assert_string_equal(list_ids(f->o, "s", "a/x.y/q/"), "");
    assert_string_equal(list_ids(f->o, "s", "a/nothing/"), "");
    assert_string_equal(list_ids(f->o, "s", "a/x.y/q"), "a/x.y/q\n");
    /* folder parts that are no id path: never a way out of the store */
    assert_string_equal(list_ids(f->o, "s", "a/../a/"), "");
    assert_string_equal(list_ids(f->o, "s", "../s/a/"), "");
    assert_string_equal(list_ids(f->o, "s", "./a/"), "");
    assert_string_equal(list_ids(f->o, "s", "a//x"), "");
    assert_string_equal(list_ids(f->o, "s", "/a/"), "");

    /* list reports sizes */
    memset(&c, 0, sizeof(c));
    c.stop_after = 2;
    assert_int_equal(sl_obj_list(f->o, "s", NULL, collect_cb, &c, &err), 7);
    assert_int_equal(c.count, 2);
}

static int
size_cb(void *ctx, const struct sl_obj_info *info)
{
    uint64_t *total = ctx;

    *total += info->size;
    assert_true(info->mtime_ms > 0);
    return 0;
}

static void
test_obj_list_sizes(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    uint64_t total = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "x/1", 1000, 1, NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "x/2", 2000, 1, NULL, &err), 0);
    assert_int_equal(sl_obj_list(f->o, "s", "x/", size_cb, &total, &err), 0);
    assert_int_equal(total, 3000);
}

static void
test_obj_invisible_before_commit(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_writer *w = NULL;
    struct sl_obj_reader *r = NULL;
    struct sl_obj_info info;
    struct sl_sink sink;
    struct sl_source src;
    struct sl_err err;
    char tmp[700];
    char buf[16];
    size_t n = 0;
    int replaced = -1;

    (void)snprintf(tmp, sizeof(tmp), "%s/.tmp", f->root);
    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(sl_obj_writer_open(f->o, "s", "d/obj", &w, &err), 0);
    sl_obj_writer_sink(w, &sink);
    assert_int_equal(sink.write(sink.ctx, "hello ", 6), 0);
    assert_int_equal(sl_obj_writer_write(w, "world", 5, &err), 0);
    assert_int_equal(sl_obj_writer_size(w), 11);
    assert_int_equal(sl_obj_stat(f->o, "s", "d/obj", &info, &err), SL_ENOENT);
    assert_int_equal(sl_obj_reader_open(f->o, "s", "d/obj", &r, &err),
                     SL_ENOENT);
    assert_string_equal(list_ids(f->o, "s", NULL), "");
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 1));
    assert_int_equal(sl_obj_writer_commit(w, &replaced, &err), 0);
    assert_int_equal(replaced, 0);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    /* a committed writer is done */
    assert_int_equal(sl_obj_writer_write(w, "x", 1, &err), SL_EBADSTATE);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), SL_EBADSTATE);
    assert_non_null(strstr(err.message, "committed"));
    sl_obj_writer_free(w);

    assert_string_equal(list_ids(f->o, "s", NULL), "d/obj\n");
    assert_int_equal(sl_obj_reader_open(f->o, "s", "d/obj", &r, &err), 0);
    sl_obj_reader_source(r, &src);
    assert_int_equal(src.read(src.ctx, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 11);
    assert_memory_equal(buf, "hello world", 11);
    sl_obj_reader_free(r);

    /* a writer freed without commit leaves nothing */
    assert_int_equal(sl_obj_writer_open(f->o, "s", "gone/x", &w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "data", 4, &err), 0);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 1));
    sl_obj_writer_free(w);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    assert_int_equal(sl_obj_stat(f->o, "s", "gone/x", &info, &err), SL_ENOENT);
    FS_ONLY(f, assert_false(path_exists("%s/s/gone", f->root)));
    sl_obj_writer_free(NULL);
    sl_obj_reader_free(NULL);

    /* a sealed writer takes no more data, stays invisible until commit,
     * and is discarded by free */
    assert_int_equal(sl_obj_writer_open(f->o, "s", "sealed/a", &w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "abc", 3, &err), 0);
    assert_int_equal(sl_obj_writer_seal(w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "x", 1, &err), SL_EBADSTATE);
    assert_non_null(strstr(err.message, "sealed"));
    assert_int_equal(sl_obj_writer_seal(w, &err), SL_EBADSTATE);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 1));
    sl_obj_writer_free(w);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    assert_int_equal(sl_obj_stat(f->o, "s", "sealed/a", &info, &err),
                     SL_ENOENT);
    assert_int_equal(sl_obj_writer_open(f->o, "s", "sealed/b", &w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "abc", 3, &err), 0);
    assert_int_equal(sl_obj_writer_seal(w, &err), 0);
    assert_int_equal(sl_obj_stat(f->o, "s", "sealed/b", &info, &err),
                     SL_ENOENT);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    assert_int_equal(sl_obj_stat(f->o, "s", "sealed/b", &info, &err), 0);
    assert_int_equal(info.size, 3);
}

/*
 * A child process opens a writer, writes some MiB, tells the parent
 * through a pipe and is killed with SIGKILL before commit.
 */
static void
test_obj_killed_writer(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_info info;
    struct sl_err err;
    char tmp[700];
    int pipefd[2] = {-1, -1};
    pid_t pid = 0;
    int status = 0;
    char c = 0;

    (void)snprintf(tmp, sizeof(tmp), "%s/.tmp", f->root);
    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sl_obj_writer *w = NULL;
        unsigned char *chunk = sl_calloc(1, MIB);
        int i = 0;

        /* The child uses the handle it inherited: a second open of the
         * same root is refused while the parent holds it. */
        (void)close(pipefd[0]);
        if (sl_obj_writer_open(f->o, "s", "half/written", &w, NULL) != 0) {
            _exit(2);
        }
        for (i = 0; i < 4; i++) {
            if (sl_obj_writer_write(w, chunk, MIB, NULL) != 0) {
                _exit(3);
            }
        }
        if (write(pipefd[1], "k", 1) != 1) {
            _exit(4);
        }
        for (;;) {
            (void)pause();
        }
    }
    (void)close(pipefd[1]);
    assert_int_equal(read(pipefd[0], &c, 1), 1);
    (void)close(pipefd[0]);
    assert_int_equal(sl_obj_stat(f->o, "s", "half/written", &info, &err),
                     SL_ENOENT);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* nothing visible; the shadow file stays until the next open */
    assert_int_equal(sl_obj_stat(f->o, "s", "half/written", &info, &err),
                     SL_ENOENT);
    assert_string_equal(list_ids(f->o, "s", NULL), "");
    assert_false(path_exists("%s/s/half", f->root));
    assert_int_equal(count_entries(tmp), 1);
    sl_obj_close(f->o);
    f->o = NULL;
    assert_int_equal(
        sl_obj_open_fs(f->root, SL_DURABILITY_PROCESS, &f->o, &err), 0);
    assert_int_equal(count_entries(tmp), 0);
    assert_int_equal(sl_obj_stat(f->o, "s", "half/written", &info, &err),
                     SL_ENOENT);
}

static void
test_obj_conflict(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_writer *w1 = NULL;
    struct sl_obj_writer *w2 = NULL;
    struct sl_err err;
    char tmp[700];

    (void)snprintf(tmp, sizeof(tmp), "%s/.tmp", f->root);
    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);

    /* object a, then a/b */
    assert_int_equal(put(f->o, "s", "a", 3, 1, NULL, &err), 0);
    assert_int_equal(sl_obj_writer_open(f->o, "s", "a/b", &w1, &err),
                     SL_ECONFLICT);
    assert_null(w1);
    assert_non_null(strstr(err.message, "'a/b' conflicts with object 'a'"));
    assert_int_equal(sl_obj_writer_open(f->o, "s", "a/b/c", &w1, &err),
                     SL_ECONFLICT);
    assert_non_null(strstr(err.message, "object 'a'"));

    /* object c/d, then c */
    assert_int_equal(put(f->o, "s", "c/d", 3, 1, NULL, &err), 0);
    assert_int_equal(sl_obj_writer_open(f->o, "s", "c", &w1, &err),
                     SL_ECONFLICT);
    assert_non_null(strstr(err.message, "'c' conflicts"));
    assert_int_equal(count_entries(tmp), 0);

    /* both writers open, the first commit wins, the second is re-checked */
    assert_int_equal(sl_obj_writer_open(f->o, "s", "e/f", &w1, &err), 0);
    assert_int_equal(sl_obj_writer_open(f->o, "s", "e", &w2, &err), 0);
    assert_int_equal(sl_obj_writer_write(w1, "1", 1, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w2, NULL, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w1, NULL, &err), SL_ECONFLICT);
    assert_non_null(strstr(err.message, "object 'e'"));
    /* a failed writer stays failed */
    assert_int_equal(sl_obj_writer_write(w1, "1", 1, &err), SL_EBADSTATE);
    assert_int_equal(sl_obj_writer_commit(w1, NULL, &err), SL_EBADSTATE);
    sl_obj_writer_free(w1);
    sl_obj_writer_free(w2);
    w1 = NULL;
    w2 = NULL;

    assert_int_equal(sl_obj_writer_open(f->o, "s", "g", &w1, &err), 0);
    assert_int_equal(put(f->o, "s", "g/h", 1, 1, NULL, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w1, NULL, &err), SL_ECONFLICT);
    assert_non_null(strstr(err.message, "'g'"));
    sl_obj_writer_free(w1);
    assert_int_equal(count_entries(tmp), 0);
    assert_string_equal(list_ids(f->o, "s", NULL), "a\nc/d\ne\ng/h\n");
}

/* Inode of @p path, 0 if it does not exist. */
static ino_t
inode(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0 ? st.st_ino : 0;
}

/* Text of object @p id of store "s" (up to 255 bytes). */
static const char *
object_text(struct sl_obj *o, const char *id)
{
    static char buf[256];
    struct sl_obj_reader *r = NULL;
    size_t n = 0;

    assert_int_equal(sl_obj_reader_open(o, "s", id, &r, NULL), 0);
    assert_int_equal(sl_obj_reader_read(r, buf, sizeof(buf) - 1, &n, NULL), 0);
    buf[n] = '\0';
    sl_obj_reader_free(r);
    return buf;
}

/*
 * Writers that start from a file or another object: the data is shared
 * (a hard link) when it can be, copied when not (a file with no name left
 * cannot be linked), comes sealed, is published by the commit only, and
 * discarded by a free; the source's later fate does not change it.
 */
static void
test_obj_open_file_and_copy(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_writer *w = NULL;
    struct sl_obj_reader *r = NULL;
    struct sl_err err;
    char path[700];
    char tmp[700];
    char obj[700];
    ino_t file_ino = 0;
    int fds[2];
    int fd = -1;

    (void)snprintf(tmp, sizeof(tmp), "%s/.tmp", f->root);
    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);

    /* a file with a name: linked, sealed, invisible until the commit */
    (void)snprintf(path, sizeof(path), "%s/file", f->outside);
    write_file(path, "file data");
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(sl_obj_writer_open_file(f->o, "s", "a/f", fd, &w, &err),
                     0);
    assert_int_equal(sl_obj_writer_size(w), 9);
    assert_int_equal(sl_obj_writer_write(w, "x", 1, &err), SL_EBADSTATE);
    assert_string_equal(list_ids(f->o, "s", NULL), "");
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    (void)snprintf(obj, sizeof(obj), "%s/s/a/f", f->root);
    FS_ONLY(f, assert_true(inode(obj) == inode(path)));
    assert_string_equal(object_text(f->o, "a/f"), "file data");
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));

    /* the same file again over it (a retried commit): renaming a link over
     * a link of the same file does nothing, the shadow must still go */
    assert_int_equal(sl_obj_writer_open_file(f->o, "s", "a/f", fd, &w, &err),
                     0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    assert_string_equal(object_text(f->o, "a/f"), "file data");

    (void)close(fd);

    /* a file with no name left: copied */
    (void)snprintf(path, sizeof(path), "%s/nameless", f->outside);
    write_file(path, "no name");
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    file_ino = inode(path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(sl_obj_writer_open_file(f->o, "s", "a/g", fd, &w, &err),
                     0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    (void)close(fd);
    (void)snprintf(obj, sizeof(obj), "%s/s/a/g", f->root);
    FS_ONLY(f, assert_true(inode(obj) != 0));
    FS_ONLY(f, assert_true(inode(obj) != file_ino));
    assert_string_equal(object_text(f->o, "a/g"), "no name");

    /* an object: shared; replacing or deleting the source keeps it */
    assert_int_equal(sl_obj_reader_open(f->o, "s", "a/f", &r, &err), 0);
    assert_int_equal(sl_obj_writer_open_copy(f->o, "s", "b", r, &w, &err), 0);
    sl_obj_reader_free(r);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    (void)snprintf(path, sizeof(path), "%s/s/a/f", f->root);
    (void)snprintf(obj, sizeof(obj), "%s/s/b", f->root);
    FS_ONLY(f, assert_true(inode(obj) == inode(path)));
    assert_int_equal(put(f->o, "s", "a/f", 3, 1, NULL, &err), 0);
    assert_string_equal(object_text(f->o, "b"), "file data");
    assert_int_equal(sl_obj_delete(f->o, "s", "a/f", &err), 0);
    assert_string_equal(object_text(f->o, "b"), "file data");

    /* freed before the commit: nothing published, no shadow left */
    assert_int_equal(sl_obj_reader_open(f->o, "s", "b", &r, &err), 0);
    assert_int_equal(sl_obj_writer_open_copy(f->o, "s", "c", r, &w, &err), 0);
    sl_obj_reader_free(r);
    sl_obj_writer_free(w);
    assert_string_equal(list_ids(f->o, "s", NULL), "a/g\nb\n");
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));

    /* the conflict rule holds (folders: the filesystem); a pipe is not a
     * file */
    if (!f->s3) {
        fd = open(obj, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(sl_obj_writer_open_file(f->o, "s", "a", fd, &w, &err),
                         SL_ECONFLICT);
        assert_null(w);
        assert_int_equal(
            sl_obj_writer_open_file(f->o, "s", "b/c", fd, &w, &err),
            SL_ECONFLICT);
        (void)close(fd);
    }
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(sl_obj_writer_open_file(f->o, "s", "p", fds[0], &w, &err),
                     SL_EINVAL);
    assert_non_null(strstr(err.message, "not a regular file"));
    (void)close(fds[0]);
    (void)close(fds[1]);
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    assert_string_equal(list_ids(f->o, "s", NULL), "a/g\nb\n");
}

static void
test_obj_bad_names(void **state)
{
    struct fixture *f = *state;
    static const char *bad[] = {
        "..",
        "../x",
        "a/../b",
        "a/..",
        ".",
        "./a",
        "/a",
        "a/",
        "a//b",
        "a\\b",
        "..\\..\\x",
        "",
        "a\nb",
    };
    struct sl_obj_writer *w = NULL;
    struct sl_obj_reader *r = NULL;
    struct sl_obj_info info;
    struct sl_err err;
    size_t i = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sl_obj_writer_open(f->o, "s", bad[i], &w, &err),
                         SL_EBADNAME);
        assert_int_equal(sl_obj_reader_open(f->o, "s", bad[i], &r, &err),
                         SL_EBADNAME);
        assert_int_equal(sl_obj_stat(f->o, "s", bad[i], &info, &err),
                         SL_EBADNAME);
        assert_int_equal(sl_obj_delete(f->o, "s", bad[i], &err), SL_EBADNAME);
    }
    assert_int_equal(sl_obj_writer_open(f->o, "..", "x", &w, &err),
                     SL_EBADNAME);
    assert_int_equal(sl_obj_writer_open(f->o, ".tmp", "x", &w, &err),
                     SL_EBADNAME);
    assert_int_equal(
        sl_obj_list(f->o, "../outside", NULL, collect_cb, NULL, &err),
        SL_EBADNAME);
    assert_null(w);
    assert_null(r);
}

/* Plants links inside store s that point at f->outside. */
static void
plant_links(struct fixture *f)
{
    char path[1024];
    char target[1024];

    (void)snprintf(path, sizeof(path), "%s/secret", f->outside);
    write_file(path, "top secret");
    (void)snprintf(target, sizeof(target), "%s/secret", f->outside);
    (void)snprintf(path, sizeof(path), "%s/s/link", f->root);
    assert_int_equal(symlink(target, path), 0);
    (void)snprintf(path, sizeof(path), "%s/s/dir", f->root);
    assert_int_equal(symlink(f->outside, path), 0);
    (void)snprintf(path, sizeof(path), "%s/s/sub", f->root);
    assert_int_equal(mkdir(path, 0755), 0);
    (void)snprintf(path, sizeof(path), "%s/s/sub/deeper", f->root);
    assert_int_equal(symlink(f->outside, path), 0);
    (void)snprintf(path, sizeof(path), "%s/evil", f->root);
    assert_int_equal(symlink(f->outside, path), 0);
}

static void
test_obj_symlinks(void **state)
{
    struct fixture *f = *state;
    static const char *via_link[] = {
        "link", "dir/secret", "sub/deeper/secret", "dir/new"};
    struct sl_obj_writer *w = NULL;
    struct sl_obj_reader *r = NULL;
    struct sl_obj_info info;
    struct collect c;
    struct sl_err err;
    char secret[700];
    size_t i = 0;
    int rc = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "real", 4, 1, NULL, &err), 0);
    plant_links(f);
    (void)snprintf(secret, sizeof(secret), "%s/secret", f->outside);

    for (i = 0; i < sizeof(via_link) / sizeof(via_link[0]); i++) {
        rc = sl_obj_reader_open(f->o, "s", via_link[i], &r, &err);
        assert_true(rc == SL_EACCES || rc == SL_ENOENT);
        assert_null(r);
        rc = sl_obj_stat(f->o, "s", via_link[i], &info, &err);
        assert_true(rc == SL_EACCES || rc == SL_ENOENT);
        rc = sl_obj_delete(f->o, "s", via_link[i], &err);
        assert_true(rc == SL_EACCES || rc == SL_ENOENT);
        rc = sl_obj_writer_open(f->o, "s", via_link[i], &w, &err);
        if (rc == 0) {
            assert_int_equal(sl_obj_writer_write(w, "pwned", 5, &err), 0);
            rc = sl_obj_writer_commit(w, NULL, &err);
            sl_obj_writer_free(w);
            w = NULL;
        }
        assert_int_equal(rc, SL_EACCES);
        assert_non_null(strstr(err.message, "symbolic link"));
    }
    assert_file_text(secret, "top secret");
    assert_int_equal(count_entries(f->outside), 1);
    assert_true(path_exists("%s/s/link", f->root));

    /* listing skips links (and does not descend into them), also when
     * the prefix names the folder behind the link */
    assert_string_equal(list_ids(f->o, "s", NULL), "real\n");
    assert_string_equal(list_ids(f->o, "s", "dir/"), "");
    assert_string_equal(list_ids(f->o, "s", "dir/se"), "");
    assert_string_equal(list_ids(f->o, "s", "sub/deeper/"), "");

    /* a store that is a link is refused */
    assert_int_equal(sl_obj_store_exists(f->o, "evil", &err), SL_EACCES);
    assert_int_equal(sl_obj_writer_open(f->o, "evil", "secret", &w, &err),
                     SL_EACCES);
    assert_int_equal(sl_obj_reader_open(f->o, "evil", "secret", &r, &err),
                     SL_EACCES);
    assert_int_equal(sl_obj_list(f->o, "evil", NULL, collect_cb, &c, &err),
                     SL_EACCES);
    assert_int_equal(sl_obj_store_create(f->o, "evil", NULL, &err), SL_EACCES);
    assert_int_equal(sl_obj_store_delete(f->o, "evil", &err), SL_EACCES);
    memset(&c, 0, sizeof(c));
    assert_int_equal(sl_obj_store_list(f->o, store_cb, &c, &err), 0);
    assert_string_equal(c.out, "s\n");

    /* deleting the store removes the links, not what they point at */
    assert_int_equal(sl_obj_store_delete(f->o, "s", &err), 0);
    assert_int_equal(sl_obj_store_exists(f->o, "s", &err), SL_ENOENT);
    assert_file_text(secret, "top secret");
    assert_int_equal(count_entries(f->outside), 1);
}

static void
test_obj_delete_cleans_folders(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "p/q/r/s", 1, 1, NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "p/t", 1, 1, NULL, &err), 0);
    assert_int_equal(sl_obj_delete(f->o, "s", "p/q/r/s", &err), 0);
    assert_false(path_exists("%s/s/p/q", f->root));
    assert_true(path_exists("%s/s/p/t", f->root));
    /* a folder is not an object */
    assert_int_equal(sl_obj_delete(f->o, "s", "p", &err), SL_ENOENT);
    assert_non_null(strstr(err.message, "folder"));
    assert_int_equal(sl_obj_delete(f->o, "s", "p/t", &err), 0);
    assert_false(path_exists("%s/s/p", f->root));
    assert_true(path_exists("%s/s", f->root));
    assert_int_equal(count_entries(f->root), 2);
    /* the id of a former folder is free again */
    assert_int_equal(put(f->o, "s", "p", 1, 1, NULL, &err), 0);
}

static void
test_obj_store_delete_all(void **state)
{
    struct fixture *f = *state;
    struct sl_obj_writer *w = NULL;
    struct sl_err err;
    char tmp[700];
    char path[1024];

    (void)snprintf(tmp, sizeof(tmp), "%s/.tmp", f->root);
    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    assert_int_equal(sl_obj_store_create(f->o, "keep", NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "a/b/c", 10, 1, NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "a/d", 10, 1, NULL, &err), 0);
    assert_int_equal(put(f->o, "s", "e", 10, 1, NULL, &err), 0);
    assert_int_equal(put(f->o, "keep", "e", 10, 1, NULL, &err), 0);
    (void)snprintf(path, sizeof(path), "%s/s/a/plain-link", f->root);
    FS_ONLY(f, assert_int_equal(symlink(f->outside, path), 0));

    /* a writer of the deleted store fails at commit with ENOENT */
    assert_int_equal(sl_obj_writer_open(f->o, "s", "late", &w, &err), 0);
    assert_int_equal(sl_obj_store_delete(f->o, "s", &err), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), SL_ENOENT);
    assert_non_null(strstr(err.message, "deleted"));
    sl_obj_writer_free(w);

    FS_ONLY(f, assert_false(path_exists("%s/s", f->root)));
    FS_ONLY(f, assert_int_equal(count_entries(tmp), 0));
    FS_ONLY(f, assert_int_equal(count_entries(f->root), 2));
    FS_ONLY(f, assert_true(path_exists("%s", f->outside)));
    assert_string_equal(list_ids(f->o, "keep", NULL), "e\n");
}

static void
test_obj_fsync_mode(void **state)
{
    struct fixture *f = *state;
    struct sl_obj *o = NULL;
    struct sl_err err;
    int replaced = -1;

    sl_obj_close(f->o);
    f->o = NULL;
    assert_int_equal(sl_obj_open_fs(f->root, SL_DURABILITY_FSYNC, &o, &err), 0);
    f->o = o;
    assert_int_equal(sl_obj_store_create(o, "s", NULL, &err), 0);
    assert_int_equal(put(o, "s", "x/y/z", 2 * MIB, 9, &replaced, &err), 0);
    assert_int_equal(replaced, 0);
    check_content(o, "s", "x/y/z", 2 * MIB, 9);
    assert_int_equal(put(o, "s", "x/y/z", 1000, 8, &replaced, &err), 0);
    assert_int_equal(replaced, 1);
    check_content(o, "s", "x/y/z", 1000, 8);
    assert_int_equal(sl_obj_delete(o, "s", "x/y/z", &err), 0);
    assert_false(path_exists("%s/s/x", f->root));
    assert_int_equal(sl_obj_store_delete(o, "s", &err), 0);
}

struct race_arg {
    struct sl_obj *o; /* shared */
    int index;        /* thread number */
    int rounds;       /* puts and deletes */
    int own_folder;   /* in a folder of its own, not the shared one */
    int failures;     /* calls that did not return 0 */
    char last[600];   /* message of the last failure */
};

/* Puts and deletes objects in one shared folder, which the deletes keep
 * removing while the other threads' commits are creating it. */
static void *
race_thread(void *p)
{
    struct race_arg *a = p;
    struct sl_err err;
    char id[64];
    int i = 0;

    for (i = 0; i < a->rounds; i++) {
        /* (s3rver itself fails on the shared folder's race: there each
         * thread has a folder of its own) */
        (void)snprintf(id,
                       sizeof(id),
                       a->own_folder ? "d%d/%d" : "shared/d/%d-%d",
                       a->index,
                       i);
        int rc = put(a->o, "s", id, 10, 1, NULL, &err);
        const char *op = "put";

        if (rc == 0) {
            op = "delete";
            rc = sl_obj_delete(a->o, "s", id, &err);
        }
        if (rc != 0) {
            a->failures++;
            (void)snprintf(a->last, sizeof(a->last), "%s: %s", op, err.message);
        }
    }
    return NULL;
}

/* Commits racing the clean-up of empty folders by deletes never fail. */
static void
test_obj_threads_race(void **state)
{
    struct fixture *f = *state;
    struct race_arg args[4];
    pthread_t th[4];
    struct sl_err err;
    int i = 0;

    assert_int_equal(sl_obj_store_create(f->o, "s", NULL, &err), 0);
    for (i = 0; i < 4; i++) {
        memset(&args[i], 0, sizeof(args[i]));
        args[i].o = f->o;
        args[i].index = i;
        args[i].rounds = f->s3 ? 40 : 300; /* S3: a request is ~1 ms */
        args[i].own_folder = f->s3;
        assert_int_equal(pthread_create(&th[i], NULL, race_thread, &args[i]),
                         0);
    }
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        if (args[i].failures != 0) {
            fail_msg("thread %d: %d failures, last: %s",
                     i,
                     args[i].failures,
                     args[i].last);
        }
    }
    assert_string_equal(list_ids(f->o, "s", NULL), "");
    FS_ONLY(f, assert_false(path_exists("%s/s/shared", f->root)));
}

/* Opening creates missing parents; an unusable root is reported. */
static void
test_obj_open_errors(void **state)
{
    struct fixture *f = *state;
    struct sl_obj *o = NULL;
    struct sl_err err;
    char path[700];

    (void)snprintf(path, sizeof(path), "%s/file", f->outside);
    write_file(path, "x");
    assert_int_not_equal(sl_obj_open_fs(path, SL_DURABILITY_PROCESS, &o, &err),
                         0);
    assert_null(o);
    assert_non_null(strstr(err.message, path));
    assert_int_equal(sl_obj_open_fs("", SL_DURABILITY_PROCESS, &o, &err),
                     SL_EINVAL);
    sl_obj_close(NULL);
}

/* A second open of a root that is open elsewhere is refused (flock). */
static void
test_obj_second_open_refused(void **state)
{
    struct fixture *f = *state;
    struct sl_obj *o = NULL;
    struct sl_err err;

    assert_int_equal(sl_obj_open_fs(f->root, SL_DURABILITY_PROCESS, &o, &err),
                     SL_ECONFLICT);
    assert_null(o);
    assert_non_null(strstr(err.message, "in use by another process"));
    sl_obj_close(f->o);
    f->o = NULL;
    assert_int_equal(sl_obj_open_fs(f->root, SL_DURABILITY_PROCESS, &o, &err),
                     0);
    f->o = o;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_obj_stores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_put_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_list_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_list_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_obj_invisible_before_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_obj_open_file_and_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_bad_names, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_obj_store_delete_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_threads_race, setup, teardown),
    };
    /* the filesystem's own */
    const struct CMUnitTest fs_tests[] = {
        cmocka_unit_test_setup_teardown(
            test_obj_killed_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_obj_delete_cleans_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_fsync_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_obj_second_open_refused, setup, teardown),
    };
    int failed = 0;

    if (getenv("SL_TEST_S3_ENDPOINT") != NULL) {
        return cmocka_run_group_tests_name("s3", tests, NULL, NULL);
    }
    failed = cmocka_run_group_tests_name("openat2", tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("openat2, fs", fs_tests, NULL, NULL);
    if (!sl__obj_fs_openat2_on()) {
        printf("# no openat2 here: the first group took the component walk "
               "too\n");
    }

    sl__obj_fs_set_openat2(0);
    failed += cmocka_run_group_tests_name("component walk", tests, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name("component walk, fs", fs_tests, NULL, NULL);
    return failed;
}
