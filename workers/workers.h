/*
 * Worker runtime: worker type tables, the task context that is a worker's
 * only way to reach the engine, the in-process pool and the external
 * (REST) runner of `sluice worker`.  See docs/workers.md.
 *
 * A worker is a `static const struct sl_worker_type` whose perform hook
 * gets a struct sl_task_ctx.  The same type runs in-process (the context
 * is backed by the jobmanager and the object store) or in another process
 * (backed by /smila/tasks/... and /smila/store/... over HTTP): the worker
 * code cannot tell the difference.  The runtime knows no concrete worker:
 * the types it runs and registers are handed to it as tables (the
 * built-in ones are builtin/'s, builtin/builtin.h).
 *
 * Threading: a pool owns its threads.  perform runs on one pool thread
 * with a context that belongs to that thread; only sl_task_is_canceled may
 * change its answer while perform runs (the pool's keep-alive thread sets
 * it).  sl_worker_pool_start/stop are called from one controlling thread.
 * Delivery is at least once: a task may be performed again after a crash
 * or a lost lease, so workers must be idempotent.
 */
#ifndef SL_WORKERS_H_INCLUDED
#define SL_WORKERS_H_INCLUDED

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sl.h"
#include "jobmanager/jobmanager.h"
#include "objectstore/objectstore.h"

struct sl_delta;
struct sl_index_set;
struct sl_bb;

/** Version of struct sl_worker_type; bump when the table changes. */
#define SL_WORKER_ABI_VERSION 2u

struct sl_task_ctx;
struct sl_worker_pool;
struct sl_worker_services;

/** Results of perform. */
enum sl_worker_result {
    SL_WORKER_OK = 0,          /* done; outputs are committed */
    SL_WORKER_RECOVERABLE = 1, /* retry later (counts a retry) */
    SL_WORKER_FATAL = 2,       /* fails the workflow run, no retry */
    SL_WORKER_POSTPONE = 3,    /* requeue without counting a retry */
};

/**
 * A worker type: a static const table, one per worker.  Optional hooks
 * may be NULL.
 */
struct sl_worker_type {
    unsigned abi_version;    /* SL_WORKER_ABI_VERSION */
    const char *name;        /* worker name, as in the description */
    const char *description; /* SMILA workers.json JSON text of the worker */
    /* Do one task.  Returns an enum sl_worker_result value. */
    int (*perform)(struct sl_task_ctx *ctx);
    /* requestsCompletion workers: completion tasks from the task
     * parameters (borrowed); NULL means 1. */
    unsigned (*partitions)(const json_t *params);
    /* Called once by every pool that runs the type, with the pool's
     * services (borrowed for the call; an all-NULL struct in a REST
     * pool), on the thread that starts the pool, before its threads
     * start: what the type keeps of them is its own.  0, or an SL_E* code
     * (err says why) that fails the pool's start.  NULL: nothing to do. */
    int (*start)(const struct sl_worker_services *services, struct sl_err *err);
};

/* ------------------------------------------------------------------------
 * Registry.
 * --------------------------------------------------------------------- */

/**
 * @brief Worker type @p name of @p types (a table the caller owns, such as
 * builtin/'s sl_builtin_workers), or NULL; borrowed.
 */
const struct sl_worker_type *sl_worker_find(
    const struct sl_worker_type *const *types, size_t n, const char *name);
/**
 * @brief Register the descriptions of @p types with the jobmanager (before
 * sl_jm_start).
 * @return 0, SL_EINVALDEF (bad ABI version or description; err names the
 * worker), SL_EEXIST, SL_EBADSTATE.
 */
int sl_worker_register_all(struct sl_jm *jm,
                           const struct sl_worker_type *const *types,
                           size_t n,
                           struct sl_err *err);

/**
 * @brief The definition check of the workers, for sl_jm_set_def_check
 * (@p arg unused): the parameters a job gives a worker (@p params, the
 * resolved ones of one action) are read with the workers' own parsers,
 * as the worker's description (@p desc) declares them: "integer" values
 * must parse as unsigned integers ("10k" does not; sl_worker_json_u64)
 * within "minimum" and "maximum", "regex" values must compile
 * (sl_worker_regex_compile), arrays have at most "maxItems" elements.
 * Also fine for external workers described in workers.json.
 * builtin/'s sl_builtin_def_check adds the rules of the built-in workers.
 * @return 0, or SL_EINVALDEF with the field "parameters.<path>".
 * @note Called under the jobmanager's definitions lock: calls nothing of
 * the jobmanager.
 */
int sl_worker_def_check(void *arg,
                        const char *job,
                        const char *worker,
                        const json_t *desc,
                        const json_t *params,
                        struct sl_err *err);
