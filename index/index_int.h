/*
 * Private to index/: one open index (a SQLite connection, its mutex and its
 * prepared statements) and the helpers shared by the write side (index.c),
 * the read side (query.c) and the schema (schema.c).
 */
#ifndef SL_INDEX_INT_H_INCLUDED
#define SL_INDEX_INT_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>

#include <sqlite3.h>

#include "index/index.h"

/* Prepared statements of one index, created at open and reused. */
enum {
    SL__IX_BEGIN,
    SL__IX_COMMIT,
    SL__IX_ROLLBACK,
    SL__IX_UPSERT,
    SL__IX_DELETE,
    SL__IX_GET,
    SL__IX_COUNT,
    SL__IX_RECORDS,
    SL__IX_TOMB_GET,
    SL__IX_TOMB_PUT,
    SL__IX_TOMB_DEL,
    SL__IX_TOMB_PRUNE,
    SL__IX_OLD,
    SL__IX_FTS_ADD,
    SL__IX_FTS_DEL,
    SL__IX_FTS_OLD,  /* the indexed values of row ?1, for SL__IX_FTS_DEL */
    SL__IX_SRC_ADD,  /* (id, source) holds the document */
    SL__IX_SRC_DEL,  /* (id, source) no longer */
    SL__IX_SRC_ANY,  /* does any source hold id? */
    SL__IX_SRC_DROP, /* no source holds id */
    SL__IX_SRC_PAGE, /* ids a source holds, after id, in id order */
    SL__IX_SRC_LIST, /* the sources of id (read) */
    SL__IX_COLS_PUT, /* docs_cols gets the columns of row ?1 (schema.c) */
    SL__IX_COLS_DEL, /* docs_cols loses row ?1 */
    SL__IX_SEGMENTS, /* FTS5's segments (read) */
    SL__IX_NSTMT
};

/*
 * The read side of one shard: a read-only connection of its own, so that a
 * query reads the last committed state (WAL) while a writer holds the
 * shard, instead of waiting for the writer's transaction.  Opened on the
 * first read; only the read statements (GET, COUNT, SEARCH, TOTAL,
 * RECORDS) are prepared, the others stay NULL.
 */
/* The rows sl_bm25 scored on a connection since it was
 * zeroed (rank.c): a query's matches, counted in the pass that ranks
 * them; sl_ranked() in SQL. */
struct sl__ranked {
    sqlite3_int64 n;
    sqlite3_int64 last; /* the rowid counted last (one call per row) */
    int any;            /* last is set */
};

struct sl__index_reader {
    sqlite3 *db;        /* NULL until the first read */
    pthread_mutex_t mu; /* guards db, st and ranked */
    sqlite3_stmt *st[SL__IX_NSTMT];
    struct sl__ranked ranked;
};

/* ---- qparse.c: the query language (docs/index.md "Query language") ---- */
#define SL__QUERY_MAX_PARAMS 64
#define SL__QUERY_MAX_MATCH  (16u * 1024)
/* A query read: @match an FTS5 expression (NULL: none), @where an SQL
 * condition over `docs_cols d` (NULL: none) whose '?' take @params in order. */
struct sl__query {
    char *match;
    int phrase; /* the match holds a phrase or a NEAR */
    char *where;
    char *params[SL__QUERY_MAX_PARAMS];
    size_t nparams;
};
/* Read @text; SL_EINVAL (field "q", the position in the message). */
int sl__query_parse(const char *text, struct sl__query *q, struct sl_err *err);
void sl__query_free(struct sl__query *q);
/* ---- query.c, search.c: the read side ---- */
struct sl__index;
/* How rows are merged over shards: hits by column 10, a number or text
 * (@text), highest first unless @asc, equal keys by shard; with @on 0
 * (records) by the record id, column 0. */
struct sl__ix_order {
    int on;
    int text;
    int asc;
};
/* The shard whose current row comes next, -1 when all are done. */
int sl__ix_merge_next(sqlite3_stmt *const *st,
                      const int *has,
                      unsigned n,
                      const struct sl__ix_order *o);
