/*
 * The jobmanager's metrics since the process started (jobmanager.h,
 * sl_jm_metrics; docs/operations.md "Metrics").  Nothing is counted twice
 * on the way: task outcomes per worker are two more increments where the
 * run counts them (sl__jm_tc_add), and the workers' counters are the
 * runs' own, summed at a scrape over the active runs plus what the ended
 * runs left in jm->ended_counters when they were unlinked.  All under
 * jm->mu.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

/* The workflow run counters' names in metrics (WC_*). */
static const char *const wc_metric[WC_N] = {
    "started", "successful", "failed", "canceled"};

void
sl__jm_tc_add(struct run *r, struct task *t, enum task_counter c)
{
    r->tc[c]++;
    t->wq->tc[c]++;
}

/* The worker of a run's counter key "<action>_<worker>". */
static const char *
key_worker(const char *key)
{
    const char *u = strchr(key, '_');

    return u != NULL ? u + 1 : key;
}

/* Add the numbers of @from into @to ({name: number}), at most
 * SL_JM_METRICS_COUNTERS names in @to; the task counts are the tasks'. */
static void
add_numbers(json_t *to, const json_t *from)
{
    const char *k = NULL;
    json_t *v = NULL;

    json_object_foreach((json_t *)from, k, v)
    {
        json_t *old = json_object_get(to, k);
        size_t n = strlen(k);

        /* counters only grow: a negative value (an external worker's)
         * is left out */
        if (!json_is_number(v) || json_number_value(v) < 0 ||
            (n > 9 && strcmp(k + n - 9, "TaskCount") == 0)) {
            continue;
        }
        if (old != NULL) {
            (void)json_object_set_new(
                to,
                k,
                json_real(json_number_value(old) + json_number_value(v)));
        } else if (json_object_size(to) < SL_JM_METRICS_COUNTERS) {
            (void)json_object_set_new(to, k, json_real(json_number_value(v)));
        }
    }
}

/* Add run @r's worker counters into @by ({worker: {name: total}}). */
static void
add_run_counters(json_t *by, const struct run *r)
{
    const char *key = NULL;
    json_t *c = NULL;

    json_object_foreach(r->worker, key, c)
    {
        const char *w = key_worker(key);
        json_t *to = json_object_get(by, w);

        if (to == NULL) {
            to = json_object();
            (void)json_object_set_new(by, w, to);
        }
        add_numbers(to, c);
    }
}

void
sl__jm_metrics_run_ended(struct sl_jm *jm, const struct run *r)
{
    int i = 0;

    if (r->state == RS_SUCCEEDED) {
        jm->ended[0]++;
    } else if (r->state == RS_FAILED) {
        jm->ended[1]++;
    } else if (r->state == RS_CANCELED) {
        jm->ended[2]++;
    }
    for (i = 0; i < WC_N; i++) {
        jm->ended_wc[i] += r->wc[i];
    }
    if (jm->ended_counters == NULL) {
        jm->ended_counters = json_object();
    }
    add_run_counters(jm->ended_counters, r);
}

/* The entry of worker queue @q, with its counters from @by (stolen). */
static json_t *
worker_json(const struct wqueue *q, json_t *counters)
{
    json_t *tasks = json_object();
    char name[48];
    int i = 0;

    for (i = 0; i < TC_N; i++) {
        const char *tc = sl__jm_tc_name((enum task_counter)i);
        size_t n = strlen(tc) - strlen("TaskCount");

        (void)snprintf(name, sizeof(name), "%.*s", (int)n, tc);
        (void)json_object_set_new(
            tasks, name, json_integer((json_int_t)q->tc[i]));
    }
    return json_pack("{s:s, s:I, s:I, s:I, s:o, s:o}",
                     "name",
                     q->worker->name,
                     "todo",
                     (json_int_t)q->todo,
                     "inProgress",
                     (json_int_t)q->inprogress,
                     "taken",
                     (json_int_t)q->taken,
                     "tasks",
                     tasks,
                     "counters",
                     counters != NULL ? counters : json_object());
}

json_t *
sl_jm_metrics(struct sl_jm *jm)
{
    json_t *by = json_object();
    json_t *workers = json_array();
    json_t *active = json_object();
    json_t *wfs = json_object();
    uint64_t wc[WC_N];
    uint64_t ended[3];
    uint64_t wf_active = 0;
    uint64_t map_used = 0;
    uint64_t map_size = 0;
    const struct run *r = NULL;
    const struct wqueue *q = NULL;
    int i = 0;

    (void)pthread_mutex_lock(&jm->mu);
    memcpy(wc, jm->ended_wc, sizeof(wc));
    memcpy(ended, jm->ended, sizeof(ended));
    if (jm->ended_counters != NULL) {
        const char *w = NULL;
        json_t *c = NULL;

        json_object_foreach(jm->ended_counters, w, c)
        {
            (void)json_object_set_new(by, w, json_deep_copy(c));
        }
    }
    for (r = jm->runs; r != NULL; r = r->next) {
        const char *st = sl__jm_state_name(r->state);

        (void)json_object_set_new(
            active,
            st,
            json_integer(json_integer_value(json_object_get(active, st)) + 1));
        for (i = 0; i < WC_N; i++) {
            wc[i] += r->wc[i];
        }
        wf_active += r->active_wfruns;
        add_run_counters(by, r);
    }
    for (q = jm->queues; q != NULL; q = q->next) {
        json_t *c = json_object_get(by, q->worker->name);

        (void)json_array_append_new(
            workers, worker_json(q, c != NULL ? json_incref(c) : NULL));
    }
    for (i = 0; i < WC_N; i++) {
        (void)json_object_set_new(
            wfs, wc_metric[i], json_integer((json_int_t)wc[i]));
    }
    (void)json_object_set_new(
        wfs, "active", json_integer((json_int_t)wf_active));
    (void)pthread_mutex_unlock(&jm->mu);
    json_decref(by);
    sl__jm_store_usage(jm->st, &map_used, &map_size);
    return json_pack("{s:o, s:{s:o, s:{s:I, s:I, s:I}}, s:o, s:{s:I, s:I}}",
                     "workers",
                     workers,
                     "runs",
                     "active",
                     active,
                     "ended",
                     "SUCCEEDED",
                     (json_int_t)ended[0],
                     "FAILED",
                     (json_int_t)ended[1],
                     "CANCELED",
                     (json_int_t)ended[2],
                     "workflowRuns",
                     wfs,
                     "store",
                     "mapUsed",
                     (json_int_t)map_used,
                     "mapSize",
                     (json_int_t)map_size);
}
