/*
 * Delta service: remembers, per source and record id, the delta hash of the
 * last pushed version of a record and the run that last visited it, so an
 * import run pushes only new and changed records and deletes the records
 * that disappeared (SMILA's DeltaService, docs/deltaservice.md).
 *
 * Model:
 * - N shards (default 16), each its own LMDB environment under the
 *   service directory.  A record's shard is sl_delta_shard_of() of its
 *   compound id when it has one, else of its record id, so a compound and
 *   its elements share a shard.  The shard count is fixed at the first
 *   open; re-sharding is not supported.
 * - Each run of a source takes the next run sequence
 *   (sl_delta_run_begin, persisted).  "Visited in this run" means
 *   visited == seq; starting a run costs O(1).
 * - All record operations take batches: one write transaction per shard
 *   per batch, keys sorted before writing.
 * - Records without a delta hash are never looked up nor stored.
 * - Entries of different sources never interact.
 * - Visited links (the web crawler's "crawl each URL once per run",
 *   SMILA's VisitedLinksService) live in the same shards, sharded by
 *   sl_delta_shard_of(url), with the same runs, durability and threading
 *   (sl_delta_visit and sl_delta_visited_*).
 *
 * Durability: a call that returned 0 has committed its writes; they
 * survive kill -9 (SL_DURABILITY_PROCESS) or power loss
 * (SL_DURABILITY_FSYNC, one sync per shard transaction).
 *
 * Threading: a struct sl_delta may be used from any number of threads at
 * once (except sl_delta_close).  Batches for different shards run in
 * parallel; writes to one shard serialise on LMDB's writer lock.  No LMDB
 * transaction is held while a callback runs, so callbacks may call the
 * service again.
 */
#ifndef SL_DELTASERVICE_H_INCLUDED
#define SL_DELTASERVICE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "core/sl.h"

#define SL_DELTA_DEFAULT_SHARDS   16u
#define SL_DELTA_MAX_SHARDS       256u
#define SL_DELTA_DEFAULT_MAP_SIZE ((uint64_t)1 << 30) /* per shard, virtual */
/* A source id (the dataSource parameter): 1 to 255 bytes of UTF-8, no
 * control character, '/' or backslash, not "." or "..". */
#define SL_DELTA_SOURCE_MAX 255u             /* bytes of a source id */
#define SL_DELTA_ID_MAX     SL_RECORD_ID_MAX /* record/compound id bytes */
#define SL_DELTA_HASH_MAX   1024u            /* bytes of a delta hash */
#define SL_DELTA_SCAN_BATCH 1000u            /* default obsolete batch */

struct sl_delta;

/** Result of a record in a batch (struct sl_delta_rec.result). */
enum sl_delta_state {
    SL_DELTA_NEW = 1,      /* no entry: push it */
    SL_DELTA_CHANGED = 2,  /* entry with another hash: push as update */
    SL_DELTA_UPTODATE = 3, /* same hash: marked visited, drop it */
    SL_DELTA_NOHASH = 4,   /* no hash: not looked up, not stored; push it */
    /* A negative SL_E* code: the service refused this record (empty or
     * too long id, too long hash); SMILA skips such records. */
};

/**
 * One record of a batch.  The strings are borrowed for the call only.
 * id and compound_id are the record's _recordid and _compoundRecordId,
 * hash its _deltaHash, is_compound its _isCompound.
 */
struct sl_delta_rec {
    const char *id;          /* required, non-empty */
    const char *compound_id; /* enclosing compound, or NULL */
    const char *hash;        /* NULL or "": never stored */
    int is_compound;         /* 1: a compound (archive) */
    int result;              /* out: enum sl_delta_state, 0 or SL_E* */
};

/** One obsolete entry, as given to an obsolete-scan callback. */
struct sl_delta_obsolete {
    const char *id;          /* borrowed, valid during the callback */
    const char *compound_id; /* borrowed, or NULL when not an element */
    int is_compound;         /* 1: the entry is a compound */
};