/* A text column as a JSON string, or null (NULL column or bad UTF-8). */
json_t *sl__ix_col_json(sqlite3_stmt *st, int i);
/* The readers of every shard of @index, locked in shard order. */
int sl__ix_acquire_all(struct sl_index_set *set,
                       const char *index,
                       struct sl__index *ix[SL_INDEX_MAX_SHARDS],
                       unsigned *n,
                       struct sl_err *err);
void sl__ix_release_all(struct sl__index *ix[SL_INDEX_MAX_SHARDS], unsigned n);

/* The SQL functions queries use (qfields.c): sl_ext(path), the extension
 * of a path's last segment in lower case or NULL.  A SQLite result code. */
int sl__index_query_functions(sqlite3 *db);

/* ---- textpack.c: the documents' stored text (schema 7) ---- */
#define SL__IX_TEXT_MAX SL_BULK_DEFAULT_MAX_RECORD /* bytes of one text */
/* A packed text (sl_malloc'd data, freed with sl_free by its holder). */
struct sl__index_packed {
    unsigned char *data;
    size_t len;
};
struct libdeflate_compressor;
/**
 * Pack @p n bytes of text at @p s for the column text_z into @p out (new
 * data, the caller frees it).  @p c NULL stores the text as it is.
 * SL_ETOOLARGE over SL__IX_TEXT_MAX bytes (@p out untouched).
 */
int sl__index_text_pack(struct libdeflate_compressor *c,
                        const char *s,
                        size_t n,
                        struct sl__index_packed *out);
/**
 * Register sl_text_unpack (the generated column `text`) and sl_text_pack
 * on connection @p db, each with a (de)compressor of its own that the
 * connection frees.  Every connection that reads `text` needs them.  A
 * SQLite result code.
 */
int sl__index_text_functions(sqlite3 *db);
/* ---- urlcols.c: sl_url_host(url) and sl_url_path(url) (schema 8) ---- */
int sl__index_url_functions(sqlite3 *db);

/* ---- rank.c: FTS5 auxiliary function sl_bm25(fts, match, weights...),
 * BM25 with the document lengths read in rowid order and a phrase's idf
 * the sum of its tokens' (@match: the MATCH string), on connection @db;
 * it counts the rows it scores in @ranked (borrowed, outlives @db; NULL:
 * not counted), which sl_ranked() returns ---- */
int sl__index_rank_functions(sqlite3 *db, struct sl__ranked *ranked);
/* FTS5's extension API of @db, or NULL. */
fts5_api *sl__index_fts5(sqlite3 *db);
/* The tokens of a row: the total of the varints of its %_docsize blob
 * [p, p + len) (one per column; NULL when len is 0).  0 and *n, or -1
 * when a varint is cut off by the end or longer than 5 bytes (*n is then
 * undefined); bits past 32 of a 5-byte one are dropped. */
int sl__ix_size_sum(const unsigned char *p, int len, sqlite3_int64 *n);
/* The weighted count of a phrase's instances in a row off its FTS5
 * position list: the first instance in column @ic (what xPhraseFirst
 * read), then the varints [a, b) that its iterator holds, a 1 before a
 * column's number and every other one a position; column c weighs @w[c]
 * (1.0 from @nw on).  0 and *freq, or -1 when a varint runs past @b. */
int sl__ix_poslist_freq(const double *w,
                        int nw,
                        const unsigned char *a,
                        const unsigned char *b,
                        int ic,
                        double *freq);
/* The idf of a term in @nhit of @nrow rows, as FTS5's bm25 has it. */
double sl__index_idf(sqlite3_int64 nrow, sqlite3_int64 nhit);

/* The FTS table's tokenizer: its name and arguments (schema.c's table,
 * prefix.c's folding of prefixes). */
#define SL__IX_TOKENIZER      "unicode61"
#define SL__IX_TOKENIZER_ARGS "remove_diacritics", "2"
#define SL__IX_TOKENIZE       "unicode61 remove_diacritics 2"

/* ---- prefix.c: prefixes expanded to the shard's words ---- */
/* The end of the FTS5 string that begins at @s[i] ('"'): the index of its
 * closing quote (doubled quotes inside), or of the NUL. */
