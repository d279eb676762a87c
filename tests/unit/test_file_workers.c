/*
 * Unit tests of the built-in fileCrawler and fileFetcher over the
 * in-process task context with a real filesystem object store (no
 * jobmanager): a generated tree under $TMPDIR is crawled task by task the
 * way the jobmanager would (one follow-up task per directory bulk), then
 * fetched, and records, bulks and counters are checked.
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

#include <cmocka.h>

#include "builtin/builtin.h"
#include "workers/workers_int.h"
#include "wk_fixture.h"

#define BIG_SIZE (5u * 1024u * 1024u)
#define RAW_NAME "bad\xff\xfe.bin"
#define ESC_NAME "bad\\xff\\xfe.bin"
#define UNI_NAME                                                               \
    "\xc3\xbcn\xc3\xaf"                                                        \
    "code-\xe6\x97\xa5\xe6\x9c\xac.txt"

struct fixture {
    char dir[512];
    char *data; /* the crawled tree */
    struct sl_obj *store;
    struct sl__wk_backend *b;
    unsigned tasks; /* task ids */
};

/* The result of a whole crawl. */
struct crawl {
    json_t *counters;   /* summed over all tasks */
    json_t *files;      /* _recordid -> metadata */
    json_t *file_bulks; /* ids of the filesToCrawl bulks */
    json_t *bulk_sizes; /* records per filesToCrawl bulk, same order */
};

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

static void
write_file(const char *dir, const char *name, const char *data, size_t len)
{
    char *p = sl_asprintf("%s/%s", dir, name);
    FILE *fp = fopen(p, "wb");

    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    sl_free(p);
}

static void
make_dir(const char *dir, const char *name)
{
    char *p = sl_asprintf("%s/%s", dir, name);

    assert_int_equal(mkdir(p, 0755), 0);
    sl_free(p);
}

static void
make_tree(struct fixture *f)
{
    char *big = sl_malloc(BIG_SIZE);
    char real[PATH_MAX];
    char name[32];
    size_t i = 0;
    char *p = NULL;

    for (i = 0; i < BIG_SIZE; i++) {
        big[i] = (char)((i * 7 + i / 4096) & 0xff);
    }
    p = sl_asprintf("%s/data", f->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_non_null(realpath(p, real));
    f->data = sl_strdup(real);
    sl_free(p);
    write_file(f->data, "a.txt", "hello", 5);
    write_file(f->data, "empty.txt", "", 0);
    write_file(f->data, UNI_NAME, "unicode", 7);
    write_file(f->data, RAW_NAME, "raw bytes", 9);
    write_file(f->data, "big.bin", big, BIG_SIZE);
    make_dir(f->data, "sub1");
    write_file(f->data, "sub1/b.log", "bee", 3);
    write_file(f->data, "sub1/c.zip", "PK", 2);
    write_file(f->data, "sub1/arch.tar.gz", "gz", 2);
    make_dir(f->data, "sub1/sub2");
    write_file(f->data, "sub1/sub2/d.txt", "dee", 3);
    make_dir(f->data, "sub1/sub2/sub3");
    write_file(f->data, "sub1/sub2/sub3/e.txt", "eee", 3);
    make_dir(f->data, "many");
    for (i = 0; i < 25; i++) {
        (void)snprintf(name, sizeof(name), "many/f%02zu", i);
        write_file(f->data, name, name, strlen(name));
    }
    p = sl_asprintf("%s/fifo", f->data);
    assert_int_equal(mkfifo(p, 0644), 0);
    sl_free(p);
    make_dir(f->data, "loop");
    p = sl_asprintf("%s/loop/back", f->data);
    assert_int_equal(symlink("..", p), 0);
    sl_free(p);
    p = sl_asprintf("%s/loop/self", f->data);
    assert_int_equal(symlink(".", p), 0);
    sl_free(p);
    sl_free(big);
}

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));

    wk_env_open(f->dir, sizeof(f->dir), "test_file_workers", &f->store, &f->b);
    make_tree(f);
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

