/*
 * Private to the worker runtime (workers/): the backend interface behind
 * the task context (one vtable, two backends: in-process in local.c, REST
 * in remote.c), the context life cycle used by the pool (pool.c) and the
 * unit tests.  Worker code needs none of it: workers/workers.h is the
 * header for worker authors.
 */
#ifndef SL_WORKERS_INT_H_INCLUDED
#define SL_WORKERS_INT_H_INCLUDED

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
/* Objects of object store @o, for the backends that read and write it
 * (local.c; remote.c with a shared store): the input_open...output_free
 * hooks of struct sl__wk_ops, with the store instead of the conn. */
int sl__wk_obj_input_open(struct sl_obj *o,
                          const char *store,
                          const char *id,
                          void **handle,
                          struct sl_source *src,
                          struct sl_err *err);
void sl__wk_obj_input_close(void *handle);
int sl__wk_obj_output_open(struct sl_obj *o,
                           const char *store,
                           const char *id,
                           void **handle,
                           struct sl_sink *sink,
                           struct sl_err *err);
int sl__wk_obj_output_open_copy(struct sl_obj *o,
                                const char *store,
                                const char *id,
                                void *in_handle,
                                void **handle,
                                struct sl_err *err);
int sl__wk_obj_output_commit(void *handle, struct sl_err *err);
int sl__wk_obj_output_seal(void *handle, struct sl_err *err);
void sl__wk_obj_output_free(void *handle);

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

#endif /* SL_WORKERS_INT_H_INCLUDED */
