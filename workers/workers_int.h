/*
 * Private to workers/: the backend interface behind the task context (one
 * vtable, two backends: in-process in local.c, REST in remote.c), the
 * context life cycle used by the pool (pool.c) and the unit tests.
 */
#ifndef SL_WORKERS_INT_H_INCLUDED
#define SL_WORKERS_INT_H_INCLUDED

#include <regex.h>

#include "text/text.h"
#include "web/web.h"
#include "workers/workers.h"

/* Worker flags parsed from the description. */
#define SL__WK_AUTO_COMMIT 0x1 /* "autoCommit": outputs committed always */

/*
 * A backend.  A "conn" is per-thread state (a curl handle for the REST
 * backend); every call on one conn comes from one thread.  Codes: 0 or
 * SL_E*; details in err.
 */
struct sl__wk_ops {
    void *(*conn_new)(void *backend);
    void (*conn_free)(void *conn);
    /* 0 and a new task in *task, SL_ENOENT for none (err->field "worker"
     * when the worker is unknown), or a transport error. */
    int (*take)(void *conn,
                const char *worker,
                json_t **task,
                struct sl_err *err);
    /* 0 or SL_EGONE. */
    int (*keepalive)(void *conn,
                     const char *worker,
                     const char *task_id,
                     struct sl_err *err);
    /* 0, SL_EGONE, or a transport error. */
    int (*finish)(void *conn,
                  const char *worker,
                  const char *task_id,
                  const json_t *result,
                  struct sl_err *err);
    /* Open an object for reading; *handle is freed with input_close. */
    int (*input_open)(void *conn,
                      const char *store,
                      const char *id,
                      void **handle,
                      struct sl_source *src,
                      struct sl_err *err);
    void (*input_close)(void *handle);
    /* Open an object for writing; nothing is visible before commit. */
    int (*output_open)(void *conn,
                       const char *store,
                       const char *id,
                       void **handle,
                       struct sl_sink *sink,
                       struct sl_err *err);
    int (*output_commit)(void *conn, void *handle, struct sl_err *err);
    /* Free; an uncommitted output is discarded. */
    void (*output_free)(void *handle);
    /* Begin (1 began, 0 pending) or complete (0) an event. */
    int (*event)(void *conn,
                 const char *name,
                 int complete,
                 struct sl_err *err);
    /* Optional: wait up to @ms for new work of @worker after a take found
     * none; *seen is the work generation (see sl_jm_work_wait).  NULL: the
     * pool sleeps with a growing back-off instead. */
    void (*wait_work)(void *conn,
                      const char *worker,
                      uint64_t *seen,
                      unsigned ms);
    /* Optional: the output @handle is complete (no more writes): release
     * what writing needs (its descriptor) until output_commit or
     * output_free.  NULL: the output keeps them until then. */
    int (*output_seal)(void *conn, void *handle, struct sl_err *err);
    /* Optional: a sealed output (*handle as for output_open) whose data is
     * input @in_handle's object, all of it, shared where the store can.
     * NULL: the worker writes the records itself. */
    int (*output_open_copy)(void *conn,
                            const char *store,
                            const char *id,
                            void *in_handle,
                            void **handle,
                            struct sl_err *err);
};

struct sl__wk_backend {
    const struct sl__wk_ops *ops;
    void *impl;                         /* passed to conn_new */
    struct sl_worker_services services; /* all NULL for REST */
};

/** @brief The in-process backend over @p jm (may be NULL for tests that
 * only read and write objects) and @p store.  New object, free with
 * sl__wk_local_free. */
struct sl__wk_backend *sl__wk_local_new(struct sl_jm *jm, struct sl_obj *store);
void sl__wk_local_free(struct sl__wk_backend *b);
/** @brief The REST backend.  New object, free with sl__wk_remote_free. */
struct sl__wk_backend *
sl__wk_remote_new(const struct sl_worker_remote_config *cfg);
void sl__wk_remote_free(struct sl__wk_backend *b);

