/*
 * Jobmanager: definitions (workers, buckets, workflows, jobs), job runs,
 * workflow runs, task queues with leases, follow-up generation and the
 * completion phase, with all state in one LMDB environment.  The design and
 * the REST view are in docs/jobmanager.md.
 *
 * Threading: every function may be called from any thread; one internal
 * mutex guards the in-memory state and a single writer thread commits
 * changes to LMDB in groups (a call that changes state returns after its
 * change is committed).  No function blocks on worker code.
 *
 * JSON ownership: functions that return json_t give a new reference
 * (caller json_decref's it); JSON arguments are borrowed.
 */
#ifndef SL_JOBMANAGER_H_INCLUDED
#define SL_JOBMANAGER_H_INCLUDED

#include <stdint.h>

#include "core/sl.h"
#include "objectstore/objectstore.h"

struct sl_jm;

struct sl_jm_config {
    const char *state_dir;     /* LMDB environment directory (created) */
    const char *config_dir;    /* buckets.json, jobs.json; NULL: none */
    const char *workflows_dir; /* *.json workflows; NULL: none */
    enum sl_durability durability;
    struct sl_obj *store;     /* borrowed object store */
    unsigned lease_seconds;   /* task time-to-live; 0 = 120 */
    unsigned max_retries;     /* recoverable errors per task; 0 = 10 */
    unsigned max_errors;      /* errors kept per run; 0 = 100 */
    unsigned max_in_progress; /* global limit on tasks in progress; 0 = none */
    /* Flow control: an action of a run waits while the actions after it
     * have this many tasks to do; 0 = none (docs/jobmanager.md). */
    unsigned max_queued_downstream;
    /* A full disk: the first and the longest pause of task hand-outs after
     * a task failed with errorCode NO_SPACE; 0 = 1000 and 60000 ms. */
    unsigned nospace_first_ms;
    unsigned nospace_max_ms;
    /* The per-document history of runs (docs/jobmanager.md, "Document
     * history"): entries kept per run, the oldest dropped first (0 =
     * 1,000,000); runs of a job whose entries are kept (0 = 20); days an
     * entry is kept (0 = 30); history_off: runs count documents by state
     * but record none. */
    unsigned history_max_per_run;
    unsigned history_keep_runs;
    unsigned history_max_days;
    int history_off;
};

/**
 * @brief Open the state, create the object; workers are registered next,
 * then sl_jm_start loads definitions and resumes runs.
 * @return 0 or SL_EIO etc. *out is a new object, free with sl_jm_close.
 */
int sl_jm_open(const struct sl_jm_config *cfg,
               struct sl_jm **out,
               struct sl_err *err);
/**
 * @brief Register a worker description (SMILA workers.json shape) before
 * sl_jm_start.  @p partitions (may be NULL) gives the number of completion
 * tasks for a requestsCompletion worker from the task parameters.
 * @return 0, SL_EINVALDEF, SL_EEXIST, SL_EBADSTATE (already started).
 */
int sl_jm_register_worker(struct sl_jm *jm,
                          const json_t *desc,
                          unsigned (*partitions)(const json_t *params),
                          struct sl_err *err);
/**
 * @brief Register the descriptions in @p path ({"workers": [...]}, SMILA's
 * workers.json) as external workers: their tasks are taken over the task
 * API by `sluice worker` processes or other clients.  A missing file is
 * fine.
 * @return the number of descriptions that failed (each logged with file
 * and field), or SL_EBADJSON for a file that is not JSON.
 */
int sl_jm_register_workers_file(struct sl_jm *jm,
                                const char *path,
                                struct sl_err *err);
/**
 * @brief Install a check run for every action of a job when a run of it
 * is about to start, with the action's resolved parameters (borrowed):
 * a non-zero SL_E* code refuses the start with @p err (for example the
 * updatePusher's jobToPushTo must be running: SL_ECONFLICT).  Called
 * without any jobmanager lock held.  Set before sl_jm_start.
 */
