# The Prometheus writer of GET /metrics (label escaping, the names of the
# two formats) and the HTTP request counters (statuses, cumulative
# histogram buckets).
sl_add_cmocka_test(test_http_metrics SOURCES unit/test_http_metrics.c
  LINK_LIBRARIES sl_http)