/* ------------------------------------------------------------------------
 * Parameter values, read as the definition check reads them.
 * --------------------------------------------------------------------- */

/**
 * @brief A count from @p v: absent or JSON null: @p def; a JSON integer
 * >= 0 or a string of decimal digits (sl_parse_u64): its value.  What
 * sl_worker_def_check accepts for an "integer" declaration.
 * @return 0 or SL_EINVAL.
 */
int sl_worker_json_u64(const json_t *v, uint64_t def, uint64_t *out);
/**
 * @brief Compile @p pattern as a "regex" parameter is compiled (POSIX
 * extended, no sub-matches), for a worker's filters and for
 * sl_worker_def_check.
 * @return regcomp's result: 0 (free @p re with regfree) or a REG_* code
 * for regerror.
 */
int sl_worker_regex_compile(regex_t *re, const char *pattern);

/* ------------------------------------------------------------------------
 * Task context: what perform may use.  Every pointer it returns is
 * borrowed and valid until perform returns unless a note says otherwise.
 * --------------------------------------------------------------------- */

/** @brief The whole task JSON (docs/jobmanager.md, the task JSON); borrowed. */
const json_t *sl_task_json(const struct sl_task_ctx *ctx);
/** @brief The task's worker name; borrowed. */
const char *sl_task_worker(const struct sl_task_ctx *ctx);
/** @brief Resolved parameter @p name or NULL; borrowed. */
const json_t *sl_task_param(const struct sl_task_ctx *ctx, const char *name);
/** @brief Parameter @p name if it is a string, else NULL; borrowed. */
const char *sl_task_param_str(const struct sl_task_ctx *ctx, const char *name);
/**
 * @brief Parameter @p name as an unsigned number (a JSON integer or a
 * decimal string); @p def when it is not set.
 * @return 0 or SL_EINVAL (set but not a number).
 */
int sl_task_param_u64(const struct sl_task_ctx *ctx,
                      const char *name,
                      uint64_t def,
                      uint64_t *out);
/**
 * @brief The attribute name for standard file property @p name
 * (`filePath`, `fileFolder`, `fileName`, `fileExtension`, `fileSize`,
 * `fileLastModified`, `fileContent`) under the task's `mapping` parameter
 * (SMILA's mapping): `mapping[name]` when it is a non-empty string, else
 * @p name.  Borrowed.
 */
const char *sl_task_mapped(const struct sl_task_ctx *ctx, const char *name);
/**
 * @brief Is this a completion task (requestsCompletion workers, COMPLETING
 * phase)?  Fills @p partition and @p partitions (may be NULL).
 * @return 1 or 0.
 */
int sl_task_completion(const struct sl_task_ctx *ctx,
                       unsigned *partition,
                       unsigned *partitions);

/** @brief Number of input bulks of slot @p slot (0 if none). */
size_t sl_task_input_count(const struct sl_task_ctx *ctx, const char *slot);
/**
 * @brief Open input bulk @p i of @p slot for streaming.
 * @param[out] r borrowed, valid until sl_task_input_close or the end of
 * perform.  Memory is bounded by one record, not by the bulk.
 * @return 0, SL_ENOENT (no such slot/bulk or object), SL_ECORRUPT,
 * SL_EUPSTREAM (remote), SL_EIO; details logged and kept as the message.
 */
int sl_task_input_open(struct sl_task_ctx *ctx,
                       const char *slot,
                       size_t i,
                       struct sl_bulk_reader **r);
/** @brief Close an input early (counts its records); NULL-safe. */
void sl_task_input_close(struct sl_task_ctx *ctx, struct sl_bulk_reader *r);

/**
 * @brief Call @p cb with the metadata (borrowed for the call) of every
 * record of every input bulk of @p slot, in order; attachments are read,
 * checked and skipped.  @p cb returns SL_WORKER_OK to go on; any other
 * result stops the walk and is returned.
 * @return SL_WORKER_OK, @p cb's result, SL_WORKER_RECOVERABLE (an input
 * cannot be opened, or the task was canceled) or SL_WORKER_FATAL (a corrupt
 * input bulk); the task message is set for the last two.
 */
int sl_task_input_each(struct sl_task_ctx *ctx,
                       const char *slot,
                       int (*cb)(void *arg, json_t *meta),
                       void *arg);
/**
 * @brief As sl_task_input_each, but @p cb gets the reader too, standing
 * before the record's first attachment: it may read attachments with
 * sl_bulk_reader_attachment_next / _read (and should call
 * sl_bulk_reader_skip_attachments before it trusts the record: that
 * verifies its checksum).  What it leaves unread is skipped after it
 * returns.  A reader error inside @p cb is @p cb's to report (task
 * message, SL_WORKER_FATAL).
 */
