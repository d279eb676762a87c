/*
 * Unit tests of the built-in fileExtractor over the in-process task
 * context with a real filesystem object store (no jobmanager).  The
 * archives are built here with libarchive's writer API under $TMPDIR,
 * crawled with fileCrawler (flat: one task), then extracted; records,
 * contents and counters are checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "builtin/builtin.h"
#include "workers/workers_int.h"
#include "wk_fixture.h"

#define UNI_NAME                                                               \
    "\xc3\xbcn\xc3\xaf"                                                        \
    "code-\xe6\x97\xa5\xe6\x9c\xac.txt"
#define BOMB_SIZE (8u << 20)

struct fixture {
    char dir[512];
    char *data; /* the crawled folder */
    struct sl_obj *store;
    struct sl__wk_backend *b;
    unsigned tasks; /* output ids */
};

/* One archive entry to write: @data of @len bytes (NULL data: @len
 * zeros). */
struct entry {
    const char *name;
    const char *data;
    size_t len;
};

/* The result of one extraction. */
struct result {
    json_t *counters; /* counters of the task */
    json_t *records;  /* _recordid -> metadata */
    json_t *contents; /* _recordid -> fileContent as a string */
};

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

/* Write archive @name in f->data: @format "zip" or "pax", @gzip adds the
 * gzip filter. */
static void
make_archive(struct fixture *f,
             const char *name,
             const char *format,
             int gzip,
             const struct entry *e,
             size_t n)
{
    struct archive *a = archive_write_new();
    struct archive_entry *ae = NULL;
    char *path = sl_asprintf("%s/%s", f->data, name);
    char *zeros = NULL;
    size_t i = 0;

    assert_non_null(a);
    assert_int_equal(archive_write_set_format_by_name(a, format), ARCHIVE_OK);
    if (gzip) {
        assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
    }
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (i = 0; i < n; i++) {
        const char *data = e[i].data;

        if (data == NULL) {
            zeros = sl_calloc(1, e[i].len + 1);
            data = zeros;
        }
        ae = archive_entry_new();
        archive_entry_set_pathname(ae, e[i].name);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)e[i].len);
        archive_entry_set_mtime(ae, 1700000000, 123000000);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, data, e[i].len),
                         (la_ssize_t)e[i].len);
        archive_entry_free(ae);
        SL_FREE(zeros);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    assert_int_equal(archive_write_free(a), ARCHIVE_OK);
    sl_free(path);
}

