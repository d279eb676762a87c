# Delta service: invalidating a source's entries for re-push (clearing a
# source over REST), issue 25.
sl_add_cmocka_test(test_delta_invalidate SOURCES unit/test_delta_invalidate.c
  LINK_LIBRARIES sl_deltaservice TIMEOUT 60)