/** An obsolete (or gone) scan's callback: sends the deletes of the @p n
 * entries and returns 0, or stops the scan with another value. */
typedef int (*sl_delta_obsolete_cb)(void *ctx,
                                    const struct sl_delta_obsolete *entries,
                                    size_t n);

/**
 * @brief Is @p source a usable source id (see SL_DELTA_SOURCE_MAX)?
 * @return 0 or SL_EINVAL with the reason in @p err.
 */
int sl_delta_source_check(const char *source, struct sl_err *err);

/* ------------------------------------------------------------------------
 * Open and close
 * --------------------------------------------------------------------- */

/**
 * @brief Open (or create) the delta service in directory @p dir (created
 * if missing; the parent must exist).  Layout: dir/meta (shard count and
 * run sequences), dir/shard-00 .. dir/shard-NN.
 * @param[in] dir borrowed; copied.
 * @param[in] shards shard count; 0 means the stored count, or
 * SL_DELTA_DEFAULT_SHARDS for a new service.  At most
 * SL_DELTA_MAX_SHARDS.
 * @param[in] map_size LMDB map size per shard in bytes (virtual; the files
 * grow as used); 0 means SL_DELTA_DEFAULT_MAP_SIZE.  A larger value than
 * before grows existing shards.
 * @return 0; SL_ECONFLICT when @p shards differs from the stored count
 * (re-sharding is not supported); SL_EINVAL; SL_ECORRUPT; SL_EIO.  On
 * success *out is a new object, caller frees with sl_delta_close.
 */
int sl_delta_open(const char *dir,
                  unsigned shards,
                  enum sl_durability durability,
                  uint64_t map_size,
                  struct sl_delta **out,
                  struct sl_err *err);

/**
 * @brief Sync and close; NULL-safe.
 * @note No other call on @p d may run or follow.
 */
void sl_delta_close(struct sl_delta *d);

/** @brief Number of shards of @p d. */
unsigned sl_delta_shards(const struct sl_delta *d);

/** What one shard holds, as LMDB counts it (no scan). */
struct sl_delta_shard_stats {
    uint64_t entries;  /* records' entries, all sources */
    uint64_t visited;  /* visited links, all sources and runs */
    uint64_t map_used; /* bytes of the map in use (pages up to the last) */
    uint64_t map_size; /* the map's size (deltaservice.mapSizeMiB) */
};

/**
 * @brief The counts of shard @p shard (< sl_delta_shards(d)); thread-safe,
 * one read transaction.
 * @return 0, SL_EINVAL (no such shard) or SL_EIO.
 */
int sl_delta_shard_stats(struct sl_delta *d,
                         unsigned shard,
                         struct sl_delta_shard_stats *out,
                         struct sl_err *err);

/**
 * @brief Shard of a record: pass its compound id when it has one, else its
 * record id.  The function is fixed forever (entries are found by it):
 * zlib's crc32 (IEEE 802.3, initial value 0; computed by libdeflate) of
 * the id's bytes without the NUL, modulo the shard count.
 */
unsigned sl_delta_shard_of(const struct sl_delta *d, const char *id);

/** @brief As sl_delta_shard_of for a shard count @p shards (> 0). */
unsigned sl_delta_shard_for(unsigned shards, const char *id);

/* ------------------------------------------------------------------------
 * Runs
 * --------------------------------------------------------------------- */

/**
 * @brief Start a run of @p source: take the next run sequence (1, 2, ...)
 * and persist it.  O(1): no entry is touched.
 * @return 0, SL_EINVAL (bad source), SL_EIO or SL_ENOSPC.
 */
int sl_delta_run_begin(struct sl_delta *d,
                       const char *source,
                       uint64_t *seq,
                       struct sl_err *err);