/* The whole content of f->data/@name; *len set. */
static char *
slurp(struct fixture *f, const char *name, size_t *len)
{
    char *path = sl_asprintf("%s/%s", f->data, name);
    FILE *fp = fopen(path, "rb");
    struct stat st;
    char *buf = NULL;

    assert_non_null(fp);
    assert_int_equal(stat(path, &st), 0);
    buf = sl_malloc((size_t)st.st_size + 1);
    assert_int_equal(fread(buf, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
    (void)fclose(fp);
    *len = (size_t)st.st_size;
    sl_free(path);
    return buf;
}

static void
remove_file(struct fixture *f, const char *name)
{
    char *path = sl_asprintf("%s/%s", f->data, name);

    assert_int_equal(unlink(path), 0);
    sl_free(path);
}

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    char real[PATH_MAX];
    char *p = NULL;

    wk_env_open(
        f->dir, sizeof(f->dir), "test_file_extractor", &f->store, &f->b);
    p = sl_asprintf("%s/data", f->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_non_null(realpath(p, real));
    f->data = sl_strdup(real);
    sl_free(p);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    wk_env_close(f->dir, f->store, f->b);
    sl_free(f->data);
    sl_free(f);
    return 0;
}

static json_t *
slot(const char *id)
{
    return json_pack(
        "[{s:s, s:s, s:s}]", "bucket", "b", "store", "s", "id", id);
}

/* Run @type with @params (JSON text) on input bulk @in_id (may be NULL)
 * of slot @in, output slot @out into object @out_id. */
static json_t *
run(struct fixture *f,
    const struct sl_worker_type *type,
    const char *params,
    const char *in,
    const char *in_id,
    const char *out,
    const char *out_id)
{
    json_t *task = json_pack("{s:s, s:o, s:{s:i}, s:{}, s:{s:o}}",
                             "taskId",
                             "t",
                             "parameters",
                             json_loads(params, 0, NULL),
                             "properties",
                             "retries",
                             0,
                             "input",
                             "output",
                             out,
                             slot(out_id));
    struct sl_task_ctx *ctx = NULL;
    json_t *result = NULL;

    assert_non_null(task);
    if (in_id != NULL) {
        (void)json_object_set_new(
            json_object_get(task, "input"), in, slot(in_id));
    }
    ctx = sl__task_ctx_new(f->b, f->b->impl, type, 0, task);
    result = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    json_decref(task);
    return result;
}

/* Records of object @id into @res (content of "fileContent" kept). */
static void
read_bulk(struct fixture *f, const char *id, struct result *res)
{
    struct sl_obj_reader *rd = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_bulk_limits lim = {0, 64u << 20};
    struct sl_source src;
    const void *data = NULL;
    size_t len = 0;
    int rc = 0;

    if (sl_obj_reader_open(f->store, "s", id, &rd, NULL) != 0) {
        return; /* no record: the bulk was not committed */
    }
    sl_obj_reader_source(rd, &src);
    assert_int_equal(sl_bulk_reader_new(&src, &lim, &br, NULL), 0);
    for (;;) {
        rc = sl_bulk_reader_next(br, &rec, NULL);
        if (rc != 1) {
            break;
        }
        assert_null(json_object_get(res->records, sl_record_id(rec)));
        (void)json_object_set(
            res->records, sl_record_id(rec), sl_record_meta(rec));
        if (sl_record_attachment_get(rec, "fileContent", &data, &len) == 0) {
            (void)json_object_set_new(
                res->contents,
                sl_record_id(rec),
                json_stringn_nocheck(len > 0 ? data : "", len));
        }
        sl_record_free(rec);
    }
    assert_int_equal(rc, 0);
    sl_bulk_reader_free(br);
    sl_obj_reader_free(rd);
}

/* Crawl f->data (flat) into a bulk; returns its object id (new string).
 * @vanish (may be NULL) is deleted after the crawl. */
static char *
crawl(struct fixture *f, const char *vanish)
{
    char *params = sl_asprintf(
        "{\"dataSource\": \"file\", \"rootFolder\": \"%s\"}", f->data);
    char *id = sl_asprintf("c/%u", f->tasks++);
    json_t *r = run(f,
                    &sl_worker_fileCrawler,
                    params,
                    "directoriesToCrawl",
                    NULL,
                    "filesToCrawl",
                    id);

    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "SUCCESSFUL");
    json_decref(r);
    sl_free(params);
    if (vanish != NULL) {
        remove_file(f, vanish);
    }
    return id;
}

/* Crawl and extract f->data with @params. */
static struct result
extract(struct fixture *f, const char *params, const char *vanish)
{
    struct result res = {NULL, json_object(), json_object()};
    char *in = crawl(f, vanish);
    char *out = sl_asprintf("x/%u", f->tasks++);
    json_t *r =
        run(f, &sl_worker_fileExtractor, params, "compounds", in, "files", out);

    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "SUCCESSFUL");
    res.counters = json_incref(json_object_get(r, "counters"));
    json_decref(r);
    read_bulk(f, out, &res);
    sl_free(in);
    sl_free(out);
    return res;
}

static void
result_free(struct result *res)
{
    json_decref(res->counters);
    json_decref(res->records);
    json_decref(res->contents);
}

static double
counter(const struct result *res, const char *name)
{
    return json_number_value(json_object_get(res->counters, name));
}

/* The record "<f->data>/<rel>", or NULL. */
static const json_t *
record(const struct fixture *f, const struct result *res, const char *rel)
{
    char *id = sl_asprintf("%s/%s", f->data, rel);
    const json_t *m = json_object_get(res->records, id);

    sl_free(id);
    return m;
}

static const char *
attr(const json_t *m, const char *name)
{
    return json_string_value(json_object_get(m, name));
}