/* Run @type on a task with @params (JSON text) reading bulks @inputs
 * (array of ids or NULL) of slot @in; @outputs maps slot -> object id. */
static json_t *
run(struct fixture *f,
    const struct sl_worker_type *type,
    const char *params,
    const char *in,
    const json_t *inputs,
    json_t *outputs)
{
    json_t *task = json_pack("{s:s, s:o, s:{s:i}, s:{}, s:{}}",
                             "taskId",
                             "t",
                             "parameters",
                             json_loads(params, 0, NULL),
                             "properties",
                             "retries",
                             0,
                             "input",
                             "output");
    struct sl_task_ctx *ctx = NULL;
    const char *key = NULL;
    json_t *v = NULL;
    json_t *result = NULL;
    size_t i = 0;

    assert_non_null(task);
    if (inputs != NULL) {
        json_t *list = json_array();

        json_array_foreach(inputs, i, v)
        {
            (void)json_array_append_new(list,
                                        json_pack("{s:s, s:s, s:s}",
                                                  "bucket",
                                                  "b",
                                                  "store",
                                                  "s",
                                                  "id",
                                                  json_string_value(v)));
        }
        (void)json_object_set_new(json_object_get(task, "input"), in, list);
    }
    json_object_foreach(outputs, key, v)
    {
        (void)json_object_set_new(
            json_object_get(task, "output"), key, slot(json_string_value(v)));
    }
    json_decref(outputs);
    ctx = sl__task_ctx_new(f->b, f->b->impl, type, 0, task);
    result = sl__task_ctx_run(ctx);
    sl__task_ctx_free(ctx);
    json_decref(task);
    return result;
}

static double
counter(const json_t *counters, const char *name)
{
    return json_number_value(json_object_get(counters, name));
}

/* Add every counter of @result into @sum. */
static void
add_counters(json_t *sum, const json_t *result)
{
    const char *key = NULL;
    json_t *v = NULL;

    json_object_foreach(json_object_get(result, "counters"), key, v)
    {
        (void)json_object_set_new(
            sum, key, json_real(counter(sum, key) + json_number_value(v)));
    }
}

/* Records of object @id as metadata objects (attachment sizes added as
 * "_att.<name>", content of "fileContent" kept in *content if not NULL),
 * or NULL when the object does not exist. */
static json_t *
read_bulk(struct fixture *f, const char *id, json_t *contents)
{
    struct sl_obj_reader *rd = NULL;
    struct sl_bulk_reader *br = NULL;
    struct sl_record *rec = NULL;
    struct sl_bulk_limits lim = {0, 64u << 20};
    struct sl_source src;
    json_t *out = NULL;
    const void *data = NULL;
    size_t len = 0;
    int rc = 0;

    if (sl_obj_reader_open(f->store, "s", id, &rd, NULL) != 0) {
        return NULL;
    }
    out = json_array();
    sl_obj_reader_source(rd, &src);
    assert_int_equal(sl_bulk_reader_new(&src, &lim, &br, NULL), 0);
    for (;;) {
        rc = sl_bulk_reader_next(br, &rec, NULL);
        if (rc != 1) {
            break;
        }
        (void)json_array_append(out, sl_record_meta(rec));
        if (contents != NULL &&
            sl_record_attachment_get(rec, "fileContent", &data, &len) == 0) {
            (void)json_object_set_new(
                contents,
                sl_record_id(rec),
                json_stringn_nocheck(len > 0 ? data : "", len));
        }
        sl_record_free(rec);
    }
    assert_int_equal(rc, 0);
    sl_bulk_reader_free(br);
    sl_obj_reader_free(rd);
    return out;
}

/*
 * Crawl f->data with @filters (JSON text) the way the jobmanager would:
 * the first task without input, then one task per directory bulk.  Most
 * tests set entriesPerTask 0 (one directory per task) to see the follow-up
 * mechanics; test_file_crawler_budget uses the default.
 */
