/*
 * Flow control: an action of a run waits while the actions after it have
 * jm->cfg.max_queued_downstream tasks to do, so a producer (a crawler that
 * lists folders faster than the fetcher reads files) does not run
 * thousands of bulks ahead of its consumers: a million-file crawl had
 * 2,669 fileFetcher tasks to do, each a task in memory and in the state
 * store and a bulk in the temporary store.
 *
 * "After" is strict: d is after a when a bulk of a can lead to a task of
 * d and no bulk of d can lead to a task of a.  Actions in one cycle (the
 * webCrawler reading the links it wrote) never hold each other back, and
 * the last actions are never held, so the tasks after a held action are
 * always taken and it goes on.  Tasks waiting for events are not counted:
 * the event may come from the held action.
 */
#include <string.h>

#include "jobmanager/defs_int.h"
#include "jobmanager/engine_int.h"

/* Whether action @a of @wf writes a bucket that action @d reads. */
static int
feeds(const json_t *wf, size_t a, size_t d)
{
    const json_t *out = json_object_get(sl__jm_wf_action(wf, a), "output");
    const json_t *in = json_object_get(sl__jm_wf_action(wf, d), "input");
    const char *k1 = NULL;
    const char *k2 = NULL;
    json_t *b1 = NULL;
    json_t *b2 = NULL;

    json_object_foreach((json_t *)out, k1, b1)
    {
        json_object_foreach((json_t *)in, k2, b2)
        {
            if (json_is_string(b1) && json_is_string(b2) &&
                strcmp(json_string_value(b1), json_string_value(b2)) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* The flow table of @r, made on first use from its workflow. */
static struct flow *
flow_of(struct run *r)
{
    struct flow *f = r->flow;
    unsigned char *reach = NULL;
    size_t n = 0;
    size_t a = 0;
    size_t d = 0;
    size_t k = 0;

    if (f != NULL) {
        return f;
    }
    n = sl__jm_wf_nactions(r->wfdef); /* 1 or more */
    f = sl_calloc(1, sizeof(*f));
    f->n = n;
    f->todo = sl_calloc(n, sizeof(*f->todo));
    f->after = sl_calloc(n * n, 1);
    reach = sl_calloc(n * n, 1);
    for (a = 0; a < n; a++) {
        for (d = 0; d < n; d++) {
            reach[a * n + d] = (unsigned char)feeds(r->wfdef, a, d);
        }
    }
    for (k = 0; k < n; k++) { /* transitive closure (n is small) */
        for (a = 0; a < n; a++) {
            for (d = 0; reach[a * n + k] && d < n; d++) {
                reach[a * n + d] |= reach[k * n + d];
            }
        }
    }
    for (a = 0; a < n; a++) {
        for (d = 0; d < n; d++) {
            f->after[a * n + d] = reach[a * n + d] && !reach[d * n + a];
        }
    }
    sl_free(reach);
    r->flow = f;
    return f;
}

void
sl__jm_flow_queued(struct task *t)
{
    struct flow *f = flow_of(t->run);

    if (t->events == NULL && (size_t)t->action < f->n) {
        f->todo[t->action]++;
        t->flow_counted = 1;
    }
}

void
sl__jm_flow_unqueued(struct sl_jm *jm, struct task *t)
{
    struct flow *f = t->run->flow;
    size_t a = 0;

    if (!t->flow_counted || f == NULL) {
        return;
    }
    t->flow_counted = 0;
    f->todo[t->action]--;
    if (!f->waiting) {
        return;
    }
    /* a held action may go on now: wake the takers of the actions
     * before this one */
    f->waiting = 0;
    for (a = 0; a < f->n; a++) {
        if (f->after[a * f->n + (size_t)t->action]) {
            const char *w = json_string_value(
                json_object_get(sl__jm_wf_action(t->run->wfdef, a), "worker"));
            struct wqueue *q = w != NULL ? sl__jm_wqueue(jm, w) : NULL;

            if (q != NULL) {
                sl__jm_wake_queue(q);
            }
        }
    }
}

int
sl__jm_flow_held(const struct sl_jm *jm, struct run *r, int action)
{
    struct flow *f = flow_of(r);
    uint64_t queued = 0;
    size_t d = 0;

    if (jm->cfg.max_queued_downstream == 0 || (size_t)action >= f->n) {
        return 0;
    }
    for (d = 0; d < f->n; d++) {
        if (f->after[(size_t)action * f->n + d]) {
            queued += f->todo[d];
        }
    }
    if (queued < jm->cfg.max_queued_downstream) {
        return 0;
    }
    f->waiting = 1;
    return 1;
}

void
sl__jm_flow_free(struct run *r)
{
    if (r->flow != NULL) {
        sl_free(r->flow->todo);
        sl_free(r->flow->after);
        sl_free(r->flow);
        r->flow = NULL;
    }
}
