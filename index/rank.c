/*
 * Embedded full-text index, the ranking function sl_bm25(documents_fts,
 * weights...): FTS5's bm25 (the same formula, parameters and weights, so
 * the same scores), with the document lengths read by walking the
 * documents_fts_docsize table alongside the matches instead of one lookup
 * per match.
 *
 * Why: a word in most documents ranks every one of them, and FTS5's bm25
 * spends more than half of that on xColumnSize, a B-tree search in
 * %_docsize per match.  The matches come in rowid order, so one cursor
 * over %_docsize stepped forward reads the lengths in order; it searches
 * again only over a gap of more than GAP_MAX rows (then a step each would
 * cost more than a search), and a row it does not find (an older database
 * without the table, a size it cannot read) is asked of xColumnSize, as
 * is the first row, to check that the table walked is the FTS table's
 * (else xColumnSize is asked for all).
 *
 * BM25 (Robertson and Zaragoza), as FTS5 computes it: for each phrase i of
 * the query, idf(i) = log((N - n(i) + 0.5) / (n(i) + 0.5)) (at least
 * 1e-6), N rows, n(i) rows that match phrase i; f(i) the sum of the
 * column weights of its instances in the row; D the row's tokens, avgdl
 * the mean; k1 = 1.2, b = 0.75; score = -sum idf(i) * f(i) * (k1 + 1) /
 * (f(i) + k1 * (1 - b + b * D / avgdl)) (negative: lower is better).
 * n(i) is counted with xQueryPhrase, which evaluates the phrase over the
 * whole table, when a row that holds phrase i is first scored: a phrase
 * that no match holds (under NOT, in another branch of an OR) adds 0 to
 * every score and is never counted.
 *
 * A query of one phrase (a phrase in quotes, a word) without a filter
 * matches exactly the rows the phrase is in, so the count of its matches
 * is the phrase's n: sl_bm25_tf leaves the idf out for such a query (a
 * constant factor: the order is the same), and the search multiplies its
 * scores by sl_idf(sl_ranked(), sl_bm25_rows()) (index/search.c).
 * Counting n apart would evaluate the phrase over the whole table a
 * second time: for a phrase of two words in most documents, 22 of a
 * query's 57 ms.
 *
 * Both count the rows they score in the connection's struct sl__ranked,
 * once per row, which sl_ranked() returns: a search by relevance scores
 * every match, so that is its count (index/search.c).
 *
 * Threads: the per-query data lives in the statement (FTS5's aux data) and
 * the function runs on the connection's thread.
 */
#include <math.h>
#include <string.h>

#include "index/index_int.h"

#define GAP_MAX      64 /* rows stepped over before searching again */
#define COLS_MAX     16 /* weights read */
#define PHRASES_ITER 4  /* phrases counted one by one, at most */
#define IDF_UNKNOWN  (-1.0)

/* The functions' user data: the connection, and whether the idf of a
 * query of one phrase is left to the caller (sl_bm25_tf). */
struct rank_fn {
    sqlite3 *db;
    int defer;
    struct sl__ranked *ranked; /* or NULL */
};

/* Per query (FTS5 aux data): the statistics and the %_docsize cursor. */
struct rank_data {
    int nphrase;
    double avgdl;
    sqlite3_int64 nrow;
    double *idf;  /* [nphrase], IDF_UNKNOWN until a row holds the phrase */
    double *freq; /* [nphrase], per row */
    int nw;
    double w[COLS_MAX];
    sqlite3_stmt *sz; /* SELECT id, sz FROM documents_fts_docsize ... */
    int sz_row;       /* sz stands on a row */
    int sz_broken;    /* no such table, a failed step, or lengths that are
                         not xColumnSize's: xColumnSize only */
    int sz_checked;   /* the first row's length was compared */
};

static void
rank_data_free(void *p)
{
    struct rank_data *d = p;

    if (d != NULL) {
        (void)sqlite3_finalize(d->sz);
        sl_free(d->idf);
        sl_free(d->freq);
        sl_free(d);
    }
}