/**
 * @brief The run sequence of job run @p run_id for @p source: the first
 * call of a run takes the next sequence (as sl_delta_run_begin), every
 * later call with the same run id answers the same one, also after a
 * restart.  Workers of one import run call this with the task's jobRunId.
 * @return 0, SL_EINVAL (bad source, empty or too long run id), SL_EIO.
 */
int sl_delta_run_for(struct sl_delta *d,
                     const char *source,
                     const char *run_id,
                     uint64_t *seq,
                     struct sl_err *err);

/**
 * @brief As sl_delta_run_for, and a run that takes a new sequence is
 * recorded with its time @p at_ms (> 0; 0: not recorded), for
 * sl_delta_run_before: the passes of a continuous job run each take one.
 * @return as sl_delta_run_for.
 */
int sl_delta_run_for_at(struct sl_delta *d,
                        const char *source,
                        const char *run_id,
                        int64_t at_ms,
                        uint64_t *seq,
                        struct sl_err *err);

/**
 * @brief The sequence of the newest run of @p source recorded at or before
 * @p at_ms (0: none); the records of the runs before it are dropped (it is
 * asked with a time that only grows: an expiry).
 * @return 0, SL_EINVAL (bad source), SL_EIO.
 */
int sl_delta_run_before(struct sl_delta *d,
                        const char *source,
                        int64_t at_ms,
                        uint64_t *seq,
                        struct sl_err *err);

/**
 * @brief The last sequence sl_delta_run_begin gave @p source (0: none).
 * @return 0, SL_EINVAL or SL_EIO.
 */
int sl_delta_run_current(struct sl_delta *d,
                         const char *source,
                         uint64_t *seq,
                         struct sl_err *err);

/* ------------------------------------------------------------------------
 * Record batches.  On an error return the caller treats the whole batch
 * as failed and may retry it: every operation is idempotent.  Shards
 * committed before the failure keep their changes.
 * --------------------------------------------------------------------- */

/**
 * @brief Delta check of @p n records in run @p seq: sets each result to
 * NEW, CHANGED, UPTODATE, NOHASH or an SL_E* code.  An UPTODATE record is
 * marked visited in the same transaction; an UPTODATE compound also marks
 * all its elements visited (nested compounds too).
 * @param[in,out] recs borrowed; only result is written.
 * @return 0, SL_EINVAL (bad source or seq 0), SL_ENOSPC (shard full: raise
 * deltaMapSize), SL_ECORRUPT, SL_EIO.
 */
int sl_delta_check(struct sl_delta *d,
                   const char *source,
                   uint64_t seq,
                   struct sl_delta_rec *recs,
                   size_t n,
                   struct sl_err *err);

/**
 * @brief After a successful push: store hash, visited = @p seq, the
 * compound flag and the link to the compound of @p n records.  Sets each
 * result to 0 (stored), SL_DELTA_NOHASH (not stored) or an SL_E* code.
 * @return as sl_delta_check.
 */
int sl_delta_mark_updated(struct sl_delta *d,
                          const char *source,
                          uint64_t seq,
                          struct sl_delta_rec *recs,
                          size_t n,
                          struct sl_err *err);

/**
 * @brief Whether @p rec (id, compound_id, hash) holds this hash and was
 * visited in run @p seq, i.e. was pushed in this run (or found up to date
 * in it): a retried push task skips it.  *pushed is 0 for a record
 * without hash.  *known (when not NULL) is 1 when the source has an entry
 * for the record at all: pushing it is an update, not a new document.
 * @return 0, SL_EINVAL, SL_ECORRUPT or SL_EIO.
 */
int sl_delta_was_pushed_in_run(struct sl_delta *d,
                               const char *source,
                               uint64_t seq,
                               const struct sl_delta_rec *rec,
                               int *pushed,
                               int *known,
                               struct sl_err *err);

