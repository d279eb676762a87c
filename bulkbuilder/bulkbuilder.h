/*
 * Bulkbuilder (docs/bulkbuilder.md): the bulkSource worker that feeds
 * records pushed over /smila/job/<job>/record|bulk (and by the updatePusher
 * in-process) into a running standard job, as SMILA's BulkBuilder does
 * (docs/bulkbuilder.md).
 *
 * Model:
 * - Per job, one open journal per output slot (`insertedRecords` for adds
 *   and updates, `deletedRecords` for deletes) under
 *   <dataDir>/bulkbuilder/<job>/.  A journal is a bulk (docs/bulk-format.md)
 *   without its trailer: every accepted record is appended and written to
 *   the file before sl_bb_record_end returns (fdatasync too in `fsync`
 *   durability), so an accepted record survives kill -9.
 * - A journal is sealed when it reaches `bulkLimitSize` bytes or is
 *   `bulkLimitTime` old: the trailer is written and the job's journals
 *   become bulk number <seq>.  One committer thread then asks the
 *   jobmanager for an initial task (sl_jm_task_initial), records the task
 *   next to the bulk (<seq>.task), copies the bulks into the task's output
 *   objects and finishes the task, which creates the follow-up tasks; then
 *   the files are removed.
 * - At start (sl_bb_start, after sl_jm_start) half-written journals are cut
 *   back to their last complete record and sealed; tasks of the
 *   bulkbuilder that the jobmanager hands back are matched with the .task
 *   files: a match is redone from the copy step, a .task whose task is gone
 *   was finished (the files are removed), a task without a .task file had
 *   no output yet and is finished empty.  So every accepted record reaches
 *   exactly one finished task.
 * - Records of a job that is not running are refused (SL_ENOTREADY);
 *   sealed bulks of a job that stopped wait until it runs again.
 *
 * Threading: every function may be called from any thread, except open,
 * start and close.  Appends to one job serialise on that job's lock, which
 * is held from sl_bb_record_begin to sl_bb_record_end / _abort.
 */
#ifndef SL_BULKBUILDER_H_INCLUDED
#define SL_BULKBUILDER_H_INCLUDED

#include <stdint.h>

#include "core/sl.h"
#include "jobmanager/jobmanager.h"
#include "objectstore/objectstore.h"

#define SL_BB_WORKER             "bulkbuilder"
#define SL_BB_DEFAULT_LIMIT_SIZE (10u << 20) /* bulkLimitSize, bytes */
#define SL_BB_DEFAULT_LIMIT_MS   1000u       /* bulkLimitTime, ms */

struct sl_bb;
struct sl_bb_rec;

struct sl_bb_config {
    const char *dir; /* journal directory (created) */
    enum sl_durability durability;
    uint64_t limit_size; /* 0: SL_BB_DEFAULT_LIMIT_SIZE */
    unsigned limit_ms;   /* 0: SL_BB_DEFAULT_LIMIT_MS */
    /* A full disk: first and longest pause of a job's seals and commits
     * (the jobmanager's noSpace delays); 0: 1000 and 60000 ms. */
    unsigned nospace_first_ms;
    unsigned nospace_max_ms;
    /* Bulks handed to a job's run whose workflow runs are still active,
     * at most (0: SL_BB_DEFAULT_MAX_ACTIVE): the committer hands over the
     * next sealed bulk only when the run has fewer active workflow runs,
     * so a backlog waits in the journal on disk, not as tasks in memory;
     * a drain (a finish) hands over everything. */
    unsigned max_active;
};
#define SL_BB_DEFAULT_MAX_ACTIVE 64u

/**
 * @brief Open the bulkbuilder over @p jm and @p store (borrowed, must
 * outlive it) and register its worker description with @p jm (call
 * before sl_jm_start).
 * @return 0 or an SL_E* code with details in @p err.  *out is a new
 * object, free with sl_bb_close.
 */
int sl_bb_open(const struct sl_bb_config *cfg,
               struct sl_jm *jm,
               struct sl_obj *store,
               struct sl_bb **out,
               struct sl_err *err);
/**
 * @brief Recover journals and tasks left by the last process and start
 * the committer thread (after sl_jm_start).
 */
int sl_bb_start(struct sl_bb *bb, struct sl_err *err);
/** @brief Stop the committer; open journals stay for the next start.
 * NULL-safe. */
void sl_bb_close(struct sl_bb *bb);

/**
 * @brief Check what sl_bb_record_begin checks of a record: a JSON object
 * with a non-empty string "_recordid" of at most SL_RECORD_ID_MAX bytes
 * and no NUL.  0, or SL_EINVAL with the field in @p err.
 */
