/*
 * Private to the run engine (engine.c, run_json.c, cleanup.c, run_start.c,
 * run_query.c, events.c, tasks.c, flow.c, outputs.c, recover.c,
 * defs_api.c): the in-memory state.  Everything here is guarded by jm->mu;
 * changes are mirrored into the state store (queued under the same lock, so
 * commit order is memory order) and the caller waits for the commit before
 * it answers.
 */
#ifndef SL_ENGINE_INT_H_INCLUDED
#define SL_ENGINE_INT_H_INCLUDED

#include "jobmanager/jobmanager_int.h"
#include "jobmanager/sched_int.h"

enum run_state {
    RS_PREPARING = 0,
    RS_RUNNING,
    RS_FINISHING,
    RS_COMPLETING,
    RS_CLEANINGUP,
    RS_SUCCEEDED,
    RS_FAILED,
    RS_CANCELING,
    RS_CANCELED,
};

/* Task counters of a run (its "tasks", docs/jobmanager.md), in this order. */
enum task_counter {
    TC_CREATED = 0,
    TC_SUCCESSFUL,
    TC_RETRIED_ERROR,
    TC_RETRIED_TIMEOUT,
    TC_FAILED_NO_RETRY,
    TC_FAILED_AFTER_RETRY,
    TC_OBSOLETE,
    TC_CANCELLED,
    TC_RETRIED_NOSPACE, /* given back after a full disk, no retry counted */
    TC_N
};

/* Workflow run counters ("workflowRuns", docs/jobmanager.md); active is
 * computed. */
enum wf_counter { WC_STARTED = 0, WC_SUCCESSFUL, WC_FAILED, WC_CANCELED, WC_N };

struct run;
struct wqueue;

struct task {
    struct task *hnext;       /* hash chain */
    struct task *prev, *next; /* todo list of its jobq, or in-progress */
    char id[40];              /* a UUID; a retry gets a new id */
    struct run *run;
    struct wqueue *wq;
    struct jobq *jq; /* its todo list (NULL while in progress) */
    unsigned wfrun;  /* workflow run number */
    int action;      /* 0 = start action, i + 1 = actions[i] */
    json_t *json;    /* the task JSON of docs/jobmanager.md (owned) */
    json_t *events;  /* prerequisite event names, or NULL */
    int inprogress;
    int64_t lease_until;  /* monotonic ms */
    uint64_t created_seq; /* store sequence of its creation: handed out
                             only once that is committed, so no worker
                             writes outputs for a task a crash forgets */
    int flow_counted;     /* counted in its run's flow todo (flow.c) */
};

/* Todo tasks of one run for one worker, FIFO. */
struct jobq {
    struct jobq *next; /* ring of the worker's jobqs */
    struct run *run;
    struct task *head, *tail;
    size_t count;
};

struct wqueue {
    struct wqueue *next;
    const struct sl__jm_worker *worker;
    struct jobq *rr; /* next jobq to serve (ring), or NULL */
    struct task *ip; /* in-progress list */
    size_t todo;
    size_t inprogress;
    unsigned limit;     /* 0 = none */
    pthread_cond_t cv;  /* this worker's idle takers wait here (mu) */
    uint64_t gen;       /* bumped when its tasks may have become takeable */
    uint64_t await_seq; /* store sequence of its newest uncommitted task,
                           0 when none: work_committed wakes it then */
    uint64_t taken;     /* tasks handed out since the start (metrics) */
    uint64_t tc[TC_N];  /* its tasks by task counter since the start */
};

/* Flow control of a run (flow.c), made on first use. */
struct flow {
    size_t n;             /* actions, the start action included */
    unsigned *todo;       /* per action: todo tasks without events */
    unsigned char *after; /* n x n: after[a * n + d], d strictly after a */
    int waiting;          /* an action was held back since the last wake */
};

struct wfrun {
    struct wfrun *next;
    unsigned id;
    unsigned open;  /* tasks not yet finished */
    int failed;     /* a task failed fatally */
    int completion; /* the completion phase's workflow run */
    /* A pass of a continuous run (continuous.c): the pass it belongs to
     * (its own id; an expiry phase's, the reseed pass's), 0: none */
    unsigned pass;
    int pass_reseed;     /* a reseed pass, else a due pass */
    int64_t pass_ms;     /* the pass's time (the schedules' clock) */
    unsigned incomplete; /* its tasks that could not read all their input */
};

/* A continuous run's passes (continuous.c, docs/jobmanager.md). */
struct continuous {
    struct sl__jm_cont_cfg cfg;
    int64_t next_pass_ms;   /* the next pass starts then (0: at once) */
    int64_t last_reseed_ms; /* the last reseed pass started then (0: none) */
    uint64_t passes;        /* passes started */
    uint64_t expiries;      /* expiry phases started */
};

