/*
 * The task context: parameters, input readers, output writers with the
 * commit rules, counters, events and the result of one task.  All I/O goes
 * through the backend vtable (workers_int.h), so this file is the same for
 * in-process and external workers.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "workers/workers_int.h"

/* An open input bulk. */
struct in_bulk {
    struct sl_bulk_reader *reader;
    size_t index;         /* in its slot */
    void *handle;         /* backend object */
    struct sl_source src; /* borrowed by reader; must not move */
    char *slot;
    struct in_bulk *next;
};

/*
 * One output bulk, open or closed and waiting for the commit decision.  A
 * closed bulk is sealed at once (trailer written, writer and its buffer
 * freed, the backend's descriptor released), so a task may close any
 * number of bulks: what waits for the commit is the id and the handle.
 */
struct out_bulk {
    void *handle;                  /* backend object */
    struct sl_sink sink;           /* borrowed by writer; must not move */
    struct sl_sink inner;          /* the backend's sink behind sink */
    struct sl_task_ctx *ctx;       /* notes the code of a failed write */
    struct sl_bulk_writer *writer; /* NULL once sealed */
    uint64_t count;                /* records, set by the seal */
    int rc;                        /* 0 or the seal's error */
    char *error;                   /* the seal's message, or NULL */
    char *id;
    struct out_bulk *next;
};

/* An output slot of the task. */
struct out_slot {
    const char *name;  /* borrowed from the task JSON */
    const char *store; /* borrowed from the task JSON */
    const char *id;    /* the pre-assigned id, borrowed */
    char *prefix;      /* "<prefix>/" of a multiple slot, else NULL */
    unsigned next;     /* index of the next bulk of a multiple slot */
    struct out_bulk *cur;
    struct out_bulk *closed; /* closed bulks, newest first */
    int copied;              /* a single slot holds a copy of an input */
};

struct sl_task_ctx {
    const struct sl__wk_backend *b;
    void *conn;
    const struct sl_worker_type *type;
    unsigned flags; /* SL__WK_* */
    const json_t *task;
    const char *task_id;
    const char *worker;
    json_t *counters;
    json_t *docs;    /* sl_task_doc's reports, or NULL */
    json_t *counted; /* "<slot>/<i>" of inputs whose records are counted */
    struct in_bulk *inputs;
    struct out_slot *outs;
    size_t nouts;
    char *message;
    char *incomplete; /* sl_task_set_incomplete's first reason, or NULL */
    char *event;      /* prerequisite event of a retry_later, or NULL */
    int postpone;     /* retry_later was called */
    int nospace;      /* an SL_ENOSPC was noted: a temporary failure */
    double start;     /* mono_seconds() at creation */
    atomic_int canceled;
};

const char *
sl_task_mapped(const struct sl_task_ctx *ctx, const char *name)
{
    const char *m =
        json_string_value(json_object_get(sl_task_param(ctx, "mapping"), name));

    return m != NULL && m[0] != '\0' ? m : name;
}

const struct sl_worker_services *
sl_task_services(const struct sl_task_ctx *ctx)
{
    return &ctx->b->services;
}

/* ------------------------------------------------------------------------
 * Life cycle.
 * --------------------------------------------------------------------- */

/* Monotonic seconds with sub-millisecond resolution: tasks are often
 * shorter than a millisecond and their durations still add up. */
