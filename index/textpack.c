/*
 * Embedded full-text index, the documents' stored text (schema 7): the
 * column text_z holds the text packed, and `text` is a generated column
 * that unpacks it (docs/index.md "Schema").  The text is kept for the
 * snippets and for taking a changed document's old terms out of the FTS
 * table; packed it takes about a third of the space, and a document row
 * shares its 16 KiB page with others instead of filling one alone.
 *
 * A packed value is a blob: 'T' and the text as it is (short or
 * incompressible texts), or 'Z', the text's length as 4 bytes little
 * endian and the text as raw DEFLATE (libdeflate).  The SQL functions are
 * registered on every connection of the index: sl_text_unpack(blob) for
 * the generated column, sl_text_pack(text) for the migration of older
 * databases.
 */
#include <libdeflate.h>
#include <string.h>

#include "index/index_int.h"

#define PACK_LEVEL 1  /* libdeflate's fastest: 2.6x on prose (docs/index.md) */
#define PACK_MIN   64 /* bytes: shorter texts are stored as they are */
#define HEAD       5  /* 'Z' and the length */

int
sl__index_text_pack(struct libdeflate_compressor *c,
                    const char *s,
                    size_t n,
                    struct sl__index_packed *out)
{
    int pack = n >= PACK_MIN && c != NULL;
    size_t bound = pack ? libdeflate_deflate_compress_bound(c, n) : 0;
    size_t got = 0;

    if (n > SL__IX_TEXT_MAX) {
        return SL_ETOOLARGE;
    }
    /* room for either form: the packed one is kept only when smaller */
    out->data = sl_malloc(HEAD + bound > 1 + n ? HEAD + bound : 1 + n);
    if (pack) {
        got = libdeflate_deflate_compress(c, s, n, out->data + HEAD, bound);
    }
    if (got > 0 && got + HEAD < n) {
        out->data[0] = 'Z';
        out->data[1] = (unsigned char)(n & 0xff);
        out->data[2] = (unsigned char)((n >> 8) & 0xff);
        out->data[3] = (unsigned char)((n >> 16) & 0xff);
        out->data[4] = (unsigned char)((n >> 24) & 0xff);
        out->len = HEAD + got;
        return 0;
    }
    out->data[0] = 'T';
    if (n > 0) {
        memcpy(out->data + 1, s, n);
    }
    out->len = 1 + n;
    return 0;
}

/* sl_text_unpack(blob): the text, NULL for NULL; a value that is not a
 * packed text is an error naming it (a damaged database). */
static void
unpack_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct libdeflate_decompressor *d = sqlite3_user_data(ctx);
    const unsigned char *p = NULL;
    size_t n = 0;
    size_t len = 0;
    size_t got = 0;
    char *text = NULL;

    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    p = sqlite3_value_blob(argv[0]);
    n = (size_t)sqlite3_value_bytes(argv[0]);
    if (n >= 1 && p[0] == 'T') {
        sqlite3_result_text64(
            ctx, (const char *)p + 1, n - 1, SQLITE_TRANSIENT, SQLITE_UTF8);
        return;
    }
    if (n >= HEAD && p[0] == 'Z') {
        len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 |
              (size_t)p[4] << 24;
    }
    if (len == 0 || len > SL__IX_TEXT_MAX) {
        sqlite3_result_error(ctx, "sl_text_unpack: not a packed text", -1);
        return;
    }
    text = sqlite3_malloc64(len);
    if (text == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (libdeflate_deflate_decompress(d, p + HEAD, n - HEAD, text, len, &got) !=
            LIBDEFLATE_SUCCESS ||
        got != len) {
        sqlite3_free(text);
        sqlite3_result_error(ctx, "sl_text_unpack: damaged packed text", -1);
        return;
    }
    sqlite3_result_text64(ctx, text, len, sqlite3_free, SQLITE_UTF8);
}

/* sl_text_pack(text): the packed value, NULL for NULL. */
static void
pack_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct libdeflate_compressor *c = sqlite3_user_data(ctx);
    struct sl__index_packed out = {NULL, 0};
    const char *s = NULL;

    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    s = (const char *)sqlite3_value_text(argv[0]);
    if (s == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (sl__index_text_pack(c, s, (size_t)sqlite3_value_bytes(argv[0]), &out) !=
        0) {
        sqlite3_result_error_toobig(ctx);
        return;
    }
    sqlite3_result_blob64(ctx, out.data, out.len, sl_free);
}

static void
free_compressor(void *c)
{
    libdeflate_free_compressor(c);
}

static void
free_decompressor(void *d)
{
    libdeflate_free_decompressor(d);
}

int
sl__index_text_functions(sqlite3 *db)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(PACK_LEVEL);
    int src = SQLITE_OK;

    if (d == NULL || c == NULL) {
        libdeflate_free_decompressor(d);
        libdeflate_free_compressor(c);
        return SQLITE_NOMEM;
    }
    /* on failure SQLite calls the destructor itself */
    src = sqlite3_create_function_v2(db,
                                     "sl_text_unpack",
                                     1,
                                     flags,
                                     d,
                                     unpack_fn,
                                     NULL,
                                     NULL,
                                     free_decompressor);
    if (src == SQLITE_OK) {
        src = sqlite3_create_function_v2(db,
                                         "sl_text_pack",
                                         1,
                                         flags,
                                         c,
                                         pack_fn,
                                         NULL,
                                         NULL,
                                         free_compressor);
    } else {
        libdeflate_free_compressor(c);
    }
    return src;
}

struct libdeflate_compressor *
sl__index_text_compressor(void)
{
    return libdeflate_alloc_compressor(PACK_LEVEL);
}

void
sl__index_text_compressor_free(struct libdeflate_compressor *c)
{
    if (c != NULL) {
        libdeflate_free_compressor(c);
    }
}
