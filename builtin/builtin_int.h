/*
 * Private to builtin/: what the built-in workers share among themselves,
 * each piece in a module of its own (parameter declarations and filters,
 * file paths, compound extraction, inputs passed on unchanged, the delta
 * fields of a record, the updatePusher's element checks), so that no
 * worker takes code from another worker's file.  A worker includes this
 * (which brings the runtime's workers/workers.h) and the headers of the
 * libraries it uses.  The three web workers share more among themselves
 * (their tasks and transfers): web_int.h.
 */
#ifndef SL_BUILTIN_INT_H_INCLUDED
#define SL_BUILTIN_INT_H_INCLUDED

#include <regex.h>

#include "builtin/builtin.h"
#include "deltaservice/deltaservice.h"
#include "workers/workers.h"

struct sl_text_archive_names;

/* ------------------------------------------------------------------------
 * Parameters: declarations several descriptions share, the filters and
 * small readers (filters.c).
 * --------------------------------------------------------------------- */
#define SL__BI_MAX_PATTERNS 64u

/*
 * Parameter declarations several worker descriptions share
 * (docs/jobmanager-definitions.md "Parameter declarations"): an
 * include/exclude pair of regex lists (at most SL__BI_MAX_PATTERNS each),
 * and `mapping`, whose members are the standard properties a worker
 * reads through sl_task_mapped (SMILA's mapping), the same list everywhere
 * so one mapping fits the crawl and the processing job.
 */
#define SL__BI_DECL_PATTERNS                                                   \
    "[{\"name\": \"include\", \"type\": \"array\", \"maxItems\": 64,"          \
    "  \"items\": {\"type\": \"regex\"}},"                                     \
    " {\"name\": \"exclude\", \"type\": \"array\", \"maxItems\": 64,"          \
    "  \"items\": {\"type\": \"regex\"}}]"
/* The archive limits of the fileExtractor and the webExtractor. */
#define SL__BI_DECL_EXTRACT_LIMITS                                             \
    "{\"name\": \"maxNestingDepth\", \"optional\": true, \"type\": "           \
    "\"integer\"},"                                                            \
    "{\"name\": \"maxEntries\", \"optional\": true, \"type\": \"integer\"},"   \
    "{\"name\": \"maxTotalBytes\", \"optional\": true, \"type\": "             \
    "\"integer\"},"                                                            \
    "{\"name\": \"maxRatio\", \"optional\": true, \"type\": \"integer\"},"     \
    "{\"name\": \"maxEntrySize\", \"optional\": true, \"type\": \"integer\"}"
/* A crawl's next checks (recheck.c): the job parameter recheck. */
#define SL__BI_DECL_RECHECK                                                    \
    "{\"name\": \"recheck\", \"optional\": true, \"type\": \"object\","        \
    " \"members\": [{\"name\": \"minSeconds\", \"type\": \"integer\","         \
    "   \"minimum\": 1, \"maximum\": 31622400},"                               \
    "  {\"name\": \"maxSeconds\", \"type\": \"integer\", \"minimum\": 1,"      \
    "   \"maximum\": 31622400}]}"

struct sl_delta;
struct sl_delta_rec;

/* The recheck parameter of a task: off, or the interval bounds. */
struct sl__bi_recheck {
    int on;
    uint64_t min_ms;
    uint64_t max_ms;
};

/* The bounds of a recheck parameter @p, defaults filled in (3600 s and a
 * month); 0, or -1 (not an object of numbers).  Ranges are the caller's. */
int sl__bi_recheck_bounds(const json_t *p, uint64_t *min_s, uint64_t *max_s);
/* Read the task's recheck parameter into @out: 0, or -1 (a bad value;
 * the task message is set). */
int sl__bi_recheck_init(struct sl_task_ctx *ctx, struct sl__bi_recheck *out);
/* Record the next checks of the @n records @recs (results set by
 * sl_delta_check) of @source checked in run @seq; with @uptodate_only, of
 * the up-to-date ones only.  Elements and records without a hash get none.  0
 * or an SL_E* code (the task message is set). */
int sl__bi_recheck_record(struct sl_task_ctx *ctx,
                          const struct sl__bi_recheck *rk,
                          struct sl_delta *delta,
                          const char *source,
                          uint64_t seq,
                          const struct sl_delta_rec *recs,
                          size_t n,
                          int uptodate_only);

/* Due records one task of a due pass looks at (fileCrawler, webCrawler). */
#define SL__BI_DUE_PER_TASK 10000
/* Due record @id of @source is gone (a file, a page answering 404): its
 * next check moves on as unchanged, so that it is not looked at on every
 * pass (the next full crawl or the expiry deletes it).  Nothing when
 * @rk is off or @delta is NULL; a failure only delays that. */
void sl__bi_recheck_moved_on(struct sl_task_ctx *ctx,
                             const struct sl__bi_recheck *rk,
                             struct sl_delta *delta,
                             const char *source,
                             const char *id);

/* A continuous run's pass (docs/jobmanager.md "Continuous crawling"):
 * the kind of task @ctx's pass, "reseed" or "due", or NULL outside one. */
