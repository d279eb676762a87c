# Job schedules, the calendar (jobmanager/sched_time.c).
sl_add_cmocka_test(test_jm_sched SOURCES unit/test_jm_sched.c
  LINK_LIBRARIES sl_jobmanager)
