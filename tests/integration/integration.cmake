# Integration tests: the real binary on a free loopback port.
set(SL_IT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration)
file(GLOB SL_IT_CASES ${SL_IT_DIR}/cases/*.case)
foreach(c ${SL_IT_CASES})
  get_filename_component(n ${c} NAME_WE)
  add_test(NAME it_cases_${n} COMMAND ${SL_IT_DIR}/run_cases.sh $<TARGET_FILE:sluice> ${c})
  set_tests_properties(it_cases_${n} PROPERTIES TIMEOUT 120
    ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
foreach(t store_objects auth limits shutdown cli jobmanager)
  add_test(NAME it_${t} COMMAND ${SL_IT_DIR}/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 180
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()

# kill -9 at many points of a run: needs sluice-test (test workers).
add_test(NAME it_crash_recovery COMMAND ${SL_IT_DIR}/crash_recovery.sh)
# Every kill point in the normal build (about 200 s on 2 cores); under the
# sanitizers, which run it 2-3x slower and are there for memory errors, not
# for more kill points, half of them (all of them timed out at 600 s on a
# loaded machine).
if(SL_SANITIZE)
  set(SL_CRASH_ENV ";CRASH_POINTS=3 25 90 170 250;CRASH_RANDOM=2")
else()
  set(SL_CRASH_ENV "")
endif()
set_tests_properties(it_crash_recovery PROPERTIES TIMEOUT 600
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;SLUICE=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp${SL_CRASH_ENV}")

add_test(NAME it_importing COMMAND ${SL_IT_DIR}/importing.sh)
set_tests_properties(it_importing PROPERTIES TIMEOUT 120
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
