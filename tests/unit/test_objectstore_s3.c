/*
 * The S3 backend's own behaviour, against a real S3 server on 127.0.0.1
 * (s3rver, started by tests/s3/with-s3rver.sh): multipart uploads (5 MiB
 * parts) invisible until the commit and gone when the writer is freed,
 * sealed writers, reads in ranges of every size and a read that finds
 * its object replaced, stores as buckets, wrong credentials, a missing
 * bucket, a server that is not there (retried, then a clear error), the
 * configuration's mistakes and the credentials from the environment and
 * from a shared credentials file, virtual-host requests.  Through
 * `with-s3rver.sh --signed` every signature is checked by its proxy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "objectstore/objectstore.h"

#define MIB ((size_t)1 << 20)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SL_HAS_ASAN 1
#endif
#endif
#ifndef SL_HAS_ASAN
#define SL_HAS_ASAN 0
#endif
#define BUCKET "sluice-s3-test"

static struct sl_obj_s3_config
config(const char *bucket, const char *prefix)
{
    struct sl_obj_s3_config c;

    memset(&c, 0, sizeof(c));
    c.endpoint = getenv("SL_TEST_S3_ENDPOINT");
    c.access_key = getenv("SL_TEST_S3_KEY");
    c.secret_key = getenv("SL_TEST_S3_SECRET");
    c.bucket = bucket;
    c.prefix = prefix;
    c.path_style = 1;
    c.part_size = 5 * MIB;
    return c;
}

static struct sl_obj *
open_s3(const char *prefix)
{
    struct sl_obj_s3_config c = config(BUCKET, prefix);
    struct sl_obj *o = NULL;
    struct sl_err err;

    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_create(o, "s", NULL, &err), 0);
    return o;
}

static int
setup_group(void **state)
{
    struct sl_obj_s3_config c = config(NULL, NULL);
    struct sl_obj *o = NULL;
    struct sl_err err;

    (void)state;
    if (c.endpoint == NULL) {
        print_error("SL_TEST_S3_ENDPOINT is not set: run me through "
                    "tests/s3/with-s3rver.sh\n");
        return -1;
    }
    /* the bucket, a store of the backend whose stores are buckets */
    if (sl_obj_open_s3(&c, &o, &err) != 0 ||
        sl_obj_store_create(o, BUCKET, NULL, &err) != 0) {
        print_error("%s\n", err.message);
        return -1;
    }
    sl_obj_close(o);
    return 0;
}

static unsigned char
pattern(size_t i, unsigned seed)
{
    return (unsigned char)(((i * 2654435761u) + seed) >> 11);
}

/* Write @len bytes of @seed's pattern into a new writer (not committed). */
static struct sl_obj_writer *
write_pattern(struct sl_obj *o, const char *id, size_t len, unsigned seed)
{
    struct sl_obj_writer *w = NULL;
    unsigned char *chunk = sl_malloc(300007);
    struct sl_err err;
    size_t off = 0;

    assert_int_equal(sl_obj_writer_open(o, "s", id, &w, &err), 0);
    while (off < len) {
        size_t n = len - off < 300007 ? len - off : 300007;
        size_t i = 0;

        for (i = 0; i < n; i++) {
            chunk[i] = pattern(off + i, seed);
        }
        assert_int_equal(sl_obj_writer_write(w, chunk, n, &err), 0);
        off += n;
    }
    sl_free(chunk);
    return w;
}

/* Read the object back in reads of @cap bytes, and a few preads. */
static void
check_pattern(
    struct sl_obj *o, const char *id, size_t len, unsigned seed, size_t cap)
{
    struct sl_obj_reader *r = NULL;
    unsigned char *buf = sl_malloc(cap);
    struct sl_err err;
    size_t off = 0;
    size_t n = 0;
    size_t i = 0;

    assert_int_equal(sl_obj_reader_open(o, "s", id, &r, &err), 0);
    assert_int_equal(sl_obj_reader_size(r), len);
    do {
        assert_int_equal(sl_obj_reader_read(r, buf, cap, &n, &err), 0);
        for (i = 0; i < n; i++) {
            if (buf[i] != pattern(off + i, seed)) {
                fail_msg("%s: byte %zu differs", id, off + i);
            }
        }
        off += n;
    } while (n > 0);
    assert_int_equal(off, len);
    if (len > 10) {
        assert_int_equal(sl_obj_reader_pread(r, len - 10, buf, cap, &n, &err),
                         0);
        assert_int_equal(n, cap < 10 ? cap : 10);
        assert_int_equal(buf[0], pattern(len - 10, seed));
    }
    sl_obj_reader_free(r);
    sl_free(buf);
}

