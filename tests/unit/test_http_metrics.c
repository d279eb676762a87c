/*
 * Unit tests of the Prometheus exposition writer (http/api_metrics.c) and
 * the HTTP request metrics (http/metrics.c): label values are escaped, a
 * counter's family is named with _total in text format 0.0.4 and without
 * in OpenMetrics, statuses outside the list count as "other", histogram
 * buckets are cumulative and end in +Inf with the count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_int.h"

static void
test_prom_writer(void **state)
{
    struct sl_buf b;
    struct sl__prom p;

    (void)state;
    sl_buf_init(&b, 1 << 20);
    memset(&p, 0, sizeof(p));
    p.b = &b;
    sl__prom_family(&p, "x_things", "counter", "Things");
    sl__prom_sample(&p, "_total", 3, "counter", "a\"b\\c\nd", NULL);
    sl__prom_family(&p, "x_level", "gauge", "Level");
    sl__prom_sample(&p, "", 0.25, NULL);
    assert_string_equal(b.data,
                        "# HELP x_things_total Things\n"
                        "# TYPE x_things_total counter\n"
                        "x_things_total{counter=\"a\\\"b\\\\c\\nd\"} 3\n"
                        "# HELP x_level Level\n"
                        "# TYPE x_level gauge\n"
                        "x_level 0.25\n");
    sl_buf_reset(&b);
    p.om = 1;
    sl__prom_family(&p, "x_things", "counter", "Things");
    sl__prom_sample(&p, "_total", 1, "a", "1", "b", "2", NULL);
    assert_string_equal(b.data,
                        "# HELP x_things Things\n"
                        "# TYPE x_things counter\n"
                        "x_things_total{a=\"1\",b=\"2\"} 1\n");
    sl_buf_free(&b);
}

/* The route of GET /metrics in the table. */
static const struct sl__route *
metrics_route(void)
{
    const struct sl__route *r = sl__routes;

    while (r->method != NULL && strcmp(r->pattern, "/metrics") != 0) {
        r++;
    }
    assert_non_null(r->method);
    return r;
}

static void
test_request_metrics(void **state)
{
    struct sl__http_metrics *m = sl__http_metrics_new();
    const struct sl__route *r = metrics_route();
    struct sl_buf b;
    struct sl__prom p;

    (void)state;
    sl__http_metrics_observe(m, r, 200, 300);          /* 0.3 ms */
    sl__http_metrics_observe(m, r, 200, 20000);        /* 20 ms */
    sl__http_metrics_observe(m, r, 418, 1);            /* other */
    sl__http_metrics_observe(m, NULL, 404, 100000000); /* 100 s */
    sl_buf_init(&b, 1 << 20);
    memset(&p, 0, sizeof(p));
    p.b = &b;
    sl__http_metrics_write(m, &p, 2);
    assert_non_null(strstr(b.data,
                           "sluice_http_requests_total{route=\"/metrics\","
                           "method=\"GET\",status=\"200\"} 2\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_requests_total{route=\"/metrics\","
                           "method=\"GET\",status=\"other\"} 1\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_requests_total{route=\"(none)\","
                           "method=\"(any)\",status=\"404\"} 1\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_request_duration_seconds_bucket{"
                           "route=\"/metrics\",method=\"GET\",le=\"0.0005\"} "
                           "2\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_request_duration_seconds_bucket{"
                           "route=\"/metrics\",method=\"GET\",le=\"0.025\"} "
                           "3\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_request_duration_seconds_bucket{"
                           "route=\"(none)\",method=\"(any)\",le=\"30\"} 0\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_request_duration_seconds_bucket{"
                           "route=\"(none)\",method=\"(any)\",le=\"+Inf\"} "
                           "1\n"));
    assert_non_null(strstr(b.data,
                           "sluice_http_request_duration_seconds_count{"
                           "route=\"/metrics\",method=\"GET\"} 3\n"));
    assert_non_null(strstr(b.data, "sluice_http_requests_in_flight 2\n"));
    /* a route never asked has no series */
    assert_null(strstr(b.data, "route=\"/smila\""));
    sl_buf_free(&b);
    sl__http_metrics_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prom_writer),
        cmocka_unit_test(test_request_metrics),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