static unsigned entries_per_task;

static struct crawl
crawl(struct fixture *f, const char *filters, unsigned per_bulk)
{
    struct crawl c = {json_object(), json_object(), json_array(), json_array()};
    json_t *queue = json_array();
    char *params = sl_asprintf(
        "{\"dataSource\": \"file\", \"rootFolder\": \"%s\", \"filters\": %s,"
        " \"maxFilesPerBulk\": %u, \"entriesPerTask\": %u}",
        f->data,
        filters,
        per_bulk,
        entries_per_task);
    size_t q = 0;
    int first = 1;

    while (first || q < json_array_size(queue)) {
        unsigned t = f->tasks++;
        char *dprefix = sl_asprintf("d/%u/", t);
        char *fprefix = sl_asprintf("f/%u/", t);
        char *id = NULL;
        json_t *in = NULL;
        json_t *r = NULL;
        json_t *recs = NULL;
        json_t *v = NULL;
        size_t k = 0;
        size_t j = 0;

        if (!first) {
            in = json_pack("[O]", json_array_get(queue, q++));
        }
        first = 0;
        r = run(f,
                &sl_worker_fileCrawler,
                params,
                "directoriesToCrawl",
                in,
                json_pack("{s:s+, s:s+}",
                          "directoriesToCrawl",
                          dprefix,
                          "0",
                          "filesToCrawl",
                          fprefix,
                          "0"));
        json_decref(in);
        assert_string_equal(json_string_value(json_object_get(r, "status")),
                            "SUCCESSFUL");
        add_counters(c.counters, r);
        json_decref(r);
        for (k = 0;; k++) {
            id = sl_asprintf("%s%zu", dprefix, k);
            recs = read_bulk(f, id, NULL);
            if (recs == NULL) {
                sl_free(id);
                break;
            }
            assert_true(json_array_size(recs) > 0);
            (void)json_array_append_new(queue, json_string(id));
            json_decref(recs);
            sl_free(id);
        }
        for (k = 0;; k++) {
            id = sl_asprintf("%s%zu", fprefix, k);
            recs = read_bulk(f, id, NULL);
            if (recs == NULL) {
                sl_free(id);
                break;
            }
            (void)json_array_append_new(c.file_bulks, json_string(id));
            (void)json_array_append_new(c.bulk_sizes,
                                        json_integer(json_array_size(recs)));
            json_array_foreach(recs, j, v)
            {
                const char *rid =
                    json_string_value(json_object_get(v, "_recordid"));

                assert_null(json_object_get(c.files, rid));
                (void)json_object_set(c.files, rid, v);
            }
            json_decref(recs);
            sl_free(id);
        }
        sl_free(dprefix);
        sl_free(fprefix);
    }
    json_decref(queue);
    sl_free(params);
    return c;
}

static void
crawl_free(struct crawl *c)
{
    json_decref(c->counters);
    json_decref(c->files);
    json_decref(c->file_bulks);
    json_decref(c->bulk_sizes);
}

