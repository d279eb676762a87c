# Embedded full-text index (index/): operations, search, paging, threads,
# the FTS table in step with the content (FTS5 integrity check on the
# database file), migration of a schema 2 database.
sl_add_cmocka_test(test_index SOURCES unit/test_index.c
  LINK_LIBRARIES sl_index Threads::Threads PkgConfig::SQLITE TIMEOUT 60)
# The ranking function sl_bm25 (index/rank.c) against FTS5's bm25, and
# the idf of a phrase of several tokens.
sl_add_cmocka_test(test_index_rank SOURCES unit/test_index_rank.c
  LINK_LIBRARIES sl_index PkgConfig::SQLITE TIMEOUT 60)
# The indexWriter on a real index set: what it holds before a transaction
# is bounded by text bytes as well as by records.
sl_add_cmocka_test(test_index_writer SOURCES unit/test_index_writer.c
  LINK_LIBRARIES sl_builtin sl_workers sl_index TIMEOUT 120)
# Document metadata in the index (schema 5): the author column and its
# column filter, the fields of a search hit, the types of the new columns,
# migration of a schema 4 database, a newer schema refused.
sl_add_cmocka_test(test_index_meta SOURCES unit/test_index_meta.c
  LINK_LIBRARIES sl_index PkgConfig::SQLITE TIMEOUT 60)
# The stored text (schema 7): packed and read back, in snippets and FTS
# deletes; a schema 6 database packed at open; a damaged value refused.
sl_add_cmocka_test(test_index_text SOURCES unit/test_index_text.c
  LINK_LIBRARIES sl_index PkgConfig::SQLITE TIMEOUT 60)
# The query language (index/qparse.c): what users type and what it
# becomes, the errors with their position, and searches with words,
# punctuation and field filters on a real index.
sl_add_cmocka_test(test_index_query SOURCES unit/test_index_query.c
  LINK_LIBRARIES sl_index PkgConfig::SQLITE TIMEOUT 60)
