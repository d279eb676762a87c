/*
 * Private to jobmanager/: the definitions registry (defs.c, defs_workers.c,
 * defs_check.c, params.c, defs_files.c; its own helpers in defs_int.h),
 * the LMDB state store with group commit (store.c) and the run engine
 * (engine.c and the files engine_int.h names).
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

/*
 * Parameter types ("type" of a declaration, docs/jobmanager-definitions.md
 * "Parameter declarations").  The jobmanager checks the JSON shape; what a
 * string means (a number, a regex) is the worker's, through the definition
 * check hook (sl_jm_set_def_check).
 */
enum sl__jm_ptype {
    SL__JM_PT_STRING = 0, /* "string" (default): string, number or boolean */
    SL__JM_PT_INTEGER,    /* "integer": a JSON integer or a string */
    SL__JM_PT_NUMBER,     /* "number": a JSON number or a string */
    SL__JM_PT_BOOLEAN,    /* "boolean": true/false or "true"/"false" */
    SL__JM_PT_REGEX,      /* "regex": a string (compiled by the worker) */
    SL__JM_PT_OBJECT,     /* "object": members as declared */
    SL__JM_PT_ARRAY,      /* "array": elements as "items" declares */
    SL__JM_PT_ANY         /* "any": anything, not looked into */
};

