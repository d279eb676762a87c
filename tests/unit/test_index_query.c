/*
 * Unit tests of the query language (index/qparse.c, docs/index.md "Query
 * language"): a table of what users type and the FTS5 expression and SQL
 * condition it becomes; the errors (an unknown field, a value that cannot
 * be read) with their position; then searches on a real index whose
 * documents have paths, types, sizes, dates, sources, a web page and an
 * archive's element, each query's hits compared as a set of record ids;
 * the order by date and size and the facets, merged over two shards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index/index.h"
#include "index/index_int.h"
#include "index_fixture.h"

static int
setup(void **state)
{
    return index_setup(state, "test_index_query.");
}

#define IN_FTS                                                                 \
    "d.id IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?)"
#define EXT "(coalesce(d.path, d._recordid) LIKE ? ESCAPE '\\')"
#define HOST_PORT                                                              \
    "((d.host = lower(?) AND rtrim(substr(lower(d.url), instr(d.url, '://') "  \
    "+ 3, length(?) + 1), '/?#') = lower(?)))"

/* What a query becomes: the MATCH, the condition, the values joined by
 * '|' (NULL: none). */
static const struct {
    const char *q;
    const char *match;
    const char *where;
    const char *params;
} cases[] = {
    /* words as people type them */
    {"stdio.h", "\"stdio.h\"", NULL, NULL},
    {"e-mail", "\"e-mail\"", NULL, NULL},
    {"C++", "\"C++\"", NULL, NULL},
    {"don't", "\"don't\"", NULL, NULL},
    {"x86_64-linux-gnu", "\"x86_64-linux-gnu\"", NULL, NULL},
    {"pthread_mutex_lock(", "\"pthread_mutex_lock\"", NULL, NULL},
    {"http://example.com/a?b=c", "\"http://example.com/a?b=c\"", NULL, NULL},
    {"std::vector", "\"std::vector\"", NULL, NULL},
    {"note: this", "(\"note:\" AND \"this\")", NULL, NULL},
    {"a b", "(\"a\" AND \"b\")", NULL, NULL},
    {"a ++ b --", "(\"a\" AND \"b\")", NULL, NULL},
    /* quotes, parentheses, operators */
    {"\"quarterly report", "\"quarterly report\"", NULL, NULL},
    {"\"quarter\"* x", "(\"quarter\"* AND \"x\")", NULL, NULL},
    {"quart*", "\"quart\"*", NULL, NULL},
    {"a OR b", "(\"a\" OR \"b\")", NULL, NULL},
    {"a AND b", "(\"a\" AND \"b\")", NULL, NULL},
    {"(a OR b) c", "((\"a\" OR \"b\") AND \"c\")", NULL, NULL},
    {"(a OR b", "(\"a\" OR \"b\")", NULL, NULL},
    {"a) b", "(\"a\" AND \"b\")", NULL, NULL},
    {"a -b", "(\"a\" NOT \"b\")", NULL, NULL},
    {"a NOT b c", "((\"a\" AND \"c\") NOT \"b\")", NULL, NULL},
    {"-b", NULL, "(NOT coalesce(" IN_FTS ", 0))", "\"b\""},
    {"a -b -c", "(\"a\" NOT \"b\" NOT \"c\")", NULL, NULL},
    {"AND", "\"AND\"", NULL, NULL},
    {"a OR", "\"a\"", NULL, NULL},
    {"NOT", "\"NOT\"", NULL, NULL},
    {"a NOT", "\"a\"", NULL, NULL},
    {"or and not", "(\"or\" AND \"and\" AND \"not\")", NULL, NULL},
    {"a NEAR b", "NEAR(\"a\" \"b\", 10)", NULL, NULL},
    {"a NEAR/3 b NEAR/2 c", "NEAR(\"a\" \"b\" \"c\", 3)", NULL, NULL},
    {"NEAR(a b, 5)", "NEAR(\"a\" \"b\", 5)", NULL, NULL},
    /* fields */
    {"title:lunch", "title : \"lunch\"", NULL, NULL},
    {"title:\"big lunch\"", "title : \"big lunch\"", NULL, NULL},
    {"title:(a OR b)", "(title : \"a\" OR title : \"b\")", NULL, NULL},
    {"author:smith x", "(author : \"smith\" AND \"x\")", NULL, NULL},
    {"ext:pdf report", "\"report\"", EXT, "%.pdf"},
    {"report -ext:.PDF", "\"report\"", "(NOT coalesce(" EXT ", 0))", "%.PDF"},
    {"report OR ext:pdf", NULL, "(" IN_FTS " OR " EXT ")", "\"report\"|%.pdf"},
    {"ext:p_f%\\", NULL, EXT, "%.p\\_f\\%\\\\"},
    {"size:>1M", NULL, "(d.size > 1048576)", NULL},
    {"size:1k..2.5k", NULL, "(d.size >= 1024 AND d.size <= 2560)", NULL},
    {"size:..10", NULL, "(d.size <= 10)", NULL},
    {"modified:2025-01..2025-06",
     NULL,
     "(substr(d.modified, 1, 7) >= '2025-01' AND substr(d.modified, 1, 7) "
     "<= '2025-06')",
     NULL},
    {"created:<=2024", NULL, "(substr(d.created, 1, 4) <= '2024')", NULL},
    {"type:pdf", NULL, "(d.mime = 'application/pdf')", NULL},
    {"type:image/*", NULL, "(d.mime LIKE ?)", "image/%"},
    {"mime:text/html", NULL, "(d.mime = ?)", "text/html"},
    {"source:fs",
     NULL,
     "(EXISTS (SELECT 1 FROM doc_sources s WHERE s.doc = d.id AND s.source = "
     "?))",
     "fs"},
    {"path:/home/u/docs/",
     NULL,
     "((d.path = ? OR substr(d.path, 1, length(?)) = ?))",
     "/home/u/docs|/home/u/docs/|/home/u/docs/"},
    {"path:docs", NULL, "(instr('/' || d.path, ?) > 0)", "/docs/"},
    {"in:a.zip", NULL, "(instr('/' || d._recordid, ?) > 0)", "/a.zip!/"},
    {"url:http://h/a",
     NULL,
     "(substr(coalesce(d.url, d._recordid), 1, length(?)) = ?)",
     "http://h/a|http://h/a"},
    {"host:Example.com", NULL, "(d.host = lower(?))", "Example.com"},
    {"host:example.com:8080",
     NULL,
     HOST_PORT,
     "example.com|example.com:8080|example.com:8080"},
    {"host:[::1]:81", NULL, HOST_PORT, "[::1]|[::1]:81|[::1]:81"},
    {"host:[::1]", NULL, "(d.host = lower(?))", "[::1]"},
};