/** @brief SL__WK_* flags of a type from its description; 0 or
 * SL_EINVALDEF. */
int sl__wk_type_flags(const struct sl_worker_type *type,
                      unsigned *flags,
                      struct sl_err *err);

/**
 * @brief New context for @p task (borrowed, must outlive the context) of
 * @p type, doing its I/O through @p conn of backend @p b.
 */
struct sl_task_ctx *sl__task_ctx_new(const struct sl__wk_backend *b,
                                     void *conn,
                                     const struct sl_worker_type *type,
                                     unsigned flags,
                                     const json_t *task);
/**
 * @brief Run perform, then commit or discard the outputs and build the
 * finish request (docs/jobmanager.md) with the runtime's counters.
 * @return new object, caller json_decref's it.
 */
json_t *sl__task_ctx_run(struct sl_task_ctx *ctx);
/** @brief Mark the task as no longer ours (thread-safe). */
void sl__task_ctx_cancel(struct sl_task_ctx *ctx);
/** @brief Free the context; NULL-safe. */
void sl__task_ctx_free(struct sl_task_ctx *ctx);

/**
 * @brief Start a pool over backend @p b (the pool takes ownership of it
 * and frees it with @p free_backend).  @p remote: give up on unknown
 * workers and retry finishes over the network.
 */
int sl__wk_pool_start(struct sl__wk_backend *b,
                      void (*free_backend)(struct sl__wk_backend *),
                      const struct sl_worker_type *const *types,
                      size_t n,
                      unsigned threads_per_worker,
                      int remote,
                      const char *nice,
                      struct sl_worker_pool **out);

/* ------------------------------------------------------------------------
 * Crawler parameters (filters.c).
 * --------------------------------------------------------------------- */
#define SL__WK_MAX_PATTERNS 64u

/*
 * Parameter declarations several worker descriptions share
 * (docs/jobmanager-definitions.md "Parameter declarations"): an
 * include/exclude pair of regex lists (at most SL__WK_MAX_PATTERNS each),
 * and `mapping`, whose members are the standard properties a worker
 * reads through sl_task_mapped (SMILA's mapping), the same list everywhere
 * so one mapping fits the crawl and the processing job.
 */
#define SL__WK_DECL_PATTERNS                                                   \
    "[{\"name\": \"include\", \"type\": \"array\", \"maxItems\": 64,"          \
    "  \"items\": {\"type\": \"regex\"}},"                                     \
    " {\"name\": \"exclude\", \"type\": \"array\", \"maxItems\": 64,"          \
    "  \"items\": {\"type\": \"regex\"}}]"
/* The archive limits of the fileExtractor and the webExtractor. */
#define SL__WK_DECL_EXTRACT_LIMITS                                             \
    "{\"name\": \"maxNestingDepth\", \"optional\": true, \"type\": "           \
    "\"integer\"},"                                                            \
    "{\"name\": \"maxEntries\", \"optional\": true, \"type\": \"integer\"},"   \
    "{\"name\": \"maxTotalBytes\", \"optional\": true, \"type\": "             \
    "\"integer\"},"                                                            \
    "{\"name\": \"maxRatio\", \"optional\": true, \"type\": \"integer\"},"     \
    "{\"name\": \"maxEntrySize\", \"optional\": true, \"type\": \"integer\"}"
#define SL__WK_DECL_MAPPING                                                    \
    "{\"name\": \"mapping\", \"optional\": true, \"type\": \"object\","        \
    " \"members\": [{\"name\": \"filePath\"}, {\"name\": \"fileFolder\"},"     \
    "  {\"name\": \"fileName\"}, {\"name\": \"fileExtension\"},"               \
    "  {\"name\": \"fileSize\"}, {\"name\": \"fileLastModified\"},"            \
    "  {\"name\": \"fileContent\"}, {\"name\": \"httpUrl\"},"                  \
    "  {\"name\": \"httpDepth\"}, {\"name\": \"httpStatus\"},"                 \
    "  {\"name\": \"httpMimetype\"}, {\"name\": \"httpSize\"},"                \
    "  {\"name\": \"httpCharset\"}, {\"name\": \"httpLastModified\"},"         \
    "  {\"name\": \"httpContent\"}]}"

