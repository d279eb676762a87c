# zlib's crc32 recomputes the checksums the codec (libdeflate) wrote: the
# same CRC-32 as before and as docs/bulk-format.md says.
sl_add_cmocka_test(test_core_bulk SOURCES unit/test_core_bulk.c
  LINK_LIBRARIES sl_core PkgConfig::ZLIB)