static void
test_s3_multipart(void **state)
{
    struct sl_obj *o = open_s3("multi/");
    struct sl_obj_writer *w = NULL;
    struct sl_obj_info info;
    struct sl_err err;
    int replaced = -1;

    (void)state;
    /* 12 MiB + 7: two full parts uploaded while writing, invisible */
    w = write_pattern(o, "big", 12 * MIB + 7, 1);
    assert_int_equal(sl_obj_stat(o, "s", "big", &info, &err), SL_ENOENT);
    assert_int_equal(sl_obj_writer_commit(w, &replaced, &err), 0);
    assert_int_equal(replaced, 0);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_stat(o, "s", "big", &info, &err), 0);
    assert_int_equal(info.size, 12 * MIB + 7);
    check_pattern(o, "big", 12 * MIB + 7, 1, 4099);    /* buffered ranges */
    check_pattern(o, "big", 12 * MIB + 7, 1, 3 * MIB); /* direct ranges */

    /* freed after parts were uploaded: never visible */
    w = write_pattern(o, "dropped", 11 * MIB, 2);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_stat(o, "s", "dropped", &info, &err), SL_ENOENT);

    /* sealed: the rest goes up as the last part; still invisible */
    w = write_pattern(o, "sealed", 6 * MIB, 3);
    assert_int_equal(sl_obj_writer_seal(w, &err), 0);
    assert_int_equal(sl_obj_stat(o, "s", "sealed", &info, &err), SL_ENOENT);
    assert_int_equal(sl_obj_writer_commit(w, &replaced, &err), 0);
    sl_obj_writer_free(w);
    check_pattern(o, "sealed", 6 * MIB, 3, 65536);
    /* a small sealed one stays in memory, then one PUT; replaces */
    w = write_pattern(o, "sealed", 1000, 4);
    assert_int_equal(sl_obj_writer_seal(w, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w, &replaced, &err), 0);
    assert_int_equal(replaced, 1);
    sl_obj_writer_free(w);
    check_pattern(o, "sealed", 1000, 4, 999);
    assert_int_equal(sl_obj_store_delete(o, "s", &err), 0);
    sl_obj_close(o);
}

/* The process's peak RSS (VmHWM) in KiB, 0 if unknown; @reset: set it
 * to the current RSS first (clear_refs 5). */
static unsigned long
peak_rss_kib(int reset)
{
    FILE *f = NULL;
    char line[256];
    unsigned long kib = 0;

    if (reset) {
        f = fopen("/proc/self/clear_refs", "w");
        assert_non_null(f);
        assert_int_equal(fputs("5", f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
    }
    f = fopen("/proc/self/status", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "VmHWM: %lu kB", &kib) == 1) {
            break;
        }
    }
    if (f != NULL) {
        (void)fclose(f);
    }
    return kib;
}

/*
 * A big object in and out with bounded memory: SL_TEST_S3_BIG_MB MiB (48
 * by default; `SL_TEST_S3_BIG_MB=1024` for the 1 GiB of
 * docs/objectstore.md) written in 300 KB writes (a multipart upload of
 * 5 MiB parts) and read back in 64 KiB reads.  Without the sanitizers the
 * peak RSS grows by less than 32 MiB whatever the size.
 */
static void
test_s3_big_object(void **state)
{
    const char *mb = getenv("SL_TEST_S3_BIG_MB");
    size_t len = (size_t)(mb != NULL ? strtoul(mb, NULL, 10) : 48) * MIB;
    struct sl_obj *o = open_s3("big/");
    unsigned long before = peak_rss_kib(1);
    struct sl_obj_writer *w = NULL;
    struct sl_obj_info info;
    struct sl_err err;

    (void)state;
    w = write_pattern(o, "huge", len, 9);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_stat(o, "s", "huge", &info, &err), 0);
    assert_int_equal(info.size, len);
    check_pattern(o, "huge", len, 9, 65536);
    print_message("big object: %zu MiB in and out, peak RSS %lu -> %lu KiB\n",
                  len / MIB,
                  before,
                  peak_rss_kib(0));
    assert_true(before > 0);
#if !defined(__SANITIZE_ADDRESS__) && !SL_HAS_ASAN
    assert_true(peak_rss_kib(0) < before + 32 * 1024);
#endif
    assert_int_equal(sl_obj_store_delete(o, "s", &err), 0);
    sl_obj_close(o);
}

