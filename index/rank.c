/*
 * Embedded full-text index, the ranking function sl_bm25(documents_fts,
 * match, weights...): FTS5's bm25 (the same formula, parameters and
 * weights: the same scores for phrases of one token; a phrase of several
 * tokens has the sum of their idf, below), with the document lengths read
 * by walking the documents_fts_docsize table alongside the matches
 * instead of one lookup per match.
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
 * the query, f(i) the sum of the column weights of its instances in the
 * row; D the row's tokens, avgdl the mean; k1 = 1.2, b = 0.75; score =
 * -sum idf(i) * f(i) * (k1 + 1) / (f(i) + k1 * (1 - b + b * D / avgdl))
 * (negative: lower is better), with idf(n) = log((N - n + 0.5) / (n +
 * 0.5)) (at least 1e-6) for a term in n of N rows.
 *
 * f(i) is read off the phrase's position list in the row, the varints
 * FTS5 hands xPhraseFirst's iterator, instead of a call of xPhraseNext
 * per instance (40% of a query of two words in most documents, which
 * occur many times in each): a 1 before a column's number, every other
 * varint a position (sl__ix_poslist_freq).  The first POS_CHECKS lists
 * of more than one instance in a query are also walked with xPhraseNext;
 * from one whose two counts differ, or one that does not parse, on, the
 * query walks its lists with xPhraseNext: a later SQLite that handed
 * something else to the iterator would cost speed, not scores, unless it
 * differed only in lists the checks did not see.
 *
 * The idf of a phrase is the sum of its tokens' idf: for a phrase of one
 * token its token's, as in FTS5's bm25; a phrase of several tokens
 * (`"quarterly report"`, and a word with punctuation, `stdio.h`, which the
 * search writes as a phrase) as Lucene's BM25 has it.  FTS5's bm25 takes
 * the phrase's own count instead, which evaluates the phrase over the
 * whole table a second time: in a query with a filter or a NOT, whose
 * matches are fewer than the phrase's, that doubled the cost (two words
 * in most documents: 23 ms a shard to count the phrase, 2-3 ms each of
 * its words).  The tokens are those of the phrase's text in the query
 * (sl_bm25's first argument, the MATCH string the search wrote: quoted
 * strings, an optional `col : ` before one or before a NEAR, `*` after a
 * prefix), tokenized by the table's tokenizer, each counted in the
 * phrase's column by a count statement on the connection; a query not in
 * that form (another number of strings than FTS5 has phrases, or of
 * tokens than a phrase has) or an FTS table other than documents_fts gets
 * FTS5's count of the phrase (xQueryPhrase).
 *
 * The counts are kept per connection (struct df_cache, DF_SLOTS of them)
 * for one version of the database (SQLITE_FCNTL_DATA_VERSION, which every
 * commit moves): what a term dictionary such as Lucene's holds and FTS5
 * does not, a term's document count without reading its list again (2-3
 * ms a shard for a word in most documents).  A commit empties them; so
 * does a full table, and a query in a write transaction keeps none.
 *
 * Every idf is counted when a row that holds the phrase is first scored:
 * a phrase that no match holds (under NOT, in another branch of an OR)
 * adds 0 to every score and is never counted.
 *
 * sl_bm25 counts the rows it scores in the connection's struct
 * sl__ranked, once per row, which sl_ranked() returns: a search by
 * relevance scores every match, so that is its count (index/search.c).
 *
 * Threads: the per-query data lives in the statement (FTS5's aux data),
 * the counts in the function's user data, one per connection; the
 * function runs on the thread that holds the connection (the index's
 * lock of its reader or writer).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "index/index_int.h"

#define GAP_MAX         64 /* rows stepped over before searching again */
#define COLS_MAX        16 /* weights read */
#define PHRASES_ITER    (SL__IX_PREFIX_WORDS + 8) /* phrases read one by one */
#define POS_CHECKS      8 /* position lists a query counts both ways */
#define IDF_UNKNOWN     (-1.0)
#define COUNT_MATCH_MAX (SL__QUERY_MAX_MATCH + 64) /* a token's MATCH */
#define TOKENS_MAX      64  /* tokens of a phrase summed (more: FTS5's count) */
#define COL_MAX         64  /* bytes of a column name */
#define DF_SLOTS        256 /* token counts kept per connection (28 KiB) */
#define DF_KEY_MAX      96  /* bytes of a count's MATCH kept, NUL included */