struct run {
    struct run *next;
    char job[SL_NAME_MAX + 1];
    char id[SL_JM_RUN_ID_MAX];
    int runonce;
    int continuous; /* mode continuous (runonce 0) */
    struct continuous cont;
    enum run_state state;
    int64_t start_ms, finish_ms, end_ms;
    json_t *jobdef; /* definitions at start (owned) */
    json_t *wfdef;
    json_t *buckets;   /* bucket -> {"store","persistent"} */
    char *data_source; /* "dataSource" parameter or NULL */
    uint64_t tc[TC_N];
    uint64_t wc[WC_N];
    json_t *worker;       /* "<i>_<worker>" -> {counter: number} */
    json_t *errors;       /* recent task errors, bounded */
    struct wfrun *wfruns; /* active workflow runs */
    unsigned next_wfrun;
    unsigned active_wfruns;
    int had_fatal; /* a fatal task error before completion */
    int paused;    /* no task of it is handed out (sl_jm_run_pause) */
    int cleanup_queued;
    uint64_t incomplete;  /* tasks that could not read all their input */
    char *incomplete_why; /* the first one's reason, or NULL */
    json_t *completion;   /* {"ran": true} or {"skipped": why}, or NULL
                             before the run got there */
    uint64_t docs[SL_JM_DOC_NSTATES]; /* documents reported, by state */
    uint64_t hist_first;              /* its history entries kept: */
    uint64_t hist_next;               /* [hist_first, hist_next) */
    struct flow *flow;                /* NULL until a task is queued */
};

/* A deletion for the clean-up thread. */
struct cleanup {
    struct cleanup *next;
    char *store;
    char *id;                  /* exact object, or NULL */
    char *prefix;              /* every object under it, or NULL */
    char job[SL_NAME_MAX + 1]; /* when set: finalize this run after */
    char run_id[SL_JM_RUN_ID_MAX];
    json_t *ended; /* or: [[worker, params], ...] for the run end hook */
    char ended_job[SL_NAME_MAX + 1]; /* of @ended */
    int prune; /* or: drop history entries by the retention rules */
};

struct sl_jm {
    struct sl_jm_config cfg;
    /* sl_jm_set_start_check; called without mu held */
    int (*start_check)(void *arg,
                       const char *job,
                       const char *worker,
                       const json_t *params,
                       struct sl_err *err);
    void *start_check_arg;
    /* sl_jm_set_run_end_hook; called without mu held */
    void (*run_end)(void *arg,
                    const char *job,
                    const char *worker,
                    const json_t *params);
    void *run_end_arg;
    /* sl_jm_set_sched_finish; called without mu held */
    int (*sched_finish)(void *arg,
                        const char *job,
                        const char *run_id,
                        struct sl_err *err);
    void *sched_finish_arg;
    int64_t sched_now;      /* the last sl_jm_sched_tick's time (under mu) */
    json_t *sched_states;   /* job -> its schedule state (sched.c, tick lock) */
    pthread_cond_t work_cv; /* takers of unknown workers wait here */
    uint64_t work_gen;      /* bumped when any worker's tasks may have
                               become takeable (every queue is woken) */
    char *state_dir;
    char *config_dir;
    char *workflows_dir;
    struct sl__jm_defs *defs;
    struct sl__jm_store *st;
    int started;

    pthread_mutex_t mu; /* guards everything below */
    struct run *runs;   /* active runs */
    struct wqueue *queues;
    struct task **tasks; /* hash table by id */
    size_t tasks_cap;
    size_t ntasks;
    size_t inprogress;
    json_t *events; /* pending event names -> true */

    /* A task that failed for want of space (errorCode NO_SPACE) pauses
     * every hand-out: no task is taken until the pause is over. */
    struct sl_backoff nospace;
    int nospace_paused; /* a pause was logged and its end is not yet */

    pthread_t lease_thread;
    pthread_cond_t lease_cv;
    int64_t lease_tick_ms; /* monotonic ms of the lease timer's last tick
                            * (or its start) */
    int stopping;

    pthread_t cleanup_thread;
    pthread_cond_t cleanup_cv;
    struct cleanup *cleanups;
    struct cleanup *cleanups_tail;
    int64_t prune_ms; /* monotonic ms of the last history retention pass */

    /* metrics.c: what ended runs add to the process's totals */
    uint64_t ended[3]; /* runs ended SUCCEEDED, FAILED, CANCELED */
    uint64_t ended_wc[WC_N];
    json_t *ended_counters; /* {worker: {counter: total}} */
};