const char *sl__bi_pass_kind(struct sl_task_ctx *ctx);
/* "Now" for task @ctx: its pass's time, or the wall clock outside one. */
int64_t sl__bi_task_now(struct sl_task_ctx *ctx);
/* The delta-service run of task @ctx of job run @run_id for @source: one
 * per job run, in a continuous run one per pass (recorded with its time,
 * for the expiry).  As sl_delta_run_for. */
int sl__bi_delta_run(struct sl_task_ctx *ctx,
                     struct sl_delta *delta,
                     const char *source,
                     const char *run_id,
                     uint64_t *seq,
                     struct sl_err *err);

/* Delete from the index (the task's jobToPushTo or remote) and from the
 * delta service the documents of @source at @id and under it that run
 * @seq has not seen (sl_delta_gone_scan): a file or folder gone.  0,
 * SL_ENOTREADY (no delta service or no target in this process: left to the
 * expiry) or an SL_E* code (the task message is set); *removed counts. */
int sl__bi_push_gone(struct sl_task_ctx *ctx,
                     const char *source,
                     const char *id,
                     uint64_t seq,
                     uint64_t *removed);

/* The watcher of a continuous file crawl with `watch: true` (watch.c). */
struct sl__bi_watch;
/* The watcher of job @job's run @run_id on @source (rootFolder @root,
 * real path); with @create, made
 * when there is none; one of an earlier run is dropped; held until
 * sl__bi_watch_put.  *made is 1 while
 * no pass has listed the tree since it was made (sl__bi_watch_listed).
 * NULL: none (or inotify failed: logged). */
struct sl__bi_watch *sl__bi_watch_get(const char *job,
                                      const char *run_id,
                                      const char *source,
                                      const char *root,
                                      int create,
                                      int *made);
/* The task is done with @w (from sl__bi_watch_get); NULL-safe. */
void sl__bi_watch_put(struct sl__bi_watch *w);
/* Changes taken could not be handled (the task failed): the next pass
 * lists the whole tree. */
void sl__bi_watch_lost(struct sl__bi_watch *w);
/* A pass listed the whole tree, so every folder is watched. */
void sl__bi_watch_listed(struct sl__bi_watch *w);
/* The run of @job ended: drop its watcher. */
void sl__bi_watch_end(const char *job);
/* Watch folder @path, at most @max watches (0: the kernel's limit): 0,
 * SL_ENOSPC (at the limit: the folder is listed again by every pass) or
 * another SL_E* code. */
int sl__bi_watch_dir(struct sl__bi_watch *w, const char *path, size_t max);
/* Take the pending changes (*changes: path -> "changed", "new" or
 * "gone", a new object) and the folders not watched (*unwatched, a new
 * object); 1 when the whole tree must be listed. */
int
sl__bi_watch_take(struct sl__bi_watch *w, json_t **changes, json_t **unwatched);
/* Watches held; *unwatched: folders that could not be watched. */
size_t sl__bi_watch_count(struct sl__bi_watch *w, size_t *unwatched);

/* The job's throttle rules (core/ sl_throttle; checked in full by
 * sl_builtin_def_check): the web workers and the fileFetcher read them. */
#define SL__BI_DECL_THROTTLE                                                   \
    "{\"name\": \"throttle\", \"optional\": true, \"type\": \"array\","        \
    " \"maxItems\": 256, \"items\": {\"type\": \"object\", \"members\": ["     \
    "  {\"name\": \"bin\", \"optional\": false},"                              \
    "  {\"name\": \"maxPerSecond\", \"type\": \"number\"},"                    \
    "  {\"name\": \"maxConnections\", \"type\": \"integer\", \"minimum\": 1,"  \
    "   \"maximum\": 1024}]}}"
#define SL__BI_DECL_MAPPING                                                    \
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
struct sl__bi_patterns {
    regex_t include[SL__BI_MAX_PATTERNS];
    regex_t exclude[SL__BI_MAX_PATTERNS];
    size_t n_include;
    size_t n_exclude;
};

/**
 * Compile `filters.<what>.include` / `.exclude` (arrays of at most
 * SL__BI_MAX_PATTERNS regexes) into @p p (zeroed by the caller); free with
 * sl__bi_patterns_free also after an error.
 * @return 0 or SL_EINVAL with the task message set.
 */
int sl__bi_patterns_init(struct sl_task_ctx *ctx,
                         const json_t *filters,
                         const char *what,
                         struct sl__bi_patterns *p);
void sl__bi_patterns_free(struct sl__bi_patterns *p);
/** 1 when @p s passes: an include matches (or there is none), no exclude. */
int sl__bi_patterns_pass(const struct sl__bi_patterns *p, const char *s);
/** A flag given as JSON true or the string "true": 1, else 0. */
int sl__bi_json_true(const json_t *v);
/**
 * @brief Task parameter `maxTextBytes` into *@p out: SL_TEXT_MAX_DEFAULT
 * when absent, at most SL_TEXT_MAX_LIMIT (the textExtractor's and, with
 * extractText, the webCrawler's).
 * @return 0, or SL_EINVAL with the task message set.
 */
