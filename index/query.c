/*
 * Embedded full-text index, the read side: search (FTS5 MATCH, bm25,
 * snippet), counts, the list of indexes, paging through record ids and
 * fetching one stored document (docs/index.md).  Queries use each
 * shard's read-only connection (its reader), never the writer's, so a
 * query reads the last committed state while an indexWriter holds the
 * shard.  Reads over several shards hold all their readers (taken in
 * shard order, so two readers cannot deadlock) and merge their ordered
 * results one row at a time: memory stays one row per shard.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index/index_int.h"

/* A text column as a JSON string, or null (NULL column or bad UTF-8). */
static json_t *
col_json(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    json_t *v = NULL;

    if (s != NULL) {
        v = json_stringn((const char *)s, (size_t)sqlite3_column_bytes(st, i));
    }
    return v != NULL ? v : json_null();
}

/* A column as it is stored (string, integer or real); NULL for a NULL
 * column or bad UTF-8. */
static json_t *
col_value(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL:
        return NULL;
    default:
        return json_stringn((const char *)sqlite3_column_text(st, i),
                            (size_t)sqlite3_column_bytes(st, i));
    }
}

/* The hit fields a search's columns 5.. give when the document has
 * them (docs/index.md "REST"). */
static const char *const hit_fields[] = {
    "author", "mimeType", "created", "modified", "pages"};

/* The hit of the row @st stands on. */
static json_t *
hit_json(sqlite3_stmt *st)
{
    json_t *hit = json_pack("{s:o, s:f, s:o, s:o, s:o}",
                            "_recordid",
                            col_json(st, 0),
                            "score",
                            sqlite3_column_double(st, 1),
                            "title",
                            col_json(st, 2),
                            "snippet",
                            col_json(st, 3),
                            "path",
                            col_json(st, 4));
    size_t i = 0;

    for (i = 0; i < sizeof(hit_fields) / sizeof(hit_fields[0]); i++) {
        json_t *v = col_value(st, (int)i + 5);

        if (v != NULL) {
            (void)json_object_set_new(hit, hit_fields[i], v);
        }
    }
    return hit;
}

/*
 * Step a statement that reads FTS5 MATCH results.  FTS5 reports query
 * syntax errors (and unknown column filters) as SQLITE_ERROR while
 * stepping; those are the caller's fault and become SL_EINVAL.
 */
static int
step_match(struct sl__index *ix, sqlite3_stmt *st, struct sl_err *err)
{
    int src = sqlite3_step(st);

    if (src == SQLITE_ROW || src == SQLITE_DONE) {
        return src;
    }
    if ((src & 0xff) == SQLITE_ERROR) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "q",
                          "malformed query: %s",
                          sqlite3_errmsg(ix->rd.db));
    }
    return sl__index_rd_err(ix, src, "search", err);
}

/* The readers of every shard of @index, locked in shard order; *n
 * shards in @ix. */
static int
acquire_all(struct sl_index_set *set,
            const char *index,
            struct sl__index *ix[SL_INDEX_MAX_SHARDS],
            unsigned *n,
            struct sl_err *err)
{
    unsigned s = 0;
    int rc = sl__index_nshards(set, index, 0, n, err);

    for (s = 0; rc == 0 && s < *n; s++) {
        rc = sl__index_acquire_read(set, index, s, &ix[s], err);
        if (rc != 0) {
            while (s > 0) {
                sl__index_release_read(ix[--s]);
            }
        }
    }
    return rc;
}

static void
release_all(struct sl__index *ix[SL_INDEX_MAX_SHARDS], unsigned n)
{
    while (n > 0) {
        sl__index_release_read(ix[--n]);
    }
}

/* How hits are ordered: column KEY_COL, a number or text, highest first
 * unless @asc; then the record id (column 0), smallest first. */
#define KEY_COL 10
struct order {
    int on;   /* 0: the record id alone */
    int text; /* the key is text */
    int asc;
};