/* ------------------------------------------------------------------------
 * Next checks (continuous crawls; recheck.c)
 *
 * A record may have a time of its next check and an interval, kept in
 * its shard (sl_delta_shard_of its id: records that are not elements of
 * a compound) with an index by time, so the records of a source due at a
 * time are found by one seek per shard and a read of each due one: a
 * source of ten million records with a hundred due costs a hundred
 * reads.  A check's outcome sets the next interval: a new record gets
 * the minimum, a changed one half its interval (at least the minimum),
 * an unchanged one twice its interval (at most the maximum).  The next
 * check of a record goes with its entry (delta-delete, clear, forget).
 * --------------------------------------------------------------------- */

enum sl_delta_seen {
    SL_DELTA_SEEN_NEW,      /* first seen: the minimum interval */
    SL_DELTA_SEEN_CHANGED,  /* changed: half the interval, >= min */
    SL_DELTA_SEEN_UNCHANGED /* unchanged: twice the interval, <= max */
};

/** One record's check for sl_delta_recheck_set. */
struct sl_delta_recheck {
    const char *id; /* record id (borrowed) */
    enum sl_delta_seen seen;
    uint64_t next_ms; /* out: its next check */
    int result;       /* out: 0 or SL_EINVAL (a bad id) */
};

/**
 * @brief Record the checks of @p n records of @p source made at @p now_ms
 * in run @p seq: each gets its next interval from its stored one (@p
 * min_ms to @p max_ms) and its next check now + interval.  A record
 * checked again in the same run (a retried task; @p seq not 0) starts
 * again from its interval before the run: one step per run at most.  One
 * write transaction per shard.
 * @return 0 (each item's result says whether it was set), SL_EINVAL (bad
 * source, or not 0 < min <= max), SL_ENOSPC, SL_EIO.
 */
int sl_delta_recheck_set(struct sl_delta *d,
                         const char *source,
                         uint64_t seq,
                         struct sl_delta_recheck *items,
                         size_t n,
                         uint64_t now_ms,
                         uint64_t min_ms,
                         uint64_t max_ms,
                         struct sl_err *err);

/**
 * @brief Call @p cb with the records of @p source whose next check is at
 * or before @p now_ms, at most @p max, each shard's in time order (the
 * shards one after the other).  Read-only: a record stays due until its
 * next check is set.  *found counts the calls.
 * @return 0, @p cb's non-zero value (which stops the scan), SL_EINVAL,
 * SL_EIO.
 */
int sl_delta_recheck_due(struct sl_delta *d,
                         const char *source,
                         uint64_t now_ms,
                         size_t max,
                         int (*cb)(void *ctx, const char *id, uint64_t due_ms),
                         void *ctx,
                         size_t *found,
                         struct sl_err *err);

/**
 * @brief The next check and interval of record @p id of @p source.
 * @return 0, SL_ENOENT (none), SL_EINVAL, SL_EIO.
 */
int sl_delta_recheck_get(struct sl_delta *d,
                         const char *source,
                         const char *id,
                         uint64_t *next_ms,
                         uint64_t *interval_ms,
                         struct sl_err *err);

/* ------------------------------------------------------------------------
 * Delta-delete and maintenance
 * --------------------------------------------------------------------- */

/**
 * @brief Stream the entries of @p source in @p shard not visited in run
 * @p seq (visited < seq) to @p cb in batches of at most @p batch entries
 * (0: SL_DELTA_SCAN_BATCH).  cb sends the deletes for its @p n entries
 * (borrowed, valid during the call) and returns 0; any other value stops
 * the scan, nothing of that batch is removed and the scan returns it.
 * After cb returns 0 the entries of that batch
 * that are still not visited are removed in one write transaction; an
 * entry visited meanwhile stays.  A crash between cb and the removal
 * leaves the entries in place, so the next scan reports them again.
 * @param[out] removed entries removed, or NULL.
 * @return 0, cb's non-zero value, SL_EINVAL (bad source, seq or shard),
 * SL_ECORRUPT, SL_EIO, SL_ENOSPC.
 * @note No transaction is open while cb runs.  Memory is bounded by the
 * batch size.
 */