size_t sl__ix_fts_string_end(const char *s, size_t i);
/* The text of the string @s[a..e) (quotes excluded) unquoted into @out
 * (at least e - a bytes); its length. */
size_t sl__ix_fts_unquote(const char *s, size_t a, size_t e, char *out);
#define SL__IX_PREFIX_WORDS 64 /* words of a prefix expanded, at most */
/* Bytes of a MATCH string once its prefixes are expanded (what rank.c
 * reads of it). */
#define SL__IX_MATCH_MAX (4 * SL__QUERY_MAX_MATCH)
/* @match with each prefix "p"* (not in a NEAR) of at most
 * SL__IX_PREFIX_WORDS words of @ix as an OR of them: a new string, or
 * NULL when nothing was expanded.  Needs @ix's reader held. */
char *sl__ix_prefix_expand(struct sl__index *ix, const char *match);

/** A compressor for sl__index_text_pack (NULL when out of memory). */
struct libdeflate_compressor *sl__index_text_compressor(void);
void sl__index_text_compressor_free(struct libdeflate_compressor *c);

/* One shard of an index: a database file (docs/index.md "Shards"). */
struct sl__index {
    char name[SL_NAME_MAX + 1];
    struct sl_index_set *set; /* the set it is open in */
    unsigned users;           /* found and not yet released (set->mu) */
    char *path;               /* of the database file */
    unsigned shard;           /* 0: <name>.db, k: <name>~k.db */
    unsigned nshards;         /* shards of the index, read from shard 0 */
    sqlite3 *db;
    pthread_mutex_t mu; /* guards db and every statement */
    sqlite3_stmt *st[SL__IX_NSTMT];
    struct sl__index_reader rd; /* queries */
    int64_t pruned_ms;          /* last tombstone pruning (sl_mono_ms) */
    _Atomic int64_t merge_due;  /* merge from then on (sl_mono_ms), 0: no */
    atomic_int writers;         /* writers waiting for mu */
    struct libdeflate_compressor *pack; /* the writer's (textpack.c) */
    struct sl__index *next;             /* list of the set */
};

/**
 * Find (or open) shard @p shard of index @p name and lock its mutex.  With
 * @p create the index is created when missing; without it a missing index
 * is SL_ENOENT (a missing shard file of an existing index is created
 * empty).  With @p try, a shard locked by another thread is not waited
 * for: 1 and *out NULL.  Release with sl__index_release.
 */
int sl__index_acquire(struct sl_index_set *set,
                      const char *name,
                      unsigned shard,
                      int create,
                      int try,
                      struct sl__index **out,
                      struct sl_err *err);
/**
 * Find shard @p shard of the existing index @p name and lock its reader
 * (opened on first use), in a read transaction: the statements of
 * ix->rd see one committed state of the shard, whatever its writer does
 * meanwhile.  Errors as sl__index_acquire without @p create.  Release
 * with sl__index_release_read.
 */
int sl__index_acquire_read(struct sl_index_set *set,
                           const char *name,
                           unsigned shard,
                           struct sl__index **out,
                           struct sl_err *err);
/** Reset the read statements, end the read transaction, unlock. */
void sl__index_release_read(struct sl__index *ix);
/** sl__index_db_err for an error of @p ix's reader. */
int sl__index_rd_err(struct sl__index *ix,
                     int src,
                     const char *what,
                     struct sl_err *err);
/** Shards of index @p name into *n; errors as sl__index_acquire. */
int sl__index_nshards(struct sl_index_set *set,
                      const char *name,
                      int create,
                      unsigned *n,
                      struct sl_err *err);
/** The shard of record id @p id among @p n (FNV-1a of the bytes). */
unsigned sl__index_shard_of(const char *id, unsigned n);
/** Reset the statements used and unlock @p ix. */
void sl__index_release(struct sl__index *ix);
/** Map a SQLite result code of @p ix to an SL_E* code with its message. */
int sl__index_db_err(struct sl__index *ix,
                     int src,
                     const char *what,
                     struct sl_err *err);