/* @a against @b (two rows) in @o's order: < 0 when @a comes first. */
static int
row_cmp(sqlite3_stmt *a, sqlite3_stmt *b, const struct order *o)
{
    int c = 0;

    if (o->on && o->text) {
        c = strcmp((const char *)sqlite3_column_text(a, KEY_COL),
                   (const char *)sqlite3_column_text(b, KEY_COL));
    } else if (o->on) {
        double da = sqlite3_column_double(a, KEY_COL);
        double db = sqlite3_column_double(b, KEY_COL);

        c = da < db ? -1 : da > db;
    }
    if (c != 0) {
        return o->asc ? c : -c;
    }
    return strcmp((const char *)sqlite3_column_text(a, 0),
                  (const char *)sqlite3_column_text(b, 0));
}

/* The shard whose current row comes next in a merge, -1 when every shard
 * is exhausted. */
static int
merge_next(sqlite3_stmt *const *st,
           const int *has,
           unsigned n,
           const struct order *o)
{
    int best = -1;
    unsigned s = 0;

    for (s = 0; s < n; s++) {
        if (has[s] && (best < 0 || row_cmp(st[s], st[best], o) < 0)) {
            best = (int)s;
        }
    }
    return best;
}

/* The columns of a hit (hit_json), FTS5's bm25 weights per column. */
#define HIT_COLS " d.path, d.author, d.mime, d.created, d.modified, d.pages"
#define BM25     "bm25(documents_fts, 5.0, 1.0, 2.0, 2.0)"

/* FROM and WHERE of query @q: the FTS table joined to the rows when it
 * has words, the rows alone when it has filters only. */
static void
from_where(const struct sl__query *q, const char *join, struct sl_buf *b)
{
    const char *w = q->where;

    if (q->match != NULL) {
        (void)sl_buf_appendf(b,
                             " FROM documents_fts JOIN docs d ON d.id ="
                             " documents_fts.rowid%s WHERE documents_fts"
                             " MATCH ?1%s%s%s",
                             join,
                             w ? " AND (" : "",
                             w ? w : "",
                             w ? ")" : "");
        return;
    }
    (void)sl_buf_appendf(b, " FROM docs d%s WHERE %s", join, w);
}

/*
 * The statements of query @q on one shard: the best @want hits in order
 * @o (their key in column KEY_COL) and their count.  Words rank by bm25;
 * a query of field filters alone ranks nothing (score 0) and has no
 * snippet.
 */
static void
search_sql(const struct sl__query *q,
           const struct sl_index_search_opts *opt,
           unsigned want,
           struct sl_buf *hits,
           struct sl_buf *count)
{
    const char *key = q->match != NULL ? "-" BM25 : "0.0";
    const char *dir = opt->ascending ? "ASC" : "DESC";

    if (opt->sort == SL_INDEX_SORT_DATE) {
        key = "coalesce(d.modified, '')";
    } else if (opt->sort == SL_INDEX_SORT_SIZE) {
        key = "coalesce(d.size, -1)";
    }
    if (q->match != NULL) {
        (void)sl_buf_appendf(hits,
                             "SELECT d._recordid, -" BM25 ", d.title,"
                             " snippet(documents_fts, -1, '<b>', '</b>',"
                             " '...', 16)," HIT_COLS ", %s",
                             key);
    } else {
        (void)sl_buf_appendf(hits,
                             "SELECT d._recordid, 0.0, d.title, NULL," HIT_COLS
                             ", %s",
                             key);
    }
    from_where(q, "", hits);
    (void)sl_buf_appendf(
        hits, " ORDER BY %s %s, d._recordid LIMIT %u", key, dir, want);
    if (q->match != NULL && q->where == NULL) {
        (void)sl_buf_appendf(count,
                             "SELECT count(*) FROM documents_fts WHERE"
                             " documents_fts MATCH ?1");
        return;
    }
    (void)sl_buf_appendf(count, "SELECT count(*)");
    from_where(q, "", count);
}