static int
count_cb(const Fts5ExtensionApi *api, Fts5Context *fts, void *arg)
{
    (void)api;
    (void)fts;
    (*(sqlite3_int64 *)arg)++;
    return SQLITE_OK;
}

/* The statistics of the query, and its weights from @argv. */
static int
rank_data_new(const Fts5ExtensionApi *api,
              Fts5Context *fts,
              int argc,
              sqlite3_value **argv,
              struct rank_data **out)
{
    const struct rank_fn *fn = api->xUserData(fts);
    struct rank_data *d = sl_calloc(1, sizeof(*d));
    sqlite3_int64 nrow = 0;
    sqlite3_int64 ntok = 0;
    int rc = SQLITE_OK;
    int i = 0;

    d->nphrase = api->xPhraseCount(fts);
    d->idf = sl_calloc((size_t)d->nphrase + 1, sizeof(double));
    d->freq = sl_calloc((size_t)d->nphrase + 1, sizeof(double));
    d->nw = argc < COLS_MAX ? argc : COLS_MAX;
    for (i = 0; i < d->nw; i++) {
        d->w[i] = sqlite3_value_double(argv[i]);
    }
    rc = api->xRowCount(fts, &nrow);
    if (rc == SQLITE_OK) {
        rc = api->xColumnTotalSize(fts, -1, &ntok);
    }
    d->avgdl = nrow > 0 ? (double)ntok / (double)nrow : 1.0;
    d->nrow = nrow;
    for (i = 0; i < d->nphrase; i++) {
        /* the caller's, from its count of the rows; else counted when a
         * row first holds the phrase (idf_of) */
        d->idf[i] = fn->defer && d->nphrase == 1 ? 1.0 : IDF_UNKNOWN;
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v3(fn->db,
                                "SELECT id, sz FROM documents_fts_docsize"
                                " WHERE id >= ?1 ORDER BY id",
                                -1,
                                SQLITE_PREPARE_PERSISTENT,
                                &d->sz,
                                NULL);
        d->sz_broken = rc != SQLITE_OK;
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        rank_data_free(d);
        return rc;
    }
    *out = d;
    return SQLITE_OK;
}

/* The total of the varints of a %_docsize blob (one per column): 0 and
 * *n set, or -1 when it is not a list of 32-bit varints. */
static int
size_sum(const unsigned char *p, int len, sqlite3_int64 *n)
{
    int i = 0;

    *n = 0;
    while (i < len) {
        uint32_t v = 0;
        int k = 0;

        do {
            if (i >= len || k == 5) {
                return -1;
            }
            v = (v << 7) | (p[i] & 0x7f);
            k++;
        } while (p[i++] & 0x80);
        *n += v;
    }
    return 0;
}

/* The tokens of row @rowid from the cursor: 0 and *ntok, or -1 (ask
 * xColumnSize). */
static int
walk_size(struct rank_data *d, sqlite3_int64 rowid, sqlite3_int64 *ntok)
{
    sqlite3_int64 at = d->sz_row ? sqlite3_column_int64(d->sz, 0) : 0;
    int src = SQLITE_ROW;

    if (!d->sz_row || rowid < at || rowid - at > GAP_MAX) {
        (void)sqlite3_reset(d->sz);
        (void)sqlite3_bind_int64(d->sz, 1, rowid);
        src = sqlite3_step(d->sz);
    }
    while (src == SQLITE_ROW && sqlite3_column_int64(d->sz, 0) < rowid) {
        src = sqlite3_step(d->sz);
    }
    d->sz_row = src == SQLITE_ROW;
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        d->sz_broken = 1;
        return -1;
    }
    if (!d->sz_row || sqlite3_column_int64(d->sz, 0) != rowid) {
        return -1;
    }
    return size_sum(
        sqlite3_column_blob(d->sz, 1), sqlite3_column_bytes(d->sz, 1), ntok);
}

