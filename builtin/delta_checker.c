/*
 * deltaChecker (SMILA's DeltaChecker, docs/workers.md): asks the delta service
 * whether each record of `recordsToCheck` is new, changed or up to date in this
 * job run, and writes new and changed ones (changed with `_update: true`) to
 * `updatedRecords`, compounds to `updatedCompounds` when that slot is
 * connected.  Up-to-date records are dropped (the service has marked them,
 * and for compounds their elements, visited).  Records without a
 * `_deltaHash` pass; records the service refuses are skipped and counted.
 * Strategies `disabled` and `initial` pass everything through.
 *
 * The first pass over each input bulk reads metadata only and checks it
 * in batches (one delta transaction per shard per batch); records without
 * attachments (the crawler's) are written right then.  Only when a chosen
 * record has attachments does a second pass copy it, attachments
 * streamed.  A record with attachments and a head (docs/bulk-format.md)
 * is decided on its head, without decoding its metadata.  Memory: one
 * batch of metadata (or heads) and one byte per input record.
 * See docs/workers.md "deltaChecker".
 */
#include <string.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

#define BATCH    1000u
#define COPY_BUF (64u * 1024u)

/* Where a record goes. */
enum dest {
    DEST_DROP = 0,
    DEST_RECORDS = 1,
    DEST_RECORDS_UPDATE = 2, /* with _update: true */
    DEST_COMPOUNDS = 3,
    DEST_COMPOUNDS_UPDATE = 4,
    DEST_DONE = 5, /* written in the first pass (had no attachment) */
};

struct check {
    struct sl_task_ctx *ctx;
    struct sl_delta *delta;
    enum sl_delta_strategy strategy;
    const char *run_id;
    const char *param_source;
    int has_compounds;   /* updatedCompounds is connected */
    unsigned char *dest; /* per record of the current bulk */
    size_t ndest, capdest;
    /* the current batch: each record's metadata, or its head */
    json_t *metas[BATCH];
    struct sl_record_head *heads[BATCH];
    struct sl_delta_rec recs[BATCH];
    size_t first[BATCH];   /* record index in the bulk */
    size_t has_att[BATCH]; /* attachments of the record */
    size_t n;
    int need_copy;  /* some record of the bulk waits for the second pass */
    int all_pass;   /* every record of the bulk so far: unchanged, to
                       updatedRecords, with attachments (pass 2 would copy
                       the bulk as it is) */
    size_t ninputs; /* input bulks of the task */
    char *source;   /* source of the batch */
    uint64_t seq;
    struct sl__bi_recheck rk; /* the job's next checks, or off */
};

static enum dest
route(const struct check *c, int is_compound, int update)
{
    if (c->has_compounds && is_compound) {
        return update ? DEST_COMPOUNDS_UPDATE : DEST_COMPOUNDS;
    }
    return update ? DEST_RECORDS_UPDATE : DEST_RECORDS;
}

static void
dest_set(struct check *c, size_t i, enum dest d)
{
    while (i >= c->capdest) {
        size_t cap = c->capdest ? c->capdest * 2 : 1024;

        c->dest = sl_realloc(c->dest, cap);
        memset(c->dest + c->capdest, 0, cap - c->capdest);
        c->capdest = cap;
    }
    c->dest[i] = (unsigned char)d;
    if (i + 1 > c->ndest) {
        c->ndest = i + 1;
    }
}

/* Mark @meta for destination @d (`_update`; @meta may be NULL for the
 * other destinations) and give the writer of its output slot.  0 or
 * SL_E*. */
static int
begin_output(struct check *c,
             json_t *meta,
             enum dest d,
             struct sl_bulk_writer **w)
{
    if (d == DEST_RECORDS_UPDATE || d == DEST_COMPOUNDS_UPDATE) {
        (void)json_object_set_new(meta, "_update", json_true());
    }
    return sl_task_output_writer(
        c->ctx,
        d == DEST_COMPOUNDS || d == DEST_COMPOUNDS_UPDATE ? "updatedCompounds"
                                                          : "updatedRecords",
        w);
}

