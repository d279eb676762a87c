# text/: the text library on plain values (MIME types, documents, a
# converter and its cancel callback, the HTML text of a links parser) and
# the archive walk into a sink (zips written by libarchive into memory
# files).
find_package(LibArchive REQUIRED)
sl_add_cmocka_test(test_text SOURCES unit/test_text.c
  LINK_LIBRARIES sl_text LibArchive::LibArchive)