int sl_task_input_each_reader(struct sl_task_ctx *ctx,
                              const char *slot,
                              int (*cb)(void *arg,
                                        json_t *meta,
                                        struct sl_bulk_reader *r),
                              void *arg);
/**
 * @brief As sl_task_input_each_reader, but the record's metadata are not
 * decoded: @p cb gets the reader only, for a worker that passes most
 * records on unchanged (sl_bulk_copy_record) and decodes only the others
 * (sl_bulk_reader_meta).
 */
int sl_task_input_each_raw(struct sl_task_ctx *ctx,
                           const char *slot,
                           int (*cb)(void *arg, struct sl_bulk_reader *r),
                           void *arg);

/**
 * @brief Writer of the current output bulk of @p slot, created on first use
 * for the task's pre-assigned object id.
 * @param[out] w borrowed, valid until sl_task_output_next or
 * sl_task_output_copy_input on the slot, or the end of perform.  Do not
 * finish or free it.
 * @return 0, SL_ENOENT (the slot has no output in this task: not
 * connected), SL_EIO etc.
 * @note Outputs are committed only when perform returns SL_WORKER_OK (for
 * autoCommit workers: always); a bulk with no record is never committed.
 */
int sl_task_output_writer(struct sl_task_ctx *ctx,
                          const char *slot,
                          struct sl_bulk_writer **w);
/**
 * @brief Let input bulk @p in (open in this task, read to its verified
 * end: the worker checked every record and passes all of them on
 * unchanged) be the next output bulk of @p slot, shared instead of
 * written again where the backend can (the object store's hard link).
 * The bulk is committed with the other outputs (an empty one never is).
 * A single (not multiple) slot takes no more records after it; a writer
 * of the slot's (empty) current bulk is no longer valid.
 * @param[in] in borrowed: the caller still closes it.
 * @return 0; 1 when the worker must write the records itself (the slot's
 * current bulk has records already, a single slot was written before, or
 * the backend cannot share: REST workers); SL_ENOENT (slot not connected)
 * or SL_EINVAL (@p in not open or not at its end) with the task message
 * set; or an error of the store.
 */
int sl_task_output_copy_input(struct sl_task_ctx *ctx,
                              const char *slot,
                              struct sl_bulk_reader *in);
/** @brief 1 when output @p slot is connected in this task (it has an
 * output to write), else 0.  Writes nothing. */
int sl_task_output_connected(struct sl_task_ctx *ctx, const char *slot);
/**
 * @brief For a "multiple" slot (its id ends in "/0"): close the current
 * bulk and continue in "<prefix>/1", "/2", ...  A no-op while the current
 * bulk is empty.
 * @return 0, SL_EINVAL (not a multiple slot), SL_ENOENT, SL_EIO.
 */
int sl_task_output_next(struct sl_task_ctx *ctx, const char *slot);

/** @brief Add @p v to counter @p name of this task. */
void sl_task_counter_add(struct sl_task_ctx *ctx, const char *name, double v);
/**
 * @brief Report what happened to document @p id, for the run's document
 * history (docs/jobmanager.md, "Document history"): its @p state, its
 * @p source (NULL: the job's dataSource), a short @p reason that names the
 * cause or the rule ("vanished", "unreadable", "filePatterns.exclude",
 * "http.404"; NULL for new and changed documents) and a @p message (NULL
 * for none).  Text is copied, invalid UTF-8 escaped, long text cut.  The
 * reports go with the task's finish and are recorded if its outputs are
 * committed; past SL_JM_DOCS_PER_FINISH in one task they are counted
 * (counter documents.notRecorded), not kept.
 */
void sl_task_doc(struct sl_task_ctx *ctx,
                 enum sl_jm_doc_state state,
                 const char *source,
                 const char *id,
                 const char *reason,
                 const char *message);
/**
 * @brief 1 when the task is no longer ours (canceled, lease lost): stop
 * soon, the result will be ignored.  Thread-safe.
 */
int sl_task_is_canceled(const struct sl_task_ctx *ctx);
/** @brief Begin event @p name: 1 if it began, 0 if already pending, <0. */
int sl_task_event_begin(struct sl_task_ctx *ctx, const char *name);
/** @brief Complete event @p name: 0 or an SL_E* code. */
int sl_task_event_complete(struct sl_task_ctx *ctx, const char *name);
/**
 * @brief Ask to be retried later, after event @p event completes (NULL:
 * just later).  Returns SL_WORKER_POSTPONE, for `return
 * sl_task_retry_later(ctx, "x");`.
 */
int sl_task_retry_later(struct sl_task_ctx *ctx, const char *event);
/**
 * In-process services some workers need (of the built-in ones, the
 * deltaChecker and the updatePusher: the delta service and the
 * bulkbuilder; indexWriter: the index; textExtractor: the converter
 * configuration).  The runtime uses none of them: it hands them to the
 * types' start hooks and, through sl_task_services, to perform.  Every
 * member is borrowed and may be NULL; a worker that needs a missing one
 * fails its task with a message saying so (REST workers have none of
 * them).
 */
