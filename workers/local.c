/*
 * The in-process backend: tasks from the jobmanager's functions, objects
 * straight from the object store.  It has no per-thread state: a conn is
 * the backend itself.
 */
#include <string.h>

#include "workers/workers_int.h"

struct local {
    struct sl_jm *jm;     /* borrowed; NULL in object-only unit tests */
    struct sl_obj *store; /* borrowed */
};

static void *
local_conn_new(void *backend)
{
    return backend;
}

static void
local_conn_free(void *conn)
{
    (void)conn;
}

static int
local_take(void *conn, const char *worker, json_t **task, struct sl_err *err)
{
    struct local *l = conn;

    return sl_jm_task_take(l->jm, worker, NULL, NULL, task, err);
}

static int
local_keepalive(void *conn,
                const char *worker,
                const char *task_id,
                struct sl_err *err)
{
    struct local *l = conn;

    return sl_jm_task_keepalive(l->jm, worker, task_id, err);
}

static int
local_finish(void *conn,
             const char *worker,
             const char *task_id,
             const json_t *result,
             struct sl_err *err)
{
    struct local *l = conn;

    return sl_jm_task_finish(l->jm, worker, task_id, result, err);
}

int
sl__wk_obj_input_open(struct sl_obj *o,
                      const char *store,
                      const char *id,
                      void **handle,
                      struct sl_source *src,
                      struct sl_err *err)
{
    struct sl_obj_reader *r = NULL;
    int rc = sl_obj_reader_open(o, store, id, &r, err);

    if (rc != 0) {
        return rc;
    }
    sl_obj_reader_source(r, src);
    *handle = r;
    return 0;
}

void
sl__wk_obj_input_close(void *handle)
{
    sl_obj_reader_free(handle);
}

int
sl__wk_obj_output_open(struct sl_obj *o,
                       const char *store,
                       const char *id,
                       void **handle,
                       struct sl_sink *sink,
                       struct sl_err *err)
{
    struct sl_obj_writer *w = NULL;
    int rc = sl_obj_writer_open(o, store, id, &w, err);

    if (rc != 0) {
        return rc;
    }
    sl_obj_writer_sink(w, sink);
    *handle = w;
    return 0;
}

int
sl__wk_obj_output_open_copy(struct sl_obj *o,
                            const char *store,
                            const char *id,
                            void *in_handle,
                            void **handle,
                            struct sl_err *err)
{
    struct sl_obj_writer *w = NULL;
    int rc = sl_obj_writer_open_copy(o, store, id, in_handle, &w, err);

    if (rc == 0) {
        *handle = w;
    }
    return rc;
}

int
sl__wk_obj_output_commit(void *handle, struct sl_err *err)
{
    return sl_obj_writer_commit(handle, NULL, err);
}

int
sl__wk_obj_output_seal(void *handle, struct sl_err *err)
{
    return sl_obj_writer_seal(handle, err);
}

void
sl__wk_obj_output_free(void *handle)
{
    sl_obj_writer_free(handle);
}

static int
local_input_open(void *conn,
                 const char *store,
                 const char *id,
                 void **handle,
                 struct sl_source *src,
                 struct sl_err *err)
{
    struct local *l = conn;

    return sl__wk_obj_input_open(l->store, store, id, handle, src, err);
}

static int
local_output_open(void *conn,
                  const char *store,
                  const char *id,
                  void **handle,
                  struct sl_sink *sink,
                  struct sl_err *err)
{
    struct local *l = conn;

    return sl__wk_obj_output_open(l->store, store, id, handle, sink, err);
}

static int
local_output_open_copy(void *conn,
                       const char *store,
                       const char *id,
                       void *in_handle,
                       void **handle,
                       struct sl_err *err)
{
    struct local *l = conn;

    return sl__wk_obj_output_open_copy(
        l->store, store, id, in_handle, handle, err);
}

static int
local_output_commit(void *conn, void *handle, struct sl_err *err)
{
    (void)conn;
    return sl__wk_obj_output_commit(handle, err);
}

static int
local_output_seal(void *conn, void *handle, struct sl_err *err)
{
    (void)conn;
    return sl__wk_obj_output_seal(handle, err);
}

static int
local_event(void *conn, const char *name, int complete, struct sl_err *err)
{
    struct local *l = conn;

    if (l->jm == NULL) {
        return sl_err_set(err, SL_EBADSTATE, NULL, "no jobmanager");
    }
    if (complete) {
        return sl_jm_event_complete(l->jm, name, err);
    }
    return sl_jm_event_begin(l->jm, name, err);
}

static void
local_wait_work(void *conn, const char *worker, uint64_t *seen, unsigned ms)
{
    struct local *l = conn;

    if (l->jm != NULL) {
        *seen = sl_jm_work_wait(l->jm, worker, *seen, ms);
    }
}

static const struct sl__wk_ops local_ops = {
    local_conn_new,
    local_conn_free,
    local_take,
    local_keepalive,
    local_finish,
    local_input_open,
    sl__wk_obj_input_close,
    local_output_open,
    local_output_commit,
    sl__wk_obj_output_free,
    local_event,
    local_wait_work,
    local_output_seal,
    local_output_open_copy,
};

struct sl__wk_backend *
sl__wk_local_new(struct sl_jm *jm, struct sl_obj *store)
{
    struct sl__wk_backend *b = sl_calloc(1, sizeof(*b));
    struct local *l = sl_calloc(1, sizeof(*l));

    l->jm = jm;
    l->store = store;
    b->ops = &local_ops;
    b->impl = l;
    return b;
}

void
sl__wk_local_free(struct sl__wk_backend *b)
{
    if (b == NULL) {
        return;
    }
    sl_free(b->impl);
    sl_free(b);
}