static void
test_query_table(void **state)
{
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sl__query q;
        struct sl_err err;
        char params[512] = "";
        size_t k = 0;

        sl_err_clear(&err);
        if (sl__query_parse(cases[i].q, &q, &err) != 0) {
            fail_msg("%s: %s", cases[i].q, err.message);
        }
        for (k = 0; k < q.nparams; k++) {
            (void)snprintf(params + strlen(params),
                           sizeof(params) - strlen(params),
                           "%s%s",
                           k ? "|" : "",
                           q.params[k]);
        }
        if ((cases[i].match == NULL) != (q.match == NULL) ||
            (q.match != NULL && strcmp(q.match, cases[i].match) != 0) ||
            (cases[i].where == NULL) != (q.where == NULL) ||
            (q.where != NULL && strcmp(q.where, cases[i].where) != 0) ||
            strcmp(params, cases[i].params ? cases[i].params : "") != 0) {
            fail_msg("%s: match [%s] where [%s] params [%s]",
                     cases[i].q,
                     q.match ? q.match : "(none)",
                     q.where ? q.where : "(none)",
                     params);
        }
        sl__query_free(&q);
    }
}

/* Queries refused, and what the message must contain. */
static const struct {
    const char *q;
    const char *says;
} refused[] = {
    {"nosuchcol:x", "unknown field 'nosuchcol'"},
    {"nosuchcol:x", "position 1"},
    {"nosuchcol:x",
     "(the fields are title, author, text, content, source, path, dir, ext,"
     " type, mime, modified, created, size, in, url, host)"},
    {"report Re:lunch", "position 8"},
    {"modified:yesterday", "modified: wants a date"},
    {"size:big", "size: wants a size"},
    {"size:1..2..3", "size: wants a size"},
    {"type:spreadsheetish", "type: wants one of"},
    {"ext:\"\"", "field 'ext' has no value"},
    {"host:a/b", "host: wants a host name"},
    {"++ --", "no word or field"},
    {"\"\"", "no word or field"},
};