int sl_delta_obsolete_scan(struct sl_delta *d,
                           const char *source,
                           uint64_t seq,
                           unsigned shard,
                           size_t batch,
                           sl_delta_obsolete_cb cb,
                           void *ctx,
                           uint64_t *removed,
                           struct sl_err *err);

/**
 * @brief As sl_delta_obsolete_scan, for the entries of @p id and of the
 * ids under it only (@p id followed by '/', or by "!/" for the entries
 * of an archive): a folder or file that is gone.  An entry visited in run
 * @p seq or later stays.
 * @return as sl_delta_obsolete_scan; SL_EINVAL for an empty or too long id.
 */
int sl_delta_gone_scan(struct sl_delta *d,
                       const char *source,
                       const char *id,
                       uint64_t seq,
                       unsigned shard,
                       sl_delta_obsolete_cb cb,
                       void *ctx,
                       uint64_t *removed,
                       struct sl_err *err);

/**
 * @brief Remove every entry of @p source (in bounded transactions).  The
 * run sequence of the source is kept: sequences never go backwards.
 * @return 0, SL_EINVAL, SL_EIO.
 */
int sl_delta_clear(struct sl_delta *d, const char *source, struct sl_err *err);

/**
 * @brief Forget @p source: remove every entry (bounded transactions), as
 * a purge of the source does once its documents are to leave the index.
 * The run sequence is kept.
 * @return 0, SL_EINVAL, SL_EIO.
 */
int sl_delta_forget(struct sl_delta *d, const char *source, struct sl_err *err);

/** @brief Remove every entry of every source. 0 or SL_EIO. */
int sl_delta_clear_all(struct sl_delta *d, struct sl_err *err);

/**
 * @brief Mark every entry of @p source (NULL: of every source) for
 * re-push: its hash is emptied, which no record's hash equals, so the next
 * sl_delta_check of the record answers CHANGED (and
 * sl_delta_was_pushed_in_run 0) and the record is pushed again.  Id,
 * flags, compound link and visited sequence are kept: an entry the next
 * run does not visit is obsolete for its delta-delete, as before.
 * Bounded write transactions; idempotent (a call that failed half-way is
 * completed by the next one).  Visited links are not touched.
 * @return 0, SL_EINVAL (bad source), SL_ENOSPC, SL_ECORRUPT, SL_EIO.
 */
int
sl_delta_invalidate(struct sl_delta *d, const char *source, struct sl_err *err);

/**
 * @brief Count the entries of @p source that sl_delta_invalidate marked
 * and no push has stored again since (a cursor pass per shard).
 * @return 0, SL_EINVAL, SL_ECORRUPT or SL_EIO.
 */
int sl_delta_invalidated_count(struct sl_delta *d,
                               const char *source,
                               uint64_t *total,
                               struct sl_err *err);

/**
 * @brief Count the entries of @p source (exact; a cursor pass per shard).
 * @param[out] total sum, or NULL.
 * @param[out] per_shard array of sl_delta_shards(d) counts, or NULL.
 * @return 0, SL_EINVAL or SL_EIO.
 */
int sl_delta_count(struct sl_delta *d,
                   const char *source,
                   uint64_t *total,
                   uint64_t *per_shard,
                   struct sl_err *err);

/** The entry of one record, as sl_delta_entry_get reads it. */
struct sl_delta_entry {
    char hash[SL_DELTA_HASH_MAX + 1]; /* _deltaHash pushed last */
    uint64_t visited;                 /* run sequence that last saw it */
    int is_compound;
    char *compound_id; /* enclosing compound (new string), or NULL */
};

/**
 * @brief The entry of record @p id of @p source (an element's is in its
 * compound's shard, so every shard is asked).  Free e->compound_id with
 * sl_free.
 * @return 0, SL_ENOENT, SL_EINVAL (bad source or id), SL_ECORRUPT, SL_EIO.
 */