int sl__bi_max_text(struct sl_task_ctx *ctx, uint64_t *out);

/* ------------------------------------------------------------------------
 * File paths in records (paths.c; the escaping is public, builtin.h).
 * --------------------------------------------------------------------- */

/** Is @p path (resolved) @p root (resolved, non-empty) or below it? */
int sl__bi_path_under(const char *root, const char *path);

/* ------------------------------------------------------------------------
 * Compound extraction (compound.c; the archive names are public,
 * builtin.h): the text library's archive walk (sl_text_archive_walk) for
 * a task, shared by fileExtractor and webExtractor (docs/workers.md
 * "fileExtractor"): elements into a bulk, what the walk reports into
 * counters.
 * --------------------------------------------------------------------- */

struct sl__bi_extract;

/**
 * @brief Extraction state for task @p ctx: reads the limit parameters
 * (`maxNestingDepth`, `maxEntries`, `maxTotalBytes`, `maxRatio`,
 * `maxEntrySize`); the elements' attributes are named as @p names says
 * (copied; the strings stay borrowed, valid for the task).
 * @return 0 and *out, a new object the caller frees with
 * sl__bi_extract_free, or SL_EINVAL with the task message set.
 */
int sl__bi_extract_new(struct sl_task_ctx *ctx,
                       const struct sl_text_archive_names *names,
                       struct sl__bi_extract **out);
/** @brief Free @p x; NULL-safe. */
void sl__bi_extract_free(struct sl__bi_extract *x);
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
int sl__bi_extract_fd(struct sl__bi_extract *x,
                      struct sl_bulk_writer *w,
                      const char *id,
                      const char *source,
                      int fd,
                      uint64_t size);
/**
 * @brief Write the compound's own record @p meta (borrowed) into @p w,
 * before its elements: metadata only, as every compound's, unless the
 * @p size bytes on @p fd (borrowed; read from its current offset, which
 * is set back) are a compressed single file with no archive inside
 * (sl_text_archive_probe): then the record carries them as attachment
 * @p att, for the textExtractor to read the document inside, it is
 * counted `compounds.notArchive`, and *@p whole is 1: nothing to walk.  A
 * message (.eml) carries its content too (its text), and *@p whole is 0:
 * its attachments are walked; the offset of @p fd is set back to 0.
 * @return 0 or an SL_E* output or read error (task message set).
 */
int sl__bi_compound_record(struct sl__bi_extract *x,
                           struct sl_bulk_writer *w,
                           const json_t *meta,
                           const char *att,
                           int fd,
                           uint64_t size,
                           int *whole);
/* ------------------------------------------------------------------------
 * Inputs passed on unchanged (share.c): the textExtractor's and the
 * webFetcher's.
 * --------------------------------------------------------------------- */

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
int sl__bi_share_input(struct sl_task_ctx *ctx,
                       const char *in,
                       const char *out,
                       int (*ok)(void *arg, const char *name, uint64_t size),
                       void *arg,
                       int alone,
                       const char *counter);

/* ------------------------------------------------------------------------
 * The delta fields of a record (delta_fields.c): the deltaChecker's, the
 * updatePusher's and the element checks' reading; and the one reading of
 * the parameter deltaImportStrategy.
 * --------------------------------------------------------------------- */

/**
 * @brief The delta import strategy of the task parameters @p params
 * (`deltaImportStrategy`; `full` when it is not set) into *@p out.
 * @return 0, or SL_EINVAL with @p err saying why (may be NULL).
 */
int sl__bi_strategy(const json_t *params,
                    enum sl_delta_strategy *out,
                    struct sl_err *err);

/**
 * @brief What the delta service needs of a record (id, compound id, hash,
 * compound flag) into @p dr, from its decoded metadata @p meta or, when
 * that is NULL, its head @p head (docs/bulk-format.md); the strings are
 * borrowed from them.
 * @return the record's `_source`, or NULL when it names none.
 */
const char *sl__bi_delta_fields(const json_t *meta,
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
struct sl__bi_elem_check;

/**
 * @brief Element checks for the records of input slot @p slot of @p ctx
 * in job run @p run_id; @p param_source is the source of records without
 * `_source` (NULL: none).  All borrowed, valid for the task.
 * @return 0 and *out, a new object the caller frees with
 * sl__bi_elem_check_free; SL_EINVAL without @p delta or @p run_id.
 */
int sl__bi_elem_check_new(struct sl_task_ctx *ctx,
                          struct sl_delta *delta,
                          const char *slot,
                          const char *run_id,
                          const char *param_source,
                          struct sl__bi_elem_check **out);
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
int sl__bi_elem_check_verdict(struct sl__bi_elem_check *c,
                              size_t bulk,
                              size_t idx,
                              const json_t *meta,
                              const struct sl_record_head *head,
                              int *verdict);
/** @brief The current input bulk is done: close the look-ahead reader. */
void sl__bi_elem_check_end(struct sl__bi_elem_check *c);
/** @brief Free @p c; NULL-safe. */
void sl__bi_elem_check_free(struct sl__bi_elem_check *c);

#endif /* SL_BUILTIN_INT_H_INCLUDED */