/* Prepare @sql on @ix's reader with @q's values bound. */
static int
prepare_query(struct sl__index *ix,
              const char *sql,
              const struct sl__query *q,
              sqlite3_stmt **st,
              struct sl_err *err)
{
    int src = sqlite3_prepare_v2(ix->rd.db, sql, -1, st, NULL);
    int p = 1;
    size_t i = 0;

    if (src != SQLITE_OK) {
        *st = NULL;
        return sl__index_rd_err(ix, src, "search", err);
    }
    if (q->match != NULL) {
        (void)sqlite3_bind_text(*st, p++, q->match, -1, SQLITE_STATIC);
    }
    for (i = 0; i < q->nparams; i++) {
        (void)sqlite3_bind_text(*st, p++, q->params[i], -1, SQLITE_STATIC);
    }
    return 0;
}

/* The hits of every shard in order @o, @offset skipped, into @hits. */
static int
search_merge(struct sl__index *ix[SL_INDEX_MAX_SHARDS],
             sqlite3_stmt *st[SL_INDEX_MAX_SHARDS],
             unsigned n,
             const struct sl_index_search_opts *opt,
             const struct order *o,
             json_t *hits,
             struct sl_err *err)
{
    int has[SL_INDEX_MAX_SHARDS];
    size_t seen = 0;
    size_t want = (size_t)opt->offset + opt->limit;
    unsigned k = 0;
    int best = 0;
    int rc = 0;

    for (k = 0; k < n && rc == 0; k++) {
        rc = step_match(ix[k], st[k], err);
        has[k] = rc == SQLITE_ROW;
        rc = rc < 0 ? rc : 0;
    }
    while (rc == 0 && seen < want && (best = merge_next(st, has, n, o)) >= 0) {
        if (seen++ >= opt->offset) {
            (void)json_array_append_new(hits, hit_json(st[best]));
        }
        rc = step_match(ix[best], st[best], err);
        has[best] = rc == SQLITE_ROW;
        rc = rc < 0 ? rc : 0;
    }
    return rc;
}

/* The facets and the SQL of their values. */
static const struct {
    const char *name;
    const char *key;
    const char *join;
} facet_defs[] = {
    {"source", "s.source", " JOIN doc_sources s ON s.doc = d.id"},
    {"type", "d.mime", ""},
    {"ext", "sl_ext(coalesce(d.path, d._recordid))", ""},
    {"year", "substr(d.modified, 1, 4)", ""},
};

/* Sort {value: count} by count, most first, then value. */
static int
cmp_facet(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a;
    const json_t *y = *(const json_t *const *)b;
    json_int_t cx = json_integer_value(json_object_get(x, "count"));
    json_int_t cy = json_integer_value(json_object_get(y, "count"));

    if (cx != cy) {
        return cx > cy ? -1 : 1;
    }
    return strcmp(json_string_value(json_object_get(x, "value")),
                  json_string_value(json_object_get(y, "value")));
}

/* {value: count} as [{"value","count"}], the SL_INDEX_MAX_FACET biggest. */
static json_t *
facet_list(json_t *counts)
{
    size_t n = json_object_size(counts);
    json_t **items = sl_calloc(n + 1, sizeof(*items));
    json_t *list = json_array();
    const char *v = NULL;
    json_t *c = NULL;
    size_t i = 0;

    json_object_foreach(counts, v, c)
    {
        items[i++] = json_pack("{s:s, s:O}", "value", v, "count", c);
    }
    qsort(items, n, sizeof(*items), cmp_facet);
    for (i = 0; i < n; i++) {
        if (i < SL_INDEX_MAX_FACET) {
            (void)json_array_append(list, items[i]);
        }
        json_decref(items[i]);
    }
    sl_free(items);
    return list;
}