/* Write record @meta (no attachments) to its output now. */
static int
write_now(struct check *c, json_t *meta, enum dest d)
{
    struct sl_bulk_writer *w = NULL;
    int rc = begin_output(c, meta, d, &w);

    if (rc == 0) {
        rc = sl_bulk_writer_record_begin(w, meta);
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(w);
    }
    if (rc != 0) {
        sl_task_set_message(c->ctx, "output: %s", sl_strerror(rc));
    }
    return rc;
}

/* Route record number @idx of the bulk: written now when it has no
 * attachment, else left for the second pass.  0 or SL_E*. */
static int
route_record(
    struct check *c, size_t idx, json_t *meta, size_t has_att, enum dest d)
{
    if (d != DEST_RECORDS || !has_att) {
        c->all_pass = 0;
    }
    if (d == DEST_DROP || has_att) {
        dest_set(c, idx, d);
        c->need_copy |= d != DEST_DROP;
        return 0;
    }
    dest_set(c, idx, DEST_DONE);
    return write_now(c, meta, d);
}

/* Check the batch; 0 or SL_E* (the task message is set). */
static int
flush_batch(struct check *c)
{
    struct sl_err err;
    size_t i = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (c->n == 0) {
        return 0;
    }
    rc = sl_delta_check(c->delta, c->source, c->seq, c->recs, c->n, &err);
    if (rc != 0) {
        sl_task_note_error(c->ctx, rc);
        sl_task_set_message(c->ctx, "delta service: %s", err.message);
        goto out;
    }
    rc = sl__bi_recheck_record(
        c->ctx, &c->rk, c->delta, c->source, c->seq, c->recs, c->n, 0);
    if (rc != 0) {
        goto out;
    }
    for (i = 0; i < c->n && rc == 0; i++) {
        json_t *meta = c->metas[i];
        int compound = c->recs[i].is_compound;
        enum dest d = DEST_DROP;

        switch (c->recs[i].result) {
        case SL_DELTA_NEW:
            sl_task_counter_add(c->ctx, "records.new", 1);
            d = route(c, compound, 0);
            break;
        case SL_DELTA_CHANGED:
            sl_task_counter_add(c->ctx, "records.changed", 1);
            d = route(c, compound, 1);
            break;
        case SL_DELTA_UPTODATE:
            sl_task_counter_add(c->ctx, "records.uptodate", 1);
            break;
        case SL_DELTA_NOHASH:
            sl_task_counter_add(c->ctx, "records.nohash", 1);
            d = route(c, compound, 0);
            break;
        default:
            SL_WARN("deltaChecker: %s: refused by the delta service: %s",
                    c->recs[i].id,
                    sl_strerror(c->recs[i].result));
            sl_task_counter_add(c->ctx, "records.skipped", 1);
            sl_task_doc(c->ctx,
                        SL_JM_DOC_FAILED,
                        c->source,
                        c->recs[i].id,
                        "deltaService",
                        sl_strerror(c->recs[i].result));
            break;
        }
        rc = route_record(c, c->first[i], meta, c->has_att[i], d);
    }
out:
    for (i = 0; i < c->n; i++) {
        json_decref(c->metas[i]);
        sl_free(c->heads[i]);
    }
    c->n = 0;
    return rc;
}

