/*
 * Private to jobmanager/: the definitions registry (defs.c), the LMDB state
 * store with group commit (store.c) and the run engine (engine.c).
 *
 * Definitions are kept as JSON (jansson) because that is what the REST API
 * shows and stores; workers are also parsed into structs because the engine
 * reads their slots and modes on every task.
 */
#ifndef SL_JOBMANAGER_INT_H_INCLUDED
#define SL_JOBMANAGER_INT_H_INCLUDED

#include <pthread.h>

#include "jobmanager/jobmanager.h"

/* ------------------------------------------------------------------------
 * Worker descriptions (SMILA workers.json shape, see docs/jobmanager.md).
 * --------------------------------------------------------------------- */

/* Worker modes. */
#define SL__JM_WORKER_BULK_SOURCE         0x1 /* "bulkSource" */
#define SL__JM_WORKER_REQUESTS_COMPLETION 0x2 /* "requestsCompletion" */
#define SL__JM_WORKER_AUTO_COMMIT         0x4 /* "autoCommit" */

/* Output slot modes. */
#define SL__JM_SLOT_OPTIONAL 0x1 /* "optional": need not be connected */
#define SL__JM_SLOT_MULTIPLE 0x2 /* "multiple": several bulks per task */

/* Task generators. */
enum sl__jm_generator {
    SL__JM_GEN_DEFAULT = 0,     /* "default": one task per new input bulk */
    SL__JM_GEN_RUN_ONCE_TRIGGER /* "runOnceTrigger": one initial task */
};

struct sl__jm_slot {
    char *name;
    char *type;     /* data object type, "recordBulks" */
    unsigned modes; /* SL__JM_SLOT_* */
    char *group;    /* slot group label or NULL */
};

struct sl__jm_param_decl {
    char *name;     /* "<...>" declares "any further parameters" */
    int optional;   /* 1 if it need not be set */
    int any_type;   /* "type": "any" (objects and arrays allowed) */
    json_t *values; /* "values": the allowed strings, or NULL (any) */
};

struct sl__jm_worker {
    char *name;
    unsigned modes; /* SL__JM_WORKER_* */
    enum sl__jm_generator generator;
    struct sl__jm_param_decl *params;
    size_t nparams;
    struct sl__jm_slot *input;
    size_t ninput;
    struct sl__jm_slot *output;
    size_t noutput;
    json_t *json; /* the description as REST shows it, "readOnly": true */
    /* Completion partitions for requestsCompletion workers (NULL: 1). */
    unsigned (*completion_partitions)(const json_t *params);
};

/**
 * @brief Parse and check a worker description.
 * @return 0 and a new worker in *out (free with sl__jm_worker_free), or
 * SL_EINVALDEF naming the field ("output[1].modes").
 */
int sl__jm_worker_parse(const json_t *desc,
                        struct sl__jm_worker **out,
                        struct sl_err *err);
void sl__jm_worker_free(struct sl__jm_worker *w);

/* ------------------------------------------------------------------------
 * The definitions registry.  Thread-safe (an internal rwlock).  Getters
 * return new references (caller json_decref's them) so a concurrent update
 * never pulls a definition from under a reader.
 * --------------------------------------------------------------------- */

enum sl__jm_kind {
    SL__JM_BUCKET = 0,
    SL__JM_WORKFLOW = 1,
    SL__JM_JOB = 2,
};

struct sl__jm_defs;

/** @brief New empty registry (only the data object type recordBulks). */
struct sl__jm_defs *sl__jm_defs_new(void);
void sl__jm_defs_free(struct sl__jm_defs *d);

/**
 * @brief Register a worker (before any workflow is loaded).  Takes
 * ownership of @p w (also on failure).
 * @return 0 or SL_EEXIST.
 */
int sl__jm_defs_add_worker(struct sl__jm_defs *d, struct sl__jm_worker *w);
/** @brief Worker by name; borrowed, valid for the registry's lifetime. */
const struct sl__jm_worker *sl__jm_defs_worker(const struct sl__jm_defs *d,
                                               const char *name);