/* Facet @f of query @q over the shards: its list into @facets. */
static int
facet_count(struct sl__index *ix[SL_INDEX_MAX_SHARDS],
            unsigned n,
            const struct sl__query *q,
            size_t f,
            json_t *facets,
            struct sl_err *err)
{
    json_t *counts = json_object();
    struct sl_buf sql;
    unsigned k = 0;
    int rc = 0;

    sl_buf_init(&sql, 64 * 1024);
    (void)sl_buf_appendf(&sql, "SELECT %s, count(*)", facet_defs[f].key);
    from_where(q, facet_defs[f].join, &sql);
    (void)sl_buf_appendf(&sql, " GROUP BY 1");
    for (k = 0; k < n && rc == 0; k++) {
        sqlite3_stmt *st = NULL;

        rc = prepare_query(ix[k], sql.data, q, &st, err);
        while (rc == 0 && (rc = step_match(ix[k], st, err)) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(st, 0);
            json_t *c = v != NULL ? json_object_get(counts, v) : NULL;
            json_int_t add = sqlite3_column_int64(st, 1);

            if (v != NULL && v[0] != '\0' && sl_utf8_valid(v, strlen(v))) {
                (void)json_object_set_new(
                    counts, v, json_integer(json_integer_value(c) + add));
            }
            rc = 0;
        }
        rc = rc == SQLITE_DONE ? 0 : rc;
        (void)sqlite3_finalize(st);
    }
    if (rc == 0) {
        (void)json_object_set_new(
            facets, facet_defs[f].name, facet_list(counts));
    }
    json_decref(counts);
    sl_buf_free(&sql);
    return rc;
}

/* The facets named in @names ("type,ext"), checked before any is
 * counted: their indexes into @want. */