/* A token's count kept: the MATCH string counted (key[0] NUL: free). */
struct df_slot {
    sqlite3_int64 n;
    uint32_t hash;
    char key[DF_KEY_MAX];
};

/* A connection's token counts, valid for one version of its database
 * (SQLITE_FCNTL_DATA_VERSION: changed by every commit, the connection's
 * own or another's); emptied when the version moves or when it is 3/4
 * full.  What FTS5 lacks and a term dictionary holds: a term's document
 * count without reading its list. */
struct df_cache {
    unsigned version;
    int used;
    struct df_slot slot[DF_SLOTS];
};

/* The function's user data: the connection, its counter and its token
 * counts. */
struct rank_fn {
    sqlite3 *db;
    struct sl__ranked *ranked; /* or NULL */
    struct df_cache *df;       /* allocated by the first query, or NULL */
};

/* Where a phrase stands in the query's text: its string [a, e) (quotes
 * excluded), its column filter [ca, ca + nc) (nc 0: none), whether its
 * last token is a prefix. */
struct phrase_src {
    size_t a, e;
    size_t ca, nc;
    int prefix;
};

/* Per query (FTS5 aux data): the statistics and the %_docsize cursor. */
struct rank_data {
    int nphrase;
    double avgdl;
    sqlite3_int64 nrow;
    double *idf;  /* [nphrase], IDF_UNKNOWN until a row holds the phrase */
    double *freq; /* [nphrase], per row */
    char *query;  /* the MATCH string, or NULL */
    struct phrase_src *src; /* [nphrase] in @query, or NULL */
    int own;                /* the FTS table is documents_fts (first row) */
    struct df_cache *df;    /* the connection's, current; or NULL */
    int pos_checks;         /* position lists counted both ways */
    int pos_api;            /* one differed: xPhraseNext only */
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
        sl_free(d->query);
        sl_free(d->src);
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

/* FNV-1a of @s. */
static uint32_t
df_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

/* The slot of key @m in @c: the one that holds it, or the free one where
 * it goes (NULL: none, which the 3/4 bound of count_match prevents). */
static struct df_slot *
df_slot(struct df_cache *c, const char *m, uint32_t h)
{
    unsigned i = h % DF_SLOTS;
    unsigned k = 0;

    for (k = 0; k < DF_SLOTS; k++, i = (i + 1) % DF_SLOTS) {
        if (c->slot[i].key[0] == '\0' ||
            (c->slot[i].hash == h && strcmp(c->slot[i].key, m) == 0)) {
            return &c->slot[i];
        }
    }
    return NULL;
}

/* @fn's token counts for version @v of its database (emptied if they were
 * another's). */
static struct df_cache *
df_current(struct rank_fn *fn, unsigned v)
{
    if (fn->df == NULL) {
        fn->df = sl_calloc(1, sizeof(*fn->df));
        fn->df->version = v;
    }
    if (fn->df->version != v) {
        memset(fn->df, 0, sizeof(*fn->df));
        fn->df->version = v;
    }
    return fn->df;
}

/* The column filter written right before @q[i] (`col : `): its start in
 * *ca and its length (0: none). */
static size_t
col_before(const char *q, size_t i, size_t *ca)
{
    size_t j = i;

    while (j > 0 && q[j - 1] == ' ') {
        j--;
    }
    if (j == 0 || q[j - 1] != ':') {
        return 0;
    }
    j--;
    while (j > 0 && q[j - 1] == ' ') {
        j--;
    }
    *ca = j;
    while (*ca > 0 &&
           (isalnum((unsigned char)q[*ca - 1]) || q[*ca - 1] == '_')) {
        (*ca)--;
    }
    return j - *ca <= COL_MAX ? j - *ca : 0;
}

/* The phrases of d->query in FTS5's order (the order they are written
 * in) into d->src; left NULL when the text has another number of strings
 * than FTS5 has phrases (not the form the search writes).  A column
 * filter applies to the string after it, or to the group after it: a
 * NEAR (qparse.c) or a prefix's words (prefix.c). */
static void
phrases_of(struct rank_data *d)
{
    const char *q = d->query;
    struct phrase_src *src = sl_calloc((size_t)d->nphrase + 1, sizeof(*src));
    size_t gca = 0, gnc = 0; /* the group's column filter */
    int gdepth = 0;          /* the depth it holds for, 0: none */
    int depth = 0;
    int n = 0;
    size_t i = 0;

    for (i = 0; q[i] != '\0'; i++) {
        size_t e = 0;

        if (q[i] == '(' || strncmp(q + i, "NEAR(", 5) == 0) {
            size_t nc = gdepth == 0 ? col_before(q, i, &gca) : 0;

            i += q[i] == '(' ? 0 : 4;
            depth++;
            if (nc > 0) {
                gnc = nc;
                gdepth = depth;
            }
            continue;
        }
        if (q[i] == ')') {
            gdepth = depth == gdepth ? 0 : gdepth;
            depth--;
            continue;
        }
        if (q[i] != '"') {
            continue;
        }
        e = sl__ix_fts_string_end(q, i);
        if (q[e] == '\0' || n == d->nphrase) {
            n = -1;
            break;
        }
        src[n].a = i + 1;
        src[n].e = e;
        src[n].nc = col_before(q, i, &src[n].ca);
        if (src[n].nc == 0 && gdepth > 0) {
            src[n].ca = gca;
            src[n].nc = gnc;
        }
        src[n].prefix = q[e + 1] == '*';
        n++;
        i = e;
    }
    if (n != d->nphrase) {
        sl_free(src);
        return;
    }
    d->src = src;
}

/* The statistics of the query, its text from argv[0] and its weights from
 * the arguments after it. */
static int
rank_data_new(const Fts5ExtensionApi *api,
              Fts5Context *fts,
              int argc,
              sqlite3_value **argv,
              struct rank_data **out)
{
    struct rank_fn *fn = api->xUserData(fts);
    struct rank_data *d = sl_calloc(1, sizeof(*d));
    unsigned version = 0;
    const unsigned char *text = argc > 0 ? sqlite3_value_text(argv[0]) : NULL;
    sqlite3_int64 nrow = 0;
    sqlite3_int64 ntok = 0;
    int rc = SQLITE_OK;
    int i = 0;