static void
test_s3_replaced_while_read(void **state)
{
    struct sl_obj *o = open_s3("replaced/");
    struct sl_obj_writer *w = write_pattern(o, "x", 3 * MIB, 5);
    struct sl_obj_reader *r = NULL;
    struct sl_err err;
    char buf[4096];
    size_t n = 0;

    (void)state;
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_reader_open(o, "s", "x", &r, &err), 0);
    assert_int_equal(sl_obj_reader_read(r, buf, sizeof(buf), &n, &err), 0);
    assert_int_equal(n, sizeof(buf));
    /* another version: the next range of the old one is refused */
    w = write_pattern(o, "x", 3 * MIB, 6);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    assert_int_equal(
        sl_obj_reader_pread(r, 2 * MIB, buf, sizeof(buf), &n, &err),
        SL_ECONFLICT);
    assert_non_null(strstr(err.message, "replaced"));
    sl_obj_reader_free(r);
    sl_obj_close(o);
}

static int
store_cb(void *ctx, const char *store)
{
    char *out = ctx;

    (void)snprintf(out + strlen(out), 256 - strlen(out), "%s\n", store);
    return 0;
}

static void
test_s3_buckets_as_stores(void **state)
{
    struct sl_obj_s3_config c = config(NULL, "sl-");
    struct sl_obj *o = NULL;
    struct sl_obj_writer *w = NULL;
    struct sl_obj_info info;
    struct sl_err err;
    char stores[256] = "";
    int created = -1;

    (void)state;
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_string_equal(sl_obj_backend_name(o), "s3");
    assert_int_equal(sl_obj_store_create(o, "alpha", &created, &err), 0);
    assert_int_equal(created, 1);
    assert_int_equal(sl_obj_store_create(o, "alpha", &created, &err), 0);
    assert_int_equal(created, 0);
    assert_int_equal(sl_obj_store_create(o, "beta", NULL, &err), 0);
    /* other buckets (this test's bucket) are not stores */
    assert_int_equal(sl_obj_store_list(o, store_cb, stores, &err), 0);
    assert_string_equal(stores, "alpha\nbeta\n");
    assert_int_equal(sl_obj_writer_open(o, "alpha", "a/b", &w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "abc", 3, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_stat(o, "alpha", "a/b", &info, &err), 0);
    assert_int_equal(info.size, 3);
    assert_int_equal(sl_obj_store_delete(o, "alpha", &err), 0);
    assert_int_equal(sl_obj_store_exists(o, "alpha", &err), SL_ENOENT);
    assert_int_equal(sl_obj_store_delete(o, "beta", &err), 0);
    sl_obj_close(o);
}

/* Virtual-host requests (BUCKET.s3.localhost, the endpoint of
 * with-s3rver.sh): the same object store; through its proxy (--signed),
 * the proxy's log shows the bucket in the host name, not in the path. */
static void
test_s3_virtual_host(void **state)
{
    struct sl_obj_s3_config c = config(BUCKET, "vhost/");
    const char *plog = getenv("SL_TEST_S3_PROXY_LOG");
    struct sl_obj *o = NULL;
    struct sl_obj_writer *w = NULL;
    struct sl_obj_info info;
    struct sl_err err;
    char line[1024];
    char stores[256] = "";
    int vhost = 0;
    int pathed = 0;
    FILE *f = NULL;

    (void)state;
    c.endpoint = getenv("SL_TEST_S3_VHOST_ENDPOINT");
    if (c.endpoint == NULL) {
        skip();
    }
    c.path_style = 0;
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_create(o, "vs", NULL, &err), 0);
    assert_int_equal(sl_obj_writer_open(o, "vs", "dir/obj", &w, &err), 0);
    assert_int_equal(sl_obj_writer_write(w, "virtual", 7, &err), 0);
    assert_int_equal(sl_obj_writer_commit(w, NULL, &err), 0);
    sl_obj_writer_free(w);
    assert_int_equal(sl_obj_stat(o, "vs", "dir/obj", &info, &err), 0);
    assert_int_equal(info.size, 7);
    assert_int_equal(sl_obj_store_list(o, store_cb, stores, &err), 0);
    assert_string_equal(stores, "vs\n");
    assert_int_equal(sl_obj_store_delete(o, "vs", &err), 0);
    sl_obj_close(o);
    /* the same objects path-style: the store is gone for both */
    c = config(BUCKET, "vhost/");
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_exists(o, "vs", &err), SL_ENOENT);
    sl_obj_close(o);
    if (plog == NULL) {
        return;
    }
    f = fopen(plog, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strstr(line, "PUT " BUCKET ".s3.localhost:") == line &&
            strstr(line, " /vhost/vs/dir/obj ") != NULL) {
            vhost++;
        }
        if (strstr(line, "/" BUCKET "/vhost/vs/dir/obj") != NULL) {
            pathed++;
        }
    }
    (void)fclose(f);
    assert_true(vhost >= 1);
    assert_int_equal(pathed, 0);
}