/* metrics.c: the process-lifetime metrics (sl_jm_metrics); jm->mu held */
/* Count task counter @c for run @r and the worker of task @t. */
void sl__jm_tc_add(struct run *r, struct task *t, enum task_counter c);
/* Run @r leaves the active runs: its counts go to the totals. */
void sl__jm_metrics_run_ended(struct sl_jm *jm, const struct run *r);
/* The JSON name of task counter @c ("createdTaskCount", run_json.c). */
const char *sl__jm_tc_name(enum task_counter c);

/* engine.c: runs and the run state machine, lease timer, life cycle */
const char *sl__jm_state_name(enum run_state s);
int sl__jm_state_parse(const char *name, enum run_state *out);
void sl__jm_run_requeue_cleanup(struct sl_jm *jm, struct run *r);
void *sl__jm_lease_main(void *arg);
/* Whether @r hands out no task: paused (sl_jm_run_pause) while RUNNING or
 * FINISHING; its completion phase is not held. */
static inline int
sl__jm_run_paused(const struct run *r)
{
    return r->paused && (r->state == RS_RUNNING || r->state == RS_FINISHING);
}
struct run *sl__jm_run_find(struct sl_jm *jm, const char *job);
struct wfrun *sl__jm_wfrun_new(struct run *r);
struct wfrun *sl__jm_wfrun_find(struct run *r, unsigned id);
/* Unlink workflow run @w from @r and free it. */
void sl__jm_wfrun_unlink(struct run *r, struct wfrun *w);
/* Free run @r (unlinked, or never linked) and its workflow runs. */
void sl__jm_run_free(struct run *r);
/* Unlink run @r from jm->runs and from the workers' queues. */
void sl__jm_run_unlink(struct sl_jm *jm, struct run *r);
/* Record that run @r, ending without a completion phase, deleted nothing
 * and why (@why, owned): "completion": {"skipped": why} in its data. */
void sl__jm_note_skipped(struct sl_jm *jm, struct run *r, json_t *why);
void sl__jm_run_check_done(struct sl_jm *jm, struct run *r);
void sl__jm_run_fail(struct sl_jm *jm, struct run *r);
json_t *sl__jm_action(const struct run *r, int action);
/* The worker of action @a of @r when it requests a completion phase. */
const struct sl__jm_worker *
sl__jm_completion_worker(struct sl_jm *jm, struct run *r, size_t a);
/* The completion tasks of action @a (worker @w) in workflow run @wf. */
void sl__jm_completion_tasks(struct sl_jm *jm,
                             struct run *r,
                             struct wfrun *wf,
                             size_t a,
                             const struct sl__jm_worker *w);
/* The schedules' clock: the last tick's time, or the wall clock. */
int64_t sl__jm_clock(struct sl_jm *jm);

/* continuous.c: the passes of continuous runs; jm->mu held */
/* Start the passes that are due at @now. */
void sl__jm_continuous_tick(struct sl_jm *jm, int64_t now);
/* Workflow run @w of continuous run @r has no open task left: a complete
 * reseed pass starts its expiry phase (a new workflow run). */
void
sl__jm_continuous_pass_done(struct sl_jm *jm, struct run *r, struct wfrun *w);
/* The task properties of @w's pass (passId, passKind, passTime; an
 * expiry phase's also expireBefore), or NULL when @w is no pass; a new
 * reference. */
json_t *sl__jm_continuous_props(const struct run *r, const struct wfrun *w);
/* The run data's "continuous" part (with @internal: the persisted one). */
json_t *sl__jm_continuous_json(const struct run *r, int internal);
/* Load what sl__jm_continuous_json(r, 1) wrote. */
void sl__jm_continuous_load(struct run *r, const json_t *j);

/* run_json.c: the run data JSON, also the persisted form */
void sl__jm_run_counters_load(struct run *r, const json_t *j);
void sl__jm_run_persist(struct sl_jm *jm, struct run *r);
/* Key of a run in the runs database: "<job>\0<runId>"; its length. */
size_t sl__jm_run_key(char *buf, size_t cap, const char *job, const char *id);
/* The run's JSON (with @internal: its _internal part too); a new
 * reference that shares nothing that changes while the run goes on (the
 * worker counters and errors are copies), so it may be serialised after
 * jm->mu is released.  Call with jm->mu held. */
json_t *sl__jm_run_json(const struct run *r, int internal);

/* cleanup.c: transient objects of ended runs */
void *sl__jm_cleanup_main(void *arg);
/* Queue a pass of the history retention over every job; jm->mu held. */
void sl__jm_cleanup_prune(struct sl_jm *jm);
void sl__jm_cleanup_push(struct sl_jm *jm,
                         const char *store,
                         const char *id,
                         const char *prefix,
                         const struct run *finalize);