static void
test_query_refused(void **state)
{
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        struct sl__query q;
        struct sl_err err;

        sl_err_clear(&err);
        if (sl__query_parse(refused[i].q, &q, &err) != SL_EINVAL) {
            fail_msg("%s: accepted (match [%s] where [%s])",
                     refused[i].q,
                     q.match ? q.match : "",
                     q.where ? q.where : "");
        }
        assert_string_equal(err.field, "q");
        if (strstr(err.message, refused[i].says) == NULL) {
            fail_msg("%s: '%s' does not say '%s'",
                     refused[i].q,
                     err.message,
                     refused[i].says);
        }
    }
}

static void
put(struct sl_index_set *set, const char *json)
{
    json_t *doc = json_loads(json, 0, NULL);
    struct sl_err err;

    assert_non_null(doc);
    if (sl_index_upsert(set, "docs", doc, &err) != 0) {
        fail_msg("upsert %s: %s", json, err.message);
    }
    json_decref(doc);
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The hits' record ids of @q, sorted and joined by ','; a static buffer. */
static const char *
ids(struct sl_index_set *set, const char *q)
{
    static char out[1024];
    const char *id[64];
    json_t *res = NULL;
    json_t *hits = NULL;
    struct sl_err err;
    size_t n = 0;
    size_t i = 0;

    sl_err_clear(&err);
    if (sl_index_search(set, "docs", q, 100, 0, &res, &err) != 0) {
        fail_msg("%s: %s", q, err.message);
    }
    hits = json_object_get(res, "hits");
    n = json_array_size(hits);
    assert_true(n < 64);
    assert_int_equal(json_integer_value(json_object_get(res, "total")), n);
    for (i = 0; i < n; i++) {
        id[i] = json_string_value(
            json_object_get(json_array_get(hits, i), "_recordid"));
    }
    qsort(id, n, sizeof(id[0]), cmp_str);
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        (void)snprintf(out + strlen(out),
                       sizeof(out) - strlen(out),
                       "%s%s",
                       i ? "," : "",
                       id[i]);
    }
    json_decref(res);
    return out;
}

#define D1 "/home/u/docs/report.pdf"
#define D2 "/home/u/src/main.c"
#define D3 "http://example.com/index.html"
#define D4 "/home/u/backup.zip!/notes.txt"