/* An include and an exclude list of compiled regexes. */
struct sl__wk_patterns {
    regex_t include[SL__WK_MAX_PATTERNS];
    regex_t exclude[SL__WK_MAX_PATTERNS];
    size_t n_include;
    size_t n_exclude;
};

/**
 * Compile `filters.<what>.include` / `.exclude` (arrays of at most
 * SL__WK_MAX_PATTERNS regexes) into @p p (zeroed by the caller); free with
 * sl__wk_patterns_free also after an error.
 * @return 0 or SL_EINVAL with the task message set.
 */
int sl__wk_patterns_init(struct sl_task_ctx *ctx,
                         const json_t *filters,
                         const char *what,
                         struct sl__wk_patterns *p);
void sl__wk_patterns_free(struct sl__wk_patterns *p);
/** 1 when @p s passes: an include matches (or there is none), no exclude. */
int sl__wk_patterns_pass(const struct sl__wk_patterns *p, const char *s);
/**
 * Compile @p pattern as every regex parameter is compiled (POSIX extended,
 * no sub-matches): regcomp's result, 0 or a REG_* code for regerror.  The
 * filters and the definition check (params.c) both use it.
 */
int sl__wk_regex_compile(regex_t *re, const char *pattern);
/** A count from @p v: absent or null -> @p def; integer >= 0 or a numeric
 * string.  0 or SL_EINVAL. */
int sl__wk_json_u64(const json_t *v, uint64_t def, uint64_t *out);
/** A flag given as JSON true or the string "true": 1, else 0. */
int sl__wk_json_true(const json_t *v);
/** Is @p path (resolved) @p root (resolved, non-empty) or below it? */
int sl__wk_path_under(const char *root, const char *path);

/* ------------------------------------------------------------------------
 * Compound extraction (file_extractor.c): the text library's archive walk
 * (sl_text_archive_walk) for a task, shared by fileExtractor and
 * webExtractor (docs/workers.md "fileExtractor"): elements into a bulk,
 * what the walk reports into counters.
 * --------------------------------------------------------------------- */

struct sl__wk_extract;

/**
 * @brief Extraction state for task @p ctx: reads the limit parameters
 * (`maxNestingDepth`, `maxEntries`, `maxTotalBytes`, `maxRatio`,
 * `maxEntrySize`); the elements' attributes are named as @p names says
 * (copied; the strings stay borrowed, valid for the task).
 * @return 0 and *out, a new object the caller frees with
 * sl__wk_extract_free, or SL_EINVAL with the task message set.
 */
int sl__wk_extract_new(struct sl_task_ctx *ctx,
                       const struct sl_text_archive_names *names,
                       struct sl__wk_extract **out);
/** @brief Free @p x; NULL-safe. */
void sl__wk_extract_free(struct sl__wk_extract *x);
/**
 * @brief Extract the archive open on @p fd (borrowed, read from its
 * current offset; @p size bytes, for the ratio limit) of top-level
 * compound @p id (source @p source or NULL; both borrowed for the call)
 * into @p w: one element record per regular entry, id "@p id!/<inner
 * path>", nested archives recursively.  Limits, sanitised names and
 * corrupt archives are counted, never errors; the compound's own record
 * is the caller's to write.
 * @return 0, an SL_E* output or temporary file error (task message set)
 * or SL_ECANCELED.
 */
int sl__wk_extract_fd(struct sl__wk_extract *x,
                      struct sl_bulk_writer *w,
                      const char *id,
                      const char *source,
                      int fd,
                      uint64_t size);
