/*
 * Embedded full-text index, search (docs/index.md "Query language",
 * "Order and facets"): the statements of a query read by qparse.c, run on
 * every shard's reader in parallel (a thread per shard beyond the first:
 * a shard's first step does its whole ranking), their hits merged in
 * order and their facets summed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_int.h"

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
static const char *const hit_fields[] = {"author",
                                         "mimeType",
                                         "created",
                                         "modified",
                                         "pages",
                                         "url",
                                         "host",
                                         "size"};

/* The hit of the row @st stands on. */
static json_t *
hit_json(sqlite3_stmt *st)
{
    json_t *hit = json_pack("{s:o, s:f, s:o, s:o, s:o}",
                            "_recordid",
                            sl__ix_col_json(st, 0),
                            "score",
                            sqlite3_column_double(st, 1),
                            "title",
                            sl__ix_col_json(st, 2),
                            "snippet",
                            sl__ix_col_json(st, 3),
                            "path",
                            sl__ix_col_json(st, 4));
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

/* How rows are ordered: hits by column KEY_COL, a number or text, highest
 * first unless @asc, and equal keys as each shard ordered them (by rowid)
 * and by shard; records (@on 0) by the record id (column 0). */
#define KEY_COL        13
#define KEY_TEXT_MAX_S "64" /* bytes of a date sort key */
#define TOTAL_COL      14
#define ID_COL         15 /* the row's id in its shard */

/* @a against @b (two rows) in @o's order: < 0 when @a comes first. */
static int
row_cmp(sqlite3_stmt *a, sqlite3_stmt *b, const struct sl__ix_order *o)
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
    if (o->on) {
        return o->asc ? c : -c; /* equal: the lower shard first */
    }
    return strcmp((const char *)sqlite3_column_text(a, 0),
                  (const char *)sqlite3_column_text(b, 0));
}

/* The shard whose current row comes next in a merge, -1 when every shard
 * is exhausted. */
int
sl__ix_merge_next(sqlite3_stmt *const *st,
                  const int *has,
                  unsigned n,
                  const struct sl__ix_order *o)
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

/* The columns of a hit (hit_json) from row o, the bm25 weights per
 * column (rank.c). */
#define HIT_COLS                                                               \
    " o.path, o.author, o.mime, o.created, o.modified, o.pages, o.url,"        \
    " o.host, o.size"
#define BM25 "sl_bm25(documents_fts, ?1, 5.0, 1.0, 2.0, 2.0)"

/* FROM and WHERE of query @q: the FTS table joined to the rows when it
 * has words, the rows alone when it has filters only; the rows by their
 * table docs_cols (schema.c), which holds every column a filter, facet or
 * order reads. */
static void
from_where(const struct sl__query *q, const char *join, struct sl_buf *b)
{
    const char *w = q->where;

    if (q->match != NULL) {
        (void)sl_buf_appendf(b,
                             " FROM documents_fts JOIN docs_cols d"
                             " ON d.id = documents_fts.rowid%s"
                             " WHERE documents_fts"
                             " MATCH ?1%s%s%s",
                             join,
                             w ? " AND (" : "",
                             w ? w : "",
                             w ? ")" : "");
        return;
    }
    (void)sl_buf_appendf(b, " FROM docs_cols d%s WHERE %s", join, w);
}

/*
 * The statements of query @q on one shard: the best @want hits in order
 * @o (their key in column KEY_COL, equal keys by rowid), those @after a
 * cursor only (its key bound to :ck, the rowid to start after to :cid),
 * and their count.  Every hit row carries the count (column TOTAL_COL)
 * unless a statement of its own counts (after a cursor, which also
 * counts the rows before it):
 * - words by relevance: the rows the ranking function scored,
 *   sl_ranked(), which the outer level reads once the ranking pass is
 *   over (rank.c; every match is scored, its score being the key).  A
 *   count apart would match every row again, a window over the ranking
 *   pass would copy every match into a table of its own (per shard of
 *   the benchmark index, two words in most documents: about 14 ms to
 *   count apart, 25 for the window, against 0);
 * - words by date or size: SQLite scores only the rows that can enter
 *   the page, so a window (filters, phrases) or a count apart (words);
 * - field filters alone: a window over the page's pass.
 * Words rank by bm25 (rank.c, which reads the phrases' tokens from the
 * MATCH string, ?1); a query of field filters alone ranks nothing (score
 * 0) and has no snippet.  With words, the inner query orders every match
 * by its key and keeps @want, reading only the FTS index when there is no
 * filter and no other order; only the rows kept get their snippet and the
 * other columns (a snippet reads and unpacks the text).
 */
