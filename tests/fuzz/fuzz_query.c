/*
 * The query language (index/qparse.c): any text a user may type is
 * either refused with the query language's own error (SL_EINVAL, field
 * "q", a position) or searched; what the parser writes must always be
 * valid FTS5 and SQL, so no search may fail with SQLite's "malformed
 * query" (an FTS5 syntax error) or any other error.  The searches run on
 * a real index of two shards with a few documents that have every field
 * the filters read, in the three orders and with the facets.
 */
#include "core/sl.h"
#include "index/index.h"

#include "fuzz.h"
#include "tmpdir.h"

static struct {
    char dir[512];
    struct sl_index_set *set;
} g;

static void
cleanup(void)
{
    sl_index_close(g.set);
    (void)tmpdir_remove(g.dir);
}

static const char *const docs[] = {
    "{\"_recordid\":\"/data/docs/report.pdf\",\"title\":\"Q1 report\","
    "\"path\":\"/data/docs/report.pdf\",\"mimeType\":\"application/pdf\","
    "\"size\":2000,\"lastModified\":\"2025-03-04T10:00:00Z\","
    "\"_source\":\"fs\",\"author\":\"Ada Lovelace\","
    "\"text\":\"the quarterly report mentions stdio.h and e-mail\"}",
    "{\"_recordid\":\"http://example.com/\",\"title\":\"Example\","
    "\"mimeType\":\"text/html\",\"size\":10000,\"created\":\"2020-01-01\","
    "\"lastModified\":\"2025-06-30T23:59:59Z\",\"_source\":\"web\","
    "\"text\":\"x86_64-linux-gnu builds; don't e-mail C++ code\"}",
    "{\"_recordid\":\"/data/a.zip!/notes.txt\",\"title\":\"notes\","
    "\"path\":\"/data/a.zip!/notes.txt\",\"mimeType\":\"text/plain\","
    "\"size\":100,\"_compoundRecordId\":\"/data/a.zip\","
    "\"text\":\"a draft of the report\"}",
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct sl_err err;
    size_t i = 0;

    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    SL_FUZZ_CHECK(tmpdir_make(g.dir, sizeof(g.dir), "fuzz_query.") != NULL,
                  "mkdtemp %s",
                  g.dir);
    SL_FUZZ_CHECK(sl_index_open(g.dir, &g.set, &err) == 0, "%s", err.message);
    (void)sl_index_set_shards(g.set, 2);
    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_t *doc = json_loads(docs[i], 0, NULL);

        SL_FUZZ_CHECK(doc != NULL &&
                          sl_index_upsert(g.set, "docs", doc, &err) == 0,
                      "upsert %zu",
                      i);
        json_decref(doc);
    }
    (void)atexit(cleanup);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl_index_search_opts o;
    char *q = NULL;
    json_t *out = NULL;
    struct sl_err err;
    int rc = 0;

    if (size > SL_INDEX_MAX_QUERY) {
        return 0;
    }
    q = sl_fuzz_str(data, size);
    sl_err_clear(&err);
    memset(&o, 0, sizeof(o));
    o.query = q;
    o.limit = 2;
    o.offset = size % 2;
    o.sort = (enum sl_index_sort)(size % 3);
    o.ascending = (int)(size / 3 % 2);
    o.facets = size % 5 == 0 ? "source,type,ext,year" : NULL;
    rc = sl_index_search_opts(g.set, "docs", &o, &out, &err);
    SL_FUZZ_CHECK(rc == 0 || (rc == SL_EINVAL && strcmp(err.field, "q") == 0 &&
                              strstr(err.message, "malformed query") == NULL),
                  "query [%s]: %s (%s)",
                  q,
                  sl_err_name(rc),
                  err.message);
    SL_FUZZ_CHECK(rc != 0 || json_array_size(json_object_get(out, "hits")) <= 2,
                  "query [%s]: more hits than documents",
                  q);
    json_decref(out);
    sl_free(q);
    return 0;
}