/* The weighted count of each phrase's instances in the row.  A few
 * phrases: each one's own positions (xInst would first merge those of all
 * phrases into one sorted array: 10-15% of a query of two words in most
 * documents); many (an expanded prefix, prefix.c): the instances, which
 * cost what the row holds, not a call per phrase it lacks. */
static int
freqs(const Fts5ExtensionApi *api, Fts5Context *fts, struct rank_data *d)
{
    int rc = SQLITE_OK;
    int ninst = 0;
    int i = 0;

    memset(d->freq, 0, sizeof(double) * (size_t)d->nphrase);
    if (d->nphrase <= PHRASES_ITER) {
        for (i = 0; rc == SQLITE_OK && i < d->nphrase; i++) {
            Fts5PhraseIter it;
            int ic = -1, io = 0;

            rc = api->xPhraseFirst(fts, i, &it, &ic, &io);
            while (rc == SQLITE_OK && ic >= 0) {
                d->freq[i] += ic < d->nw ? d->w[ic] : 1.0;
                api->xPhraseNext(fts, &it, &ic, &io);
            }
        }
        return rc;
    }
    rc = api->xInstCount(fts, &ninst);
    for (i = 0; rc == SQLITE_OK && i < ninst; i++) {
        int ip = 0, ic = 0, io = 0;

        rc = api->xInst(fts, i, &ip, &ic, &io);
        if (rc == SQLITE_OK && ip >= 0 && ip < d->nphrase) {
            d->freq[ip] += ic >= 0 && ic < d->nw ? d->w[ic] : 1.0;
        }
    }
    return rc;
}

/* Count row @rowid as scored, once however often it is scored in a row
 * (a query may name the score twice). */
static void
count_row(const struct rank_fn *fn, sqlite3_int64 rowid)
{
    struct sl__ranked *r = fn->ranked;

    if (r != NULL && (!r->any || r->last != rowid)) {
        r->n++;
        r->last = rowid;
        r->any = 1;
    }
}

/* The idf of phrase @i, counted over the table the first time a row holds
 * it: a phrase no match holds (under NOT, an OR's other branch) adds
 * nothing to any score, and counting it would evaluate it over the whole
 * table for nothing. */
static int
idf_of(const Fts5ExtensionApi *api,
       Fts5Context *fts,
       struct rank_data *d,
       int i)
{
    sqlite3_int64 nhit = 0;
    int rc = SQLITE_OK;

    if (d->idf[i] != IDF_UNKNOWN) {
        return SQLITE_OK;
    }
    rc = api->xQueryPhrase(fts, i, &nhit, count_cb);
    if (rc == SQLITE_OK) {
        d->idf[i] = sl__index_idf(d->nrow, nhit);
    }
    return rc;
}

static void
bm25_fn(const Fts5ExtensionApi *api,
        Fts5Context *fts,
        sqlite3_context *ctx,
        int argc,
        sqlite3_value **argv)
{
    const double k1 = 1.2;
    const double b = 0.75;
    struct rank_data *d = api->xGetAuxdata(fts, 0);
    sqlite3_int64 ntok = 0;
    double score = 0.0;
    int rc = SQLITE_OK;
    int i = 0;

    if (d == NULL) {
        rc = rank_data_new(api, fts, argc, argv, &d);
        if (rc == SQLITE_OK) {
            rc = api->xSetAuxdata(fts, d, rank_data_free);
        }
        if (rc != SQLITE_OK) {
            sqlite3_result_error_code(ctx, rc);
            return;
        }
    }
    count_row(api->xUserData(fts), api->xRowid(fts));
    rc = freqs(api, fts, d);
    if (rc == SQLITE_OK &&
        (d->sz_broken || walk_size(d, api->xRowid(fts), &ntok) != 0 ||
         !d->sz_checked)) {
        int n = 0;

        rc = api->xColumnSize(fts, -1, &n);
        /* the first row: the table walked is this FTS table's */
        d->sz_broken |= !d->sz_checked && (sqlite3_int64)n != ntok;
        d->sz_checked = 1;
        ntok = n;
    }
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    for (i = 0; rc == SQLITE_OK && i < d->nphrase; i++) {
        if (d->freq[i] == 0.0) {
            continue; /* adds 0 */
        }
        rc = idf_of(api, fts, d, i);
        score += d->idf[i] * (d->freq[i] * (k1 + 1.0)) /
                 (d->freq[i] + k1 * (1 - b + b * (double)ntok / d->avgdl));
    }
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    sqlite3_result_double(ctx, -1.0 * score);
}