/* A query and the ids it finds (sorted, joined by ','). */
static const struct {
    const char *q;
    const char *want;
} finds[] = {
    {"stdio.h", D1 "," D2},
    {"e-mail", D1 "," D3},
    {"C++", D2},
    {"don't", D2},
    {"x86_64-linux-gnu", D3},
    {"pthread_mutex_lock(", D2},
    {"\"quarterly report", D1},
    {"title:report", D1},
    {"draft NEAR report", D4},
    {"report ext:pdf", D1},
    {"report ext:PDF", D1},
    {"ext:p_f", ""}, /* not a wildcard */
    {"ext:%", ""},
    {"report -ext:pdf", D4 "," D3},
    /* a negated filter keeps documents without the field (no created) */
    {"report -created:2020..2030", D4 "," D1 "," D3},
    {"report -path:/home/u/src", D4 "," D1 "," D3},
    {"path:/index.html", D3},
    {"-type:pdf -size:>1k", D4 "," D2},
    {"report size:>1k", D1 "," D3},
    {"size:<=500", D4 "," D2},
    {"modified:2025-01..2025-06", D1 "," D3},
    {"modified:<2024", D4},
    {"report source:web", D3},
    {"source:fs -report", D2},
    {"host:example.com", D3},
    {"host:example.co", ""},
    {"host:EXAMPLE.com:80", ""},
    {"host:example.com:8080", ""},
    {"url:http://example.com/", D3},
    {"path:/home/u", D4 "," D1 "," D2},
    {"path:/home/u/do", ""},
    {"path:docs", D1},
    {"in:backup.zip", D4},
    {"type:pdf OR type:html", D1 "," D3},
    {"report OR ext:c", D4 "," D1 "," D2 "," D3},
    {"(report OR include) -type:html", D4 "," D1 "," D2},
    /* prefixes, expanded to the shard's words or not (prefix.c) */
    {"quart*", D1},
    {"rep*", D4 "," D1 "," D3},
    {"title:rep*", D1},
    {"source:fs -rep*", D2},
    {"draft NEAR rep*", D4},
    {"\"quarterly rep\"*", D1},
    {"zür*", D2},
    {"ZUR*", D2},
    {"nothing*", ""},
};

static void
test_query_search(void **state)
{
    struct fixture *f = *state;
    size_t i = 0;

    /* two shards: hits, counts and facets are merged over both */
    assert_int_equal(sl_index_set_shards(f->set, 2), 0);
    put(f->set,
        "{\"_recordid\":\"" D1 "\",\"title\":\"Q1 report\",\"path\":\"" D1
        "\",\"mimeType\":\"application/pdf\",\"size\":2000,"
        "\"lastModified\":\"2025-03-04T10:00:00Z\",\"_source\":\"fs\","
        "\"text\":\"the quarterly report mentions stdio.h and e-mail\"}");
    put(f->set,
        "{\"_recordid\":\"" D2 "\",\"title\":\"main\",\"path\":\"" D2
        "\",\"mimeType\":\"text/x-c\",\"size\":500,"
        "\"lastModified\":\"2024-11-01T08:00:00Z\",\"_source\":\"fs\","
        "\"text\":\"#include <stdio.h> pthread_mutex_lock(&m); C++ don't "
        "Zürich\"}");
    put(f->set,
        "{\"_recordid\":\"" D3 "\",\"url\":\"" D3 "\",\"title\":\"Example\","
        "\"mimeType\":\"text/html\",\"size\":10000,"
        "\"lastModified\":\"2025-06-30T23:59:59Z\",\"_source\":\"web\","
        "\"text\":\"x86_64-linux-gnu builds; e-mail us the report\"}");
    put(f->set,
        "{\"_recordid\":\"" D4 "\",\"title\":\"notes\",\"path\":\"" D4
        "\",\"mimeType\":\"text/plain\",\"size\":100,"
        "\"lastModified\":\"2023-01-01T00:00:00Z\",\"_source\":\"fs\","
        "\"_compoundRecordId\":\"/home/u/backup.zip\","
        "\"text\":\"a draft of the report\"}");
    for (i = 0; i < sizeof(finds) / sizeof(finds[0]); i++) {
        const char *got = ids(f->set, finds[i].q);

        if (strcmp(got, finds[i].want) != 0) {
            fail_msg(
                "%s: found [%s], want [%s]", finds[i].q, got, finds[i].want);
        }
    }
    /* many negations: one pair of parentheses, not one each (FTS5's
     * parser stack is fixed) */
    {
        char q[1024] = "report";

        for (i = 0; i < 120; i++) {
            (void)snprintf(q + strlen(q), sizeof(q) - strlen(q), " -n%zu", i);
        }
        assert_string_equal(ids(f->set, q), D4 "," D1 "," D3);
    }
    /* with filters, the count comes with the hits: also without any */
    {
        json_t *res = NULL;

        assert_int_equal(
            sl_index_search(f->set, "docs", "report ext:pdf", 0, 0, &res, NULL),
            0);
        assert_int_equal(json_integer_value(json_object_get(res, "total")), 1);
        json_decref(res);
    }
}

