/*
 * Delta checks of compound elements ahead of their push (as SMILA's
 * UpdatePusher, docs/workers.md "updatePusher"): an element of a changed
 * compound (a record with `_compoundRecordId` and `_deltaHash`) is pushed only
 * when the delta service finds it new or changed; an up-to-date one is marked
 * visited by the check itself, so the delta-delete keeps it.
 *
 * The checks run in batches (one delta transaction per shard per batch,
 * as the deltaChecker's) through a second reader over the input bulk,
 * which reads a window of records ahead of the pushes, starting at the
 * first element that needs a verdict.  A bulk without elements (the
 * fileFetcher's) is read once; a bulk of an extractor twice.  Memory: the
 * delta fields of one window.
 */
#include <string.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

#define WINDOW 1000u

struct sl__bi_elem_check {
    struct sl_task_ctx *ctx;
    struct sl_delta *delta;
    const char *slot;         /* input slot, borrowed */
    const char *run_id;       /* borrowed */
    const char *param_source; /* borrowed, or NULL */
    struct sl_bulk_reader *r; /* the look-ahead reader, or NULL */
    size_t bulk;              /* input index r reads */
    size_t next;              /* index of the record r reads next */
    size_t from, to;          /* the window: records [from, to) */
    int verdict[WINDOW];      /* per window record: 0 or the check result */
    /* the elements of the window: metadata or head, delta fields, source
     * (borrowed from them or param_source) and offset in the window */
    json_t *metas[WINDOW];
    struct sl_record_head *heads[WINDOW];
    struct sl_delta_rec recs[WINDOW];
    const char *sources[WINDOW];
    size_t pos[WINDOW];
    size_t n;
    char *source; /* of seq */
    uint64_t seq;
};

/* The source of the record @meta or @head when it is an element to check
 * (fields in @dr), else NULL. */
static const char *
element_source(const struct sl__bi_elem_check *c,
               const json_t *meta,
               const struct sl_record_head *head,
               struct sl_delta_rec *dr)
{
    const char *source = sl__bi_delta_fields(meta, head, dr);

    if (source == NULL) {
        source = c->param_source;
    }
    if (source == NULL || dr->id == NULL || dr->compound_id == NULL ||
        dr->hash == NULL || dr->hash[0] == '\0') {
        return NULL;
    }
    return source;
}

int
sl__bi_elem_check_new(struct sl_task_ctx *ctx,
                      struct sl_delta *delta,
                      const char *slot,
                      const char *run_id,
                      const char *param_source,
                      struct sl__bi_elem_check **out)
{
    struct sl__bi_elem_check *c = NULL;

    *out = NULL;
    if (delta == NULL || run_id == NULL) {
        return SL_EINVAL;
    }
    c = sl_calloc(1, sizeof(*c));
    c->ctx = ctx;
    c->delta = delta;
    c->slot = slot;
    c->run_id = run_id;
    c->param_source = param_source;
    *out = c;
    return 0;
}

/* Free the records of the window's batch. */
static void
batch_clear(struct sl__bi_elem_check *c)
{
    size_t i = 0;

    for (i = 0; i < c->n; i++) {
        json_decref(c->metas[i]);
        sl_free(c->heads[i]);
    }
    c->n = 0;
}

void
sl__bi_elem_check_end(struct sl__bi_elem_check *c)
{
    if (c == NULL) {
        return;
    }
    batch_clear(c);
    sl_task_input_close(c->ctx, c->r);
    c->r = NULL;
    c->next = c->from = c->to = 0;
}

void
sl__bi_elem_check_free(struct sl__bi_elem_check *c)
{
    if (c != NULL) {
        sl__bi_elem_check_end(c);
        sl_free(c->source);
        sl_free(c);
    }
}

/* ------------------------------------------------------------------------
 * The window.
 * --------------------------------------------------------------------- */

/* Set the task message for @rc and give it back. */
static int
failed(struct sl__bi_elem_check *c, int rc, const char *what, const char *msg)
{
    sl_task_note_error(c->ctx, rc);
    sl_task_set_message(c->ctx, "%s: %s", what, msg);
    return rc;
}

/* Position the look-ahead reader on record @idx of input @bulk (opened,
 * or opened again when it is past it). */
static int
seek_record(struct sl__bi_elem_check *c, size_t bulk, size_t idx)
{
    struct sl_err err;
    const char *text = NULL;
    size_t len = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (c->r != NULL && (c->bulk != bulk || c->next > idx)) {
        sl__bi_elem_check_end(c);
    }
    if (c->r == NULL) {
        rc = sl_task_input_open(c->ctx, c->slot, bulk, &c->r);
        if (rc != 0) {
            c->r = NULL;
            return rc; /* the task message is set */
        }
        c->bulk = bulk;
        c->next = 0;
    }
    while (c->next < idx) {
        rc = sl_bulk_reader_next_raw(c->r, &text, &len, &err);
        if (rc == 1) {
            rc = sl_bulk_reader_skip_attachments(c->r, NULL, &err);
        } else if (rc == 0) {
            rc = SL_ETRUNCATED; /* the pushing reader read more */
        }
        if (rc != 0) {
            return failed(c, rc, "input", err.message);
        }
        c->next++;
    }
    return 0;
}