struct sl_worker_services {
    struct sl_delta *delta;     /* delta service */
    struct sl_bb *bulkbuilder;  /* push target of jobToPushTo */
    struct sl_index_set *index; /* embedded index */
    const json_t *converters;   /* textExtractor converters (config) */
};

/** @brief The services of the pool that runs this task; never NULL (an
 * all-NULL struct for REST workers); borrowed. */
const struct sl_worker_services *
sl_task_services(const struct sl_task_ctx *ctx);

/**
 * @brief Note the SL_E* code behind a failure the task reports, for codes
 * the runtime does not see itself (its output writers' and commits' it
 * notes on its own): the index, the delta service, the bulkbuilder.
 * SL_ENOSPC (a full disk, SQLITE_FULL, a full delta shard) makes a failed
 * task (RECOVERABLE or FATAL) a temporary one: the result is
 * RECOVERABLE_ERROR with "errorCode": "NO_SPACE", which the jobmanager
 * gives back after a pause without counting a retry (docs/operations.md,
 * "A full disk").  Other codes are ignored.
 */
void sl_task_note_error(struct sl_task_ctx *ctx, int code);
/** @brief Message for a non-OK result (copied). */
void sl_task_set_message(struct sl_task_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/**
 * @brief The task succeeds but could not read part of its input that still
 * exists (a directory it may not list, a file it may not open): the run's
 * view of its source is partial, so the run deletes nothing at its end
 * (no completion phase; the run data says why).  Something that is gone
 * is not incomplete: its document is to be deleted.  The first reason is
 * kept (copied).
 */
void sl_task_set_incomplete(struct sl_task_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------------
 * Pools.
 * --------------------------------------------------------------------- */

/**
 * @brief Start an in-process pool: @p threads_per_worker threads per type
 * take tasks with sl_jm_task_take, plus one keep-alive thread.
 * @param[in] jm, store borrowed; must outlive the pool.
 * @param[in] services copied; what it points to is borrowed and must
 *   outlive the pool.  NULL: none.
 * @param[in] types the array is copied; the types it points to must
 *   outlive the pool.
 * @param[in] nice workers.nice: "type=n,type=n" (n 0-19), the niceness of
 *   those types' threads (docs/configuration.md); NULL or "": none.
 *   Borrowed for the call.
 * The start hook of each type (struct sl_worker_type) is called with the
 * services before any thread starts.
 * @return 0, SL_EINVALDEF (bad description), SL_EINVAL (bad @p nice,
 * logged) or the code of a failed start hook (logged).  *out is a new
 * object, stop and free it with sl_worker_pool_stop.
 */
int sl_worker_pool_start(struct sl_jm *jm,
                         struct sl_obj *store,
                         const struct sl_worker_services *services,
                         const struct sl_worker_type *const *types,
                         size_t n,
                         unsigned threads_per_worker,
                         const char *nice,
                         struct sl_worker_pool **out);

/** Settings of a remote pool; strings are copied. */
struct sl_worker_remote_config {
    const char *server; /* base URL, "http://127.0.0.1:8080" */
    const char *token;  /* bearer token or NULL */
    const char *host;   /* reported to the server or NULL (hostname) */
    /* the object store the server uses (shared storage such as S3),
     * borrowed, outliving the pool: inputs and outputs are read and
     * written there directly; NULL: through the server's store API */
    struct sl_obj *store;
    /* textExtractor converters (the configuration's), borrowed, or NULL:
     * given to the worker type as its services' converters */
    const json_t *converters;
};

/**
 * @brief Start a pool that takes tasks of @p type from a server over REST
 * (`sluice worker`); its start hook gets an all-NULL services struct.
 * Call curl_global_init before.
 * @return 0, SL_EINVAL (bad settings), SL_EINVALDEF, a failed start hook's
 * code.  *out as above.
 */
int sl_worker_remote_start(const struct sl_worker_remote_config *cfg,
                           const struct sl_worker_type *type,
                           unsigned threads,
                           struct sl_worker_pool **out);
/**
 * @brief 0 while the pool works; an SL_E* code once it gave up for good
 * (the server does not know the worker: SL_ENOENT).  Thread-safe.
 */
int sl_worker_pool_failed(struct sl_worker_pool *p);
/**
 * @brief Stop taking tasks, let running performs finish and report, join
 * every thread and free @p p.  NULL-safe.
 */
void sl_worker_pool_stop(struct sl_worker_pool *p);

#endif /* SL_WORKERS_H_INCLUDED */