static void
test_s3_refused(void **state)
{
    struct sl_obj_s3_config c = config(BUCKET, "refused/");
    struct sl_obj *o = NULL;
    struct sl_err err;
    int64_t t0 = 0;

    (void)state;
    /* wrong credentials (s3rver knows its key ids; it does not check V4
     * signatures, which libcurl makes) */
    c.access_key = "NOT-A-KEY";
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_create(o, "s", NULL, &err), SL_EACCES);
    assert_non_null(strstr(err.message, "check the credentials"));
    sl_obj_close(o);
    /* a bucket that is not there */
    c = config("no-such-bucket", NULL);
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_create(o, "s", NULL, &err), SL_ENOENT);
    assert_non_null(strstr(err.message, "NoSuchBucket"));
    sl_obj_close(o);
    /* no server: retried (3 times), then said */
    c = config(BUCKET, NULL);
    c.endpoint = "http://127.0.0.1:1";
    c.max_retries = 3;
    c.backoff_ms = 10;
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    t0 = sl_mono_ms();
    assert_int_equal(sl_obj_store_exists(o, "s", &err), SL_EUPSTREAM);
    assert_true(sl_mono_ms() - t0 >= 70); /* 10 + 20 + 40 ms of pauses */
    assert_non_null(strstr(err.message, "127.0.0.1:1"));
    sl_obj_close(o);
}

static void
test_s3_config(void **state)
{
    static const char *const bad_endpoints[] = {
        "ftp://127.0.0.1", "127.0.0.1:9000", "http://", "http://h/path"};
    struct sl_obj_s3_config c = config(BUCKET, NULL);
    struct sl_obj *o = NULL;
    struct sl_err err;
    char path[512];
    FILE *f = NULL;
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(bad_endpoints) / sizeof(bad_endpoints[0]); i++) {
        c.endpoint = bad_endpoints[i];
        assert_int_equal(sl_obj_open_s3(&c, &o, &err), SL_ECONFIG);
        assert_string_equal(err.field, "objectstore.s3.endpoint");
    }
    c = config(BUCKET, NULL);
    c.part_size = MIB;
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), SL_ECONFIG);
    assert_non_null(strstr(err.message, "5 MiB"));

    /* credentials: none anywhere */
    c = config(BUCKET, "creds/");
    c.access_key = c.secret_key = NULL;
    (void)snprintf(path,
                   sizeof(path),
                   "%s/s3-creds-%d",
                   getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
                   (int)getpid());
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), SL_ECONFIG);
    assert_non_null(strstr(err.message, "credentials"));
    /* from a profile of the shared credentials file */
    f = fopen(path, "w");
    assert_non_null(f);
    (void)fprintf(f,
                  "[default]\naws_access_key_id = WRONG\n"
                  "aws_secret_access_key = WRONG\n\n[sluice]\n"
                  "aws_access_key_id = %s\naws_secret_access_key= %s\n",
                  getenv("SL_TEST_S3_KEY"),
                  getenv("SL_TEST_S3_SECRET"));
    (void)fclose(f);
    setenv("AWS_PROFILE", "sluice", 1);
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_create(o, "s", NULL, &err), 0);
    sl_obj_close(o);
    unsetenv("AWS_PROFILE");
    (void)unlink(path);
    /* from the environment */
    setenv("AWS_ACCESS_KEY_ID", getenv("SL_TEST_S3_KEY"), 1);
    setenv("AWS_SECRET_ACCESS_KEY", getenv("SL_TEST_S3_SECRET"), 1);
    assert_int_equal(sl_obj_open_s3(&c, &o, &err), 0);
    assert_int_equal(sl_obj_store_exists(o, "s", &err), 0);
    sl_obj_close(o);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s3_multipart),
        cmocka_unit_test(test_s3_replaced_while_read),
        cmocka_unit_test(test_s3_big_object),
        cmocka_unit_test(test_s3_buckets_as_stores),
        cmocka_unit_test(test_s3_virtual_host),
        cmocka_unit_test(test_s3_refused),
        cmocka_unit_test(test_s3_config),
    };

    return cmocka_run_group_tests(tests, setup_group, NULL);
}