/** @brief New array of the worker descriptions (JSON), sorted by name. */
json_t *sl__jm_defs_workers_json(const struct sl__jm_defs *d);
/** @brief New array of the data object types (JSON). */
json_t *sl__jm_defs_dots_json(void);

/**
 * @brief Validate and add or replace a definition.
 * @param[in] def the definition; borrowed (a normalized copy is stored:
 *   "readOnly" set from @p readonly, "timestamp" set for user definitions,
 *   unknown extra fields kept).
 * @param[in] readonly 1 for predefined (files), 0 for REST/LMDB ones.
 * @param[out] stored if not NULL, a new reference to the stored copy (what
 *   the caller persists for user definitions).
 * @return 0, SL_EBADNAME / SL_EINVALDEF (err names the entity and field,
 *   e.g. field "actions[1].input.filesToFetch"), SL_EREADONLY when a
 *   predefined definition of that name exists and @p readonly is 0.
 */
int sl__jm_defs_put(struct sl__jm_defs *d,
                    enum sl__jm_kind kind,
                    const json_t *def,
                    int readonly,
                    json_t **stored,
                    struct sl_err *err);
/** @brief New reference to a definition, or NULL. */
json_t *sl__jm_defs_get(const struct sl__jm_defs *d,
                        enum sl__jm_kind kind,
                        const char *name);
/** @brief New array of all definitions of @p kind, sorted by name. */
json_t *sl__jm_defs_list(const struct sl__jm_defs *d, enum sl__jm_kind kind);
/**
 * @brief Remove a user definition.
 * @return 0, SL_ENOENT, SL_EREADONLY, SL_ECONFLICT (a workflow or bucket
 *   used by a job: err names the job).
 */
int sl__jm_defs_delete(struct sl__jm_defs *d,
                       enum sl__jm_kind kind,
                       const char *name,
                       struct sl_err *err);

/**
 * @brief Load the predefined definitions: @p config_dir/buckets.json
 * ({"buckets": [...]}), then every *.json file of @p workflows_dir (a
 * workflow object, or {"workflows": [...]}), in name order, then
 * @p config_dir/jobs.json ({"jobs": [...]}).  Missing files are fine.  An
 * entity with an error is logged with file name, entity and field and
 * skipped; the rest still loads.
 * @return the number of entities that failed to load (0 = all fine).
 */
int sl__jm_defs_load_files(struct sl__jm_defs *d,
                           const char *config_dir,
                           const char *workflows_dir);

/* ------------------------------------------------------------------------
 * Resolution helpers, used by validation and by the engine for each task.
 * --------------------------------------------------------------------- */

/**
 * @brief Parameters of a task of @p action (an element of the workflow's
 * "actions" or its "startAction") in @p job: job parameters, then the job's
 * "<worker>.<param>" keys for this worker (prefix stripped), then workflow
 * parameters, then action parameters; later wins.
 * @return a new object.
 */
json_t *sl__jm_task_params(const json_t *job,
                           const json_t *workflow,
                           const json_t *action);

/** Where the objects of a bucket live, for one job. */
struct sl__jm_bucket_info {
    char name[SL_NAME_MAX + 1];
    char store[SL_NAME_MAX + 1];
    int persistent; /* a defined bucket; else transient */
};

/**
 * @brief Resolve bucket @p bucket as used by @p workflow in @p job: a
 * persistent bucket's store is "${store}", taken from the bucket's
 * parameters if set there, else the workflow's, else the job's; a
 * transient bucket's store is "${tempStore}" from the workflow's, else the
 * job's parameters.
 * @return 0 or SL_EINVALDEF ("bucket 'x': parameter 'store' is not set").
 */
int sl__jm_bucket_resolve(const struct sl__jm_defs *d,
                          const json_t *job,
                          const json_t *workflow,
                          const char *bucket,
                          struct sl__jm_bucket_info *out,
                          struct sl_err *err);

/* ------------------------------------------------------------------------
 * State store: one LMDB environment with group commit (store.c).
 * --------------------------------------------------------------------- */