void sl_jm_set_start_check(struct sl_jm *jm,
                           int (*check)(void *arg,
                                        const char *job,
                                        const char *worker,
                                        const json_t *params,
                                        struct sl_err *err),
                           void *arg);
/**
 * @brief Install the definition check: when a job is defined (REST, the
 * predefined jobs.json), it is called for every action with the worker's
 * description and the action's resolved parameters (both borrowed), after
 * the jobmanager's own checks.  A non-zero SL_E* code refuses the
 * definition (400) with @p err, whose field ("parameters.filters.x") is
 * relative to the parameters the worker got; the jobmanager turns it into
 * the job's field.  It checks what only the worker knows (a regex
 * compiles, "10k" is not an integer), with the worker's own parsing.
 * Called with the definitions' write lock held: it must not call into
 * the jobmanager.  Set before sl_jm_start; NULL: none.
 */
void sl_jm_set_def_check(struct sl_jm *jm,
                         int (*check)(void *arg,
                                      const char *job,
                                      const char *worker,
                                      const json_t *desc,
                                      const json_t *params,
                                      struct sl_err *err),
                         void *arg);
/**
 * @brief Install a hook run for every action of a job when a run of it
 * takes no more tasks (it enters CLEANINGUP: after its completion phase,
 * or failed or canceled; again when such a run is resumed at start), with
 * the action's resolved parameters (borrowed).  The built-in workers'
 * hook (sl_worker_run_end) seals the bulk that an updatePusher's last
 * records wait in.  Called from the clean-up thread, before the run's
 * transient objects are deleted, without any jobmanager lock held.  Set
 * before sl_jm_start.
 */
void sl_jm_set_run_end_hook(struct sl_jm *jm,
                            void (*hook)(void *arg,
                                         const char *job,
                                         const char *worker,
                                         const json_t *params),
                            void *arg);
/** @brief Set the concurrency limit of one worker (0 = none). */
void sl_jm_set_worker_limit(struct sl_jm *jm,
                            const char *worker,
                            unsigned max_in_progress);
/**
 * @brief Load predefined and stored definitions, resume active runs (tasks
 * that were in progress go back to todo; pending events are completed),
 * start autoStart jobs and the lease timer.
 */
int sl_jm_start(struct sl_jm *jm, struct sl_err *err);
/**
 * @brief The server begins to stop: from now on a state commit that fails
 * (a full disk) is given up, not retried, so that callers waiting for it
 * (workers finishing tasks, the bulkbuilder) return and the shutdown does
 * not hang; its changes are lost as in a crash, and the next start
 * recovers from the last committed state.  Nothing is deleted for a state
 * that was not committed.  NULL-safe; sl_jm_close implies it.
 */
void sl_jm_shutdown(struct sl_jm *jm);
/** @brief Stop the timer and writer, close LMDB; NULL-safe. */
void sl_jm_close(struct sl_jm *jm);

/* ------------------------------------------------------------------------
 * Definitions.  @p kind is "buckets", "workflows" or "jobs".
 * --------------------------------------------------------------------- */

/** @brief All definitions of a kind (array); NULL for an unknown kind. */
json_t *sl_jm_defs_list(struct sl_jm *jm, const char *kind);
/** @brief One definition or NULL. */
json_t *sl_jm_defs_get(struct sl_jm *jm, const char *kind, const char *name);
/**
 * @brief Create or update a user definition (validated, persisted).
 * @param[out] stored new reference to the stored definition (with
 *   timestamp), may be NULL.
 * @return 0, SL_EINVALDEF/SL_EBADNAME (err names the field), SL_EREADONLY,
 *   SL_ECONFLICT (job definition of a running job).
 */
int sl_jm_defs_put(struct sl_jm *jm,
                   const char *kind,
                   const json_t *def,
                   json_t **stored,
                   struct sl_err *err);