static int
facet_names(const char *names, int want[], size_t *nwant, struct sl_err *err)
{
    const size_t nd = sizeof(facet_defs) / sizeof(facet_defs[0]);
    const char *p = names;

    *nwant = 0;
    while (p != NULL && *p != '\0') {
        size_t len = strcspn(p, ",");
        size_t f = 0;

        for (f = 0; f < nd; f++) {
            if (strlen(facet_defs[f].name) == len &&
                strncmp(p, facet_defs[f].name, len) == 0) {
                break;
            }
        }
        if (f == nd) {
            return sl_err_set(err,
                              SL_EINVAL,
                              "facets",
                              "unknown facet '%.*s' (there are source, type, "
                              "ext, year)",
                              (int)(len < 64 ? len : 64),
                              p);
        }
        if (*nwant < nd) {
            want[(*nwant)++] = (int)f;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Query @q over the shards @ix: {"total", "hits"[, "facets"]}. */
static int
search_shards(struct sl__index *ix[SL_INDEX_MAX_SHARDS],
              unsigned n,
              const struct sl__query *q,
              const struct sl_index_search_opts *opt,
              const int *facets,
              size_t nfacets,
              json_t **out,
              struct sl_err *err)
{
    sqlite3_stmt *st[SL_INDEX_MAX_SHARDS] = {NULL};
    struct order o = {1, opt->sort == SL_INDEX_SORT_DATE, opt->ascending};
    struct sl_buf hsql;
    struct sl_buf csql;
    sqlite3_int64 total = 0;
    json_t *hits = json_array();
    json_t *fj = nfacets > 0 ? json_object() : NULL;
    unsigned k = 0;
    size_t f = 0;
    int rc = 0;

    sl_buf_init(&hsql, 64 * 1024);
    sl_buf_init(&csql, 64 * 1024);
    search_sql(q, opt, opt->offset + opt->limit, &hsql, &csql);
    for (k = 0; k < n && rc == 0; k++) {
        sqlite3_stmt *c = NULL;

        rc = prepare_query(ix[k], csql.data, q, &c, err);
        rc = rc == 0 ? step_match(ix[k], c, err) : rc;
        if (rc >= 0) {
            total += rc == SQLITE_ROW ? sqlite3_column_int64(c, 0) : 0;
            rc = 0;
        }
        (void)sqlite3_finalize(c);
    }
    for (k = 0; k < n && rc == 0; k++) {
        rc = prepare_query(ix[k], hsql.data, q, &st[k], err);
    }
    rc = rc == 0 ? search_merge(ix, st, n, opt, &o, hits, err) : rc;
    for (k = 0; k < n; k++) {
        (void)sqlite3_finalize(st[k]);
    }
    for (f = 0; f < nfacets && rc == 0; f++) {
        rc = facet_count(ix, n, q, (size_t)facets[f], fj, err);
    }
    if (rc == 0) {
        *out =
            json_pack("{s:I, s:O}", "total", (json_int_t)total, "hits", hits);
        if (fj != NULL) {
            (void)json_object_set(*out, "facets", fj);
        }
    }
    json_decref(fj);
    json_decref(hits);
    sl_buf_free(&hsql);
    sl_buf_free(&csql);
    return rc;
}

int
sl_index_search_opts(struct sl_index_set *set,
                     const char *index,
                     const struct sl_index_search_opts *o,
                     json_t **out,
                     struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    struct sl_index_search_opts opt = *o;
    struct sl__query q;
    int facets[8];
    size_t nfacets = 0;
    unsigned n = 0;
    int rc = 0;

    *out = NULL;
    if (o->query == NULL || o->query[0] == '\0') {
        return sl_err_set(err, SL_EINVAL, "q", "the query is empty");
    }
    if (strlen(o->query) > SL_INDEX_MAX_QUERY) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "q",
                          "the query is longer than %u bytes",
                          SL_INDEX_MAX_QUERY);
    }
    if (o->offset > SL_INDEX_MAX_OFFSET) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "offset",
                          "offset must be at most %u",
                          SL_INDEX_MAX_OFFSET);
    }
    opt.limit = o->limit > SL_INDEX_MAX_LIMIT ? SL_INDEX_MAX_LIMIT : o->limit;
    rc = facet_names(o->facets, facets, &nfacets, err);
    rc = rc == 0 ? sl__query_parse(o->query, &q, err) : rc;
    if (rc != 0) {
        return rc;
    }
    rc = acquire_all(set, index, ix, &n, err);
    if (rc == 0) {
        rc = search_shards(ix, n, &q, &opt, facets, nfacets, out, err);
        release_all(ix, n);
    }
    sl__query_free(&q);
    return rc;
}

int
sl_index_search(struct sl_index_set *set,
                const char *index,
                const char *query,
                unsigned limit,
                unsigned offset,
                json_t **out,
                struct sl_err *err)
{
    struct sl_index_search_opts o;

    memset(&o, 0, sizeof(o));
    o.query = query;
    o.limit = limit;
    o.offset = offset;
    return sl_index_search_opts(set, index, &o, out, err);
}

int
sl_index_count(struct sl_index_set *set,
               const char *index,
               uint64_t *count,
               struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    unsigned n = 0;
    unsigned k = 0;
    int src = SQLITE_OK;
    int rc = 0;

    *count = 0;
    rc = acquire_all(set, index, ix, &n, err);
    if (rc != 0) {
        return rc;
    }
    for (k = 0; k < n && rc == 0; k++) {
        sqlite3_stmt *st = ix[k]->rd.st[SL__IX_COUNT];

        src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
            *count += (uint64_t)sqlite3_column_int64(st, 0);
        } else {
            rc = sl__index_rd_err(ix[k], src, "count", err);
        }
    }
    release_all(ix, n);
    return rc;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Names of the databases in the index directory ("<name>.db" with a valid
 * name), sorted; new array of new strings, caller frees each and the array.
 */