static const json_t *
file(const struct fixture *f, const struct crawl *c, const char *rel)
{
    char *id = sl_asprintf("%s/%s", f->data, rel);
    const json_t *m = json_object_get(c->files, id);

    sl_free(id);
    return m;
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

static void
test_file_crawler_defaults(void **state)
{
    struct fixture *f = *state;
    struct crawl c = crawl(f, "{}", 1000);
    const json_t *m = NULL;
    char *folder = NULL;

    /* 5 at the top, 3 + 1 + 1 in sub1/..., 25 in many. */
    assert_int_equal(json_object_size(c.files), 35);
    m = file(f, &c, "a.txt");
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "_source")),
                        "file");
    assert_string_equal(json_string_value(json_object_get(m, "fileName")),
                        "a.txt");
    assert_string_equal(json_string_value(json_object_get(m, "fileExtension")),
                        "txt");
    assert_string_equal(json_string_value(json_object_get(m, "fileFolder")),
                        f->data);
    assert_string_equal(json_string_value(json_object_get(m, "filePath")),
                        json_string_value(json_object_get(m, "_recordid")));
    assert_int_equal(json_integer_value(json_object_get(m, "fileSize")), 5);
    assert_non_null(
        strchr(json_string_value(json_object_get(m, "_deltaHash")), '.'));
    assert_int_equal(
        strncmp(json_string_value(json_object_get(m, "_deltaHash")), "5-", 2),
        0);
    assert_true(strlen(json_string_value(
                    json_object_get(m, "fileLastModified"))) >= 20);
    assert_null(json_object_get(m, "_isCompound"));
    m = file(f, &c, "empty.txt");
    assert_non_null(m);
    assert_int_equal(json_integer_value(json_object_get(m, "fileSize")), 0);
    assert_non_null(file(f, &c, UNI_NAME));
    m = file(f, &c, ESC_NAME);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "fileName")),
                        ESC_NAME);
    assert_true(json_is_true(
        json_object_get(file(f, &c, "sub1/c.zip"), "_isCompound")));
    assert_true(json_is_true(
        json_object_get(file(f, &c, "sub1/arch.tar.gz"), "_isCompound")));
    m = file(f, &c, "sub1/sub2/sub3/e.txt");
    assert_non_null(m);
    folder = sl_asprintf("%s/sub1/sub2/sub3", f->data);
    assert_string_equal(json_string_value(json_object_get(m, "fileFolder")),
                        folder);
    sl_free(folder);
    assert_null(file(f, &c, "fifo"));
    assert_int_equal(counter(c.counters, "files.skipped.special"), 1);
    assert_int_equal(counter(c.counters, "files.skipped.symlink"), 2);
    /* root, sub1, sub2, sub3, many, loop */
    assert_int_equal(counter(c.counters, "directories.crawled"), 6);
    assert_int_equal(counter(c.counters, "files.records"), 35);
    assert_int_equal(counter(c.counters, "output.filesToCrawl.recordCount"),
                     35);
    crawl_free(&c);
}

static void
test_file_crawler_patterns(void **state)
{
    struct fixture *f = *state;
    struct crawl c = crawl(f,
                           "{\"filePatterns\": {\"include\": [\"\\\\.txt$\","
                           " \"\\\\.log$\"], \"exclude\": [\"^empty\"]},"
                           " \"folderPatterns\": {\"exclude\": [\"/sub2$\","
                           " \"/many$\"]}}",
                           1000);

    /* a.txt, unicode .txt, sub1/b.log */
    assert_int_equal(json_object_size(c.files), 3);
    assert_non_null(file(f, &c, "a.txt"));
    assert_non_null(file(f, &c, UNI_NAME));
    assert_non_null(file(f, &c, "sub1/b.log"));
    assert_int_equal(counter(c.counters, "directories.filtered"), 2);
    /* empty.txt, RAW, big.bin, c.zip, arch.tar.gz */
    assert_int_equal(counter(c.counters, "files.filtered"), 5);
    crawl_free(&c);
}

static void
test_file_crawler_size_and_depth(void **state)
{
    struct fixture *f = *state;
    struct crawl c =
        crawl(f, "{\"maxFileSize\": 1000, \"maxFolderDepth\": 1}", 1000);

    assert_null(file(f, &c, "big.bin"));
    assert_int_equal(counter(c.counters, "files.skipped.size"), 1);
    assert_non_null(file(f, &c, "sub1/b.log"));
    assert_null(file(f, &c, "sub1/sub2/d.txt"));
    assert_int_equal(counter(c.counters, "directories.tooDeep"), 1);
    assert_int_equal(json_object_size(c.files), 34 - 2);
    crawl_free(&c);
}