/* @match with its prefixes expanded on the one shard of "docs"; a static
 * buffer, "-" when nothing was expanded. */
static const char *
expanded(struct sl_index_set *set, const char *match)
{
    static char out[2048];
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    struct sl_err err;
    unsigned n = 0;
    char *m = NULL;

    if (sl__ix_acquire_all(set, "docs", ix, &n, &err) != 0) {
        fail_msg("acquire: %s", err.message);
    }
    assert_int_equal(n, 1);
    m = sl__ix_prefix_expand(ix[0], match);
    sl__ix_release_all(ix, n);
    (void)snprintf(out, sizeof(out), "%s", m != NULL ? m : "-");
    sl_free(m);
    return out;
}

static void
test_query_prefix(void **state)
{
    struct fixture *f = *state;
    char text[1024] = "";
    char doc[1400];
    size_t i = 0;

    assert_int_equal(sl_index_set_shards(f->set, 1), 0);
    put(f->set,
        "{\"_recordid\":\"a\",\"title\":\"Report\",\"text\":\"reports "
        "repaired report quarterly Zürich stdio.h\"}");
    assert_string_equal(expanded(f->set, "\"rep\"*"),
                        "(\"repaired\" OR \"report\" OR \"reports\")");
    assert_string_equal(expanded(f->set, "\"report\"*"),
                        "(\"report\" OR \"reports\")");
    assert_string_equal(expanded(f->set, "(title : \"rep\"* NOT \"zü\"*)"),
                        "(title : (\"repaired\" OR \"report\" OR "
                        "\"reports\") NOT (\"zurich\"))");
    /* a quote in the text, a word after the prefix */
    assert_string_equal(expanded(f->set, "\"a\"\"b\" AND \"qua\"* AND \"x\""),
                        "\"a\"\"b\" AND (\"quarterly\") AND \"x\"");
    /* left alone: inside a NEAR, a phrase ending in a prefix, no word */
    assert_string_equal(expanded(f->set, "NEAR(\"rep\"* \"qua\", 3)"), "-");
    assert_string_equal(expanded(f->set, "\"stdio h\"*"), "-");
    assert_string_equal(expanded(f->set, "\"nothing\"*"), "-");
    assert_string_equal(expanded(f->set, "\"report\""), "-");
    /* more words than SL__IX_PREFIX_WORDS: FTS5's own prefix */
    for (i = 0; i <= SL__IX_PREFIX_WORDS; i++) {
        (void)snprintf(
            text + strlen(text), sizeof(text) - strlen(text), " pfx%zu", i);
    }
    (void)snprintf(
        doc, sizeof(doc), "{\"_recordid\":\"b\",\"text\":\"%s\"}", text);
    put(f->set, doc);
    assert_string_equal(expanded(f->set, "\"pfx\"*"), "-");
    assert_string_equal(expanded(f->set, "\"pfx6\"*"),
                        "(\"pfx6\" OR \"pfx60\" OR \"pfx61\" OR "
                        "\"pfx62\" OR \"pfx63\" OR \"pfx64\")");
    assert_string_equal(ids(f->set, "pfx*"), "b");
    assert_string_equal(ids(f->set, "pfx6*"), "b");
    assert_string_equal(ids(f->set, "rep* -pfx*"), "a");
}

