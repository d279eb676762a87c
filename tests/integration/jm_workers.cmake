# The worker runtime against the real server: test workers in-process
# (jm_workers.sh) and in external `sluice-test worker` processes
# (external_workers.sh).
foreach(t jm_workers external_workers)
  add_test(NAME it_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 180
    ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