/** @brief Delete a user definition: 0, SL_ENOENT, SL_EREADONLY,
 * SL_ECONFLICT. */
int sl_jm_defs_delete(struct sl_jm *jm,
                      const char *kind,
                      const char *name,
                      struct sl_err *err);
/** @brief Could sl_jm_defs_delete delete it now?  The same returns;
 * nothing changes (a job started meanwhile still refuses the delete). */
int sl_jm_defs_delete_check(struct sl_jm *jm,
                            const char *kind,
                            const char *name,
                            struct sl_err *err);
/** @brief Worker descriptions (array) or one (NULL if unknown). */
json_t *sl_jm_workers(struct sl_jm *jm, const char *name);
/** @brief Data object types (array) or one (NULL if unknown). */
json_t *sl_jm_dots(struct sl_jm *jm, const char *name);

/* ------------------------------------------------------------------------
 * Job runs.
 * --------------------------------------------------------------------- */

#define SL_JM_RUN_ID_MAX 64

/**
 * @brief Start a run of @p job.
 * @param[in] mode "runOnce", "standard" or NULL (the workflow's default).
 * @param[out] run_id the new run id.
 * @return 0, SL_ENOENT (no job), SL_EINVAL (mode not allowed), SL_ECONFLICT
 *   (a run is active, or another active run crawls the same dataSource).
 */
int sl_jm_run_start(struct sl_jm *jm,
                    const char *job,
                    const char *mode,
                    char run_id[SL_JM_RUN_ID_MAX],
                    struct sl_err *err);
/** @brief Run data (docs/jobmanager.md); @p details adds the definitions used.
 * 0 or SL_ENOENT. */
int sl_jm_run_get(struct sl_jm *jm,
                  const char *job,
                  const char *run_id,
                  int details,
                  json_t **out,
                  struct sl_err *err);
/** @brief Job info: definition, "runs": {"current", "completed": [ids]}. */
int sl_jm_job_info(struct sl_jm *jm,
                   const char *job,
                   int details,
                   json_t **out,
                   struct sl_err *err);
/** @brief RUNNING -> FINISHING. 0, SL_ENOENT, SL_EBADSTATE. */
int sl_jm_run_finish(struct sl_jm *jm,
                     const char *job,
                     const char *run_id,
                     struct sl_err *err);
/** @brief -> CANCELING -> CANCELED. 0, SL_ENOENT, SL_EBADSTATE. */
int sl_jm_run_cancel(struct sl_jm *jm,
                     const char *job,
                     const char *run_id,
                     struct sl_err *err);
/**
 * @brief Pause (@p pause 1) or resume (0) the active run of @p job whose
 * id is @p run_id (NULL: whichever): while paused none of its tasks is
 * handed out (those in progress finish; what they create waits), and the
 * run data says "paused": true.  Persisted: a paused run stays paused
 * across a restart.  0, or SL_EBADSTATE (no such active run).
 */
int sl_jm_run_pause(struct sl_jm *jm,
                    const char *job,
                    const char *run_id,
                    int pause,
                    struct sl_err *err);
/**
 * @brief Job schedules (docs/jobmanager.md "Schedules"): start, resume,
 * pause or finish the runs of the jobs whose definition has a "schedule",
 * for the time @p now_ms (ms since the epoch).  The server calls it every
 * second; tests call it with the time they want.  Ticks are serialised
 * (a second caller waits).
 */
void sl_jm_sched_tick(struct sl_jm *jm, int64_t now_ms);
/**
 * @brief Install how a schedule finishes a run at the end of its window
 * (atWindowEnd "finish"); NULL: sl_jm_run_finish.  The server's hook lets
 * the bulkbuilder hand over the records it accepted first, as the REST
 * finish does.  Called from sl_jm_sched_tick's thread without locks held.
 */
void sl_jm_set_sched_finish(struct sl_jm *jm,
                            int (*finish)(void *arg,
                                          const char *job,
                                          const char *run_id,
                                          struct sl_err *err),
                            void *arg);