/* The ids of the hits of @o, in order, joined by ','; a static buffer. */
static const char *
ordered(struct sl_index_set *set, struct sl_index_search_opts *o, json_t **res)
{
    static char out[1024];
    json_t *hits = NULL;
    struct sl_err err;
    size_t i = 0;

    sl_err_clear(&err);
    if (sl_index_search_opts(set, "docs", o, res, &err) != 0) {
        fail_msg("%s: %s", o->query, err.message);
    }
    hits = json_object_get(*res, "hits");
    out[0] = '\0';
    for (i = 0; i < json_array_size(hits); i++) {
        (void)snprintf(out + strlen(out),
                       sizeof(out) - strlen(out),
                       "%s%s",
                       i ? "," : "",
                       json_string_value(json_object_get(
                           json_array_get(hits, i), "_recordid")));
    }
    return out;
}

/* "value:count ..." of facet @name in @res; a static buffer. */
static const char *
facet(const json_t *res, const char *name)
{
    static char out[512];
    const json_t *list = json_object_get(json_object_get(res, "facets"), name);
    size_t i = 0;

    out[0] = '\0';
    for (i = 0; i < json_array_size(list); i++) {
        const json_t *v = json_array_get(list, i);

        (void)snprintf(
            out + strlen(out),
            sizeof(out) - strlen(out),
            "%s%s:%lld",
            i ? " " : "",
            json_string_value(json_object_get(v, "value")),
            (long long)json_integer_value(json_object_get(v, "count")));
    }
    return out;
}

static void
test_query_sort_facets(void **state)
{
    struct sl_index_search_opts o;
    json_t *res = NULL;
    struct sl_err err;

    test_query_search(state); /* the same four documents on two shards */
    memset(&o, 0, sizeof(o));
    o.query = "report OR stdio.h";
    o.limit = 10;
    o.sort = SL_INDEX_SORT_DATE;
    assert_string_equal(ordered(((struct fixture *)*state)->set, &o, &res),
                        D3 "," D1 "," D2 "," D4);
    json_decref(res);
    o.ascending = 1;
    assert_string_equal(ordered(((struct fixture *)*state)->set, &o, &res),
                        D4 "," D2 "," D1 "," D3);
    json_decref(res);
    o.sort = SL_INDEX_SORT_SIZE;
    o.offset = 1;
    o.limit = 2;
    assert_string_equal(ordered(((struct fixture *)*state)->set, &o, &res),
                        D2 "," D1);
    assert_int_equal(json_integer_value(json_object_get(res, "total")), 4);
    json_decref(res);
    /* facets, counted over every hit, not only the page */
    o.offset = 0;
    o.limit = 1;
    o.facets = "type,ext,year,source";
    (void)ordered(((struct fixture *)*state)->set, &o, &res);
    assert_string_equal(facet(res, "type"),
                        "application/pdf:1 text/html:1 text/plain:1 "
                        "text/x-c:1");
    assert_string_equal(facet(res, "ext"), "c:1 html:1 pdf:1 txt:1");
    assert_string_equal(facet(res, "year"), "2025:2 2023:1 2024:1");
    assert_string_equal(facet(res, "source"), "fs:3 web:1");
    json_decref(res);
    o.query = "ext:pdf OR ext:txt";
    o.facets = "source";
    (void)ordered(((struct fixture *)*state)->set, &o, &res);
    assert_string_equal(facet(res, "source"), "fs:2");
    json_decref(res);
    o.facets = "type,colour";
    sl_err_clear(&err);
    assert_int_equal(
        sl_index_search_opts(
            ((struct fixture *)*state)->set, "docs", &o, &res, &err),
        SL_EINVAL);
    assert_string_equal(err.field, "facets");
    assert_non_null(strstr(err.message, "colour"));
}