int sl_delta_entry_get(struct sl_delta *d,
                       const char *source,
                       const char *id,
                       struct sl_delta_entry *e,
                       struct sl_err *err);

/**
 * @brief Call @p cb once for each source that has entries, in byte order.
 * The source string is borrowed for the call; a non-zero return stops the
 * listing.
 * @return 0, cb's non-zero value or SL_EIO.
 */
int sl_delta_sources(struct sl_delta *d,
                     int (*cb)(void *ctx, const char *source),
                     void *ctx,
                     struct sl_err *err);

/**
 * @brief Note that a purge of @p source is under way (@p pending 1), or
 * that it ended (0).  The mark survives a crash: at the next start the
 * purge is carried out again (sl_delta_purges_pending).  Entries are left
 * alone; the caller forgets them (sl_delta_forget).
 * @return 0, SL_EINVAL (bad source), SL_ENOSPC, SL_EIO.
 */
int sl_delta_purge_mark(struct sl_delta *d,
                        const char *source,
                        int pending,
                        struct sl_err *err);

/**
 * @brief Is a purge of @p source marked (under way, or interrupted and
 * not yet carried out again)?  1 or 0 (also for a bad source or a read
 * error, which are logged).
 */
int sl_delta_purge_is_marked(struct sl_delta *d, const char *source);

/**
 * @brief Call @p cb once for each source with a purge under way, in byte
 * order; @p cb may mark and unmark purges.  The source string is borrowed
 * for the call; a non-zero return stops the listing.
 * @return 0, cb's non-zero value or SL_EIO.
 */
int sl_delta_purges_pending(struct sl_delta *d,
                            int (*cb)(void *ctx, const char *source),
                            void *ctx,
                            struct sl_err *err);

/* ------------------------------------------------------------------------
 * Visited links (SMILA's VisitedLinksService): which URLs a run of a source has
 * already visited, so a crawler follows each link once per run however often it
 * finds it.  A link is marked with the run sequence that visited it
 * (source and sequence as for the delta entries, from sl_delta_run_for);
 * a later run visits every link first again.  Separate from the delta
 * entries: sl_delta_clear* and sl_delta_count leave them alone.
 * --------------------------------------------------------------------- */

/** One link of a visit batch. */
struct sl_delta_link {
    const char *url; /* required, 1 to SL_DELTA_ID_MAX bytes; borrowed */
    int first;       /* out: 1 when this call is the first to visit url in
                        the run (follow it), else 0 */
    int result;      /* out: 0, or the SL_E* code of a refused or unwritten
                        link (first is then 0) */
};

/**
 * @brief Test and set of @p n links in run @p seq of @p source: each link
 * not yet visited in this run (nor in a later one) is marked visited and
 * gets first = 1; the others get first = 0.  Atomic per link: a URL given
 * twice in one batch, or by concurrent callers on one struct sl_delta, is
 * first exactly once per run.  One write transaction per shard, keys
 * sorted; a call that returned 0 has committed.
 * @param[in,out] links borrowed; first and result are written.  A link with
 * an empty url gets result SL_EINVAL, one longer than SL_DELTA_ID_MAX
 * SL_ETOOLARGE; the batch goes on.
 * @return 0, SL_EINVAL (bad source or seq 0), SL_ENOSPC (shard full: raise
 * deltaMapSize), SL_ECORRUPT, SL_EIO.  On an error the shards before the
 * failing one are committed and their links keep their answer (result
 * 0); the links of the other shards have the error as result, first 0,
 * and nothing of them was written: retry those.
 * @param[in] owner who visits (0: nobody in particular).  A link this run
 * marked for the same non-zero owner is first again: a retried task (a
 * web crawler task after a crash, the owner being derived from its input,
 * which a retry keeps) writes or fetches the links its lost attempt had
 * marked.
 * @note With owner 0 this is not idempotent: a retried call answers
 * first = 0 for links an earlier call already marked.
 */