/* Named databases. */
enum sl__jm_dbi {
    SL__JM_DB_DEFS = 0,   /* "<kind>\0<name>" -> definition JSON */
    SL__JM_DB_RUNS = 1,   /* "<job>\0<runId>" -> run JSON */
    SL__JM_DB_TASKS = 2,  /* "<taskId>" -> task JSON */
    SL__JM_DB_EVENTS = 3, /* "<event>" -> "" (pending) */
    SL__JM_DB_META = 4,   /* misc counters */
    SL__JM_NDB = 5
};

struct sl__jm_store;
struct sl__jm_batch;

int sl__jm_store_open(const char *dir,
                      enum sl_durability durability,
                      struct sl__jm_store **out,
                      struct sl_err *err);
void sl__jm_store_close(struct sl__jm_store *s);
/**
 * @brief The server is stopping: a group commit that fails from now on is
 * given up instead of retried (as at close), so no caller waits for a
 * disk that stays full; a healthy store commits as before.
 */
void sl__jm_store_give_up(struct sl__jm_store *s);
/** @brief Test knob: every group commit fails with LMDB error @p rc (an
 * errno such as ENOSPC) until called with 0. */
void sl__jm_store_test_fail(struct sl__jm_store *s, int rc);
/**
 * @brief Make the writer take queued changes only while holding @p lock,
 * the lock under which callers queue the changes of one operation: then
 * one operation's changes always commit together (atomically).
 */
void sl__jm_store_set_swap_lock(struct sl__jm_store *s, pthread_mutex_t *lock);
/**
 * @brief Queue a put (key and value are copied).  Queued changes commit in
 * order, in groups, on the writer thread.
 * @return the change's sequence number, for sl__jm_store_wait.
 */
uint64_t sl__jm_store_put(struct sl__jm_store *s,
                          enum sl__jm_dbi db,
                          const void *key,
                          size_t klen,
                          const void *val,
                          size_t vlen);
/** @brief Queue a put of compact JSON text; as sl__jm_store_put. */
uint64_t sl__jm_store_put_json(struct sl__jm_store *s,
                               enum sl__jm_dbi db,
                               const void *key,
                               size_t klen,
                               const json_t *val);
/** @brief Queue a delete (absent keys are fine). */
uint64_t sl__jm_store_del(struct sl__jm_store *s,
                          enum sl__jm_dbi db,
                          const void *key,
                          size_t klen);
/** @brief Sequence number of the last queued change. */
uint64_t sl__jm_store_last(struct sl__jm_store *s);
/** Sequence up to which every operation is durable (committed); it stops
 * at a commit that failed for good, so nothing after it is handed out. */
uint64_t sl__jm_store_committed(struct sl__jm_store *s);
/** Call @p notify(@p arg) after every commit, from the writer thread,
 * without the store lock held. */
void sl__jm_store_set_notify(struct sl__jm_store *s,
                             void (*notify)(void *arg),
                             void *arg);
/**
 * @brief Wait until every change up to @p seq is committed (durable per
 * the durability setting).
 * A failing commit is retried with backoff, so this waits until it
 * succeeds.
 * @return 0, or SL_EIO when the store gave up a commit during shutdown.
 */
int sl__jm_store_wait(struct sl__jm_store *s, uint64_t seq, struct sl_err *err);
/**
 * @brief Call @p cb for every entry of @p db whose key starts with
 * @p prefix (NULL: all) in key order, in one read transaction.  @p cb
 * returns 0 to go on; anything else stops the scan and is returned.
 */
int sl__jm_store_scan(struct sl__jm_store *s,
                      enum sl__jm_dbi db,
                      const void *prefix,
                      size_t plen,
                      int (*cb)(void *ctx,
                                const void *key,
                                size_t klen,
                                const void *val,
                                size_t vlen),
                      void *ctx);
/**
 * @brief Read one committed value as JSON.
 * @return 0 with a new reference in *out, SL_ENOENT, SL_ECORRUPT, SL_EIO.
 */
int sl__jm_store_get_json(struct sl__jm_store *s,
                          enum sl__jm_dbi db,
                          const void *key,
                          size_t klen,
                          json_t **out);

#endif /* SL_JOBMANAGER_INT_H_INCLUDED */
