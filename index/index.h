/*
 * Embedded full-text index (docs/index.md): SQLite FTS5 databases under
 * the index directory, per index name N shards (<dataDir>/index/<name>.db
 * and <name>~1.db ... <name>~(N-1).db; a document lives in the shard its
 * _recordid hashes to).  N is fixed when the index is created.
 *
 * Model:
 * - A document is a JSON object with a non-empty string "_recordid".  Its
 *   columns come from well-known fields (title, text, path, author, mime
 *   type, size, modification date, source, compound id, creation date,
 *   page count); the whole object is kept and returned by sl_index_get.
 * - Writes are idempotent: an upsert of an existing id replaces it (or
 *   does nothing when the document is unchanged), a delete of an absent id
 *   succeeds.  sl_index_apply writes many: one transaction per shard.
 * - Reads merge the shards: counts add up, record pages merge in id order,
 *   search hits merge by score (each shard scores with its own term
 *   statistics, as sharded search engines do).
 * - Databases are opened lazily on first use.  Writes create an index;
 *   reads of an index that does not exist answer SL_ENOENT.
 *   sl_index_drop deletes an index: its connections are closed once no
 *   call uses them and its files removed; a later write creates it again.
 *
 * Durability: WAL mode with synchronous=NORMAL.  A write that returned 0
 * is committed and survives a crash of the process; after a power loss the
 * last committed transactions may be lost, the database stays consistent.
 *
 * Threading: a struct sl_index_set may be used from any number of threads
 * at once (except sl_index_close).  Each shard has one SQLite connection
 * guarded by a mutex: writers of one index work in parallel on different
 * shards.  No lock is held between calls.  A call counts itself as a user
 * of the shards it works on, so sl_index_drop closes no connection a
 * call may still touch.
 */
#ifndef SL_INDEX_H_INCLUDED
#define SL_INDEX_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "core/sl.h"

#define SL_INDEX_MAX_LIMIT      1000u            /* hits or records per call */
#define SL_INDEX_MAX_OFFSET     100000u          /* search offset */
#define SL_INDEX_MAX_FACET      20u              /* values per facet */
#define SL_INDEX_MAX_QUERY      1024u            /* bytes of an FTS query */
#define SL_INDEX_ID_MAX         SL_RECORD_ID_MAX /* bytes of a _recordid */
#define SL_INDEX_DEFAULT_SHARDS 2u               /* shards of a new index */
#define SL_INDEX_MAX_SHARDS     64u

struct sl_index_set;

#define SL_INDEX_TOMBSTONE_SECONDS 86400 /* how long deletes are remembered */
/* A delete record with this string field purges that source from the
 * index (sl_index_purge_source) instead of deleting its _recordid. */
#define SL_INDEX_PURGE_FIELD "_purgeSource"

/**
 * One write of a batch: an upsert of @p doc, or a delete of @p id.
 *
 * Sources (docs/index.md "Sources"): each document keeps the set of
 * sources that hold it.  An upsert adds its source (op->source, else the
 * document's "_source"); a delete from a source removes that source, and
 * the document only when no other source holds it; a delete without a
 * source removes the document outright.
 *
 * @p version orders writes that may arrive out of order (the bulkbuilder
 * stamps every record it accepts with a growing `_version`): a write is
 * skipped when the document, or a remembered delete of it (a tombstone,
 * kept SL_INDEX_TOMBSTONE_SECONDS), has a higher version.  0 means
 * unversioned: always applied.
 */
struct sl_index_op {
    const json_t *doc;  /* borrowed; upsert when not NULL */
    const char *id;     /* borrowed; delete when doc is NULL */
    uint64_t version;   /* 0: unversioned */
    int skipped;        /* out: 1 when a newer version won */
    const char *source; /* borrowed: the source the write comes from;
                           NULL: an upsert's _source, a delete of the
                           document whatever holds it */
    int kept;           /* out: a delete from @source left the document to
                           the other sources that hold it */
};

/**
 * @brief Open the index set rooted at @p dir (created when missing).
 * @return 0, SL_EIO or another errno code with details in @p err.  On
 * success *out is a new object, caller frees with sl_index_close.
 */
int
sl_index_open(const char *dir, struct sl_index_set **out, struct sl_err *err);
/**
 * @brief Shards of the indexes created from now on (existing ones keep
 * theirs): 1..SL_INDEX_MAX_SHARDS, default SL_INDEX_DEFAULT_SHARDS.
 * @return 0 or SL_EINVAL.
 */
int sl_index_set_shards(struct sl_index_set *set, unsigned shards);
/** @brief Close every database and free @p set; NULL-safe. */
void sl_index_close(struct sl_index_set *set);