static void
search_sql(const struct sl__query *q,
           const struct sl_index_search_opts *opt,
           unsigned want,
           int after,
           struct sl_buf *hits,
           struct sl_buf *count)
{
    const char *key = q->match != NULL ? "score" : "0.0";
    const char *dir = opt->ascending ? "ASC" : "DESC";
    const char *op = opt->ascending ? ">" : "<";
    int by_score = q->match != NULL && opt->sort == SL_INDEX_SORT_RELEVANCE;
    /* by date or size, SQLite scores only the rows that can enter the
     * page (its sorter skips the others): sl_ranked() would count those,
     * so the hits carry a window's count (filters and phrases: counting
     * apart would match every row again at a cost) or it is counted
     * apart */
    int window = q->match != NULL && !by_score && !after &&
                 (q->where != NULL || q->phrase);

    if (opt->sort == SL_INDEX_SORT_DATE) {
        /* a text longer than a date, or with a NUL, is none (so that a
         * cursor stays short and its JSON can hold the key) */
        key = "CASE WHEN length(CAST(d.modified AS BLOB)) <= " KEY_TEXT_MAX_S
              " AND instr(CAST(d.modified AS BLOB), x'00') = 0"
              " THEN d.modified ELSE '' END";
    } else if (opt->sort == SL_INDEX_SORT_SIZE) {
        key = "coalesce(d.size, -1)";
    }
    if (q->match != NULL) {
        const char *k = by_score ? "score" : "k";

        /* three levels: the matches with their key (bm25 is computed
         * there, where FTS5 allows it), the page of them, the page's
         * columns and snippets.  CROSS JOIN keeps the page the outer
         * loop: from 21 rows on, SQLite's planner chose to scan every
         * match again and look up its row (+100 ms for a word in most
         * documents) */
        (void)sl_buf_appendf(hits,
                             "SELECT o._recordid, t.score, o.title,"
                             " snippet(documents_fts, -1, '<b>', '</b>',"
                             " '...', 16)," HIT_COLS ", %s, %s,"
                             " t.id FROM"
                             " (SELECT id, score, %s%s FROM",
                             by_score ? "t.score" : "t.k",
                             after      ? "0"
                             : by_score ? "sl_ranked()"
                             : window   ? "t.n"
                                        : "0",
                             k,
                             window ? ", count(*) OVER () AS n" : "");
        (void)sl_buf_appendf(hits,
                             " (SELECT documents_fts.rowid AS id, -" BM25
                             " AS score%s%s%s",
                             by_score ? "" : ", ",
                             by_score ? "" : key,
                             by_score ? "" : " AS k");
        if (by_score && q->where == NULL) {
            (void)sl_buf_appendf(hits,
                                 " FROM documents_fts WHERE documents_fts"
                                 " MATCH ?1");
        } else {
            from_where(q, "", hits);
        }
        if (after) { /* the rows after the cursor (:ck, :cid) */
            (void)sl_buf_appendf(hits,
                                 ") WHERE (%s %s :ck OR (%s = :ck AND id >"
                                 " :cid)",
                                 k,
                                 op,
                                 k);
        }
        (void)sl_buf_appendf(hits,
                             ") ORDER BY %s %s, id LIMIT %u) t CROSS JOIN"
                             " documents_fts ON documents_fts.rowid = t.id"
                             " CROSS JOIN docs o ON o.id = t.id WHERE"
                             " documents_fts MATCH ?1 ORDER BY t.%s %s, t.id",
                             k,
                             dir,
                             want,
                             k,
                             dir);
    } else {
        /* two levels: the page of rows, from the table docs_cols alone
         * (their count as a window), then the page's columns */
        (void)sl_buf_appendf(hits,
                             "SELECT o._recordid, 0.0, o.title, NULL," HIT_COLS
                             ", t.k, t.n, t.id FROM (SELECT d.id AS id, %s AS"
                             " k, count(*) OVER () AS n",
                             key);
        from_where(q, "", hits);
        if (after) {
            (void)sl_buf_appendf(hits,
                                 " AND (%s %s :ck OR (%s = :ck AND d.id >"
                                 " :cid))",
                                 key,
                                 op,
                                 key);
        }
        (void)sl_buf_appendf(
            hits,
            " ORDER BY k %s, d.id LIMIT %u) t CROSS JOIN docs o ON"
            " o.id = t.id ORDER BY t.k %s, t.id",
            dir,
            want,
            dir);
    }
    if (!after && (q->match == NULL || by_score || window)) {
        return; /* the hits carry it */
    }
    if (q->where == NULL) {
        (void)sl_buf_appendf(count,
                             "SELECT count(*) FROM documents_fts WHERE"
                             " documents_fts MATCH ?1");
    } else { /* after a cursor, rows before it are counted too */
        (void)sl_buf_appendf(count, "SELECT count(*)");
        from_where(q, "", count);
    }
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

/*
 * A cursor (docs/index.md "Paging"): the order key, shard and rowid of a
 * page's last hit, so that the next page starts right after it whatever
 * was added before it in the meantime.  Given out as the hex of the JSON
 * [1, sort, ascending, shards, hash of the query, shard, rowid, key].
 */
#define CURSOR_MAX                                                             \
    1024 /* hex digits; a date key (KEY_TEXT_MAX_S) takes < 900 */

struct cursor {
    int set;
    unsigned shard;
    sqlite3_int64 id;
    json_t *key; /* a real (score), string (date) or integer (size) */
};

static json_int_t
query_hash(const char *query)
{
    return (json_int_t)sl__index_shard_of(query, 0xfffffffbu);
}

/* The cursor of the row @st stands on, on shard @shard: a new string. */
static json_t *
cursor_make(sqlite3_stmt *st,
            unsigned shard,
            unsigned nshards,
            const struct sl_index_search_opts *opt)
{
    static const char hex[] = "0123456789abcdef";
    json_t *key = col_value(st, KEY_COL);
    json_t *a = json_pack("[i, i, b, I, I, I, I, o]",
                          1,
                          (int)opt->sort,
                          opt->ascending,
                          (json_int_t)nshards,
                          query_hash(opt->query),
                          (json_int_t)shard,
                          (json_int_t)sqlite3_column_int64(st, ID_COL),
                          key != NULL ? key : json_null());
    char *js = json_dumps(a, JSON_COMPACT);
    size_t n = js != NULL ? strlen(js) : 0;
    char *h = sl_malloc(2 * n + 1);
    size_t i = 0;
    json_t *out = NULL;

    for (i = 0; i < n; i++) {
        h[2 * i] = hex[(unsigned char)js[i] >> 4];
        h[2 * i + 1] = hex[(unsigned char)js[i] & 15];
    }
    h[2 * n] = '\0';
    out = json_string(h);
    sl_free(h);
    sl_free(js);
    json_decref(a);
    return out;
}

static int
hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The JSON array hex @h encodes, or NULL. */
static json_t *
cursor_json(const char *h)
{
    size_t n = strlen(h);
    char buf[CURSOR_MAX / 2];
    size_t i = 0;

    if (n == 0 || n > CURSOR_MAX || n % 2 != 0) {
        return NULL;
    }
    for (i = 0; i < n / 2; i++) {
        int hi = hexval(h[2 * i]);
        int lo = hexval(h[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            return NULL;
        }
        buf[i] = (char)(hi << 4 | lo);
    }
    return json_loadb(buf, n / 2, JSON_REJECT_DUPLICATES, NULL);
}

/* Read @opt's cursor, given out for the same query and order on an index
 * of @nshards shards, into @c. */
static int
cursor_read(const struct sl_index_search_opts *opt,
            unsigned nshards,
            struct cursor *c,
            struct sl_err *err)
{
    json_t *a = cursor_json(opt->cursor);
    json_int_t v = 0, sort = 0, nsh = 0, qh = 0, shard = 0, id = 0;
    int asc = 0;
    json_t *key = NULL;
    int ok = a != NULL && json_unpack(a,
                                      "[I, I, b, I, I, I, I, o!]",
                                      &v,
                                      &sort,
                                      &asc,
                                      &nsh,
                                      &qh,
                                      &shard,
                                      &id,
                                      &key) == 0;
    int rc = 0;

    ok = ok && v == 1 && shard >= 0 && shard < nsh &&
         (json_is_real(key) || json_is_string(key) || json_is_integer(key));
    if (!ok) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        "cursor",
                        "cursor is not one a search gave (pass the 'next' "
                        "of the page before, unchanged)");
    } else if (sort != (json_int_t)opt->sort || asc != opt->ascending ||
               qh != query_hash(opt->query)) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        "cursor",
                        "cursor belongs to another query or order; search "
                        "again without it");
    } else if (nsh != (json_int_t)nshards) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        "cursor",
                        "the index has %u shards now, not %d as when the "
                        "cursor was given; search again without it",
                        nshards,
                        (int)nsh);
    } else {
        c->set = 1;
        c->shard = (unsigned)shard;
        c->id = id;
        c->key = json_incref(key);
    }
    json_decref(a);
    return rc;
}

