/*
 * Test workers, compiled only into the tests and the sluice-test binary
 * (docs/workers.md "Test workers"): testNoop, testSplit, testCopy, testFail,
 * testSlow and testCompletion.
 */
#ifndef SL_TEST_WORKERS_H_INCLUDED
#define SL_TEST_WORKERS_H_INCLUDED

#include <stddef.h>

#include "workers/workers.h"

extern const struct sl_worker_type sl_worker_testNoop;
extern const struct sl_worker_type sl_worker_testSplit;
extern const struct sl_worker_type sl_worker_testCopy;
extern const struct sl_worker_type sl_worker_testFail;
extern const struct sl_worker_type sl_worker_testSlow;
extern const struct sl_worker_type sl_worker_testCompletion;

/**
 * @brief All test worker types.
 * @return borrowed static array of @p n entries.
 */
const struct sl_worker_type *const *sl_test_workers(size_t *n);

#endif /* SL_TEST_WORKERS_H_INCLUDED */