/* Check that "<f->data>/<rel>" has content @want of @len bytes. */
static void
check_content(const struct fixture *f,
              const struct result *res,
              const char *rel,
              const char *want,
              size_t len)
{
    char *id = sl_asprintf("%s/%s", f->data, rel);
    const json_t *got = json_object_get(res->contents, id);

    assert_non_null(got);
    assert_int_equal(json_string_length(got), len);
    assert_memory_equal(json_string_value(got), want, len);
    sl_free(id);
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

static void
test_file_extractor_zip(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {
        {"top.txt", "top", 3},
        {"dir/sub/deep.txt", "deep content", 12},
        {"dir/" UNI_NAME, "unicode", 7},
        {"dir/bad\xff.bin", "raw", 3},
        {"noext", "", 0},
    };
    struct result res;
    const json_t *m = NULL;
    char *top = NULL;
    char *folder = NULL;

    /* Written in the "C" locale (the test's), names go in as raw bytes
     * without the UTF-8 flag, as older zip tools write them. */
    make_archive(f, "a.zip", "zip", 0, e, 5);
    res = extract(f, "{}", NULL);
    /* five elements and the compound itself, passed on first */
    assert_int_equal(json_object_size(res.records), 6);
    m = record(f, &res, "a.zip");
    assert_non_null(m);
    assert_true(json_is_true(json_object_get(m, "_isCompound")));
    assert_null(json_object_get(m, "_compoundRecordId"));
    assert_int_equal(counter(&res, "compounds.extracted"), 1);
    assert_int_equal(counter(&res, "elements.records"), 5);
    assert_int_equal(counter(&res, "elements.bytes"), 25);
    m = record(f, &res, "a.zip!/dir/sub/deep.txt");
    assert_non_null(m);
    top = sl_asprintf("%s/a.zip", f->data);
    folder = sl_asprintf("%s/a.zip!/dir/sub", f->data);
    assert_string_equal(attr(m, "_compoundRecordId"), top);
    assert_string_equal(attr(m, "filePath"), attr(m, "_recordid"));
    assert_string_equal(attr(m, "fileName"), "deep.txt");
    assert_string_equal(attr(m, "fileFolder"), folder);
    assert_string_equal(attr(m, "fileExtension"), "txt");
    assert_string_equal(attr(m, "_source"), "file");
    assert_int_equal(json_integer_value(json_object_get(m, "fileSize")), 12);
    /* zip keeps whole seconds only */
    assert_string_equal(attr(m, "_deltaHash"), "12-1700000000.000000000");
    assert_int_equal(strncmp(attr(m, "fileLastModified"), "2023-11-14T", 11),
                     0);
    assert_null(json_object_get(m, "_isCompound"));
    check_content(f, &res, "a.zip!/dir/sub/deep.txt", "deep content", 12);
    check_content(f, &res, "a.zip!/dir/" UNI_NAME, "unicode", 7);
    check_content(f, &res, "a.zip!/dir/bad\\xff.bin", "raw", 3);
    check_content(f, &res, "a.zip!/noext", "", 0);
    assert_null(
        json_object_get(record(f, &res, "a.zip!/noext"), "fileExtension"));
    assert_int_equal(counter(&res, "entries.sanitised"), 0);
    sl_free(top);
    sl_free(folder);
    result_free(&res);
}

/*
 * Set the "name is UTF-8" flag (general purpose bit 11) in every local
 * (PK 3 4, flags at +6) and central (PK 1 2, flags at +8) header of zip
 * @name, as zip tools that write UTF-8 names do.  The entries' data must
 * not contain the signatures.
 */
static void
flag_utf8_names(struct fixture *f, const char *name)
{
    size_t len = 0;
    char *buf = slurp(f, name, &len);
    char *path = sl_asprintf("%s/%s", f->data, name);
    FILE *fp = NULL;
    size_t i = 0;

    for (i = 0; i + 10 < len; i++) {
        if (memcmp(buf + i, "PK\x03\x04", 4) == 0) {
            buf[i + 7] = (char)(buf[i + 7] | 0x08);
        } else if (memcmp(buf + i, "PK\x01\x02", 4) == 0) {
            buf[i + 9] = (char)(buf[i + 9] | 0x08);
        }
    }
    fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    sl_free(path);
    sl_free(buf);
}

/* Names flagged as UTF-8 (what Python, 7-Zip and Windows write): a valid
 * one is kept as it is, an invalid one under a positional name; none is
 * dropped. */
static void
test_file_extractor_utf8_names(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {
        {"caf\xc3\xa9.txt", "coffee", 6},
        {"bad\xff.bin", "raw", 3},
        {"plain.txt", "plain", 5},
    };
    struct result res;

    make_archive(f, "u.zip", "zip", 0, e, 3);
    flag_utf8_names(f, "u.zip");
    res = extract(f, "{}", NULL);
    assert_int_equal(counter(&res, "elements.records"), 3);
    check_content(f, &res, "u.zip!/caf\xc3\xa9.txt", "coffee", 6);
    check_content(f, &res, "u.zip!/unnamed-2", "raw", 3);
    check_content(f, &res, "u.zip!/plain.txt", "plain", 5);
    assert_int_equal(counter(&res, "entries.unnamed"), 1);
    assert_int_equal(counter(&res, "entries.skipped"), 0);
    result_free(&res);
}

/* x.tar.gz holding in.zip holding a.txt, plus a plain b.txt. */
static void
make_nested(struct fixture *f)
{
    static const struct entry inner[] = {{"a.txt", "inner a", 7}};
    struct entry outer[] = {{"in.zip", NULL, 0}, {"b.txt", "outer b", 7}};
    char *zip = NULL;
    size_t len = 0;

    make_archive(f, "in.zip", "zip", 0, inner, 1);
    zip = slurp(f, "in.zip", &len);
    remove_file(f, "in.zip");
    outer[0].data = zip;
    outer[0].len = len;
    make_archive(f, "x.tar.gz", "pax", 1, outer, 2);
    sl_free(zip);
}

static void
test_file_extractor_nested(void **state)
{
    struct fixture *f = *state;
    struct result res;
    const json_t *m = NULL;
    char *top = sl_asprintf("%s/x.tar.gz", f->data);

    make_nested(f);
    res = extract(f, "{}", NULL);
    assert_int_equal(json_object_size(res.records), 4);
    assert_int_equal(counter(&res, "compounds.extracted"), 2);
    m = record(f, &res, "x.tar.gz!/in.zip");
    assert_non_null(m);
    assert_true(json_is_true(json_object_get(m, "_isCompound")));
    assert_string_equal(attr(m, "_compoundRecordId"), top);
    assert_null(json_object_get(res.contents, attr(m, "_recordid")));
    m = record(f, &res, "x.tar.gz!/in.zip!/a.txt");
    assert_non_null(m);
    assert_string_equal(attr(m, "_compoundRecordId"), top);
    assert_string_equal(attr(m, "fileName"), "a.txt");
    check_content(f, &res, "x.tar.gz!/in.zip!/a.txt", "inner a", 7);
    check_content(f, &res, "x.tar.gz!/b.txt", "outer b", 7);
    assert_int_equal(counter(&res, "limits.depth"), 0);
    result_free(&res);

    /* maxNestingDepth 0: in.zip is a plain element with its content. */
    res = extract(f, "{\"maxNestingDepth\": 0}", NULL);
    assert_int_equal(json_object_size(res.records), 3);
    assert_int_equal(counter(&res, "limits.depth"), 1);
    m = record(f, &res, "x.tar.gz!/in.zip");
    assert_non_null(m);
    assert_null(json_object_get(m, "_isCompound"));
    assert_non_null(json_object_get(res.contents, attr(m, "_recordid")));
    assert_null(record(f, &res, "x.tar.gz!/in.zip!/a.txt"));
    result_free(&res);
    sl_free(top);
}

static void
test_file_extractor_sanitise(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {
        {"../evil", "e", 1},
        {"/abs", "a", 1},
        {"./ok/../../x/./y", "y", 1},
        {"fine//z", "z", 1},
    };
    struct result res;

    make_archive(f, "s.tar", "pax", 0, e, 4);
    res = extract(f, "{}", NULL);
    assert_int_equal(counter(&res, "entries.sanitised"), 3);
    check_content(f, &res, "s.tar!/evil", "e", 1);
    check_content(f, &res, "s.tar!/abs", "a", 1);
    check_content(f, &res, "s.tar!/ok/x/y", "y", 1);
    check_content(f, &res, "s.tar!/fine/z", "z", 1);
    assert_int_equal(json_object_size(res.records), 5);
    result_free(&res);
}

/* 8 MiB of zeros compress to a few KiB: stopped before it is expanded. */
static void
test_file_extractor_bomb(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {
        {"first.txt", "first", 5},
        {"zeros1.bin", NULL, BOMB_SIZE},
        {"zeros2.bin", NULL, BOMB_SIZE},
    };
    struct result res;

    make_archive(f, "bomb.zip", "zip", 0, e, 3);
    res = extract(f, "{}", NULL);
    assert_int_equal(counter(&res, "limits.ratio"), 1);
    assert_int_equal(counter(&res, "limits.totalBytes"), 0);
    assert_int_equal(counter(&res, "elements.records"), 1);
    assert_true(counter(&res, "elements.bytes") < 1024);
    check_content(f, &res, "bomb.zip!/first.txt", "first", 5);
    result_free(&res);

    /* The same as tar.gz, with a higher ratio: maxTotalBytes stops it
     * after the first zero file. */
    remove_file(f, "bomb.zip");
    make_archive(f, "bomb.tar.gz", "pax", 1, e, 3);
    res = extract(
        f, "{\"maxRatio\": 1000000, \"maxTotalBytes\": 10000000}", NULL);
    assert_int_equal(counter(&res, "limits.totalBytes"), 1);
    assert_int_equal(counter(&res, "limits.ratio"), 0);
    assert_int_equal(counter(&res, "elements.records"), 2);
    assert_int_equal(counter(&res, "elements.bytes"), BOMB_SIZE + 5);
    result_free(&res);
}

static void
test_file_extractor_limits(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {
        {"a.txt", "a", 1},
        {"big.bin", "0123456789abcdef", 16},
        {"c.txt", "c", 1},
    };
    struct result res;
    const json_t *m = NULL;

    make_archive(f, "l.zip", "zip", 0, e, 3);
    res = extract(f, "{\"maxEntrySize\": 10}", NULL);
    assert_int_equal(counter(&res, "limits.entrySize"), 1);
    assert_int_equal(json_object_size(res.records), 4);
    m = record(f, &res, "l.zip!/big.bin");
    assert_non_null(m);
    assert_int_equal(json_integer_value(json_object_get(m, "fileSize")), 16);
    assert_null(json_object_get(res.contents, attr(m, "_recordid")));
    check_content(f, &res, "l.zip!/c.txt", "c", 1);
    result_free(&res);

    res = extract(f, "{\"maxEntries\": 2}", NULL);
    assert_int_equal(counter(&res, "limits.entries"), 1);
    assert_int_equal(json_object_size(res.records), 3);
    assert_null(record(f, &res, "l.zip!/c.txt"));
    result_free(&res);
}

/* A tar.gz cut in the middle of its last entry: the first elements are
 * kept, the corruption is counted, the task succeeds. */
static void
test_file_extractor_corrupt(void **state)
{
    struct fixture *f = *state;
    char *noise = sl_malloc(256u * 1024u);
    struct entry e[] = {
        {"one.txt", "one", 3},
        {"two.txt", "two", 3},
        {"noise.bin", NULL, 256u * 1024u},
    };
    struct result res;
    char *path = sl_asprintf("%s/t.tar.gz", f->data);
    struct stat st;
    size_t i = 0;
    uint32_t v = 1;

    for (i = 0; i < 256u * 1024u; i++) {
        v = v * 1103515245u + 12345u;
        noise[i] = (char)(v >> 24);
    }
    e[2].data = noise;
    make_archive(f, "t.tar.gz", "pax", 1, e, 3);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    res = extract(f, "{}", NULL);
    assert_int_equal(counter(&res, "compounds.corrupt"), 1);
    check_content(f, &res, "t.tar.gz!/one.txt", "one", 3);
    check_content(f, &res, "t.tar.gz!/two.txt", "two", 3);
    result_free(&res);

    /* Not an archive at all. */
    assert_int_equal(truncate(path, 10), 0);
    res = extract(f, "{}", NULL);
    assert_int_equal(counter(&res, "compounds.corrupt"), 1);
    assert_int_equal(json_object_size(res.records), 1); /* the compound */
    result_free(&res);
    sl_free(path);
    sl_free(noise);
}

static void
test_file_extractor_vanished(void **state)
{
    struct fixture *f = *state;
    static const struct entry e[] = {{"a.txt", "a", 1}};
    struct result res;

    make_archive(f, "gone.zip", "zip", 0, e, 1);
    make_archive(f, "kept.zip", "zip", 0, e, 1);
    res = extract(f, "{}", "gone.zip");
    assert_int_equal(counter(&res, "compounds.vanished"), 1);
    assert_int_equal(counter(&res, "compounds.extracted"), 1);
    check_content(f, &res, "kept.zip!/a.txt", "a", 1);
    result_free(&res);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_file_extractor_zip, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_utf8_names, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_sanitise, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_extractor_vanished, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