    d->nphrase = api->xPhraseCount(fts);
    d->idf = sl_calloc((size_t)d->nphrase + 1, sizeof(double));
    d->freq = sl_calloc((size_t)d->nphrase + 1, sizeof(double));
    d->nw = argc - 1 < COLS_MAX ? argc - 1 : COLS_MAX;
    d->nw = d->nw < 0 ? 0 : d->nw;
    for (i = 0; i < d->nw; i++) {
        d->w[i] = sqlite3_value_double(argv[i + 1]);
    }
    if (text != NULL && strlen((const char *)text) <= SL__IX_MATCH_MAX) {
        d->query = sl_strdup((const char *)text);
        phrases_of(d);
    }
    rc = api->xRowCount(fts, &nrow);
    if (rc == SQLITE_OK) {
        rc = api->xColumnTotalSize(fts, -1, &ntok);
    }
    d->avgdl = nrow > 0 ? (double)ntok / (double)nrow : 1.0;
    /* the version of the statement's snapshot (its read transaction has
     * begun): the counts kept for it hold; not in a write transaction,
     * whose changes are not counted in a version until its commit */
    if (sqlite3_txn_state(fn->db, "main") != SQLITE_TXN_WRITE &&
        sqlite3_file_control(
            fn->db, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK) {
        d->df = df_current(fn, version);
    }
    d->nrow = nrow;
    for (i = 0; i < d->nphrase; i++) {
        d->idf[i] = IDF_UNKNOWN; /* counted when a row first holds it */
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

/* The 32-bit varint at @p, before @end, into *v: the bytes it takes, or 0
 * when it is cut off or longer than 5 bytes. */
static int
varint32(const unsigned char *p, const unsigned char *end, uint32_t *v)
{
    int k = 0;

    *v = 0;
    do {
        if (p + k >= end || k == 5) {
            return 0;
        }
        *v = (*v << 7) | (p[k] & 0x7f);
    } while (p[k++] & 0x80);
    return k;
}

int
sl__ix_size_sum(const unsigned char *p, int len, sqlite3_int64 *n)
{
    const unsigned char *end = NULL;

    *n = 0;
    if (len <= 0) { /* an empty blob's pointer is NULL */
        return 0;
    }
    end = p + len;
    while (p < end) {
        uint32_t v = 0;
        int k = varint32(p, end, &v);

        if (k == 0) {
            return -1;
        }
        p += k;
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
    return sl__ix_size_sum(
        sqlite3_column_blob(d->sz, 1), sqlite3_column_bytes(d->sz, 1), ntok);
}

/* The weight of column @c among @nw weights: 1.0 past them. */
static double
col_weight(const double *w, int nw, sqlite3_int64 c)
{
    return c >= 0 && c < nw ? w[c] : 1.0;
}

/* The weight of an instance in column @ic. */
static double
weight(const struct rank_data *d, int ic)
{
    return col_weight(d->w, d->nw, ic);
}

int
sl__ix_poslist_freq(const double *w,
                    int nw,
                    const unsigned char *a,
                    const unsigned char *b,
                    int ic,
                    double *freq)
{
    double f = col_weight(w, nw, ic); /* the first instance */
    double wc = f;

    while (a < b) {
        if (*a == 0x01) { /* a column's number follows */
            uint32_t col = 0;
            int k = varint32(a + 1, b, &col);

            if (k == 0) {
                return -1;
            }
            a += 1 + k;
            wc = col_weight(w, nw, col);
            continue;
        }
        while (*a & 0x80) { /* a position: skip its varint */
            if (++a >= b) {
                return -1;
            }
        }
        a++;
        f += wc;
    }
    *freq = f;
    return 0;
}

/* Phrase @i's weighted count of instances in the row through xPhraseNext,
 * into d->freq[i]. */
static int
freq_api(const Fts5ExtensionApi *api,
         Fts5Context *fts,
         struct rank_data *d,
         int i)
{
    Fts5PhraseIter it;
    int ic = -1, io = 0;
    int rc = api->xPhraseFirst(fts, i, &it, &ic, &io);

    d->freq[i] = 0.0;
    while (rc == SQLITE_OK && ic >= 0) {
        d->freq[i] += weight(d, ic);
        api->xPhraseNext(fts, &it, &ic, &io);
    }
    return rc;
}

/* The weighted count of each phrase's instances in the row.  Up to
 * PHRASES_ITER phrases (a prefix's words too, prefix.c), each one's own
 * position list (poslist_freq); xInst would first merge the instances of
 * all phrases into one sorted array: 10-15% of a query of two words in
 * most documents, and more than a call of xPhraseFirst for each of a
 * prefix's words that the row lacks (`nedi*` 30% slower).  More phrases:
 * the instances. */
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
            double f = 0.0;
            int ok = 0;

            rc = api->xPhraseFirst(fts, i, &it, &ic, &io);
            if (rc != SQLITE_OK || ic < 0) {
                continue;
            }
            ok = !d->pos_api &&
                 sl__ix_poslist_freq(d->w, d->nw, it.a, it.b, ic, &f) == 0;
            if (ok && (d->pos_checks >= POS_CHECKS || it.a == it.b)) {
                d->freq[i] = f; /* it.a == it.b: one instance, no check */
                continue;
            }
            rc = freq_api(api, fts, d, i);
            /* the first POS_CHECKS lists of more than one instance are
             * also counted with xPhraseNext: one that differs or that
             * does not parse ends the reading of lists for the query */
            if (!d->pos_api) {
                d->pos_api = !ok || f != d->freq[i];
                d->pos_checks++;
            }
        }
        return rc;
    }
    rc = api->xInstCount(fts, &ninst);
    for (i = 0; rc == SQLITE_OK && i < ninst; i++) {
        int ip = 0, ic = 0, io = 0;

        rc = api->xInst(fts, i, &ip, &ic, &io);
        if (rc == SQLITE_OK && ip >= 0 && ip < d->nphrase) {
            d->freq[ip] += weight(d, ic);
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

/* Count the rows that FTS5 query @m matches: 0 and *n, or an SQLite
 * error; a count of the database's current version is kept in d->df.
 * The query is in the statement's text (%Q), so a trace of the
 * connection shows what was counted (test_index_rank.c). */
static int
count_match(sqlite3 *db, struct rank_data *d, const char *m, sqlite3_int64 *n)
{
    size_t len = strlen(m);
    uint32_t h = df_hash(m);
    /* not in a write transaction: a statement begun before it sees its
     * rows, which a rollback takes back without a new version */
    struct df_slot *slot =
        d->df != NULL && len < DF_KEY_MAX &&
                sqlite3_txn_state(db, "main") != SQLITE_TXN_WRITE
            ? df_slot(d->df, m, h)
            : NULL;
    sqlite3_stmt *st = NULL;
    char *sql = NULL;
    int rc = SQLITE_OK;

    if (slot != NULL && slot->key[0] != '\0') {
        *n = slot->n;
        return SQLITE_OK;
    }
    sql = sqlite3_mprintf(
        "SELECT count(*) FROM main.documents_fts WHERE documents_fts MATCH %Q",
        m);
    rc =
        sql != NULL ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    rc = rc == SQLITE_OK ? sqlite3_step(st) : rc;
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    (void)sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
        return rc == SQLITE_DONE || rc == SQLITE_OK ? SQLITE_ERROR : rc;
    }
    if (slot != NULL && d->df->used >= DF_SLOTS * 3 / 4) {
        /* full: start again */
        memset(d->df->slot, 0, sizeof(d->df->slot));
        d->df->used = 0;
        slot = df_slot(d->df, m, h);
    }
    if (slot != NULL) {
        memcpy(slot->key, m, len + 1);
        slot->hash = h;
        slot->n = *n;
        d->df->used++;
    }
    return SQLITE_OK;
}

/* The tokens of a phrase's text (xTokenize's callback), each one
 * NUL-terminated in @b. */
struct tokens {
    struct sl_buf b;
    size_t at[TOKENS_MAX];
    int n;
    int over; /* more than TOKENS_MAX */
};

static int
token_cb(void *arg, int flags, const char *tok, int len, int start, int end)
{
    struct tokens *t = arg;

    (void)start;
    (void)end;
    if (flags & FTS5_TOKEN_COLOCATED) {
        return SQLITE_OK; /* a synonym: not a position of the phrase */
    }
    if (t->n == TOKENS_MAX) {
        t->over = 1;
        return SQLITE_OK;
    }
    t->at[t->n++] = t->b.len;
    (void)sl_buf_append(&t->b, tok, (size_t)len);
    (void)sl_buf_append(&t->b, "", 1);
    return SQLITE_OK;
}

/* The rows that hold token @tok in phrase @src's column (as a prefix when
 * @prefix): 0 and *n, or -1. */
static int
token_count(sqlite3 *db,
            struct rank_data *d,
            const struct phrase_src *src,
            const char *tok,
            int prefix,
            sqlite3_int64 *n)
{
    struct sl_buf m;
    const char *c = NULL;
    int rc = 0;

    sl_buf_init(&m, COUNT_MATCH_MAX);
    if (src->nc > 0) {
        (void)sl_buf_append(&m, d->query + src->ca, src->nc);
        (void)sl_buf_append(&m, " : ", 3);
    }
    (void)sl_buf_append(&m, "\"", 1);
    for (c = tok; *c != '\0'; c++) {
        (void)sl_buf_append(&m, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1);
    }
    (void)sl_buf_append(&m, prefix ? "\"*" : "\"", prefix ? 3 : 2);
    rc = m.failed || count_match(db, d, m.data, n) != SQLITE_OK ? -1 : 0;
    sl_buf_free(&m);
    return rc;
}

/* The idf of phrase @i of several tokens, the sum of its tokens' (a token
 * repeated counted once, added for each position): 0 and *idf, or -1 when
 * that cannot be had (FTS5's count of the phrase then: its count reports
 * an error that persists), or xTokenize's error.  The counts run after
 * xTokenize has returned: a MATCH is tokenized by the same tokenizer. */
static int
tokens_idf(const Fts5ExtensionApi *api,
           Fts5Context *fts,
           struct rank_data *d,
           int i,
           double *idf)
{
    const struct rank_fn *fn = api->xUserData(fts);
    const struct phrase_src *src = &d->src[i];
    sqlite3_int64 n[TOKENS_MAX];
    struct tokens t;
    char *text = sl_malloc(src->e - src->a + 1);
    size_t len = sl__ix_fts_unquote(d->query, src->a, src->e, text);
    double sum = 0.0;
    int rc = SQLITE_OK;
    int k = 0;

    sl_buf_init(&t.b, SL__IX_MATCH_MAX);
    t.n = 0;
    t.over = 0;
    rc = api->xTokenize(fts, text, (int)len, &t, token_cb);
    sl_free(text);
    if (rc == SQLITE_OK &&
        (t.over || t.b.failed || t.n != api->xPhraseSize(fts, i))) {
        rc = -1;
    }
    for (k = 0; rc == SQLITE_OK && k < t.n; k++) {
        const char *tok = t.b.data + t.at[k];
        int prefix = src->prefix && k == t.n - 1;
        int j = 0;

        for (j = 0; j < k && !prefix; j++) { /* counted already */
            if (strcmp(tok, t.b.data + t.at[j]) == 0) {
                break;
            }
        }
        if (!prefix && j < k) {
            n[k] = n[j];
        } else {
            rc = token_count(fn->db, d, src, tok, prefix, &n[k]);
        }
        sum += rc == SQLITE_OK ? sl__index_idf(d->nrow, n[k]) : 0.0;
    }
    sl_buf_free(&t.b);
    if (rc == SQLITE_OK) {
        *idf = sum;
    }
    return rc;
}

/* The idf of phrase @i, counted over the table the first time a row holds
 * it: a phrase no match holds (under NOT, an OR's other branch) adds
 * nothing to any score, and counting it would read the table for
 * nothing. */
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
    if (d->src != NULL && d->own) {
        rc = tokens_idf(api, fts, d, i, &d->idf[i]);
        if (rc != -1) {
            return rc;
        }
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
        /* so the table is documents_fts, whose tokens can be counted */
        d->own = !d->sz_checked ? !d->sz_broken : d->own;
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

static void
rank_fn_free(void *p)
{
    struct rank_fn *fn = p;

    if (fn != NULL) {
        sl_free(fn->df);
        sl_free(fn);
    }
}

/* Register sl_bm25 on @db. */
static int
create_bm25(fts5_api *api, sqlite3 *db, struct sl__ranked *ranked)
{
    struct rank_fn *fn = sl_malloc(sizeof(*fn));
    int rc = SQLITE_OK;

    fn->db = db;
    fn->ranked = ranked;
    fn->df = NULL;
    rc = api->xCreateFunction(api, "sl_bm25", fn, bm25_fn, rank_fn_free);
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
    rc = create_bm25(api, db, ranked);
    return rc == SQLITE_OK ? sqlite3_create_function(db,
                                                     "sl_ranked",
                                                     0,
                                                     SQLITE_UTF8,
                                                     ranked,
                                                     ranked_fn,
                                                     NULL,
                                                     NULL)
                           : rc;
}