struct sl__jm_param_decl {
    char *name;   /* "<...>" declares "any further parameters" */
    int optional; /* 1 if it need not be set */
    enum sl__jm_ptype type;
    json_t *values;   /* "values": the allowed strings, or NULL (any) */
    int references;   /* "references": a kind (enum sl__jm_kind) or -1 */
    int same_for_job; /* "sameForJob": one value for every worker of a job */
    json_t *dflt;     /* "default": the value when not set, or NULL */
    /* "object": the declared members (a "<...>" member lets further
     * members through, checked against its type); no "members" list at
     * all means any members. */
    struct sl__jm_param_decl *members;
    size_t nmembers;
    int has_members;                 /* a "members" list was given */
    struct sl__jm_param_decl *items; /* "array": the elements, or NULL */
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
 * Parameter declarations and the parameter checks of definitions
 * (params.c, docs/jobmanager-definitions.md "Parameter declarations").
 * Pure functions of their arguments; the registry calls them under its
 * lock.
 * --------------------------------------------------------------------- */

/**
 * @brief Parse the "parameters" declarations of worker @p wname (a JSON
 * array, or NULL for none) at field @p path ("parameters").
 * @return 0 with a new array in *out (free with sl__jm_params_free), or
 *   SL_EINVALDEF naming the field ("parameters[2].members[0].type").
 */
int sl__jm_params_parse(const json_t *arr,
                        const char *path,
                        const char *wname,
                        struct sl__jm_param_decl **out,
                        size_t *n,
                        struct sl_err *err);
/** @brief Free what sl__jm_params_parse made; NULL-safe. */
void sl__jm_params_free(struct sl__jm_param_decl *p, size_t n);
/** @brief Declaration @p name of @p p (not a "<...>" one) or NULL;
 * borrowed. */
const struct sl__jm_param_decl *sl__jm_param_find(
    const struct sl__jm_param_decl *p, size_t n, const char *name);
/** @brief The "<...>" declaration of @p p ("any further parameters") or
 * NULL; borrowed. */
const struct sl__jm_param_decl *
sl__jm_param_wildcard(const struct sl__jm_param_decl *p, size_t n);
/** @brief 1 if @p name is a "<...>" wildcard name. */
int sl__jm_param_is_wildcard(const char *name);
/** @brief 1 if @p v has the JSON shape of @p p's type (not looked into). */
int sl__jm_param_shape_ok(const struct sl__jm_param_decl *p, const json_t *v);
/** @brief What @p p's type allows, for messages ("an integer (...)"). */
const char *sl__jm_param_type_text(const struct sl__jm_param_decl *p);
/**
 * @brief A value outside @p p's "values" list: returns 1 and writes the
 * allowed values, comma-separated, into @p allowed; else 0.
 */
int sl__jm_param_value_refused(const struct sl__jm_param_decl *p,
                               const json_t *v,
                               char *allowed,
                               size_t cap);

/**
 * @brief Edit distance of @p a and @p b: insertions, deletions,
 * substitutions and swaps of two neighbouring characters count 1 each
 * (optimal string alignment).  Bytes, not characters; names are ASCII.
 */
size_t sl__jm_edit_distance(const char *a, const char *b);
/**
 * @brief The candidate closest to @p name, if it is close enough to be a
 * likely typo (distance at most 1 for names up to 4 bytes, 2 up to 8, 3
 * beyond; ties go to the first), else NULL.  Borrowed from @p cands.
 */
const char *
sl__jm_suggest(const char *name, const char *const *cands, size_t n);

/**
 * @brief The rule of "sameForJob" declarations: every action of job @p job
 * whose worker (@p ws, start action first, @p nact of them) declares a
 * parameter with "sameForJob": true resolves it to the same value (its
 * "default" when not set; unset without a default takes no part).
 * @return 0, or SL_EINVALDEF with the field "parameters.<name>" naming
 *   the two actions that differ.
 */
int sl__jm_params_check_same(const json_t *job,
                             const json_t *wf,
                             const struct sl__jm_worker *const *ws,
                             size_t nact,
                             struct sl_err *err);

/**
 * @brief The job keys that are not parameters of any worker but still
 * mean something: @p known (borrowed JSON object used as a set: the
 * template variables of the workflow's buckets and the workflow's own
 * parameter names) gets the jobmanager's own keys added.
 */
void sl__jm_params_add_engine_keys(json_t *known);
/**
 * @brief Check the keys and values of job @p job's own "parameters"
 * against the declarations of the workers of @p wf (@p ws: the worker of
 * each action, start action first, @p nact of them): every key is declared
 * by a worker that receives it (a "<worker>.<param>" key by that worker),
 * a worker with a "<...>" declaration takes any key, and plain keys may
 * also be in @p known; values have their declared shapes, nested members
 * included.
 * @return 0 or SL_EINVALDEF naming "parameters.<path>", with the closest
 *   declared name when one is close.
 */
int sl__jm_params_check_job(const json_t *job,
                            const json_t *wf,
                            const struct sl__jm_worker *const *ws,
                            size_t nact,
                            const json_t *known,
                            struct sl_err *err);
/**
 * @brief The same for workflow @p wf's own "parameters" (every worker of
 * it receives them; @p known as for jobs) and each action's "parameters"
 * (its worker only, plus the jobmanager's keys).
 */
int sl__jm_params_check_workflow(const json_t *wf,
                                 const struct sl__jm_worker *const *ws,
                                 size_t nact,
                                 const json_t *known,
                                 struct sl_err *err);
/**
 * @brief The worker of @p wf that job key @p key is meant for ("W.<p>",
 * the longest such worker name W of the workflow), or NULL; borrowed.
 */
const char *sl__jm_key_owner(const json_t *wf, const char *key);

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
 * @param[in] flags 1 (SL__JM_PUT_READONLY) for predefined (files), 0
 *   for REST/LMDB ones; SL__JM_PUT_LENIENT may be or'ed in for a stored
 *   user definition reloaded at start: the checks that catch mistakes
 *   (unknown parameters, nested shapes, the worker check, references,
 *   buckets nothing writes) then only log a warning, so a definition
 *   stored before they existed is not lost.
 * @param[out] stored if not NULL, a new reference to the stored copy (what
 *   the caller persists for user definitions).
 * @return 0, SL_EBADNAME / SL_EINVALDEF (err names the entity and field,
 *   e.g. field "actions[1].input.filesToFetch"), SL_EREADONLY when a
 *   predefined definition of that name exists and @p readonly is 0.
 */
int sl__jm_defs_put(struct sl__jm_defs *d,
                    enum sl__jm_kind kind,
                    const json_t *def,
                    int flags,
                    json_t **stored,
                    struct sl_err *err);
#define SL__JM_PUT_READONLY 0x1
#define SL__JM_PUT_LENIENT  0x2

/**
 * @brief The definition check (sl_jm_set_def_check): called for every
 * action of a job being defined with the worker's description and the
 * action's resolved parameters (both borrowed), under the registry's write
 * lock, so it must not call back into the jobmanager.
 */
typedef int (*sl__jm_def_check_fn)(void *arg,
                                   const char *job,
                                   const char *worker,
                                   const json_t *desc,
                                   const json_t *params,
                                   struct sl_err *err);
/** @brief Install the definition check (NULL: none); before any put. */
void sl__jm_defs_set_check(struct sl__jm_defs *d,
                           sl__jm_def_check_fn check,
                           void *arg);

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
/** @brief Could sl__jm_defs_delete delete it?  The same returns; nothing
 * changes. */
int sl__jm_defs_deletable(struct sl__jm_defs *d,
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
    SL__JM_DB_DEFS = 0,    /* "<kind>\0<name>" -> definition JSON */
    SL__JM_DB_RUNS = 1,    /* "<job>\0<runId>" -> run JSON */
    SL__JM_DB_TASKS = 2,   /* "<taskId>" -> task JSON */
    SL__JM_DB_EVENTS = 3,  /* "<event>" -> "" (pending) */
    SL__JM_DB_META = 4,    /* misc counters */
    SL__JM_DB_HISTORY = 5, /* "<job>\0<runId>\0" seq (8 bytes, big-endian)
                              -> entry JSON (history.c) */
    SL__JM_DB_DOCS = 6,    /* "<source>\0<id>" -> last problem JSON */
    SL__JM_NDB = 7
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
/** @brief Bytes of the map in use (pages up to the last) and its size. */
void sl__jm_store_usage(struct sl__jm_store *s, uint64_t *used, uint64_t *size);
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
/** @brief Queue a delete of @p key unless, when it is applied, its value
 * starts with the @p keep_len bytes @p keep (copied). */
uint64_t sl__jm_store_del_unless(struct sl__jm_store *s,
                                 enum sl__jm_dbi db,
                                 const void *key,
                                 size_t klen,
                                 const void *keep,
                                 size_t keep_len);
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
/** @brief sl__jm_store_scan starting at the first key >= @p from (which
 * starts with @p prefix). */
int sl__jm_store_scan_from(struct sl__jm_store *s,
                           enum sl__jm_dbi db,
                           const void *prefix,
                           size_t plen,
                           const void *from,
                           size_t flen,
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

/* sched.c: the "scheduling" member of the job info of @p jobdef at the
 * last tick's time (a new object), or NULL when the job has none. */
json_t *sl__jm_sched_info(struct sl_jm *jm, const json_t *jobdef);

#endif /* SL_JOBMANAGER_INT_H_INCLUDED */