/**
 * @brief Merge each shard's FTS segments once it has had no write for
 * @p idle_ms milliseconds (docs/index.md "Segments"), in a thread of the
 * set; 0 never merges (the default).  Call before other threads use the
 * set.  A shard is also due when it is opened.
 * @return 0 or SL_EINTERNAL (no thread).
 */
int sl_index_set_idle_merge(struct sl_index_set *set, unsigned idle_ms);

/**
 * @brief Insert or replace the document @p doc in @p index (created on
 * first write).
 * @param[in] doc borrowed; an object with a string "_recordid".
 * @return 0, SL_EBADNAME (index name), SL_EINVAL (no id, id too long,
 * wrong field type), SL_EIO / SL_ENOSPC / SL_ECORRUPT from SQLite.
 */
int sl_index_upsert(struct sl_index_set *set,
                    const char *index,
                    const json_t *doc,
                    struct sl_err *err);
/**
 * @brief Remove document @p id; 0 also when it (or the index) is absent.
 * @return 0, SL_EBADNAME, SL_EINVAL, SL_EIO.
 */
int sl_index_delete(struct sl_index_set *set,
                    const char *index,
                    const char *id,
                    struct sl_err *err);
/**
 * @brief Apply @p n writes in one transaction: all or none.
 * @param[in,out] ops borrowed array; each op's `skipped` is set.
 * @return as sl_index_upsert; err.field names the failing op ("ops[3]").
 */
int sl_index_apply(struct sl_index_set *set,
                   const char *index,
                   struct sl_index_op *ops,
                   size_t n,
                   struct sl_err *err);

/**
 * @brief Check one op as sl_index_apply does before writing anything: a
 * document that is an object with a usable _recordid (1 to
 * SL_INDEX_ID_MAX bytes, no NUL) and fields of the right types, or a
 * delete with a usable id.  Lets a writer skip one bad record instead of
 * failing the batch.  0 or SL_EINVAL with the field in @p err.
 */
int sl_index_op_check(const struct sl_index_op *op, struct sl_err *err);
/**
 * @brief Shards of index @p index into *n (the index is created when
 * missing and @p create is set).
 * @return 0, SL_ENOENT (no such index, without @p create) or an error.
 */
int sl_index_shards(struct sl_index_set *set,
                    const char *index,
                    int create,
                    unsigned *n,
                    struct sl_err *err);
/** @brief The shard of record id @p id in an index of @p n shards. */
unsigned sl_index_shard_of(const char *id, unsigned n);
/**
 * @brief As sl_index_apply for ops that all belong to shard @p shard (see
 * sl_index_shard_of; else SL_EINVAL): one transaction.  With @p try, a
 * shard another writer holds is not waited for: 1, nothing written.  Lets
 * a writer go on with another shard meanwhile.
 * @return 0, 1 (busy, with @p try) or an error as sl_index_apply.
 */
int sl_index_apply_shard(struct sl_index_set *set,
                         const char *index,
                         unsigned shard,
                         struct sl_index_op *ops,
                         size_t n,
                         int try,
                         struct sl_err *err);

/**
 * @brief Purge source @p source from @p index: a delete from that source
 * (version @p version, 0: unversioned) of every document it holds, in
 * bounded transactions; documents other sources hold stay.  Idempotent;
 * a missing index is no error.
 * @param[out] deleted, kept documents deleted and left to other sources
 * (either may be NULL).
 * @return 0, SL_EBADNAME, SL_EIO and the errors of sl_index_apply.
 */
int sl_index_purge_source(struct sl_index_set *set,
                          const char *index,
                          const char *source,
                          uint64_t version,
                          uint64_t *deleted,
                          uint64_t *kept,
                          struct sl_err *err);

/**
 * @brief Delete index @p index: every shard's database with its -wal,
 * -shm and -journal files.  Waits until no call uses its shards, then
 * closes their connections; meanwhile reads of it answer SL_ENOENT and
 * writes wait for the drop to end, then create it again, empty.
 * @return 0, SL_ENOENT (no such index), SL_EBADNAME, SL_EIO or another
 * errno code (a file that cannot be removed: the index is then still
 * there, possibly with fewer documents; dropping it again finishes).
 * @note The caller makes sure nothing writes to the index any more (no
 * running job): a write after the drop creates it again.
 */
int
sl_index_drop(struct sl_index_set *set, const char *index, struct sl_err *err);

