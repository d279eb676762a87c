# text/: office documents and EPUB (text/office.c, text/epub.c) from the
# documents of tests/docs/ (their folder given as SL_TEST_DOCS) and from
# hostile zips made by libarchive's zip writer.
find_package(LibArchive REQUIRED)
sl_add_cmocka_test(test_text_office SOURCES unit/test_text_office.c
  LINK_LIBRARIES sl_text LibArchive::LibArchive)
target_compile_definitions(test_text_office PRIVATE
  SL_TEST_DOCS="${CMAKE_CURRENT_SOURCE_DIR}/docs")