int sl_bb_record_check(const json_t *meta, struct sl_err *err);
/**
 * @brief Begin appending a record to @p job: an add/update with metadata
 * @p meta (borrowed; an object with a non-empty string "_recordid"), or a
 * delete of that id when @p is_delete.  Takes the job's lock until
 * record_end or record_abort.
 * @return 0, SL_EINVAL (sl_bb_record_check; err->field says so), SL_ENOTREADY
 * (the job is not running in standard mode with the bulkbuilder as start
 * worker), SL_EIO/SL_ENOSPC.  *out is owned by the bulkbuilder until end
 * or abort.
 */
int sl_bb_record_begin(struct sl_bb *bb,
                       const char *job,
                       const json_t *meta,
                       int is_delete,
                       struct sl_bb_rec **out,
                       struct sl_err *err);
/**
 * @brief sl_bb_record_begin (an add) for a record read from a bulk, with
 * its metadata as stored: @p meta (@p len bytes of a JSON object's
 * compact text, borrowed, as a reader's next_raw gives it) and its head
 * @p head (borrowed), which must not have SL_HEAD_VERSION or
 * SL_HEAD_VISITED.  The record is journaled without decoding: `_version`
 * is appended to the text, and the head carries over.
 * @return as sl_bb_record_begin; SL_EINVAL also for text that does not
 * look like an object or a head with those flags.
 */
int sl_bb_record_begin_text(struct sl_bb *bb,
                            const char *job,
                            const char *meta,
                            size_t len,
                            const struct sl_record_head *head,
                            struct sl_bb_rec **out,
                            struct sl_err *err);
/** @brief Attachment @p name of exactly @p size bytes, given with
 * sl_bb_attachment_write. */
int sl_bb_attachment_begin(struct sl_bb_rec *rec,
                           const char *name,
                           uint64_t size,
                           struct sl_err *err);
int sl_bb_attachment_write(struct sl_bb_rec *rec,
                           const void *data,
                           size_t len,
                           struct sl_err *err);
/**
 * @brief Finish the record: it is durable (see the durability setting)
 * when this returns 0.  Frees @p rec and releases the job, also on error
 * (the record is then not accepted and the journal is cut back).
 */
int sl_bb_record_end(struct sl_bb_rec *rec, struct sl_err *err);
/** @brief Drop the record being written; frees @p rec.  NULL-safe. */
void sl_bb_record_abort(struct sl_bb_rec *rec);

/**
 * @brief A new unnamed file in the journal directory (O_TMPFILE; where
 * the file system lacks it, a file unlinked at once) for a caller to
 * spool a push into before appending it: it is gone when closed, also
 * after a crash.
 * @return the descriptor (caller closes), or a negative SL_E* code with
 * details in @p err.
 */
int sl_bb_spool_open(struct sl_bb *bb, struct sl_err *err);
/** @brief Add one record without attachments (begin + end). */
int sl_bb_add(struct sl_bb *bb,
              const char *job,
              const json_t *meta,
              int is_delete,
              struct sl_err *err);
/**
 * @brief Seal the open journals of @p job (every job when NULL) now and
 * wake the committer.  0 or an SL_E* code.
 */
int sl_bb_flush(struct sl_bb *bb, const char *job, struct sl_err *err);
/**
 * @brief Hand everything accepted for @p job so far to its run: seal its
 * open journals and wait until the committer has finished a task for
 * every sealed bulk (the jobmanager holds their workflow runs), at most
 * @p timeout_ms; meanwhile the committer hands over the job's bulks
 * whatever max_active says.  Called before a standard run is finished, so
 * that a record answered 202 belongs to the run it was pushed to.
 * @return 0 (also for a job the bulkbuilder never saw), SL_ENOTREADY when
 * records or bulks are still waiting at the deadline (a job whose run is
 * not RUNNING keeps them), or a seal error; details in @p err.
 * @note Blocks the calling thread, polling every 10 ms.
 */
int sl_bb_drain(struct sl_bb *bb,
                const char *job,
                unsigned timeout_ms,
                struct sl_err *err);
/**
 * @brief {"jobs": [{"job", "openRecords", "openBytes", "pendingBulks",
 * "acceptedRecords", "committedBulks"}]} (or that of one job, NULL when
 * unknown).  New reference.
 */
json_t *sl_bb_status(struct sl_bb *bb, const char *job);

#endif /* SL_BULKBUILDER_H_INCLUDED */