/* Page through query @q in order @sort/@asc, @limit hits a page, by
 * cursor; the ids joined by ',' into @out (size @cap). Between the first
 * and the second page @between runs (may be NULL). */
static void
page_all(struct sl_index_set *set,
         struct sl_index_search_opts *o,
         void (*between)(struct sl_index_set *),
         char *out,
         size_t cap)
{
    char cur[1024] = "";
    json_int_t total = -1;
    int pages = 0;

    out[0] = '\0';
    for (;;) {
        json_t *res = NULL;
        json_t *next = NULL;
        const char *got = NULL;

        o->cursor = cur[0] != '\0' ? cur : NULL;
        got = ordered(set, o, &res);
        (void)snprintf(out + strlen(out),
                       cap - strlen(out),
                       "%s%s",
                       out[0] != '\0' && got[0] != '\0' ? "," : "",
                       got);
        assert_true(++pages < 100);
        /* every page counts all hits, those before its cursor too (unless
         * documents were added between two pages) */
        if (total >= 0 && between == NULL) {
            assert_int_equal(json_integer_value(json_object_get(res, "total")),
                             total);
        }
        total = json_integer_value(json_object_get(res, "total"));
        next = json_object_get(res, "next");
        if (next == NULL) {
            /* no cursor after the last page, and no page is short before */
            json_decref(res);
            break;
        }
        assert_int_equal(json_array_size(json_object_get(res, "hits")),
                         o->limit);
        assert_true(json_string_length(next) < sizeof(cur));
        (void)snprintf(cur, sizeof(cur), "%s", json_string_value(next));
        json_decref(res);
        if (pages == 1 && between != NULL) {
            between(set);
        }
    }
    o->cursor = NULL;
}

/* Documents that sort first in every order, added between two pages. */
static void
add_first(struct sl_index_set *set)
{
    int i = 0;

    for (i = 0; i < 6; i++) {
        char doc[512];

        (void)snprintf(doc,
                       sizeof(doc),
                       "{\"_recordid\":\"/new/%d\",\"size\":%d,"
                       "\"lastModified\":\"2030-01-0%dT00:00:00Z\","
                       "\"text\":\"pager pager pager pager pager\"}",
                       i,
                       1000000 + i,
                       i + 1);
        put(set, doc);
    }
}

