/*
 * The HTTP requests' metrics (http_int.h; docs/operations.md "Metrics"):
 * per route of the route table, requests by status and a latency
 * histogram, in relaxed atomics, so that counting a request costs a few
 * uncontended additions and no lock.  Label values come from the route
 * table and a fixed list of statuses only: the set of series is bounded
 * whatever the requests' paths and methods.
 */
#include <stdatomic.h>

#include "http/http_int.h"

/* The statuses the server answers with; anything else counts as "other". */
static const unsigned statuses[] = {
    200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409,
    410, 411, 413, 414, 415, 416, 429, 431, 500, 501, 502, 503, 504, 507};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]) + 1)

/* Upper bounds of the latency buckets, in microseconds (+Inf after). */
static const uint64_t bounds_us[] = {500,
                                     1000,
                                     2500,
                                     5000,
                                     10000,
                                     25000,
                                     50000,
                                     100000,
                                     250000,
                                     500000,
                                     1000000,
                                     2500000,
                                     5000000,
                                     10000000,
                                     30000000};
#define NBOUNDS (sizeof(bounds_us) / sizeof(bounds_us[0]))

struct route_metrics {
    atomic_uint_fast64_t status[NSTATUS];
    atomic_uint_fast64_t bucket[NBOUNDS + 1]; /* not cumulative */
    atomic_uint_fast64_t sum_us;
};

struct sl__http_metrics {
    size_t nroutes;          /* of sl__routes; one more for unmatched */
    struct route_metrics *r; /* nroutes + 1 */
};

struct sl__http_metrics *
sl__http_metrics_new(void)
{
    struct sl__http_metrics *m = sl_calloc(1, sizeof(*m));
    size_t i = 0;

    while (sl__routes[m->nroutes].method != NULL) {
        m->nroutes++;
    }
    m->r = sl_calloc(m->nroutes + 1, sizeof(*m->r));
    for (i = 0; i <= m->nroutes; i++) {
        size_t k = 0;

        for (k = 0; k < NSTATUS; k++) {
            atomic_init(&m->r[i].status[k], 0);
        }
        for (k = 0; k <= NBOUNDS; k++) {
            atomic_init(&m->r[i].bucket[k], 0);
        }
        atomic_init(&m->r[i].sum_us, 0);
    }
    return m;
}

void
sl__http_metrics_free(struct sl__http_metrics *m)
{
    if (m != NULL) {
        sl_free(m->r);
        sl_free(m);
    }
}

void
sl__http_metrics_observe(struct sl__http_metrics *m,
                         const struct sl__route *route,
                         unsigned status,
                         int64_t elapsed_us)
{
    size_t ri = route != NULL ? (size_t)(route - sl__routes) : m->nroutes;
    size_t si = 0;
    size_t b = 0;
    uint64_t us = elapsed_us > 0 ? (uint64_t)elapsed_us : 0;
    struct route_metrics *rm = NULL;

    if (ri > m->nroutes) {
        ri = m->nroutes;
    }
    rm = &m->r[ri];
    while (si < NSTATUS - 1 && statuses[si] != status) {
        si++;
    }
    while (b < NBOUNDS && us > bounds_us[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&rm->status[si], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rm->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rm->sum_us, us, memory_order_relaxed);
}

/* Route @i's labels: its pattern and method, "(none)" for unmatched. */
static void
route_labels(const struct sl__http_metrics *m,
             size_t i,
             const char **route,
             const char **method)
{
    *route = i < m->nroutes ? sl__routes[i].pattern : "(none)";
    *method = i < m->nroutes ? sl__routes[i].method : "(any)";
}

void
sl__http_metrics_write(const struct sl__http_metrics *m,
                       struct sl__prom *p,
                       unsigned in_flight)
{
    size_t i = 0;
    size_t k = 0;
    char st[16];
    char le[32];

    sl__prom_family(p,
                    "sluice_http_requests",
                    "counter",
                    "HTTP requests answered, by route pattern, method and "
                    "status");
    for (i = 0; i <= m->nroutes; i++) {
        const char *route = NULL;
        const char *method = NULL;

        route_labels(m, i, &route, &method);
        for (k = 0; k < NSTATUS; k++) {
            uint64_t n =
                atomic_load_explicit(&m->r[i].status[k], memory_order_relaxed);

            if (n == 0) {
                continue;
            }
            if (k < NSTATUS - 1) {
                (void)snprintf(st, sizeof(st), "%u", statuses[k]);
            } else {
                (void)snprintf(st, sizeof(st), "other");
            }
            sl__prom_sample(p,
                            "_total",
                            (double)n,
                            "route",
                            route,
                            "method",
                            method,
                            "status",
                            st,
                            NULL);
        }
    }
    sl__prom_family(p,
                    "sluice_http_request_duration_seconds",
                    "histogram",
                    "Time from a request's first byte to its answer queued "
                    "and sent, by route pattern and method");
    for (i = 0; i <= m->nroutes; i++) {
        const char *route = NULL;
        const char *method = NULL;
        uint64_t cum = 0;

        route_labels(m, i, &route, &method);
        for (k = 0; k <= NBOUNDS; k++) {
            cum +=
                atomic_load_explicit(&m->r[i].bucket[k], memory_order_relaxed);
        }
        if (cum == 0) {
            continue;
        }
        cum = 0;
        for (k = 0; k <= NBOUNDS; k++) {
            cum +=
                atomic_load_explicit(&m->r[i].bucket[k], memory_order_relaxed);
            if (k < NBOUNDS) {
                (void)snprintf(
                    le, sizeof(le), "%g", (double)bounds_us[k] / 1e6);
            } else {
                (void)snprintf(le, sizeof(le), "+Inf");
            }
            sl__prom_sample(p,
                            "_bucket",
                            (double)cum,
                            "route",
                            route,
                            "method",
                            method,
                            "le",
                            le,
                            NULL);
        }
        sl__prom_sample(p,
                        "_sum",
                        (double)atomic_load_explicit(&m->r[i].sum_us,
                                                     memory_order_relaxed) /
                            1e6,
                        "route",
                        route,
                        "method",
                        method,
                        NULL);
        sl__prom_sample(
            p, "_count", (double)cum, "route", route, "method", method, NULL);
    }
    sl__prom_family(p,
                    "sluice_http_requests_in_flight",
                    "gauge",
                    "Requests being served, this scrape included");
    sl__prom_sample(p, "", (double)in_flight, NULL);
}