static void
test_file_crawler_symlink_loop(void **state)
{
    struct fixture *f = *state;
    struct crawl c = crawl(f, "{\"followSymbolicLinks\": true}", 1000);

    /* loop/back -> .. (the root) and loop/self -> . are both loops. */
    assert_int_equal(counter(c.counters, "directories.loops"), 2);
    assert_int_equal(json_object_size(c.files), 35);
    crawl_free(&c);
}

static void
test_file_crawler_bulk_split(void **state)
{
    struct fixture *f = *state;
    struct crawl c = crawl(f, "{}", 10);
    size_t i = 0;
    json_t *v = NULL;
    size_t tens = 0;

    assert_int_equal(json_object_size(c.files), 35);
    json_array_foreach(c.bulk_sizes, i, v)
    {
        assert_true(json_integer_value(v) <= 10);
        tens += json_integer_value(v) == 10;
    }
    /* many/ alone has 25 files: 10 + 10 + 5. */
    assert_true(tens >= 2);
    assert_true(json_array_size(c.file_bulks) >= 5);
    crawl_free(&c);
}

/* More than 32 sub-directories: later ones are grouped into one bulk, so
 * one follow-up task lists several directories. */
static void
test_file_crawler_wide(void **state)
{
    struct fixture *f = *state;
    struct crawl c;
    char name[32];
    size_t i = 0;

    make_dir(f->data, "wide");
    for (i = 0; i < 40; i++) {
        (void)snprintf(name, sizeof(name), "wide/w%02zu", i);
        make_dir(f->data, name);
        (void)snprintf(name, sizeof(name), "wide/w%02zu/x", i);
        write_file(f->data, name, "x", 1);
    }
    c = crawl(f, "{}", 1000);
    assert_int_equal(json_object_size(c.files), 35 + 40);
    assert_non_null(file(f, &c, "wide/w39/x"));
    assert_int_equal(counter(c.counters, "directories.crawled"), 6 + 41);
    assert_int_equal(
        counter(c.counters, "input.directoriesToCrawl.recordCount"), 5 + 41);
    crawl_free(&c);
}

/* The default entry budget lists small sub-directories in the same task:
 * the same records from far fewer tasks. */
static void
test_file_crawler_budget(void **state)
{
    struct fixture *f = *state;
    struct crawl one;
    struct crawl many;
    const char *k = NULL;
    json_t *v = NULL;

    one = crawl(f, "{}", 1000);
    entries_per_task = 2000;
    many = crawl(f, "{}", 1000);
    entries_per_task = 0;
    assert_int_equal(json_object_size(many.files), 35);
    json_object_foreach(one.files, k, v)
    {
        assert_non_null(json_object_get(many.files, k));
    }
    assert_int_equal(counter(many.counters, "directories.crawled"),
                     counter(one.counters, "directories.crawled"));
    assert_int_equal(counter(many.counters, "directories.records"), 0);
    assert_true(counter(one.counters, "directories.records") > 0);
    crawl_free(&one);
    crawl_free(&many);
}

static void
test_file_crawler_bad_params(void **state)
{
    struct fixture *f = *state;
    json_t *r = run(f,
                    &sl_worker_fileCrawler,
                    "{\"dataSource\": \"file\", \"rootFolder\": \"/\","
                    " \"filters\": {\"filePatterns\": {\"include\": [\"(\"]}}}",
                    "directoriesToCrawl",
                    NULL,
                    json_object());

    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "FATAL_ERROR");
    json_decref(r);
    r = run(f,
            &sl_worker_fileCrawler,
            "{\"dataSource\": \"file\", \"rootFolder\": \"/nonexistent/x\"}",
            "directoriesToCrawl",
            NULL,
            json_object());
    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "FATAL_ERROR");
    json_decref(r);
}