static void
test_query_cursor(void **state)
{
    struct fixture *f = *state;
    struct sl_index_search_opts o;
    static char all[8192];
    static char paged[8192];
    json_t *res = NULL;
    struct sl_err err;
    int sort = 0;
    int i = 0;

    assert_int_equal(sl_index_set_shards(f->set, 3), 0);
    /* 40 documents on three shards; sizes and dates repeat (ties), some
     * have neither; the word's frequency varies the score, with ties */
    for (i = 0; i < 40; i++) {
        char doc[1536];
        char extra[1024] = "";

        if (i % 13 == 5) {
            /* not a date: longer than a date key is taken (the page
             * sorts it as no date, its cursor stays short) */
            int j = 0;

            (void)snprintf(extra, sizeof(extra), ",\"lastModified\":\"");
            for (j = 0; j < 150; j++) {
                (void)snprintf(extra + strlen(extra),
                               sizeof(extra) - strlen(extra),
                               "\\u0001");
            }
            (void)snprintf(
                extra + strlen(extra), sizeof(extra) - strlen(extra), "\"");
        } else if (i % 7 != 0) {
            (void)snprintf(extra,
                           sizeof(extra),
                           ",\"size\":%d,\"lastModified\":"
                           "\"2025-0%d-01T00:00:00Z\"",
                           (i % 5) * 100,
                           1 + i % 4);
        }
        (void)snprintf(doc,
                       sizeof(doc),
                       "{\"_recordid\":\"/d/%02d\",\"text\":\"pager%s "
                       "filler\"%s}",
                       i,
                       i % 3 == 0 ? " pager pager"
                                  : (i % 3 == 1 ? " pager" : ""),
                       extra);
        put(f->set, doc);
    }
    memset(&o, 0, sizeof(o));
    for (sort = 0; sort < 6; sort++) {
        /* a word, a filter, a phrase (its idf from its count), a word
         * with a filter and with NOT: by relevance the first page's total
         * is the rows ranked (sl_ranked), the next pages count apart */
        const char *queries[] = {"pager",
                                 "path:/d OR pager",
                                 "\"pager filler\"",
                                 "pager path:/d",
                                 "filler -nothing"};
        size_t qi = 0;

        for (qi = 0; qi < sizeof(queries) / sizeof(queries[0]); qi++) {
            o.query = queries[qi];
            o.sort = (enum sl_index_sort)(sort / 2);
            o.ascending = sort % 2;
            o.limit = 100;
            (void)snprintf(all, sizeof(all), "%s", ordered(f->set, &o, &res));
            assert_null(json_object_get(res, "next")); /* all on one page */
            json_decref(res);
            o.limit = 3;
            page_all(f->set, &o, NULL, paged, sizeof(paged));
            if (strcmp(all, paged) != 0) {
                fail_msg("%s sort %d: paged [%s], in one page [%s]",
                         o.query,
                         sort,
                         paged,
                         all);
            }
        }
    }
    /* a cursor with an offset: the offset counts after it */
    o.query = "pager";
    o.sort = SL_INDEX_SORT_SIZE;
    o.ascending = 0;
    o.limit = 2;
    (void)ordered(f->set, &o, &res);
    {
        char cur[1024];
        char want[256];

        (void)snprintf(cur,
                       sizeof(cur),
                       "%s",
                       json_string_value(json_object_get(res, "next")));
        json_decref(res);
        o.limit = 5;
        (void)snprintf(want, sizeof(want), "%s", ordered(f->set, &o, &res));
        json_decref(res);
        o.limit = 2;
        o.offset = 1;
        o.cursor = cur;
        /* hits 4 and 5 of the first five */
        assert_string_equal(
            ordered(f->set, &o, &res),
            strchr(strchr(strchr(want, ',') + 1, ',') + 1, ',') + 1);
        assert_int_equal(json_integer_value(json_object_get(res, "total")), 40);
        json_decref(res);
        o.offset = 0;
        /* refused: another query, another order, not a cursor at all */
        o.query = "filler";
        sl_err_clear(&err);
        assert_int_equal(sl_index_search_opts(f->set, "docs", &o, &res, &err),
                         SL_EINVAL);
        assert_string_equal(err.field, "cursor");
        o.query = "pager";
        o.ascending = 1;
        assert_int_equal(sl_index_search_opts(f->set, "docs", &o, &res, &err),
                         SL_EINVAL);
        o.ascending = 0;
        o.cursor = "7b7d";
        assert_int_equal(sl_index_search_opts(f->set, "docs", &o, &res, &err),
                         SL_EINVAL);
        assert_string_equal(err.field, "cursor");
        o.cursor = "not hex";
        assert_int_equal(sl_index_search_opts(f->set, "docs", &o, &res, &err),
                         SL_EINVAL);
        o.cursor = NULL;
    }
    /* documents added before the cursor's position between two pages do
     * not shift the pages after it: every document of the first search
     * once, in order, none of the new ones */
    for (sort = 1; sort < 3; sort++) {
        o.sort = (enum sl_index_sort)sort;
        o.limit = 100;
        (void)snprintf(all, sizeof(all), "%s", ordered(f->set, &o, &res));
        json_decref(res);
        o.limit = 4;
        page_all(
            f->set, &o, sort == 1 ? add_first : NULL, paged, sizeof(paged));
        assert_string_equal(paged, all);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_table),
        cmocka_unit_test(test_query_refused),
        cmocka_unit_test_setup_teardown(test_query_search, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_query_sort_facets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_cursor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_prefix, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