int sl_delta_visit(struct sl_delta *d,
                   const char *source,
                   uint64_t seq,
                   uint64_t owner,
                   struct sl_delta_link *links,
                   size_t n,
                   struct sl_err *err);

/**
 * @brief Read-only test of @p n links in run @p seq of @p source: first =
 * 1 for each link a visit by @p owner would find first (neither this run,
 * except for the same non-zero @p owner, nor a later run has visited it),
 * else 0.  Nothing is written: a crawler drops the links found on a page
 * that a visit would refuse anyway (sl_delta_visit stays the deciding
 * test-and-set).  One read transaction per shard.
 * @param[in] owner as for sl_delta_visit; 0: any visit in this run counts.
 * @param[in,out] links borrowed; first and result are written as by
 * sl_delta_visit.
 * @return 0, SL_EINVAL (bad source or seq 0), SL_ECORRUPT, SL_EIO; on an
 * error the links from the failing shard on have it as result, first 0.
 */
int sl_delta_visited_test(struct sl_delta *d,
                          const char *source,
                          uint64_t seq,
                          uint64_t owner,
                          struct sl_delta_link *links,
                          size_t n,
                          struct sl_err *err);

/**
 * @brief Count the visited links of @p source (any run; a cursor pass per
 * shard), as sl_delta_count.
 * @param[out] total sum, or NULL.
 * @param[out] per_shard array of sl_delta_shards(d) counts, or NULL.
 * @return 0, SL_EINVAL or SL_EIO.
 */
int sl_delta_visited_count(struct sl_delta *d,
                           const char *source,
                           uint64_t *total,
                           uint64_t *per_shard,
                           struct sl_err *err);

/**
 * @brief Call @p cb once for each source that has visited links, in byte
 * order, as sl_delta_sources.
 * @return 0, cb's non-zero value or SL_EIO.
 */
int sl_delta_visited_sources(struct sl_delta *d,
                             int (*cb)(void *ctx, const char *source),
                             void *ctx,
                             struct sl_err *err);

/**
 * @brief Remove the visited links of @p source (bounded transactions), or
 * of every source when @p source is NULL (mdb_drop per shard).  Run
 * sequences and delta entries are kept.
 * @return 0, SL_EINVAL (bad source), SL_EIO.
 */
int sl_delta_visited_clear(struct sl_delta *d,
                           const char *source,
                           struct sl_err *err);

/* ------------------------------------------------------------------------
 * deltaImportStrategy (as in SMILA).  Workers ask these functions and
 * never hard-code the table.
 * --------------------------------------------------------------------- */
enum sl_delta_strategy {
    SL_DELTA_STRATEGY_DISABLED = 0, /* no reads, no writes, no delete */
    SL_DELTA_STRATEGY_INITIAL = 1,  /* writes only */
    SL_DELTA_STRATEGY_ADDITIVE = 2, /* checks and writes */
    SL_DELTA_STRATEGY_FULL = 3,     /* checks, writes, delta-delete */
};

/**
 * @brief Parse "disabled", "initial", "additive" or "full"; NULL gives the
 * default SL_DELTA_STRATEGY_FULL.
 * @return 0 or SL_EINVAL for anything else (message in @p err, field
 * "deltaImportStrategy").
 */
int sl_delta_strategy_parse(const char *s,
                            enum sl_delta_strategy *out,
                            struct sl_err *err);
/** @brief The parameter value of @p s ("full"); never NULL. */
const char *sl_delta_strategy_name(enum sl_delta_strategy s);
/** @brief 1 when the deltaChecker checks (additive, full). */
int sl_delta_strategy_reads(enum sl_delta_strategy s);
/** @brief 1 when the updatePusher marks updated (initial, additive, full). */
int sl_delta_strategy_writes(enum sl_delta_strategy s);
/** @brief 1 when the completion phase runs delta-delete (full). */
int sl_delta_strategy_deletes(enum sl_delta_strategy s);

#endif /* SL_DELTASERVICE_H_INCLUDED */