/* Bind cursor @c to shard @shard's statement: on shards before the
 * cursor's, the rows strictly after its key; on its shard, the rows after
 * its row; on the shards after it, its key too. */
static void
cursor_bind(sqlite3_stmt *st, const struct cursor *c, unsigned shard)
{
    int ck = sqlite3_bind_parameter_index(st, ":ck");
    int cid = sqlite3_bind_parameter_index(st, ":cid");
    sqlite3_int64 after = c->id;

    if (json_is_real(c->key)) {
        (void)sqlite3_bind_double(st, ck, json_real_value(c->key));
    } else if (json_is_integer(c->key)) {
        (void)sqlite3_bind_int64(st, ck, json_integer_value(c->key));
    } else {
        (void)sqlite3_bind_text(
            st, ck, json_string_value(c->key), -1, SQLITE_TRANSIENT);
    }
    if (shard < c->shard) {
        after = INT64_MAX;
    } else if (shard > c->shard) {
        after = INT64_MIN;
    }
    (void)sqlite3_bind_int64(st, cid, after);
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
    {"host", "d.host", ""},
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

/* Facet @f of query @q on shard @ix: its values' counts added to
 * @counts ({value: count}). */
static int
facet_shard(struct sl__index *ix,
            const struct sl__query *q,
            size_t f,
            json_t *counts,
            struct sl_err *err)
{
    sqlite3_stmt *st = NULL;
    struct sl_buf sql;
    int rc = 0;

    sl_buf_init(&sql, 64 * 1024);
    (void)sl_buf_appendf(&sql, "SELECT %s, count(*)", facet_defs[f].key);
    from_where(q, facet_defs[f].join, &sql);
    (void)sl_buf_appendf(&sql, " GROUP BY 1");
    rc = prepare_query(ix, sql.data, q, &st, err);
    while (rc == 0 && (rc = step_match(ix, st, err)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        json_int_t add = sqlite3_column_int64(st, 1);

        if (v != NULL && v[0] != '\0' && sl_utf8_valid(v, strlen(v))) {
            json_t *c = json_object_get(counts, v);

            (void)json_object_set_new(
                counts, v, json_integer(json_integer_value(c) + add));
        }
        rc = 0;
    }
    rc = rc == SQLITE_DONE ? 0 : rc;
    (void)sqlite3_finalize(st);
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
                              "ext, year, host)",
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

#define MAX_FACETS (sizeof(facet_defs) / sizeof(facet_defs[0]))

/* What one shard does for a search, on its own thread. */
struct shard_job {
    struct sl__index *ix;
    const struct sl__query *q;
    struct sl__query sq; /* q with the shard's prefixes expanded */
    char *match;         /* sq's expression, when it is not q's */
    const char *hsql;    /* the hits */
    const char *csql;    /* the count, or "" when the hits carry it */
    const int *facets;   /* indexes into facet_defs */
    size_t nfacets;
    const struct cursor *cur; /* where the page starts, or unset */
    unsigned shard;
    sqlite3_stmt *st;           /* the hits, on their first row */
    int has;                    /* st has a row */
    sqlite3_int64 total;        /* the shard's count */
    json_t *counts[MAX_FACETS]; /* {value: count} per facet asked */
    int rc;
    struct sl_err err;
};

/* The count, the first row of the hits (where the ranking is done) and
 * the facets of one shard. */
static void *
shard_run(void *arg)
{
    struct shard_job *j = arg;
    size_t f = 0;
    int rc = 0;

    /* a shallow copy: the statements bind its strings, which live until
     * they are finalized (search_shards) */
    j->sq = *j->q;
    j->match = sl__ix_prefix_expand(j->ix, j->q->match);
    if (j->match != NULL) {
        j->sq.match = j->match;
    }
    if (j->csql[0] != '\0') {
        sqlite3_stmt *c = NULL;

        rc = prepare_query(j->ix, j->csql, &j->sq, &c, &j->err);
        rc = rc == 0 ? step_match(j->ix, c, &j->err) : rc;
        j->total = rc == SQLITE_ROW ? sqlite3_column_int64(c, 0) : 0;
        rc = rc < 0 ? rc : 0;
        (void)sqlite3_finalize(c);
    }
    rc = rc == 0 ? prepare_query(j->ix, j->hsql, &j->sq, &j->st, &j->err) : rc;
    /* sl_ranked() counts from here (rank.c) */
    memset(&j->ix->rd.ranked, 0, sizeof(j->ix->rd.ranked));
    if (rc == 0 && j->cur->set) {
        cursor_bind(j->st, j->cur, j->shard);
    }
    rc = rc == 0 ? step_match(j->ix, j->st, &j->err) : rc;
    j->has = rc == SQLITE_ROW;
    if (j->has && j->csql[0] == '\0') {
        j->total = sqlite3_column_int64(j->st, TOTAL_COL);
    }
    rc = rc < 0 ? rc : 0;
    for (f = 0; f < j->nfacets && rc == 0; f++) {
        j->counts[f] = json_object();
        rc = facet_shard(
            j->ix, &j->sq, (size_t)j->facets[f], j->counts[f], &j->err);
    }
    j->rc = rc;
    return NULL;
}

/* Run @n jobs, the first on this thread, the others each on its own
 * (on this one too when a thread cannot start). */
static void
run_jobs(struct shard_job *jobs, unsigned n)
{
    pthread_t t[SL_INDEX_MAX_SHARDS];
    int started[SL_INDEX_MAX_SHARDS] = {0};
    unsigned k = 0;

    for (k = 1; k < n; k++) {
        started[k] = pthread_create(&t[k], NULL, shard_run, &jobs[k]) == 0;
    }
    (void)shard_run(&jobs[0]);
    for (k = 1; k < n; k++) {
        if (started[k]) {
            (void)pthread_join(t[k], NULL);
        } else {
            (void)shard_run(&jobs[k]);
        }
    }
}

/* The hits in order @o from the jobs' statements, @offset skipped, and
 * the cursor after the last when more follow (@next, else NULL). */
static int
merge_hits(struct shard_job *jobs,
           unsigned n,
           const struct sl_index_search_opts *opt,
           const struct sl__ix_order *o,
           json_t *hits,
           json_t **next,
           struct sl_err *err)
{
    sqlite3_stmt *st[SL_INDEX_MAX_SHARDS];
    int has[SL_INDEX_MAX_SHARDS];
    size_t seen = 0;
    size_t want = (size_t)opt->offset + opt->limit;
    unsigned k = 0;
    int best = 0;
    int rc = 0;

    for (k = 0; k < n; k++) {
        st[k] = jobs[k].st;
        has[k] = jobs[k].has;
    }
    *next = NULL;
    while (rc == 0 && seen < want &&
           (best = sl__ix_merge_next(st, has, n, o)) >= 0) {
        if (seen++ >= opt->offset) {
            (void)json_array_append_new(hits, hit_json(st[best]));
        }
        if (seen == want) {
            json_decref(*next);
            *next = cursor_make(st[best], (unsigned)best, n, opt);
        }
        rc = step_match(jobs[best].ix, st[best], err);
        has[best] = rc == SQLITE_ROW;
        rc = rc < 0 ? rc : 0;
    }
    if (rc != 0 || opt->limit == 0 || sl__ix_merge_next(st, has, n, o) < 0) {
        json_decref(*next); /* no hit follows the page */
        *next = NULL;
    }
    return rc;
}

/* The facets' counts summed over the jobs, as lists. */
static json_t *
merge_facets(struct shard_job *jobs, unsigned n, const int *facets, size_t nf)
{
    json_t *out = json_object();
    size_t f = 0;
    unsigned k = 0;

    for (f = 0; f < nf; f++) {
        json_t *sum = json_object();

        for (k = 0; k < n; k++) {
            const char *v = NULL;
            json_t *c = NULL;

            json_object_foreach(jobs[k].counts[f], v, c)
            {
                json_int_t had = json_integer_value(json_object_get(sum, v));

                (void)json_object_set_new(
                    sum, v, json_integer(had + json_integer_value(c)));
            }
        }
        (void)json_object_set_new(
            out, facet_defs[facets[f]].name, facet_list(sum));
        json_decref(sum);
    }
    return out;
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
    struct shard_job jobs[SL_INDEX_MAX_SHARDS];
    struct sl__ix_order o = {
        1, opt->sort == SL_INDEX_SORT_DATE, opt->ascending};
    struct cursor cur = {0, 0, 0, NULL};
    struct sl_buf hsql;
    struct sl_buf csql;
    json_int_t total = 0;
    json_t *hits = json_array();
    json_t *next = NULL;
    unsigned k = 0;
    size_t f = 0;
    int rc = 0;

    if (opt->cursor != NULL && cursor_read(opt, n, &cur, err) != 0) {
        json_decref(hits);
        return SL_EINVAL;
    }
    sl_buf_init(&hsql, 64 * 1024);
    sl_buf_init(&csql, 64 * 1024);
    /* one row more than the page: whether a next page exists */
    search_sql(q, opt, opt->offset + opt->limit + 1, cur.set, &hsql, &csql);
    memset(jobs, 0, sizeof(jobs));
    for (k = 0; k < n; k++) {
        jobs[k].ix = ix[k];
        jobs[k].q = q;
        jobs[k].hsql = hsql.data;
        jobs[k].csql = csql.data != NULL ? csql.data : "";
        jobs[k].facets = facets;
        jobs[k].nfacets = nfacets;
        jobs[k].cur = &cur;
        jobs[k].shard = k;
        sl_err_clear(&jobs[k].err);
    }
    run_jobs(jobs, n);
    for (k = 0; k < n && rc == 0; k++) {
        rc = jobs[k].rc;
        total += jobs[k].total;
        if (rc != 0 && err != NULL) {
            *err = jobs[k].err;
        }
    }
    rc = rc == 0 ? merge_hits(jobs, n, opt, &o, hits, &next, err) : rc;
    if (rc == 0) {
        *out = json_pack("{s:I, s:O}", "total", total, "hits", hits);
        if (next != NULL) {
            (void)json_object_set(*out, "next", next);
        }
        if (nfacets > 0) {
            (void)json_object_set_new(
                *out, "facets", merge_facets(jobs, n, facets, nfacets));
        }
    }
    for (k = 0; k < n; k++) {
        (void)sqlite3_finalize(jobs[k].st);
        sl_free(jobs[k].match);
        for (f = 0; f < nfacets; f++) {
            json_decref(jobs[k].counts[f]);
        }
    }
    json_decref(hits);
    json_decref(next);
    json_decref(cur.key);
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
    rc = sl__ix_acquire_all(set, index, ix, &n, err);
    if (rc == 0) {
        rc = search_shards(ix, n, &q, &opt, facets, nfacets, out, err);
        sl__ix_release_all(ix, n);
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