/* Read the record at the look-ahead reader into the batch when it is an
 * element to check.  1 (read), 0 (end of the bulk) or SL_E*. */
static int
read_record(struct sl__bi_elem_check *c)
{
    const struct sl_record_head *head = NULL;
    struct sl_delta_rec dr;
    const char *source = NULL;
    const char *text = NULL;
    json_t *meta = NULL;
    size_t len = 0;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_bulk_reader_next_raw(c->r, &text, &len, &err);
    if (rc == 1) {
        (void)sl_bulk_reader_head(c->r, &head); /* NULL: decoded below */
        rc = sl_bulk_reader_skip_attachments(c->r, NULL, &err);
        if (rc == 0 && head == NULL) {
            rc = sl_bulk_reader_meta(c->r, &meta, &err);
        }
        rc = rc == 0 ? 1 : rc;
    }
    if (rc != 1) {
        return rc == 0 ? 0 : failed(c, rc, "input", err.message);
    }
    source = element_source(c, meta, head, &dr);
    if (source != NULL) {
        c->metas[c->n] = meta;
        c->heads[c->n] = NULL;
        if (meta == NULL) { /* its strings, kept till the check */
            c->heads[c->n] = sl_record_head_dup(head);
            source = element_source(c, NULL, c->heads[c->n], &dr);
        }
        c->recs[c->n] = dr;
        c->sources[c->n] = source;
        c->pos[c->n] = c->next - c->from;
        c->n++;
    } else {
        json_decref(meta);
    }
    c->next++;
    return 1;
}

/* Check recs [i, j), all of source c->sources[i]. */
static int
check_run(struct sl__bi_elem_check *c, size_t i, size_t j)
{
    const char *source = c->sources[i];
    struct sl_err err;
    size_t k = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (c->source == NULL || strcmp(c->source, source) != 0) {
        sl_free(c->source);
        c->source = sl_strdup(source);
        rc = sl__bi_delta_run(
            c->ctx, c->delta, source, c->run_id, &c->seq, &err);
    }
    if (rc == 0) {
        rc = sl_delta_check(c->delta, source, c->seq, c->recs + i, j - i, &err);
    }
    if (rc != 0) {
        SL_FREE(c->source); /* seq unknown */
        return failed(c, rc, "delta service", err.message);
    }
    for (k = i; k < j; k++) {
        c->verdict[c->pos[k]] = c->recs[k].result;
    }
    return 0;
}

/* Check the elements of the window, one call per run of one source. */
static int
check_window(struct sl__bi_elem_check *c)
{
    size_t i = 0;
    size_t j = 0;
    int rc = 0;

    for (i = 0; i < c->n && rc == 0; i = j) {
        for (j = i + 1; j < c->n && strcmp(c->sources[j], c->sources[i]) == 0;
             j++) {
        }
        rc = check_run(c, i, j);
    }
    batch_clear(c);
    return rc;
}

/* Read and check the window of records from @idx of input @bulk. */
static int
fill(struct sl__bi_elem_check *c, size_t bulk, size_t idx)
{
    int rc = 0;

    batch_clear(c);
    c->from = c->to = 0;
    rc = seek_record(c, bulk, idx);
    if (rc != 0) {
        return rc;
    }
    memset(c->verdict, 0, sizeof(c->verdict));
    c->from = idx;
    while (c->next - c->from < WINDOW && (rc = read_record(c)) == 1) {
    }
    if (rc < 0) {
        batch_clear(c);
        return rc;
    }
    rc = check_window(c);
    if (rc == 0 && c->next == idx) { /* the pushing reader read it */
        rc = failed(c, SL_ETRUNCATED, "input", "the bulk ended early");
    }
    if (rc == 0) {
        c->to = c->next;
    }
    return rc;
}

int
sl__bi_elem_check_verdict(struct sl__bi_elem_check *c,
                          size_t bulk,
                          size_t idx,
                          const json_t *meta,
                          const struct sl_record_head *head,
                          int *verdict)
{
    struct sl_delta_rec dr;
    int rc = 0;

    *verdict = 0;
    if (element_source(c, meta, head, &dr) == NULL) {
        return 0;
    }
    if (c->r == NULL || c->bulk != bulk || idx < c->from || idx >= c->to) {
        rc = fill(c, bulk, idx);
        if (rc != 0) {
            return rc;
        }
    }
    *verdict = c->verdict[idx - c->from];
    return 0;
}