/** @brief Delete a finished run's data. 0, SL_ENOENT, SL_ECONFLICT. */
int sl_jm_run_delete(struct sl_jm *jm,
                     const char *job,
                     const char *run_id,
                     struct sl_err *err);
/** @brief Workflow run data. 0 or SL_ENOENT. */
int sl_jm_wfrun_get(struct sl_jm *jm,
                    const char *job,
                    const char *run_id,
                    const char *wfrun_id,
                    json_t **out,
                    struct sl_err *err);
/** @brief Cancel one workflow run. 0, SL_ENOENT, SL_EBADSTATE. */
int sl_jm_wfrun_cancel(struct sl_jm *jm,
                       const char *job,
                       const char *run_id,
                       const char *wfrun_id,
                       struct sl_err *err);
/** @brief State of the job's active run ("RUNNING"...) or NULL; borrowed
 * static string. */
const char *
sl_jm_run_state(struct sl_jm *jm, const char *job, const char *run_id);
/** @brief Active workflow runs of the job's active run (0: none, or no
 * active run); thread-safe. */
unsigned sl_jm_run_active_wfruns(struct sl_jm *jm, const char *job);

/**
 * @brief Is object store @p store used by an active run (as the store of
 * one of its buckets)?
 * @return 1 and the job's name in @p job (if not NULL), or 0.
 */
int sl_jm_store_in_use(struct sl_jm *jm,
                       const char *store,
                       char job[SL_NAME_MAX + 1]);

/**
 * @brief Is data source @p source (NULL: any) crawled by an active run
 * (its "dataSource" parameter)?
 * @return 1 and the job's name in @p job (if not NULL), or 0.
 */
int sl_jm_source_in_use(struct sl_jm *jm,
                        const char *source,
                        char job[SL_NAME_MAX + 1]);

/**
 * @brief The names of the jobs with an active run, as a new JSON array
 * (caller decrefs), in no particular order.
 */
json_t *sl_jm_active_jobs(struct sl_jm *jm);

/**
 * @brief Does an active run have an action of worker @p worker whose
 * parameter @p param resolves (job, "<worker>.<param>", workflow and
 * action parameters, as its tasks get them) to the string @p value?  The
 * jobmanager knows no worker: the caller says which, and what an unset
 * parameter means (@p dflt; NULL: an unset parameter never matches).
 * @return 1 and the job's name in @p job (if not NULL), or 0.
 */
int sl_jm_param_in_use(struct sl_jm *jm,
                       const char *worker,
                       const char *param,
                       const char *dflt,
                       const char *value,
                       char job[SL_NAME_MAX + 1]);

/* ------------------------------------------------------------------------
 * Tasks (the protocol of /smila/tasks/, also used by internal workers).
 * --------------------------------------------------------------------- */

/**
 * @brief Take the next task for @p worker (todo -> in progress, leased).
 * @param[in] qualifiers array of strings or NULL (any).
 * @return 0 and the task JSON in *out (docs/jobmanager.md), SL_ENOENT when
 *   none is available (or a limit is reached), SL_ENOENT for an unknown
 *   worker is told apart by err->field "worker".
 */
int sl_jm_task_take(struct sl_jm *jm,
                    const char *worker,
                    const char *host,
                    const json_t *qualifiers,
                    json_t **out,
                    struct sl_err *err);
/**
 * @brief A bulkSource worker (the bulkbuilder) asks for an initial task of
 * the running standard job @p job: a new workflow run with one task of
 * the start action, handed out in progress to the caller at once (SMILA's
 * getInitialTask).  The caller writes the task's outputs and finishes it
 * with sl_jm_task_finish like any task; the task is persisted, so after a
 * crash it is todo again in @p worker's queue.
 * @return 0 and the task JSON in *out (caller json_decref's it),
 *   SL_ENOTREADY (no such job, or it is not running in standard mode),
 *   SL_EINVAL (@p worker is not the job's start worker or not a
 *   bulkSource), or a store error.
 */