double
sl__index_idf(sqlite3_int64 nrow, sqlite3_int64 nhit)
{
    double idf =
        log(((double)nrow - (double)nhit + 0.5) / ((double)nhit + 0.5));

    return idf <= 0.0 ? 1e-6 : idf;
}

/* sl_bm25_rows(fts): the rows of the FTS table when the query is one
 * phrase (whose idf sl_bm25_tf leaves out), else NULL. */
static void
rows_fn(const Fts5ExtensionApi *api,
        Fts5Context *fts,
        sqlite3_context *ctx,
        int argc,
        sqlite3_value **argv)
{
    sqlite3_int64 nrow = 0;
    int rc = SQLITE_OK;

    (void)argc;
    (void)argv;
    if (api->xPhraseCount(fts) != 1) {
        sqlite3_result_null(ctx);
        return;
    }
    rc = api->xRowCount(fts, &nrow);
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    sqlite3_result_int64(ctx, nrow);
}

/* sl_idf(nhit, nrow): the idf of a phrase in @nhit of @nrow rows; NULL
 * when @nrow is. */
static void
idf_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_double(ctx,
                          sl__index_idf(sqlite3_value_int64(argv[1]),
                                        sqlite3_value_int64(argv[0])));
}

/* sl_ranked(): the rows scored since the counter was zeroed; not
 * deterministic, so that SQLite reads it where it stands in the query
 * (after the ranking pass), not once at the start. */
static void
ranked_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const struct sl__ranked *r = sqlite3_user_data(ctx);

    (void)argc;
    (void)argv;
    if (r == NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_int64(ctx, r->n);
}

fts5_api *
sl__index_fts5(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK) {
        return NULL;
    }
    (void)sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    (void)sqlite3_step(st);
    (void)sqlite3_finalize(st);
    return api;
}

/* Register sl_bm25 (@defer 0) or sl_bm25_tf on @db. */
static int
create_bm25(fts5_api *api,
            sqlite3 *db,
            const char *name,
            int defer,
            struct sl__ranked *ranked)
{
    struct rank_fn *fn = sl_malloc(sizeof(*fn));
    int rc = SQLITE_OK;

    fn->db = db;
    fn->defer = defer;
    fn->ranked = ranked;
    rc = api->xCreateFunction(api, name, fn, bm25_fn, sl_free);
    if (rc != SQLITE_OK) {
        sl_free(fn);
    }
    return rc;
}

int
sl__index_rank_functions(sqlite3 *db, struct sl__ranked *ranked)
{
    fts5_api *api = sl__index_fts5(db);
    int rc = SQLITE_OK;

    if (api == NULL || api->iVersion < 2) {
        return SQLITE_ERROR;
    }
    rc = create_bm25(api, db, "sl_bm25", 0, ranked);
    rc = rc == SQLITE_OK ? create_bm25(api, db, "sl_bm25_tf", 1, ranked) : rc;
    rc = rc == SQLITE_OK ? sqlite3_create_function(db,
                                                   "sl_ranked",
                                                   0,
                                                   SQLITE_UTF8,
                                                   ranked,
                                                   ranked_fn,
                                                   NULL,
                                                   NULL)
                         : rc;
    rc = rc == SQLITE_OK
             ? api->xCreateFunction(api, "sl_bm25_rows", NULL, rows_fn, NULL)
             : rc;
    return rc == SQLITE_OK
               ? sqlite3_create_function(db,
                                         "sl_idf",
                                         2,
                                         SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                         NULL,
                                         idf_fn,
                                         NULL,
                                         NULL)
               : rc;
}