static double
mono_seconds(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sl_task_ctx *
sl__task_ctx_new(const struct sl__wk_backend *b,
                 void *conn,
                 const struct sl_worker_type *type,
                 unsigned flags,
                 const json_t *task)
{
    struct sl_task_ctx *ctx = sl_calloc(1, sizeof(*ctx));
    json_t *outs = json_object_get(task, "output");
    const char *slot = NULL;
    json_t *v = NULL;
    size_t i = 0;

    ctx->b = b;
    ctx->conn = conn;
    ctx->type = type;
    ctx->flags = flags;
    ctx->task = task;
    ctx->task_id = json_string_value(json_object_get(task, "taskId"));
    ctx->worker = type->name;
    ctx->counters = json_object();
    ctx->start = mono_seconds();
    atomic_init(&ctx->canceled, 0);
    ctx->outs = sl_calloc(json_object_size(outs) + 1, sizeof(*ctx->outs));
    json_object_foreach(outs, slot, v)
    {
        json_t *b0 = json_array_get(v, 0);
        struct out_slot *o = &ctx->outs[i];
        size_t len = 0;

        o->name = slot;
        o->store = json_string_value(json_object_get(b0, "store"));
        o->id = json_string_value(json_object_get(b0, "id"));
        if (o->store == NULL || o->id == NULL) {
            continue; /* malformed: the slot stays unusable (ENOENT) */
        }
        len = strlen(o->id);
        if (len > 2 && strcmp(o->id + len - 2, "/0") == 0) {
            o->prefix = sl_strndup(o->id, len - 1);
        }
        i++;
    }
    ctx->nouts = i;
    return ctx;
}

static void
out_bulk_free(const struct sl_task_ctx *ctx, struct out_bulk *ob)
{
    if (ob == NULL) {
        return;
    }
    sl_bulk_writer_free(ob->writer);
    ctx->b->ops->output_free(ob->handle);
    sl_free(ob->error);
    sl_free(ob->id);
    sl_free(ob);
}

void
sl__task_ctx_free(struct sl_task_ctx *ctx)
{
    size_t i = 0;

    if (ctx == NULL) {
        return;
    }
    while (ctx->inputs != NULL) {
        sl_task_input_close(ctx, ctx->inputs->reader);
    }
    for (i = 0; i < ctx->nouts; i++) {
        struct out_slot *o = &ctx->outs[i];

        out_bulk_free(ctx, o->cur);
        while (o->closed != NULL) {
            struct out_bulk *next = o->closed->next;

            out_bulk_free(ctx, o->closed);
            o->closed = next;
        }
        sl_free(o->prefix);
    }
    sl_free(ctx->outs);
    json_decref(ctx->counters);
    json_decref(ctx->docs);
    json_decref(ctx->counted);
    sl_free(ctx->message);
    sl_free(ctx->incomplete);
    sl_free(ctx->event);
    sl_free(ctx);
}

void
sl__task_ctx_cancel(struct sl_task_ctx *ctx)
{
    atomic_store(&ctx->canceled, 1);
}

/* ------------------------------------------------------------------------
 * Parameters and task data.
 * --------------------------------------------------------------------- */

const json_t *
sl_task_json(const struct sl_task_ctx *ctx)
{
    return ctx->task;
}

const char *
sl_task_worker(const struct sl_task_ctx *ctx)
{
    return ctx->worker;
}

const json_t *
sl_task_param(const struct sl_task_ctx *ctx, const char *name)
{
    return json_object_get(json_object_get(ctx->task, "parameters"), name);
}

const char *
sl_task_param_str(const struct sl_task_ctx *ctx, const char *name)
{
    return json_string_value(sl_task_param(ctx, name));
}

int
sl_task_param_u64(const struct sl_task_ctx *ctx,
                  const char *name,
                  uint64_t def,
                  uint64_t *out)
{
    const json_t *v = sl_task_param(ctx, name);

    *out = def;
    if (v == NULL) {
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        return sl_parse_u64(json_string_value(v), out);
    }
    return SL_EINVAL;
}

int
sl_task_completion(const struct sl_task_ctx *ctx,
                   unsigned *partition,
                   unsigned *partitions)
{
    json_t *props = json_object_get(ctx->task, "properties");

    if (!json_is_true(json_object_get(props, "completion"))) {
        return 0;
    }
    if (partition != NULL) {
        *partition =
            (unsigned)json_integer_value(json_object_get(props, "partition"));
    }
    if (partitions != NULL) {
        *partitions =
            (unsigned)json_integer_value(json_object_get(props, "partitions"));
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * Messages, counters, events.
 * --------------------------------------------------------------------- */

/* @fmt and @ap as text that is valid UTF-8 (bytes that are not: \xHH),
 * in a new string. */
static char *
format_text(const char *fmt, va_list ap)
{
    char buf[1024];
    char esc[1024];

    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    (void)sl_utf8_escape(esc, sizeof(esc), buf);
    return sl_strdup(esc);
}

void
sl_task_set_message(struct sl_task_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sl_free(ctx->message);
    ctx->message = format_text(fmt, ap);
    va_end(ap);
}

void
sl_task_set_incomplete(struct sl_task_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    if (ctx->incomplete != NULL) {
        return;
    }
    va_start(ap, fmt);
    ctx->incomplete = format_text(fmt, ap);
    va_end(ap);
}

void
sl_task_counter_add(struct sl_task_ctx *ctx, const char *name, double v)
{
    json_t *old = json_object_get(ctx->counters, name);

    (void)json_object_set_new(
        ctx->counters, name, json_real(json_number_value(old) + v));
}

/* @text as a JSON string of at most @max bytes of valid UTF-8. */
static json_t *
doc_text(const char *text, size_t max)
{
    char buf[SL_JM_DOC_ID_MAX + 1];
    size_t len = strlen(text);

    if (len <= max) {
        json_t *j = json_stringn(text, len);

        if (j != NULL) {
            return j;
        }
    }
    (void)sl_utf8_escape(
        buf, max + 1 < sizeof(buf) ? max + 1 : sizeof(buf), text);
    return json_string(buf);
}

void
sl_task_doc(struct sl_task_ctx *ctx,
            enum sl_jm_doc_state state,
            const char *source,
            const char *id,
            const char *reason,
            const char *message)
{
    json_t *d = NULL;

    if (id == NULL || id[0] == '\0') {
        return;
    }
    if (ctx->docs == NULL) {
        ctx->docs = json_array();
    }
    if (json_array_size(ctx->docs) >= SL_JM_DOCS_PER_FINISH) {
        sl_task_counter_add(ctx, "documents.notRecorded", 1);
        return;
    }
    d = json_pack("{s:s, s:o}",
                  "state",
                  sl_jm_doc_state_name(state),
                  "id",
                  doc_text(id, SL_JM_DOC_ID_MAX));
    if (source != NULL && source[0] != '\0') {
        (void)json_object_set_new(d, "source", doc_text(source, SL_NAME_MAX));
    }
    if (reason != NULL && reason[0] != '\0') {
        (void)json_object_set_new(
            d, "reason", doc_text(reason, SL_JM_DOC_REASON_MAX));
    }
    if (message != NULL && message[0] != '\0') {
        (void)json_object_set_new(
            d, "message", doc_text(message, SL_JM_DOC_MESSAGE_MAX));
    }
    (void)json_array_append_new(ctx->docs, d);
}

int
sl_task_is_canceled(const struct sl_task_ctx *ctx)
{
    return atomic_load(&((struct sl_task_ctx *)ctx)->canceled);
}

int
sl_task_event_begin(struct sl_task_ctx *ctx, const char *name)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = ctx->b->ops->event(ctx->conn, name, 0, &err);
    if (rc < 0) {
        sl_task_set_message(ctx, "event '%s': %s", name, err.message);
    }
    return rc;
}

int
sl_task_event_complete(struct sl_task_ctx *ctx, const char *name)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = ctx->b->ops->event(ctx->conn, name, 1, &err);
    if (rc < 0) {
        sl_task_set_message(ctx, "event '%s': %s", name, err.message);
    }
    return rc;
}

void
sl_task_note_error(struct sl_task_ctx *ctx, int code)
{
    if (sl_err_nospace(code)) {
        ctx->nospace = 1;
    }
}

int
sl_task_retry_later(struct sl_task_ctx *ctx, const char *event)
{
    sl_free(ctx->event);
    ctx->event = event != NULL ? sl_strdup(event) : NULL;
    ctx->postpone = 1;
    return SL_WORKER_POSTPONE;
}

/* ------------------------------------------------------------------------
 * Inputs.
 * --------------------------------------------------------------------- */

size_t
sl_task_input_count(const struct sl_task_ctx *ctx, const char *slot)
{
    return json_array_size(
        json_object_get(json_object_get(ctx->task, "input"), slot));
}

int
sl_task_input_open(struct sl_task_ctx *ctx,
                   const char *slot,
                   size_t i,
                   struct sl_bulk_reader **r)
{
    json_t *b = json_array_get(
        json_object_get(json_object_get(ctx->task, "input"), slot), i);
    const char *store = json_string_value(json_object_get(b, "store"));
    const char *id = json_string_value(json_object_get(b, "id"));
    struct in_bulk *in = NULL;
    struct sl_err err;
    int rc = 0;

    *r = NULL;
    sl_err_clear(&err);
    if (store == NULL || id == NULL) {
        sl_task_set_message(ctx, "no input %zu in slot '%s'", i, slot);
        return SL_ENOENT;
    }
    in = sl_calloc(1, sizeof(*in));
    rc = ctx->b->ops->input_open(
        ctx->conn, store, id, &in->handle, &in->src, &err);
    if (rc != 0) {
        goto fail;
    }
    rc = sl_bulk_reader_new(&in->src, NULL, &in->reader, &err);
    if (rc != 0) {
        goto fail;
    }
    in->slot = sl_strdup(slot);
    in->index = i;
    in->next = ctx->inputs;
    ctx->inputs = in;
    *r = in->reader;
    return 0;

fail:
    sl_task_set_message(
        ctx, "input '%s' %s/%s: %s", slot, store, id, err.message);
    if (in->handle != NULL) {
        ctx->b->ops->input_close(in->handle);
    }
    sl_free(in);
    return rc;
}

void
sl_task_input_close(struct sl_task_ctx *ctx, struct sl_bulk_reader *r)
{
    struct in_bulk **pp = &ctx->inputs;
    char name[SL_NAME_MAX + 32];

    if (r == NULL) {
        return;
    }
    while (*pp != NULL && (*pp)->reader != r) {
        pp = &(*pp)->next;
    }
    if (*pp == NULL) {
        return;
    }
    {
        struct in_bulk *in = *pp;

        *pp = in->next;
        /* A bulk read twice (the deltaChecker's two passes, the
         * webFetcher's scan that may stop early) counts once, as far as
         * the furthest read got. */
        (void)snprintf(name, sizeof(name), "%s/%zu", in->slot, in->index);
        if (ctx->counted == NULL) {
            ctx->counted = json_object();
        }
        {
            json_int_t before =
                json_integer_value(json_object_get(ctx->counted, name));
            json_int_t now = (json_int_t)sl_bulk_reader_count(r);

            if (now > before || json_object_get(ctx->counted, name) == NULL) {
                (void)json_object_set_new(
                    ctx->counted, name, json_integer(now));
                (void)snprintf(
                    name, sizeof(name), "input.%s.recordCount", in->slot);
                sl_task_counter_add(ctx, name, (double)(now - before));
            }
        }
        sl_bulk_reader_free(in->reader);
        ctx->b->ops->input_close(in->handle);
        sl_free(in->slot);
        sl_free(in);
    }
}

/* The walk of sl_task_input_each and sl_task_input_each_reader: exactly
 * one of @cb and @rcb is set. */
static int
input_walk(struct sl_task_ctx *ctx,
           const char *slot,
           int (*cb)(void *arg, json_t *meta),
           int (*rcb)(void *arg, json_t *meta, struct sl_bulk_reader *r),
           int (*raw)(void *arg, struct sl_bulk_reader *r),
           void *arg)
{
    size_t n = sl_task_input_count(ctx, slot);
    size_t i = 0;

    for (i = 0; i < n; i++) {
        struct sl_bulk_reader *r = NULL;
        struct sl_err err;
        json_t *meta = NULL;
        int rc = 0;
        int res = SL_WORKER_OK;

        sl_err_clear(&err);
        rc = sl_task_input_open(ctx, slot, i, &r);
        if (rc != 0) {
            sl_task_set_message(ctx, "input %zu: %s", i, sl_strerror(rc));
            return SL_WORKER_RECOVERABLE;
        }
        for (;;) {
            const char *text = NULL;
            size_t len = 0;

            rc = raw != NULL ? sl_bulk_reader_next_raw(r, &text, &len, &err)
                             : sl_bulk_reader_next_meta(r, &meta, &err);
            if (rc <= 0) {
                break;
            }
            if (raw != NULL) {
                res = raw(arg, r);
                if (res == SL_WORKER_OK) {
                    rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
                }
            } else if (rcb != NULL) {
                res = rcb(arg, meta, r);
                if (res == SL_WORKER_OK) {
                    rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
                }
            } else {
                rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
                if (rc == 0) {
                    res = cb(arg, meta);
                }
            }
            json_decref(meta);
            meta = NULL;
            if (rc < 0) {
                break;
            }
            if (res != SL_WORKER_OK) {
                return res;
            }
            if (sl_task_is_canceled(ctx)) {
                return SL_WORKER_RECOVERABLE;
            }
        }
        if (rc < 0) {
            sl_task_set_message(ctx, "input %zu: %s", i, err.message);
            return SL_WORKER_FATAL;
        }
        sl_task_input_close(ctx, r);
    }
    return SL_WORKER_OK;
}

int
sl_task_input_each(struct sl_task_ctx *ctx,
                   const char *slot,
                   int (*cb)(void *arg, json_t *meta),
                   void *arg)
{
    return input_walk(ctx, slot, cb, NULL, NULL, arg);
}

int
sl_task_input_each_reader(struct sl_task_ctx *ctx,
                          const char *slot,
                          int (*cb)(void *arg,
                                    json_t *meta,
                                    struct sl_bulk_reader *r),
                          void *arg)
{
    return input_walk(ctx, slot, NULL, cb, NULL, arg);
}

int
sl_task_input_each_raw(struct sl_task_ctx *ctx,
                       const char *slot,
                       int (*cb)(void *arg, struct sl_bulk_reader *r),
                       void *arg)
{
    return input_walk(ctx, slot, NULL, NULL, cb, arg);
}

/* ------------------------------------------------------------------------
 * Outputs.
 * --------------------------------------------------------------------- */

static struct out_slot *
out_slot(struct sl_task_ctx *ctx, const char *slot)
{
    size_t i = 0;

    for (i = 0; i < ctx->nouts; i++) {
        if (strcmp(ctx->outs[i].name, slot) == 0) {
            return &ctx->outs[i];
        }
    }
    return NULL;
}

int
sl_task_output_connected(struct sl_task_ctx *ctx, const char *slot)
{
    return out_slot(ctx, slot) != NULL;
}

/* The sink of an output bulk: the backend's, with the code of a failed
 * write noted in the task (a full disk makes the failure temporary). */
static int
noted_write(void *arg, const void *data, size_t len)
{
    struct out_bulk *ob = arg;
    int rc = ob->inner.write(ob->inner.ctx, data, len);

    if (rc != 0) {
        sl_task_note_error(ob->ctx, rc);
    }
    return rc;
}

/* The object id of the next bulk of @o: "<prefix><next>" for a multiple
 * slot, else its one id; caller frees. */
static char *
next_bulk_id(const struct out_slot *o)
{
    return o->prefix != NULL ? sl_asprintf("%s%u", o->prefix, o->next)
                             : sl_strdup(o->id);
}

int
sl_task_output_writer(struct sl_task_ctx *ctx,
                      const char *slot,
                      struct sl_bulk_writer **w)
{
    struct out_slot *o = out_slot(ctx, slot);
    struct out_bulk *ob = NULL;
    struct sl_err err;
    int rc = 0;

    *w = NULL;
    sl_err_clear(&err);
    if (o == NULL) {
        sl_task_set_message(
            ctx, "output slot '%s' is not connected in this task", slot);
        return SL_ENOENT;
    }
    if (o->cur != NULL) {
        *w = o->cur->writer;
        return 0;
    }
    if (o->copied) {
        sl_task_set_message(
            ctx, "output slot '%s' already holds a copy of an input", slot);
        return SL_EBADSTATE;
    }
    ob = sl_calloc(1, sizeof(*ob));
    ob->id = next_bulk_id(o);
    rc = ctx->b->ops->output_open(
        ctx->conn, o->store, ob->id, &ob->handle, &ob->inner, &err);
    if (rc == 0) {
        ob->ctx = ctx;
        ob->sink.write = noted_write;
        ob->sink.ctx = ob;
        rc = sl_bulk_writer_new(&ob->sink, &ob->writer);
        if (rc != 0) {
            (void)sl_err_set(&err, rc, NULL, "%s", sl_strerror(rc));
        }
    }
    if (rc != 0) {
        sl_task_note_error(ctx, rc);
        sl_task_set_message(
            ctx, "output '%s' %s/%s: %s", slot, o->store, ob->id, err.message);
        out_bulk_free(ctx, ob);
        return rc;
    }
    o->next++;
    o->cur = ob;
    *w = ob->writer;
    return 0;
}

/* Bulk @ob of @o cannot be committed (@rc, @err): kept in @ob, and the
 * task message. */
static void
bulk_failed(struct sl_task_ctx *ctx,
            const struct out_slot *o,
            struct out_bulk *ob,
            int rc,
            const struct sl_err *err)
{
    sl_task_note_error(ctx, rc);
    ob->rc = rc;
    sl_free(ob->error);
    ob->error = sl_asprintf("cannot commit output '%s' %s/%s: %s",
                            o->name,
                            o->store,
                            ob->id,
                            err->message);
    sl_task_set_message(ctx, "%s", ob->error);
}

/*
 * Seal @ob of slot @o: write the trailer, free the writer (its 64 KiB
 * buffer) and let the backend release the descriptor.  Done when a bulk is
 * closed, so that only the commit decision is left; a failure is kept in
 * the bulk (the commit then fails the task) and returned with the task
 * message set.
 */
static int
seal_bulk(struct sl_task_ctx *ctx, struct out_slot *o, struct out_bulk *ob)
{
    struct sl_err err;
    int rc = 0;

    if (ob->writer == NULL) {
        return ob->rc;
    }
    sl_err_clear(&err);
    ob->count = sl_bulk_writer_count(ob->writer);
    rc = sl_bulk_writer_finish(ob->writer);
    if (rc != 0) {
        (void)sl_err_set(&err, rc, NULL, "%s", sl_strerror(rc));
    } else if (ctx->b->ops->output_seal != NULL) {
        rc = ctx->b->ops->output_seal(ctx->conn, ob->handle, &err);
    }
    sl_bulk_writer_free(ob->writer);
    ob->writer = NULL;
    if (rc != 0) {
        bulk_failed(ctx, o, ob, rc, &err);
    }
    return rc;
}

/*
 * Close the current bulk of @o: an empty one is dropped at once, another
 * is sealed when @seal is set (not for a discard) and waits in o->closed.
 */
static int
close_current(struct sl_task_ctx *ctx, struct out_slot *o, int seal)
{
    struct out_bulk *ob = o->cur;

    if (ob == NULL) {
        return 0;
    }
    o->cur = NULL;
    if (sl_bulk_writer_count(ob->writer) == 0) {
        out_bulk_free(ctx, ob);
        if (o->next > 0) {
            o->next--; /* reuse the id: ids stay dense */
        }
        return 0;
    }
    ob->next = o->closed;
    o->closed = ob;
    return seal ? seal_bulk(ctx, o, ob) : 0;
}

int
sl_task_output_copy_input(struct sl_task_ctx *ctx,
                          const char *slot,
                          struct sl_bulk_reader *in)
{
    struct out_slot *o = out_slot(ctx, slot);
    struct in_bulk *ib = ctx->inputs;
    struct out_bulk *ob = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    while (ib != NULL && ib->reader != in) {
        ib = ib->next;
    }
    if (o == NULL || ib == NULL || !sl_bulk_reader_at_end(in)) {
        sl_task_set_message(ctx,
                            "output slot '%s': %s",
                            slot,
                            o == NULL    ? "not connected in this task"
                            : ib == NULL ? "the input is not open"
                                         : "the input was not read to its end");
        return o == NULL ? SL_ENOENT : SL_EINVAL;
    }
    if (sl_bulk_reader_count(in) == 0) {
        return 0; /* an empty bulk is never committed */
    }
    if (ctx->b->ops->output_open_copy == NULL ||
        (o->cur != NULL && sl_bulk_writer_count(o->cur->writer) > 0) ||
        (o->prefix == NULL && (o->closed != NULL || o->copied))) {
        return 1; /* the worker writes the records */
    }
    (void)close_current(ctx, o, 0); /* an empty bulk: dropped, id kept */
    ob = sl_calloc(1, sizeof(*ob));
    ob->id = next_bulk_id(o);
    rc = ctx->b->ops->output_open_copy(
        ctx->conn, o->store, ob->id, ib->handle, &ob->handle, &err);
    if (rc != 0) {
        sl_task_note_error(ctx, rc);
        sl_task_set_message(
            ctx, "output '%s' %s/%s: %s", slot, o->store, ob->id, err.message);
        out_bulk_free(ctx, ob);
        return rc;
    }
    ob->count = sl_bulk_reader_count(in);
    ob->next = o->closed;
    o->closed = ob;
    o->next++;
    o->copied = o->prefix == NULL;
    return 0;
}

int
sl_task_output_next(struct sl_task_ctx *ctx, const char *slot)
{
    struct out_slot *o = out_slot(ctx, slot);

    if (o == NULL) {
        return SL_ENOENT;
    }
    if (o->prefix == NULL) {
        sl_task_set_message(ctx, "output slot '%s' is not multiple", slot);
        return SL_EINVAL;
    }
    if (o->cur == NULL || sl_bulk_writer_count(o->cur->writer) == 0) {
        return 0;
    }
    return close_current(ctx, o, 1);
}

/*
 * Commit (or discard) every closed bulk of @o.  Sealing the bulk writes
 * the trailer, so a writer that failed earlier fails here (or failed at its
 * seal) and the task is reported as a recoverable error.  Returns 0 or the
 * first error.
 */
static int
settle_slot(struct sl_task_ctx *ctx, struct out_slot *o, int commit)
{
    struct sl_err err;
    char name[SL_NAME_MAX + 32];
    int rc = 0;

    sl_err_clear(&err);
    (void)close_current(ctx, o, 0);
    while (o->closed != NULL) {
        struct out_bulk *ob = o->closed;
        int r = 0;

        o->closed = ob->next;
        if (commit && rc == 0) {
            r = seal_bulk(ctx, o, ob);
            if (r == 0) {
                r = ctx->b->ops->output_commit(ctx->conn, ob->handle, &err);
                if (r != 0) {
                    bulk_failed(ctx, o, ob, r, &err);
                }
            } else {
                /* sealed before: its message again, the last one may be
                 * another's */
                sl_task_set_message(ctx, "%s", ob->error);
            }
            if (r != 0) {
                rc = r;
            } else {
                (void)snprintf(
                    name, sizeof(name), "output.%s.recordCount", o->name);
                sl_task_counter_add(ctx, name, (double)ob->count);
            }
        }
        out_bulk_free(ctx, ob);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Running a task.
 * --------------------------------------------------------------------- */

/* Counters as JSON numbers: integers where the value is whole. */
static json_t *
counters_json(const json_t *c)
{
    json_t *out = json_object();
    const char *k = NULL;
    json_t *v = NULL;

    json_object_foreach((json_t *)c, k, v)
    {
        double d = json_number_value(v);

        if (d == (double)(json_int_t)d) {
            (void)json_object_set_new(out, k, json_integer((json_int_t)d));
        } else {
            (void)json_object_set_new(out, k, json_real(d));
        }
    }
    return out;
}

json_t *
sl__task_ctx_run(struct sl_task_ctx *ctx)
{
    static const char *const names[] = {
        "SUCCESSFUL", "RECOVERABLE_ERROR", "FATAL_ERROR", "POSTPONE"};
    json_t *result = NULL;
    double t0 = mono_seconds();
    int res = 0;
    int commit = 0;
    size_t i = 0;

    res = ctx->type->perform(ctx);
    sl_task_counter_add(ctx, "duration.perform", mono_seconds() - t0);
    if (res < SL_WORKER_OK || res > SL_WORKER_POSTPONE) {
        sl_task_set_message(
            ctx, "worker '%s' returned unknown result %d", ctx->worker, res);
        res = SL_WORKER_FATAL;
    }
    if (ctx->postpone && res == SL_WORKER_OK) {
        res = SL_WORKER_POSTPONE;
    }
    while (ctx->inputs != NULL) {
        sl_task_input_close(ctx, ctx->inputs->reader);
    }
    commit = !sl_task_is_canceled(ctx) &&
             (res == SL_WORKER_OK || (ctx->flags & SL__WK_AUTO_COMMIT));
    for (i = 0; i < ctx->nouts; i++) {
        if (settle_slot(ctx, &ctx->outs[i], commit) != 0 &&
            res == SL_WORKER_OK) {
            res = SL_WORKER_RECOVERABLE;
        }
    }
    if (ctx->nospace && res != SL_WORKER_OK && res != SL_WORKER_POSTPONE &&
        !sl_task_is_canceled(ctx)) {
        /* a full disk (or index, or delta shard) is no fault of the task:
         * the jobmanager gives it back after a pause, no retry counted */
        res = SL_WORKER_RECOVERABLE;
    }
    sl_task_counter_add(ctx, "duration", mono_seconds() - ctx->start);
    result = json_pack("{s:s, s:o}",
                       "status",
                       names[res],
                       "counters",
                       counters_json(ctx->counters));
    if (res != SL_WORKER_OK) {
        (void)json_object_set_new(
            result,
            "errorMessage",
            json_string(ctx->message != NULL ? ctx->message : names[res]));
    }
    if (res == SL_WORKER_OK && ctx->incomplete != NULL) {
        (void)json_object_set_new(
            result, "incomplete", json_string(ctx->incomplete));
    }
    if (res == SL_WORKER_RECOVERABLE && ctx->nospace) {
        (void)json_object_set_new(
            result, "errorCode", json_string(sl_err_api_code(SL_ENOSPC)));
    }
    if (res == SL_WORKER_POSTPONE && ctx->event != NULL) {
        (void)json_object_set_new(
            result, "prerequisiteEvents", json_pack("[s]", ctx->event));
    }
    if (ctx->docs != NULL && res == SL_WORKER_OK) {
        (void)json_object_set(result, "documents", ctx->docs);
    }
    return result;
}