int sl_jm_task_initial(struct sl_jm *jm,
                       const char *job,
                       const char *worker,
                       json_t **out,
                       struct sl_err *err);
/**
 * @brief Take task @p task_id of @p worker back after a restart, whether
 * it is todo or in progress (the lease is renewed).  For bulkSource
 * workers that record their task ids.
 * @return 0 and the task JSON in *out, or SL_EGONE (no such task: it was
 * finished, or its run ended).
 */
int sl_jm_task_reclaim(struct sl_jm *jm,
                       const char *worker,
                       const char *task_id,
                       json_t **out,
                       struct sl_err *err);
/**
 * @brief Is @p job running in standard mode with the bulkSource worker
 * @p worker as its start worker?  0, SL_ENOTREADY or SL_EINVAL as for
 * sl_jm_task_initial (why in @p err, which may be NULL).
 */
int sl_jm_bulk_source_ready(struct sl_jm *jm,
                            const char *job,
                            const char *worker,
                            struct sl_err *err);
/**
 * @brief Wait up to @p timeout_ms for new work of @p worker: returns at
 * once when its work generation differs from @p seen (its tasks were
 * queued, committed or finished since, or an event completed), else when
 * it changes or the time is up.  Returns the current generation, to pass
 * as @p seen next time.  Only this worker's waiters are woken by its
 * tasks.  In-process pools use it instead of polling.
 */
uint64_t sl_jm_work_wait(struct sl_jm *jm,
                         const char *worker,
                         uint64_t seen,
                         unsigned timeout_ms);
/** @brief Renew the lease. 0, or SL_EGONE (not in progress any more). */
int sl_jm_task_keepalive(struct sl_jm *jm,
                         const char *worker,
                         const char *task_id,
                         struct sl_err *err);
/**
 * @brief Finish a task with @p result {"status", "errorMessage",
 * "counters": {name: number}, "prerequisiteEvents": [names] (POSTPONE),
 * "documents": [entries] (see sl_jm_run_documents)}.  Output objects that
 * exist now are committed outputs; the documents are recorded with a
 * SUCCESSFUL finish (entries that break the rules are left out and
 * counted as documents.invalid; "documents" not an array: SL_EINVAL).
 * @return 0, SL_EGONE (not in progress: expired, canceled, finished),
 *   SL_EINVAL (bad result; err names the field), SL_ENOTREADY (the object
 *   store could not be asked which outputs exist: the task stays in
 *   progress, finish it again), or another store error (same: refused).
 */
int sl_jm_task_finish(struct sl_jm *jm,
                      const char *worker,
                      const char *task_id,
                      const json_t *result,
                      struct sl_err *err);
/** @brief {"workers": [{"name","todo","inprogress"}]} or one worker's
 * {"todo":{"count"},"inprogress":{"count"}}; NULL for an unknown worker. */
json_t *sl_jm_task_counts(struct sl_jm *jm, const char *worker);
/**
 * @brief The jobmanager's metrics since the process started, for
 * GET /metrics (docs/operations.md "Metrics"); thread-safe.
 * @return a new object:
 * {"workers": [{"name", "todo", "inProgress", "taken",
 *   "tasks": {"<task counter>": n}, "counters": {"<name>": total}}],
 *  "runs": {"active": {"<state>": n}, "ended": {"<state>": n}},
 *  "workflowRuns": {"active": n, "<workflow run counter>": total},
 *  "store": {"mapUsed", "mapSize"}} (bytes of its LMDB map);
 * the task counters are those of a run's "tasks" without "TaskCount"
 * ("successful", "retriedAfterError", ...), the worker counters those of
 * the runs' "worker" data summed over the runs and actions, at most
 * SL_JM_METRICS_COUNTERS names a worker (the rest are left out).
 */