/* Open input bulk @b of recordsToCheck; SL_WORKER_OK or RECOVERABLE. */
static int
open_input(struct check *c, size_t b, struct sl_bulk_reader **r)
{
    int rc = sl_task_input_open(c->ctx, "recordsToCheck", b, r);

    if (rc != 0) {
        sl_task_set_message(c->ctx, "input %zu: %s", b, sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

/* Pass 1: decide every record of input @b. */
static int
decide(struct check *c, size_t b)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_err err;
    json_t *meta = NULL;
    const char *text = NULL;
    size_t tlen = 0;
    size_t idx = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (open_input(c, b, &r) != SL_WORKER_OK) {
        return SL_WORKER_RECOVERABLE;
    }
    c->ndest = 0;
    c->need_copy = 0;
    c->all_pass = 1;
    while ((rc = sl_bulk_reader_next_raw(r, &text, &tlen, &err)) == 1) {
        const struct sl_record_head *head = NULL;
        struct sl_delta_rec rec;
        const char *source = NULL;
        size_t has_att = 0;

        (void)sl_bulk_reader_head(r, &head);
        rc = sl_bulk_reader_skip_attachments(r, &has_att, &err);
        if (rc == 0 && (head == NULL || has_att == 0)) {
            /* no head, or written now: decoded */
            rc = sl_bulk_reader_meta(r, &meta, &err);
        }
        if (rc != 0) {
            break;
        }
        source = sl__bi_delta_fields(meta, head, &rec);
        if (source == NULL) {
            source = c->param_source;
        }
        if (!sl_delta_strategy_reads(c->strategy) || source == NULL ||
            rec.hash == NULL || rec.hash[0] == '\0') {
            if (sl_delta_strategy_reads(c->strategy)) {
                sl_task_counter_add(c->ctx, "records.nohash", 1);
            }
            rc = route_record(
                c, idx++, meta, has_att, route(c, rec.is_compound, 0));
            json_decref(meta);
            meta = NULL;
            if (rc != 0) {
                break;
            }
            continue;
        }
        if (c->n > 0 && strcmp(source, c->source) != 0) {
            rc = flush_batch(c);
            if (rc != 0) {
                break;
            }
        }
        if (c->n == 0 &&
            (c->source == NULL || strcmp(source, c->source) != 0)) {
            sl_free(c->source);
            c->source = sl_asprintf("%s", source);
            rc = sl__bi_delta_run(
                c->ctx, c->delta, source, c->run_id, &c->seq, &err);
            if (rc != 0) {
                sl_task_note_error(c->ctx, rc);
                sl_task_set_message(c->ctx, "delta service: %s", err.message);
                break;
            }
        }
        c->metas[c->n] = meta;
        c->heads[c->n] = NULL;
        if (meta == NULL) { /* its strings, kept till the batch is checked */
            c->heads[c->n] = sl_record_head_dup(head);
            (void)sl__bi_delta_fields(NULL, c->heads[c->n], &rec);
        }
        meta = NULL;
        c->recs[c->n] = rec;
        c->first[c->n] = idx++;
        c->has_att[c->n] = has_att;
        c->n++;
        if (c->n == BATCH) {
            rc = flush_batch(c);
            if (rc != 0) {
                break;
            }
        }
    }
    json_decref(meta);
    if (rc == 0) {
        rc = flush_batch(c);
    } else if (rc < 0 && c->n > 0) {
        size_t i = 0;

        for (i = 0; i < c->n; i++) {
            json_decref(c->metas[i]);
            sl_free(c->heads[i]);
        }
        c->n = 0;
    }
    /* Every record goes on unchanged: the output is the input, shared
     * instead of copied (the task's last input only, since a single
     * output slot takes nothing after it). */
    if (rc == 0 && c->need_copy && c->all_pass && b + 1 == c->ninputs) {
        rc = sl_task_output_copy_input(c->ctx, "updatedRecords", r);
        if (rc == 0) {
            c->need_copy = 0;
            sl_task_counter_add(c->ctx, "bulks.shared", 1);
        } else if (rc == 1) {
            rc = 0;
        }
    }
    sl_task_input_close(c->ctx, r);
    if (rc == SL_ECORRUPT || rc == SL_ETRUNCATED || rc == SL_ETOOLARGE) {
        sl_task_set_message(c->ctx, "input %zu: %s", b, err.message);
        return SL_WORKER_FATAL;
    }
    return rc == 0 ? SL_WORKER_OK : SL_WORKER_RECOVERABLE;
}

/* Pass 2: copy the chosen records of input @b.  Records that pass
 * unchanged are copied as stored (sl_bulk_copy_record: no decoding, no
 * re-encoding; pass 1 checked their metadata, or their head, which this
 * engine's writer derived from it); a changed record gets `_update` and
 * is re-encoded. */
static int
copy(struct check *c, size_t b, char *buf)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_err err;
    const char *text = NULL;
    size_t tlen = 0;
    size_t idx = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (open_input(c, b, &r) != SL_WORKER_OK) {
        return SL_WORKER_RECOVERABLE;
    }
    while ((rc = sl_bulk_reader_next_raw(r, &text, &tlen, &err)) == 1) {
        enum dest d = idx < c->ndest ? (enum dest)c->dest[idx] : DEST_DROP;
        json_t *meta = NULL;

        idx++;
        if (d == DEST_DROP || d == DEST_DONE) {
            rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
        } else if (d == DEST_RECORDS_UPDATE || d == DEST_COMPOUNDS_UPDATE) {
            rc = sl_bulk_reader_meta(r, &meta, &err);
            if (rc == 0) {
                rc = begin_output(c, meta, d, &w);
            }
            if (rc == 0) {
                rc = sl_bulk_writer_record_begin(w, meta);
            }
            if (rc == 0) {
                rc = sl_bulk_copy_attachments(r, w, buf, COPY_BUF, &err);
            }
            if (rc == 0) {
                rc = sl_bulk_writer_record_end(w);
            }
            json_decref(meta);
        } else {
            rc = begin_output(c, NULL, d, &w);
            if (rc == 0) {
                rc = sl_bulk_copy_record(r, w, &err);
            }
        }
        if (rc != 0) {
            break;
        }
    }
    sl_task_input_close(c->ctx, r);
    if (rc == 0) {
        return SL_WORKER_OK;
    }
    sl_task_set_message(c->ctx,
                        "input %zu: %s",
                        b,
                        err.message[0] ? err.message : sl_strerror(rc));
    return rc == SL_ECORRUPT || rc == SL_ETRUNCATED ? SL_WORKER_FATAL
                                                    : SL_WORKER_RECOVERABLE;
}

static int
checker_perform(struct sl_task_ctx *ctx)
{
    struct check *c = sl_calloc(1, sizeof(*c));
    struct sl_bulk_writer *w = NULL;
    struct sl_err err;
    char *buf = NULL;
    size_t n = sl_task_input_count(ctx, "recordsToCheck");
    size_t b = 0;
    int res = SL_WORKER_OK;

    sl_err_clear(&err);
    c->ctx = ctx;
    c->ninputs = n;
    c->delta = sl_task_services(ctx)->delta;
    c->run_id = json_string_value(json_object_get(
        json_object_get(sl_task_json(ctx), "properties"), "jobRunId"));
    c->param_source = sl_task_param_str(ctx, "dataSource");
    if (sl__bi_strategy(json_object_get(sl_task_json(ctx), "parameters"),
                        &c->strategy,
                        &err) != 0) {
        sl_task_set_message(ctx, "deltaImportStrategy: %s", err.message);
        res = SL_WORKER_FATAL;
        goto out;
    }
    if (sl__bi_recheck_init(ctx, &c->rk) != 0) {
        res = SL_WORKER_FATAL;
        goto out;
    }
    if (sl_delta_strategy_reads(c->strategy) &&
        (c->delta == NULL || c->run_id == NULL)) {
        sl_task_set_message(ctx,
                            "deltaChecker needs the delta service: run it "
                            "inside `sluice serve`");
        res = SL_WORKER_FATAL;
        goto out;
    }
    c->has_compounds =
        sl_task_output_writer(ctx, "updatedCompounds", &w) != SL_ENOENT;
    buf = sl_malloc(COPY_BUF);
    for (b = 0; b < n && res == SL_WORKER_OK; b++) {
        if (sl_task_is_canceled(ctx)) {
            res = SL_WORKER_RECOVERABLE;
            break;
        }
        res = decide(c, b);
        if (res == SL_WORKER_OK && c->need_copy) {
            res = copy(c, b, buf);
        }
    }
out:
    sl_free(buf);
    sl_free(c->dest);
    sl_free(c->source);
    sl_free(c);
    return res;
}

const struct sl_worker_type sl_worker_deltaChecker = {
    SL_WORKER_ABI_VERSION,
    "deltaChecker",
    "{\"name\": \"deltaChecker\","
    " \"parameters\": [{\"name\": \"deltaImportStrategy\", \"optional\": true,"
    "   \"values\": [\"disabled\", \"initial\", \"additive\", \"full\"],"
    "   \"default\": \"full\", \"sameForJob\": true},"
    "  {\"name\": \"dataSource\", \"optional\": true}," SL__BI_DECL_RECHECK "],"
    " \"input\": [{\"name\": \"recordsToCheck\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"updatedRecords\", \"type\": \"recordBulks\","
    "   \"modes\": [\"optional\"]},"
    "  {\"name\": \"updatedCompounds\", \"type\": \"recordBulks\","
    "   \"modes\": [\"optional\"]}]}",
    checker_perform,
    NULL,
    NULL,
};
