# Integration tests: the real binary on a free loopback port.
set(SL_IT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration)
file(GLOB SL_IT_CASES ${SL_IT_DIR}/cases/*.case)
foreach(c ${SL_IT_CASES})
  get_filename_component(n ${c} NAME_WE)
  add_test(NAME it_cases_${n} COMMAND ${SL_IT_DIR}/run_cases.sh $<TARGET_FILE:sluice> ${c})
  set_tests_properties(it_cases_${n} PROPERTIES TIMEOUT 120
    ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
foreach(t store_objects auth limits shutdown cli jobmanager workers_nice hostile
    defs_checks install)
  add_test(NAME it_${t} COMMAND ${SL_IT_DIR}/${t}.sh)
  set_tests_properties(it_${t} PROPERTIES TIMEOUT 180
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endforeach()
# The Debian package: built from a copy of the tree (a build of its own,
# without sanitizers, so only in the normal build's tests), checked with
# lintian, installed, upgraded and purged where root.
if(NOT SL_SANITIZE)
  add_test(NAME it_deb COMMAND ${SL_IT_DIR}/deb.sh)
  set_tests_properties(it_deb PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
    ENVIRONMENT "SLUICE=$<TARGET_FILE:sluice>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
endif()

# kill -9 at many points of a run: needs sluice-test (test workers).  In
# three parts, each with its own uninterrupted run to compare with, so that
# ctest -j2 spreads them over both cores (as one test it was the critical
# path of make test).  Together the parts do every kill point, 4 random
# kills and the kill-twice run in the normal build.  Under the sanitizers,
# which run it 2-3x slower and are there for memory errors, not for more
# kill points, half of them: points 3 25 90 170 250 and 2 random kills (all
# of them in one test timed out at 600 s on a loaded machine).
# One entry a part: "CRASH_POINTS,CRASH_RANDOM,CRASH_TWICE".
if(SL_SANITIZE)
  set(SL_CRASH_PARTS "3 170,1,0" "25 250,1,0" "90,0,1")
else()
  set(SL_CRASH_PARTS "3 50 170 240,1,0" "10 90 210,2,0" "25 130 250,1,1")
endif()
set(SL_CRASH_N 0)
foreach(part IN LISTS SL_CRASH_PARTS)
  math(EXPR SL_CRASH_N "${SL_CRASH_N} + 1")
  string(REPLACE "," ";" part "${part}")
  list(GET part 0 crash_points)
  list(GET part 1 crash_random)
  list(GET part 2 crash_twice)
  set(t it_crash_recovery_${SL_CRASH_N})
  add_test(NAME ${t} COMMAND ${SL_IT_DIR}/crash_recovery.sh)
  # COST: ctest starts the parts first even without timings of a past run.
  set_tests_properties(${t} PROPERTIES TIMEOUT 300 COST 100
    ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;SLUICE=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp;CRASH_POINTS=${crash_points};CRASH_RANDOM=${crash_random};CRASH_TWICE=${crash_twice}")
endforeach()

add_test(NAME it_importing COMMAND ${SL_IT_DIR}/importing.sh)
set_tests_properties(it_importing PROPERTIES TIMEOUT 120
  ENVIRONMENT "SLUICE_TEST=$<TARGET_FILE:sluice-test>;TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
