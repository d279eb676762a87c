# Name checks and the object store (filesystem backend).
sl_add_cmocka_test(test_core_name SOURCES unit/test_core_name.c
  LINK_LIBRARIES sl_core)
sl_add_cmocka_test(test_objectstore SOURCES unit/test_objectstore.c
  LINK_LIBRARIES sl_objectstore)
# The same tests, those that hold for every backend, against a real S3
# server on 127.0.0.1 (s3rver, started by the wrapper).
add_test(NAME test_objectstore_on_s3
  COMMAND ${PROJECT_SOURCE_DIR}/tests/s3/with-s3rver.sh --signed $<TARGET_FILE:test_objectstore>)
set_tests_properties(test_objectstore_on_s3 PROPERTIES TIMEOUT 120
  ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
# The S3 backend's own behaviour (multipart, ranges, buckets as stores,
# errors, credentials), against s3rver.
add_executable(test_objectstore_s3 unit/test_objectstore_s3.c)
target_link_libraries(test_objectstore_s3 PRIVATE sl_objectstore
  PkgConfig::CMOCKA sl_build_flags)
add_test(NAME test_objectstore_s3
  COMMAND ${PROJECT_SOURCE_DIR}/tests/s3/with-s3rver.sh --signed $<TARGET_FILE:test_objectstore_s3>)
set_tests_properties(test_objectstore_s3 PROPERTIES TIMEOUT 120
  ENVIRONMENT "TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
