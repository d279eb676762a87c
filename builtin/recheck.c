/*
 * The next checks of a crawl's records (docs/workers.md "deltaChecker",
 * docs/deltaservice.md "Next checks"): with the job parameter `recheck`
 * ({"minSeconds": m, "maxSeconds": M}), every record the deltaChecker
 * checks, and every file the fileCrawler's pre-check finds up to date,
 * gets its next check in the delta service from the outcome: new the
 * minimum, changed half its interval, unchanged twice (up to the
 * maximum).  Elements of compounds get none (their compound is checked).
 * The deltaChecker records what it checks and the pre-check only what it
 * finds up to date (the rest goes on to the deltaChecker), so no record
 * is counted twice in a run.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

#define RECHECK_MAX_S (366ull * 86400) /* a year */

int
sl__bi_recheck_bounds(const json_t *p, uint64_t *min_s, uint64_t *max_s)
{
    if (!json_is_object(p) ||
        sl_worker_json_u64(json_object_get(p, "minSeconds"), 3600, min_s) !=
            0 ||
        sl_worker_json_u64(
            json_object_get(p, "maxSeconds"), RECHECK_MAX_S / 12, max_s) != 0) {
        return -1;
    }
    return 0;
}

int
sl__bi_recheck_init(struct sl_task_ctx *ctx, struct sl__bi_recheck *out)
{
    const json_t *p = sl_task_param(ctx, "recheck");
    uint64_t min_s = 0;
    uint64_t max_s = 0;
    json_t *none = NULL;
    int bad = 0;

    memset(out, 0, sizeof(*out));
    if (p == NULL && sl__bi_pass_kind(ctx) == NULL) {
        return 0;
    }
    if (p == NULL) {
        p = none = json_object(); /* a continuous run checks: the defaults */
    }
    bad = sl__bi_recheck_bounds(p, &min_s, &max_s) != 0;
    json_decref(none);
    if (bad || min_s == 0 || max_s < min_s || max_s > RECHECK_MAX_S) {
        sl_task_set_message(ctx,
                            "recheck: minSeconds and maxSeconds must be "
                            "numbers with 1 <= minSeconds <= maxSeconds <= "
                            "%llu",
                            (unsigned long long)RECHECK_MAX_S);
        return -1;
    }
    out->on = 1;
    out->min_ms = min_s * 1000;
    out->max_ms = max_s * 1000;
    return 0;
}

int
sl__bi_recheck_record(struct sl_task_ctx *ctx,
                      const struct sl__bi_recheck *rk,
                      struct sl_delta *delta,
                      const char *source,
                      uint64_t seq,
                      const struct sl_delta_rec *recs,
                      size_t n,
                      int uptodate_only)
{
    struct sl_delta_recheck *items = NULL;
    struct sl_err err;
    size_t m = 0;
    size_t i = 0;
    int rc = 0;

    if (!rk->on || n == 0) {
        return 0;
    }
    items = sl_calloc(n, sizeof(*items));
    for (i = 0; i < n; i++) {
        const struct sl_delta_rec *r = &recs[i];
        enum sl_delta_seen seen = SL_DELTA_SEEN_NEW;

        if (r->compound_id != NULL ||
            (uptodate_only && r->result != SL_DELTA_UPTODATE)) {
            continue;
        }
        if (r->result == SL_DELTA_UPTODATE) {
            seen = SL_DELTA_SEEN_UNCHANGED;
        } else if (r->result == SL_DELTA_CHANGED) {
            seen = SL_DELTA_SEEN_CHANGED;
        } else if (r->result != SL_DELTA_NEW) {
            continue; /* no hash, or refused */
        }
        items[m].id = r->id;
        items[m].seen = seen;
        m++;
    }
    sl_err_clear(&err);
    if (m > 0) {
        rc = sl_delta_recheck_set(delta,
                                  source,
                                  seq,
                                  items,
                                  m,
                                  (uint64_t)sl__bi_task_now(ctx),
                                  rk->min_ms,
                                  rk->max_ms,
                                  &err);
    }
    if (rc != 0) {
        sl_task_note_error(ctx, rc);
        sl_task_set_message(ctx, "delta service: next checks: %s", err.message);
    } else if (m > 0) {
        sl_task_counter_add(ctx, "records.rechecksSet", (double)m);
    }
    sl_free(items);
    return rc;
}

void
sl__bi_recheck_moved_on(struct sl_task_ctx *ctx,
                        const struct sl__bi_recheck *rk,
                        struct sl_delta *delta,
                        const char *source,
                        const char *id)
{
    struct sl_delta_recheck it = {id, SL_DELTA_SEEN_UNCHANGED, 0, 0};
    struct sl_err err;

    if (rk->on && delta != NULL) {
        (void)sl_delta_recheck_set(delta,
                                   source,
                                   0,
                                   &it,
                                   1,
                                   (uint64_t)sl__bi_task_now(ctx),
                                   rk->min_ms,
                                   rk->max_ms,
                                   &err);
    }
}

/* ------------------------------------------------------------------------
 * Passes of continuous runs (docs/jobmanager.md "Continuous crawling"):
 * every task of a pass has passId, passKind and passTime in its
 * properties.
 * --------------------------------------------------------------------- */

static const json_t *
prop(struct sl_task_ctx *ctx, const char *name)
{
    return json_object_get(json_object_get(sl_task_json(ctx), "properties"),
                           name);
}

const char *
sl__bi_pass_kind(struct sl_task_ctx *ctx)
{
    return json_string_value(prop(ctx, "passKind"));
}

int64_t
sl__bi_task_now(struct sl_task_ctx *ctx)
{
    const json_t *t = prop(ctx, "passTime");

    return json_is_integer(t) && json_integer_value(t) > 0
               ? (int64_t)json_integer_value(t)
               : sl_time_ms();
}

int
sl__bi_delta_run(struct sl_task_ctx *ctx,
                 struct sl_delta *delta,
                 const char *source,
                 const char *run_id,
                 uint64_t *seq,
                 struct sl_err *err)
{
    const json_t *pass = prop(ctx, "passId");
    char key[256];

    if (!json_is_integer(pass) || run_id == NULL) {
        return sl_delta_run_for(delta, source, run_id, seq, err);
    }
    (void)snprintf(key,
                   sizeof(key),
                   "%s/pass%lld",
                   run_id,
                   (long long)json_integer_value(pass));
    return sl_delta_run_for_at(
        delta, source, key, sl__bi_task_now(ctx), seq, err);
}