/**
 * @brief Search, best first (bm25 of the words).
 * @param[in] query the query language (docs/index.md "Query language"),
 * 1..SL_INDEX_MAX_QUERY bytes.
 * @param[in] limit hits to return, capped at SL_INDEX_MAX_LIMIT.
 * @param[in] offset hits to skip, at most SL_INDEX_MAX_OFFSET.
 * @param[out] out new reference, caller decrefs:
 * {"total":n,"hits":[{"_recordid","score","title","snippet","path",
 * "author","mimeType","created","modified","pages"}]}; a higher score is
 * a better match.  The last five only when the document has them
 * (docs/index.md "Search hits").
 * @return 0, SL_ENOENT (no such index), SL_EINVAL (empty or too long
 * query, an unknown field or a value that cannot be read, with its
 * position), SL_EBADNAME, SL_EIO.
 */
int sl_index_search(struct sl_index_set *set,
                    const char *index,
                    const char *query,
                    unsigned limit,
                    unsigned offset,
                    json_t **out,
                    struct sl_err *err);
/** The order of search hits (docs/index.md "REST"). */
enum sl_index_sort {
    SL_INDEX_SORT_RELEVANCE, /* bm25 score */
    SL_INDEX_SORT_DATE,      /* the modified column */
    SL_INDEX_SORT_SIZE       /* the size column */
};

/** A search; strings borrowed for the call. */
struct sl_index_search_opts {
    const char *query;       /* the query language, 1..SL_INDEX_MAX_QUERY */
    unsigned limit;          /* capped at SL_INDEX_MAX_LIMIT */
    unsigned offset;         /* at most SL_INDEX_MAX_OFFSET */
    enum sl_index_sort sort; /* best, newest or largest first ... */
    int ascending;           /* ... or the other way round */
    const char *facets;      /* "source,type,ext,year" or some; NULL none */
    const char *cursor;      /* the "next" of the page before, or NULL */
};

/**
 * @brief sl_index_search with an order and facets: out also has
 * "facets": {"<name>": [{"value", "count"}, ...]} for each facet asked,
 * the SL_INDEX_MAX_FACET values with most hits, most first, and "next"
 * when hits follow the page: a cursor that starts the next page right
 * after this one's last hit (docs/index.md "Paging"; the offset counts
 * from there).  Ties of the order go by shard, then row.
 * @return as sl_index_search, and SL_EINVAL (field "facets") for an
 * unknown facet, (field "cursor") for a cursor not given for this query,
 * order and shard count.
 */
int sl_index_search_opts(struct sl_index_set *set,
                         const char *index,
                         const struct sl_index_search_opts *o,
                         json_t **out,
                         struct sl_err *err);
/**
 * @brief Number of documents in @p index.
 * @return 0, SL_ENOENT (no such index), SL_EBADNAME, SL_EIO.
 */
int sl_index_count(struct sl_index_set *set,
                   const char *index,
                   uint64_t *count,
                   struct sl_err *err);

/** What GET /smila/index/<name>/ reports of an index. */
struct sl_index_stats {
    uint64_t documents; /* as sl_index_count */
    uint64_t segments;  /* FTS segments, summed over the shards */
    int merging;        /* a merge is due or running on a shard (idle merge) */
};
/**
 * @brief The documents and FTS segments of @p index, read in one pass
 * over its shards, and whether a merge is due or running
 * (sl_index_set_idle_merge).
 * @return 0, SL_ENOENT, SL_EBADNAME or SL_EIO.
 */
int sl_index_stats(struct sl_index_set *set,
                   const char *index,
                   struct sl_index_stats *stats,
                   struct sl_err *err);
/**
 * @brief The indexes in name order with their document counts and bytes
 * on disk (the shards' database files and write-ahead logs).
 * @param[out] out new reference, caller decrefs:
 * [{"name":..,"documentCount":..,"sizeBytes":..},...].
 * @return 0 or SL_EIO.
 */
int sl_index_list(struct sl_index_set *set, json_t **out, struct sl_err *err);
/**
 * @brief Page through record ids in byte order, for comparing indexes.
 * @param[in] after exclusive lower bound, NULL or "" to start.
 * @param[in] limit records per page, 1..SL_INDEX_MAX_LIMIT (capped).
 * @param[out] out new reference, caller decrefs:
 * {"records":[{"_recordid","textSha256"}],"next":id or null}; pass "next"
 * as @p after for the following page.
 * @return 0, SL_ENOENT, SL_EBADNAME, SL_EIO.
 */
int sl_index_records(struct sl_index_set *set,
                     const char *index,
                     const char *after,
                     unsigned limit,
                     json_t **out,
                     struct sl_err *err);
/**
 * @brief The stored document @p id.
 * @param[out] doc new reference, caller decrefs.
 * @return 0, SL_ENOENT (no such index or document), SL_EBADNAME, SL_EIO,
 * SL_ECORRUPT.
 */
int sl_index_get(struct sl_index_set *set,
                 const char *index,
                 const char *id,
                 json_t **doc,
                 struct sl_err *err);

#endif /* SL_INDEX_H_INCLUDED */