json_t *sl_jm_metrics(struct sl_jm *jm);
#define SL_JM_METRICS_COUNTERS 256

/* ------------------------------------------------------------------------
 * Per-document history.  A worker reports what happened to a document in
 * its task's finish ("documents": [{"state", "id", "source", "reason",
 * "message"}]); a SUCCESSFUL finish records them in the run's history (and
 * failures and skips as the document's last problem), in the same group
 * commit as the finish.
 * --------------------------------------------------------------------- */

enum sl_jm_doc_state {
    SL_JM_DOC_NEW = 0,     /* pushed, not known before */
    SL_JM_DOC_CHANGED = 1, /* pushed as an update */
    SL_JM_DOC_DELETED = 2, /* deleted from the index */
    SL_JM_DOC_FAILED = 3,  /* a worker could not process it */
    SL_JM_DOC_SKIPPED = 4, /* left out by a filter or a limit */
    SL_JM_DOC_NSTATES = 5
};

/* Most entries one finish may carry, and the longest fields. */
#define SL_JM_DOCS_PER_FINISH 10000
#define SL_JM_DOC_ID_MAX      8192
#define SL_JM_DOC_REASON_MAX  128
#define SL_JM_DOC_MESSAGE_MAX 1024

/** @brief "new", "changed", "deleted", "failed", "skipped". */
const char *sl_jm_doc_state_name(enum sl_jm_doc_state s);
/** @brief The state named @p name, or -1. */
int sl_jm_doc_state_parse(const char *name);
/**
 * @brief A page of the history of run @p run_id of @p job (NULL: the
 * active run, else the newest), entries of state @p state (-1: all) from
 * entry number @p after on (0: from the oldest kept; a page's "next" for
 * the following page), at most @p limit (1..1000); one page looks at no
 * more than 100,000 entries, so a page may hold fewer and still a "next":
 * {"job", "runId", "state" (the run's), "counts": {state: n, "recorded": n,
 * "notRecorded": n}, "documents": [{"seq", "state", "id", "source", "worker",
 * "reason", "message", "time"}], "next": n (when more may follow)}.
 * @return 0, SL_ENOENT (no such job or run; err says which), SL_EIO.
 */
int sl_jm_run_documents(struct sl_jm *jm,
                        const char *job,
                        const char *run_id,
                        int state,
                        uint64_t after,
                        unsigned limit,
                        json_t **out,
                        struct sl_err *err);
/**
 * @brief The last problem of document @p id of source @p source: its
 * newest failure or skip ({"job", "runId", "state", "worker", "reason",
 * "message", "time"}), kept until the document is pushed again or
 * deleted.
 * @return 0, SL_ENOENT (none), SL_EIO.
 */
int sl_jm_document_problem(struct sl_jm *jm,
                           const char *source,
                           const char *id,
                           json_t **out,
                           struct sl_err *err);
/** @brief Forget the last problems of every document of @p source (a
 * purge of the source).  0 or SL_EIO. */
int sl_jm_documents_forget(struct sl_jm *jm,
                           const char *source,
                           struct sl_err *err);

/* ------------------------------------------------------------------------
 * Event sequencing (ManifoldCF IEventActivity).
 * --------------------------------------------------------------------- */

/**
 * @brief Event names: 1 to SL_NAME_MAX bytes of UTF-8 without control
 * characters.  0, or SL_EINVAL naming @p field.
 */
int
sl_jm_event_name_check(const char *name, const char *field, struct sl_err *err);
/** @brief Begin event @p name: 1 if it began, 0 if already pending;
 * SL_EINVAL for a bad name. */
int sl_jm_event_begin(struct sl_jm *jm, const char *name, struct sl_err *err);
/** @brief Complete event @p name (tasks waiting on it become eligible). */
int
sl_jm_event_complete(struct sl_jm *jm, const char *name, struct sl_err *err);

#endif /* SL_JOBMANAGER_H_INCLUDED */