/* Compare the content of @rel in f->data with @contents[id]. */
static void
check_content(struct fixture *f, const json_t *contents, const char *rel)
{
    char *raw = sl_asprintf("%s/%s", f->data, rel);
    char *id = sl_worker_path_escape(raw);
    const json_t *got = json_object_get(contents, id);
    struct stat st;
    FILE *fp = fopen(raw, "rb");
    char *want = NULL;

    assert_non_null(fp);
    assert_non_null(got);
    assert_int_equal(stat(raw, &st), 0);
    want = sl_malloc((size_t)st.st_size + 1);
    assert_int_equal(fread(want, 1, (size_t)st.st_size + 1, fp),
                     (size_t)st.st_size);
    assert_int_equal(json_string_length(got), (size_t)st.st_size);
    assert_memory_equal(json_string_value(got), want, (size_t)st.st_size);
    (void)fclose(fp);
    sl_free(want);
    sl_free(id);
    sl_free(raw);
}

static void
test_file_fetcher_content(void **state)
{
    struct fixture *f = *state;
    struct crawl c = crawl(f, "{}", 1000);
    json_t *contents = json_object();
    json_t *recs = NULL;
    json_t *r = NULL;
    char *gone = sl_asprintf("%s/sub1/b.log", f->data);

    assert_int_equal(unlink(gone), 0);
    r = run(f,
            &sl_worker_fileFetcher,
            "{}",
            "filesToFetch",
            c.file_bulks,
            json_pack("{s:s}", "files", "out/fetch1"));
    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "SUCCESSFUL");
    assert_int_equal(counter(json_object_get(r, "counters"), "files.vanished"),
                     1);
    assert_int_equal(counter(json_object_get(r, "counters"), "files.fetched"),
                     34);
    recs = read_bulk(f, "out/fetch1", contents);
    assert_non_null(recs);
    assert_int_equal(json_array_size(recs), 34);
    assert_int_equal(json_object_size(contents), 34);
    check_content(f, contents, "a.txt");
    check_content(f, contents, "empty.txt");
    check_content(f, contents, "big.bin");
    check_content(f, contents, RAW_NAME);
    check_content(f, contents, UNI_NAME);
    check_content(f, contents, "many/f24");
    json_decref(recs);
    json_decref(r);
    json_decref(contents);

    /* maxFileSize: big.bin is passed on without content. */
    contents = json_object();
    r = run(f,
            &sl_worker_fileFetcher,
            "{\"maxFileSize\": 1000}",
            "filesToFetch",
            c.file_bulks,
            json_pack("{s:s}", "files", "out/fetch2"));
    assert_string_equal(json_string_value(json_object_get(r, "status")),
                        "SUCCESSFUL");
    assert_int_equal(
        counter(json_object_get(r, "counters"), "files.skipped.size"), 1);
    recs = read_bulk(f, "out/fetch2", contents);
    assert_int_equal(json_array_size(recs), 34);
    assert_int_equal(json_object_size(contents), 33);
    json_decref(recs);
    json_decref(r);
    json_decref(contents);
    sl_free(gone);
    crawl_free(&c);
}

static void
test_file_path_escape(void **state)
{
    static const char *const cases[][2] = {
        {"/plain/a.txt", "/plain/a.txt"},
        {"/x/" RAW_NAME, "/x/" ESC_NAME},
        {"/back\\slash", "/back\\x5cslash"},
        {"/lit\\x41", "/lit\\x5cx41"},
        {"/" UNI_NAME, "/" UNI_NAME},
        {"/trunc\xe6\x97", "/trunc\\xe6\\x97"},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *e = sl_worker_path_escape(cases[i][0]);
        char *u = sl_worker_path_unescape(e);

        assert_string_equal(e, cases[i][1]);
        assert_string_equal(u, cases[i][0]);
        sl_free(e);
        sl_free(u);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_path_escape),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_patterns, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_size_and_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_symlink_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_bulk_split, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_wide, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_crawler_bad_params, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_file_fetcher_content, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