/**
 * @brief Share the task's one input bulk of slot @p in as the next output
 * of slot @p out (sl_task_output_copy_input) when the first attachment
 * of every record passes @p ok (called with @p arg, its name and size)
 * and, with @p alone, is its record's only one: the input is read once
 * to see that.  Counts `bulks.shared` and the records as @p counter.
 * @return 1 when done (shared; an empty input needs nothing either), 0
 * when the worker must write the records itself (a record that does not
 * pass, several inputs, a read error its own pass reports, a backend that
 * cannot share), or an error of the store (task message set).
 */
int sl__wk_share_input(struct sl_task_ctx *ctx,
                       const char *in,
                       const char *out,
                       int (*ok)(void *arg, const char *name, uint64_t size),
                       void *arg,
                       int alone,
                       const char *counter);

struct sl_delta_rec;
/**
 * @brief What the delta service needs of a record (id, compound id, hash,
 * compound flag) into @p dr, from its decoded metadata @p meta or, when
 * that is NULL, its head @p head (docs/bulk-format.md); the strings are
 * borrowed from them.  The deltaChecker's and the updatePusher's reading.
 * @return the record's `_source`, or NULL when it names none.
 */
const char *sl__wk_delta_fields(const json_t *meta,
                                const struct sl_record_head *head,
                                struct sl_delta_rec *dr);

/* ------------------------------------------------------------------------
 * Element checks (element_check.c): the updatePusher pushes an element of
 * a changed compound (`_compoundRecordId`, `_deltaHash`) only when the
 * delta service finds it new or changed (docs/workers.md "updatePusher").
 * Records are checked in windows of 1000 read ahead by a second reader of
 * the same input bulk; up-to-date ones are marked visited by the check.
 * One task thread uses an instance.
 * --------------------------------------------------------------------- */
struct sl__wk_elem_check;
struct sl_delta;

/**
 * @brief Element checks for the records of input slot @p slot of @p ctx
 * in job run @p run_id; @p param_source is the source of records without
 * `_source` (NULL: none).  All borrowed, valid for the task.
 * @return 0 and *out, a new object the caller frees with
 * sl__wk_elem_check_free; SL_EINVAL without @p delta or @p run_id.
 */
int sl__wk_elem_check_new(struct sl_task_ctx *ctx,
                          struct sl_delta *delta,
                          const char *slot,
                          const char *run_id,
                          const char *param_source,
                          struct sl__wk_elem_check **out);
/**
 * @brief The delta verdict of record @p idx (counting from 0) of input
 * @p bulk, whose metadata @p meta or, when NULL, head @p head (borrowed)
 * the caller has read: 0 when it is no element to check (no compound id,
 * hash or source), else SL_DELTA_NEW, _CHANGED or _UPTODATE (marked
 * visited in this run), or the service's SL_E* refusal of the record.
 * Call it for the records of a bulk in order; the window that holds
 * @p idx is read and checked at its first element.
 * @return 0, or an SL_E* input or delta service error (task message set;
 * SL_ECORRUPT and SL_ETRUNCATED mean a corrupt input).
 */
int sl__wk_elem_check_verdict(struct sl__wk_elem_check *c,
                              size_t bulk,
                              size_t idx,
                              const json_t *meta,
                              const struct sl_record_head *head,
                              int *verdict);
/** @brief The current input bulk is done: close the look-ahead reader. */
void sl__wk_elem_check_end(struct sl__wk_elem_check *c);
/** @brief Free @p c; NULL-safe. */
void sl__wk_elem_check_free(struct sl__wk_elem_check *c);

/**
 * @brief Task parameter `maxTextBytes` into *@p out: SL_TEXT_MAX_DEFAULT
 * when absent, at most SL_TEXT_MAX_LIMIT (the textExtractor's and, with
 * extractText, the webCrawler's; filters.c).
 * @return 0, or SL_EINVAL with the task message set.
 */
int sl__wk_max_text(struct sl_task_ctx *ctx, uint64_t *out);

#endif /* SL_WORKERS_INT_H_INCLUDED */
