sl_add_cmocka_test(test_bulkbuilder SOURCES unit/test_bulkbuilder.c
  LINK_LIBRARIES sl_bulkbuilder Threads::Threads TIMEOUT 180)
# the tests of the seal window, with the knob set for the whole process
add_test(NAME test_bulkbuilder_delayed COMMAND test_bulkbuilder delayed)
set_tests_properties(test_bulkbuilder_delayed PROPERTIES TIMEOUT 180
  ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp;SLUICE_TEST_DELAY=bulkbuilder.sealed=150")