/* Queue deletion of the transient objects of run @r (or of its workflow
 * run @wfrun when > 0); @finalize: the run's own end. */
void sl__jm_cleanup_transient(struct sl_jm *jm,
                              struct run *r,
                              unsigned wfrun,
                              int finalize);
/* Queue deletion of the inputs of @task (a task of @r that succeeded)
 * in transient buckets that only its action reads; jm->mu held. */
void sl__jm_cleanup_inputs(struct sl_jm *jm,
                           const struct run *r,
                           const json_t *task);

/* flow.c: flow control; jm->mu held.  Count the task @t just queued,
 * uncount it when it leaves its todo list, and whether action @action of
 * @r waits for the actions after it (jm->cfg.max_queued_downstream). */
void sl__jm_flow_queued(struct task *t);
void sl__jm_flow_unqueued(struct sl_jm *jm, struct task *t);
int sl__jm_flow_held(const struct sl_jm *jm, struct run *r, int action);
void sl__jm_flow_free(struct run *r);

/* tasks.c */
void sl__jm_wake_queue(struct wqueue *q);
void sl__jm_wake_all(struct sl_jm *jm);
struct wqueue *sl__jm_wqueue(struct sl_jm *jm, const char *worker);
struct task *sl__jm_task_create(struct sl_jm *jm,
                                struct run *r,
                                struct wfrun *wf,
                                int action,
                                json_t *input,
                                json_t *extra_props);
void sl__jm_task_remove(struct sl_jm *jm, struct task *t, int persist);
void sl__jm_task_enqueue(struct task *t);
void sl__jm_tasks_drop_run(struct sl_jm *jm,
                           struct run *r,
                           int wfrun,
                           enum task_counter counter);
struct task *sl__jm_task_get(struct sl_jm *jm, const char *id);
void sl__jm_task_index(struct sl_jm *jm, struct task *t);
#define LEASE_TICK_MS  250  /* the lease timer's period */
#define LEASE_STALL_MS 1000 /* a tick later than this is a stall */
/*
 * The lease timer's tick at @now: a tick late by more than a stall (the
 * process was not scheduled, or jm->mu was held) first moves every lease
 * on by the lateness, since no keep-alive could be heard meanwhile; then
 * the leases that ended are retried.  Called with jm->mu held.
 */
void sl__jm_lease_tick(struct sl_jm *jm, int64_t now);
/* The pause for want of space is over: log it, wake the takers. */
void sl__jm_nospace_tick(struct sl_jm *jm, int64_t now);
/*
 * Which of a task's @outputs ({slot: [bulk]}) exist now: *found = {slot:
 * [bulk + size]} (new); for "multiple" slots every object under the id's
 * folder counts.  Called without jm->mu.  SL_ENOTREADY when the store
 * cannot be asked (S3 busy past its retries): never "nothing written".
 */
int sl__jm_outputs_find(struct sl_jm *jm,
                        const json_t *outputs,
                        json_t **found,
                        struct sl_err *err);
/* Delete the objects in @found (a failed attempt's); without jm->mu. */
void sl__jm_outputs_discard(struct sl_jm *jm, const json_t *found);
/*
 * Per-document history (history.c).  _check tests that a finish's
 * "documents" is an array (without locks); _add records them for run @r
 * under jm->mu, in the group commit of the finish, and returns how many
 * broke the rules and were left out (logged once); _counts is the run data's
 * "documents", _persist and _load the run's kept range in its persisted
 * "_internal"; _prune drops what the retention rules say for @job (NULL: every
 * job), without jm->mu, from the clean-up thread.
 */
int sl__jm_history_check(const json_t *docs, struct sl_err *err);
unsigned sl__jm_history_add(struct sl_jm *jm,
                            struct run *r,
                            const char *worker,
                            const json_t *docs);
json_t *sl__jm_history_counts(const struct run *r);
void sl__jm_history_persist(const struct run *r, json_t *internal);
void sl__jm_history_load(struct run *r, const json_t *j);
void sl__jm_history_prune(struct sl_jm *jm, const char *job);
/* Drop every history entry of run @run_id of @job (a run to delete): 0,
 * or SL_ENOTREADY (stopping) or a store error before all were gone. */
int sl__jm_history_drop(struct sl_jm *jm, const char *job, const char *run_id);
int sl__jm_input_triggers(struct sl_jm *jm,
                          struct run *r,
                          struct wfrun *wf,
                          const char *bucket,
                          const json_t *bulk);

#endif /* SL_ENGINE_INT_H_INCLUDED */