/** Apply @p ops (all of @p ix's shard) in one transaction; @p ix held. */
int sl__index_apply_locked(struct sl__index *ix,
                           struct sl_index_op *ops,
                           size_t n,
                           struct sl_err *err);
/**
 * Run source statement @p which (SL__IX_SRC_*) of @p ix's writer for
 * @p id and, unless NULL, @p source; *row (unless NULL) says whether it
 * gave a row.  Leaves the statement reset.
 */
int sl__index_src_step(struct sl__index *ix,
                       int which,
                       const char *id,
                       const char *source,
                       int *row,
                       struct sl_err *err);
/*
 * The columns of `documents` that come from document fields (schema.c):
 * column i is parameter i + 2 of SL__IX_UPSERT, and the first SL__IX_NFTS
 * (the FTS-indexed ones) also of SL__IX_FTS_ADD.
 */
struct sl__index_field {
    int kind;            /* what the column accepts (schema.c) */
    const char *keys[3]; /* fields it comes from: the first present wins */
    int lenient;         /* another type fills no column, refuses nothing */
};
#define SL__IX_NFIELDS 12
#define SL__IX_NFTS    4  /* title, text, path, author */
#define SL__IX_F_URL   11 /* the url column (schema 8) */
extern const struct sl__index_field sl__index_fields[SL__IX_NFIELDS];
/**
 * Create the schema of @p ix's database or migrate an older one; an index
 * of a newer schema is SL_ECORRUPT.  *fresh says whether the database was
 * new.
 */
int sl__index_schema(struct sl__index *ix, int *fresh, struct sl_err *err);
/** Check the fields of @p doc for their columns: 0 or SL_EINVAL naming
 * the field. */
int sl__index_check_fields(const json_t *doc, struct sl_err *err);
/** Bind column @p i of @p doc as parameter i + 2 of @p st; SL_EINVAL as
 * sl__index_check_fields. */
int sl__index_bind_field(sqlite3_stmt *st,
                         const json_t *doc,
                         size_t i,
                         struct sl_err *err);
/** Directory of the set (borrowed). */
const char *sl__index_dir(const struct sl_index_set *set);
/* A name sl_index_drop is dropping (drop.c); list of the set. */
struct sl__index_dropping {
    char name[SL_NAME_MAX + 1];
    struct sl__index_dropping *next;
};

/*
 * The set: the open shards of every index (opened on first use, closed by
 * sl_index_close or when sl_index_drop drops their index).  A shard found
 * by a call is counted in its users until the call releases it, so a drop
 * frees no shard a call may still touch.
 */
struct sl_index_set {
    char *dir;
    unsigned shards;        /* for new indexes */
    pthread_mutex_t mu;     /* guards head, every users, dropping */
    pthread_cond_t cv;      /* a drop ended, or a shard's users fell to 0 */
    struct sl__index *head; /* open shards */
    struct sl__index_dropping *dropping; /* names being dropped */
    /* merging when idle (merge.c); set before other threads use the set */
    unsigned idle_ms; /* quiet time before a shard merges, 0: never */
    int merging;      /* the merger thread runs */
    pthread_t merger;
    pthread_mutex_t merge_mu; /* leaf lock: merge_kick */
    pthread_cond_t merge_cv;
    int merge_kick;
    atomic_int merge_stop;
};

/** Is index @p name being dropped?  set->mu held. */
int sl__index_dropping(const struct sl_index_set *set, const char *name);
/** The open shard @p shard of index @p name, or NULL.  set->mu held. */
struct sl__index *sl__index_find_open(const struct sl_index_set *set,
                                      const char *name,
                                      unsigned shard);
/** The caller is done with @p ix (a user counted by find_shard). */
void sl__index_unref(struct sl__index *ix);
/** @p ix was opened or written: merge its segments once it is idle. */
void sl__index_merge_due(struct sl__index *ix);
/** Stop and join the merger thread (sl_index_close). */
void sl__index_merger_stop(struct sl_index_set *set);
/** Close the connections of @p ix and free it; nobody may use it. */
void sl__index_free(struct sl__index *ix);

#endif /* SL_INDEX_INT_H_INCLUDED */