static int
scan_names(const char *dir, char ***names, size_t *n, struct sl_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    size_t cap = 0;

    *names = NULL;
    *n = 0;
    if (d == NULL) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          NULL,
                          "cannot read index directory '%s': %s",
                          dir,
                          sl_errno_str(errno));
    }
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        char *name = NULL;

        if (len <= 3 || strcmp(de->d_name + len - 3, ".db") != 0) {
            continue;
        }
        name = sl_strndup(de->d_name, len - 3);
        if (sl_name_check_entity(name, NULL) != 0) {
            sl_free(name);
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            *names = sl_realloc(*names, cap * sizeof(**names));
        }
        (*names)[(*n)++] = name;
    }
    (void)closedir(d);
    if (*n > 1) {
        qsort(*names, *n, sizeof(**names), cmp_names);
    }
    return 0;
}

/* Is @file a file of index @name: "<name>.db", "<name>~<k>.db" (a shard,
 * k digits) or either with "-wal"?  Names may hold '.', so "<name>.x.db"
 * is another index's. */
static int
index_file(const char *file, const char *name)
{
    size_t n = strlen(name);
    const char *p = file + n;

    if (strncmp(file, name, n) != 0) {
        return 0;
    }
    if (*p == '~') {
        const char *q = ++p;

        while (*p >= '0' && *p <= '9') {
            p++;
        }
        if (p == q) {
            return 0;
        }
    }
    return strcmp(p, ".db") == 0 || strcmp(p, ".db-wal") == 0;
}

/* Bytes on disk of index @name in @dir: its shards' database files and
 * their write-ahead logs. */
static uint64_t
index_bytes(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    uint64_t sum = 0;

    while (d != NULL && (de = readdir(d)) != NULL) {
        struct stat st;

        if (index_file(de->d_name, name) &&
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode)) {
            sum += (uint64_t)st.st_size;
        }
    }
    if (d != NULL) {
        (void)closedir(d);
    }
    return sum;
}

int
sl_index_list(struct sl_index_set *set, json_t **out, struct sl_err *err)
{
    char **names = NULL;
    json_t *list = NULL;
    uint64_t count = 0;
    size_t n = 0;
    size_t i = 0;
    int rc = 0;

    *out = NULL;
    rc = scan_names(sl__index_dir(set), &names, &n, err);
    if (rc != 0) {
        return rc;
    }
    list = json_array();
    for (i = 0; i < n && rc == 0; i++) {
        rc = sl_index_count(set, names[i], &count, err);
        if (rc == SL_ENOENT) { /* dropped meanwhile */
            sl_err_clear(err);
            rc = 0;
            continue;
        }
        if (rc == 0) {
            (void)json_array_append_new(
                list,
                json_pack(
                    "{s:s, s:I, s:I}",
                    "name",
                    names[i],
                    "documentCount",
                    (json_int_t)count,
                    "sizeBytes",
                    (json_int_t)index_bytes(sl__index_dir(set), names[i])));
        }
    }
    for (i = 0; i < n; i++) {
        sl_free(names[i]);
    }
    sl_free(names);
    if (rc != 0) {
        json_decref(list);
        return rc;
    }
    *out = list;
    return 0;
}

int
sl_index_records(struct sl_index_set *set,
                 const char *index,
                 const char *after,
                 unsigned limit,
                 json_t **out,
                 struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    sqlite3_stmt *sts[SL_INDEX_MAX_SHARDS];
    const struct order by_id = {0, 0, 1};
    int has[SL_INDEX_MAX_SHARDS];
    json_t *records = NULL;
    json_t *next = NULL;
    unsigned got = 0;
    unsigned n = 0;
    unsigned k = 0;
    int best = 0;
    int src = SQLITE_ROW;
    int rc = 0;

    *out = NULL;
    if (limit == 0) {
        return sl_err_set(err, SL_EINVAL, "limit", "limit must be positive");
    }
    limit = limit > SL_INDEX_MAX_LIMIT ? SL_INDEX_MAX_LIMIT : limit;
    rc = acquire_all(set, index, ix, &n, err);
    if (rc != 0) {
        return rc;
    }
    for (k = 0; k < n; k++) {
        sts[k] = ix[k]->rd.st[SL__IX_RECORDS];
    }
    for (k = 0; k < n && (src == SQLITE_ROW || src == SQLITE_DONE); k++) {
        sqlite3_stmt *st = sts[k];

        (void)sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
        /* One more than asked tells whether a next page exists. */
        (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)limit + 1);
        src = sqlite3_step(st);
        has[k] = src == SQLITE_ROW;
        best = (int)k; /* names the shard of an error */
    }
    records = json_array();
    while ((src == SQLITE_ROW || src == SQLITE_DONE) &&
           (best = merge_next(sts, has, n, &by_id)) >= 0) {
        sqlite3_stmt *st = ix[best]->rd.st[SL__IX_RECORDS];

        if (got == limit) {
            next = json_deep_copy(
                json_object_get(json_array_get(records, got - 1), "_recordid"));
            break;
        }
        (void)json_array_append_new(records,
                                    json_pack("{s:o, s:o}",
                                              "_recordid",
                                              col_json(st, 0),
                                              "textSha256",
                                              col_json(st, 1)));
        got++;
        src = sqlite3_step(st);
        has[best] = src == SQLITE_ROW;
    }
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        rc = sl__index_rd_err(ix[best >= 0 ? best : 0], src, "records", err);
        json_decref(records);
        json_decref(next);
    } else {
        *out = json_pack("{s:o, s:o}",
                         "records",
                         records,
                         "next",
                         next ? next : json_null());
    }
    release_all(ix, n);
    return rc;
}

/* "_sources": the sources that hold document @id (read side of @ix). */
static int
get_sources(struct sl__index *ix,
            const char *id,
            json_t *meta,
            struct sl_err *err)
{
    sqlite3_stmt *st = ix->rd.st[SL__IX_SRC_LIST];
    json_t *list = json_array();
    int src = SQLITE_OK;

    (void)sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        (void)json_array_append_new(list, col_json(st, 0));
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    (void)json_object_set_new(meta, "_sources", list);
    return src == SQLITE_DONE ? 0 : sl__index_rd_err(ix, src, "sources", err);
}

int
sl_index_get(struct sl_index_set *set,
             const char *index,
             const char *id,
             json_t **doc,
             struct sl_err *err)
{
    struct sl__index *ix = NULL;
    sqlite3_stmt *st = NULL;
    json_t *meta = NULL;
    unsigned n = 0;
    int src = SQLITE_OK;
    int rc = 0;

    *doc = NULL;
    rc = sl__index_nshards(set, index, 0, &n, err);
    if (rc != 0) {
        return rc;
    }
    rc =
        sl__index_acquire_read(set, index, sl__index_shard_of(id, n), &ix, err);
    if (rc != 0) {
        return rc;
    }
    st = ix->rd.st[SL__IX_GET];
    (void)sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    if (src == SQLITE_DONE) {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        "_recordid",
                        "no document '%s' in index '%s'",
                        id,
                        index);
        goto out;
    }
    if (src != SQLITE_ROW) {
        rc = sl__index_rd_err(ix, src, "get", err);
        goto out;
    }
    meta = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    if (!json_is_object(meta)) {
        rc = sl_err_set(err,
                        SL_ECORRUPT,
                        NULL,
                        "index '%s': stored document '%s' is not JSON",
                        index,
                        id);
        goto out;
    }
    if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
        (void)json_object_set_new(meta, "text", col_json(st, 1));
    }
    rc = get_sources(ix, id, meta, err);
    if (rc != 0) {
        goto out;
    }
    *doc = meta;
    meta = NULL;

out:
    json_decref(meta);
    sl__index_release_read(ix);
    return rc;
}
