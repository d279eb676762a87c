/*
 * Sluice text: the text-conversion library under the textExtractor and the
 * webCrawler's extractText (docs/workers.md "The text library"), and the
 * libarchive walk under the fileExtractor and the webExtractor.  It takes
 * plain values (buffers, file descriptors, option structs) and knows no
 * task: what happened comes back in result structs and callbacks, which
 * the workers turn into counters and task messages.
 *
 * - MIME types: the record's own type, the file extension and libmagic.
 * - Plain text: a charset from a byte order mark, the HTTP header or
 *   libuchardet, converted to UTF-8 with iconv.
 * - HTML and XML: libxml2's SAX push parsers, no document tree.
 * - External converters: a process per document (argv from the
 *   `converters` configuration), fed on stdin or through a spool file.
 * - The text itself: always valid UTF-8, capped, optionally with white
 *   space collapsed.
 * - Office documents (Office Open XML, OpenDocument) and EPUB: the text
 *   parts of the zip through libxml2's xmlTextReader, and their metadata.
 * - Archives: every regular entry of a (nested) archive, under limits.
 *
 * Errors: 0 or a negative SL_E* code of core/sl.h.
 *
 * Threading: no global state besides libxml2's one-time initialisation
 * and one C.UTF-8 locale, both made once, thread-safely.  An extractor
 * (struct sl_text), its documents, an HTML text and an archive walk
 * belong to one thread at a time; callbacks run on the thread that calls
 * into the library, from inside those calls, never later.
 */
#ifndef SL_TEXT_H_INCLUDED
#define SL_TEXT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/sl.h"
#include "web/web.h"

#define SL_TEXT_CHUNK       ((size_t)64 << 10)   /* head, chunks fed */
#define SL_TEXT_MAX_DEFAULT ((uint64_t)4 << 20)  /* maxTextBytes default */
#define SL_TEXT_MAX_LIMIT   ((uint64_t)16 << 20) /* maxTextBytes at most */
#define SL_TEXT_MIME_MAX    128u                 /* a MIME type's buffer */
#define SL_TEXT_CHARSET_MAX 64u                  /* a charset's buffer */
#define SL_TEXT_TITLE_MAX   4096u                /* bytes of a title */

/* What extracts the text of a document. */
enum sl_text_kind {
    SL_TEXT_KIND_TEXT = 0,  /* text types, JSON: charset detection, iconv */
    SL_TEXT_KIND_HTML = 1,  /* libxml2 HTML push parser */
    SL_TEXT_KIND_XML = 2,   /* libxml2 XML push parser */
    SL_TEXT_KIND_OTHER = 3, /* external converter or nothing */
};

/* How a document's extraction ended. */
enum sl_text_outcome {
    SL_TEXT_EXTRACTED = 0,    /* a text (possibly empty) */
    SL_TEXT_NOTEXT = 1,       /* no extractor for the type */
    SL_TEXT_CONV_FAILED = 2,  /* the converter failed; no text */
    SL_TEXT_CONV_TIMEOUT = 3, /* the converter timed out; no text */
    SL_TEXT_CONV_MISSING = 4, /* the converter's program is not there */
};

/* A feed result besides 0 (go on) and SL_E* codes: stop feeding. */
#define SL_TEXT_STOP 1

/* ------------------------------------------------------------------------
 * MIME types.
 * --------------------------------------------------------------------- */

/** @brief Lower-case @p in (NULL: "") without parameters into @p out
 * (SL_TEXT_MIME_MAX bytes); "" when it is no type/subtype. */
void sl_text_mime_normalize(const char *in, char *out);
/** @brief The enum sl_text_kind of normalised type @p m. */
int sl_text_mime_kind(const char *m);
/**
 * @brief The type of file extension @p ext or, when NULL, of what follows
 * the last '.' of the last segment of @p id (NULL too: none).
 * @return a static string, or NULL for an unknown extension.
 */
const char *sl_text_mime_by_extension(const char *ext, const char *id);

/* ------------------------------------------------------------------------
 * Extractors and documents.
 * --------------------------------------------------------------------- */

/* The options of an extractor; strings and objects borrowed for its life. */
struct sl_text_opts {
    uint64_t max_text;        /* maximum bytes of a document's text */
    const json_t *converters; /* MIME type -> converter entry, or NULL */
    /* Polled while a converter runs: non-zero cancels (SL_ECANCELED). */
    int (*canceled)(void *arg);
    void *arg; /* of canceled */
};

/* What a document brings besides its bytes; all borrowed, NULL: absent. */
struct sl_text_hints {
    const char *mime;      /* its own type (`mimeType`, HTTP Content-Type) */
    const char *extension; /* its file extension */
    const char *id;        /* its id (an extension source, the log) */
};

struct sl_text;
struct sl_text_doc;

/** @brief A new extractor (libmagic and libuchardet made on first use);
 * the caller frees it with sl_text_free. @p o is copied. */
struct sl_text *sl_text_new(const struct sl_text_opts *o);
/** @brief Free @p t; NULL-safe. */
void sl_text_free(struct sl_text *t);
/**
 * @brief Whether program @p prog (a path, or a name looked up in $PATH;
 * Sluice's own converters, "sluice-..." names, beside the running binary
 * first) can be run: 1 or 0.
 */
int sl_text_program_found(const char *prog);
/**
 * @brief End the idle processes of persistent converters (at shutdown;
 * without it they end when the server does).  Thread-safe.
 */
void sl_text_helpers_close(void);
/**
 * @brief Check the converters configuration @p converters (MIME type ->
 * converter entry, docs/workers.md): warn once for each converter whose
 * program is not there, naming the type and, when the entry has one, its
 * `package`; documents of that type count as SL_TEXT_CONV_MISSING.
 * @return how many are missing.
 */
size_t sl_text_converters_check(const json_t *converters);
/**
 * @brief Whether @p entry is a converter entry the text library takes
 * (docs/workers.md): "command" a non-empty array of strings;
 * timeoutSeconds, maxMemoryMB and maxDocuments integers in range;
 * metaCommand an array of strings; package a string; persistent a
 * boolean, and then no "{file}" in the command.
 * @return 0, or SL_EINVAL with @p err naming the key and the rule.
 */
int sl_text_converter_valid(const json_t *entry, struct sl_err *err);

/**
 * @brief The MIME type of a document whose content starts with @p len
 * bytes @p head into @p out (SL_TEXT_MIME_MAX bytes): a textual extension
 * over a textual head, else libmagic weighed against the document's own
 * type and extension.
 * @return 1 when the extension decided without libmagic, else 0.
 */
int sl_text_mime_detect(struct sl_text *t,
                        const struct sl_text_hints *h,
                        const char *head,
                        size_t len,
                        char *out);

/** @brief A new document of extractor @p t (borrowed for the document's
 * life); the caller frees it with sl_text_doc_free. */
struct sl_text_doc *sl_text_doc_new(struct sl_text *t);
/** @brief Free @p d; NULL-safe. */
void sl_text_doc_free(struct sl_text_doc *d);
/**
 * @brief Start the extractor of MIME type @p mime (normalised; copied)
 * for content whose first bytes are @p head (@p len), @p charset the HTTP
 * header's (borrowed until sl_text_doc_end, or NULL).  A converter
 * configured for the type wins over the built-in extractors.
 * @return 0, or SL_EINTERNAL when no parser could be made (the outcome is
 * then SL_TEXT_NOTEXT; feed nothing, still call sl_text_doc_end).
 */
int sl_text_doc_begin(struct sl_text_doc *d,
                      const char *mime,
                      const char *charset,
                      const char *head,
                      size_t len);
/** @brief The document's id or file name @p id (borrowed until
 * sl_text_doc_end): it names the file inside a compressed one
 * ("README" of "doc/README.gz"), which helps to type it. */
void sl_text_doc_name(struct sl_text_doc *d, const char *id);
/** @brief Feed @p n bytes of content (the head too).
 * @return 0, SL_TEXT_STOP (nothing more is needed) or SL_ECANCELED. */
int sl_text_doc_feed(struct sl_text_doc *d, const char *p, size_t n);
/** @brief End the extractor, freeing what it holds (@p abort: the results
 * do not matter).  @return 0 or SL_ECANCELED. */
int sl_text_doc_end(struct sl_text_doc *d, int abort);
/** @brief Take @p n bytes of a text extracted already (supposed UTF-8).
 * @return 1 once the text is full (more is dropped), else 0. */
int sl_text_doc_give(struct sl_text_doc *d, const char *p, size_t n);
/** @brief End a given text: like an extracted one, a text cut at the cap
 * does not end in a space or a line break. */
void sl_text_doc_give_end(struct sl_text_doc *d);

/* The results of a document, borrowed from it until sl_text_doc_free. */
struct sl_text_result {
    const char *text;    /* valid UTF-8, NUL-terminated; never NULL */
    size_t len;          /* its bytes */
    const char *title;   /* an HTML <title>, a document's; "" when none */
    const char *charset; /* the charset read, "" when none */
    int kind;            /* enum sl_text_kind */
    int outcome;         /* enum sl_text_outcome */
    int converted;       /* an external converter ran and succeeded */
    int full;            /* the text was cut at max_text */
    int malformed;       /* XML that is not well-formed */
    /* A compressed single file: its encoding ("gzip", "bzip2", "xz",
     * "zstd", "lz4", "lzma", "compress"; "" for other documents) and the
     * type of the file inside, whose text this is ("" when none). */
    const char *encoding;
    const char *inner_mime;
    int cut;     /* content past a limit of the library was not read */
    int corrupt; /* the format could not be read (a corrupt gzip...) */
    /* The metadata of an office document or an EPUB ("" and 0 when it
     * gives none); dates are ISO 8601 strings as the document writes
     * them (2024-03-15, 2024-03-15T09:30:00Z). */
    const char *author;   /* its author (creator) */
    const char *created;  /* its creation (EPUB: publication) date */
    const char *modified; /* its last modification date */
    uint64_t pages;       /* its pages (slides), 0: unknown */
};
/** @brief The results of @p d so far. */
void sl_text_doc_result(const struct sl_text_doc *d, struct sl_text_result *r);

/* ------------------------------------------------------------------------
 * The HTML text for a links parser (the webCrawler's extractText): a page
 * fed through a links parser set up with sl_text_html_begin gives the
 * text, title and charset a document of the same bytes, HTTP charset and
 * MIME type gives, so that a page is parsed once.
 * --------------------------------------------------------------------- */
struct sl_text_html;
struct uchardet; /* libuchardet's uchardet_t points to one */

/**
 * @brief Whether a document of MIME type @p mime (the HTTP one) whose
 * content starts with @p len bytes @p head is HTML with a textual head
 * (no NUL byte, no known binary signature), which sl_text_mime_detect
 * reads as HTML too (unless libmagic names the textual head a type that
 * is not text, which is rare: PostScript, say).  Writes the type it
 * detects into @p out (SL_TEXT_MIME_MAX bytes).
 */
int
sl_text_html_applies(const char *mime, const char *head, size_t len, char *out);
/** @brief A new text of at most @p max_text bytes; free with
 * sl_text_html_free. */
struct sl_text_html *sl_text_html_new(uint64_t max_text);
/**
 * @brief Choose the charset of the page whose first bytes (up to
 * SL_TEXT_CHUNK, or all of it) are @p head, as a document does (a byte
 * order mark, else @p given from the HTTP header, else the page's
 * declaration, else detected with *@p ud, created on first use; the
 * caller frees it with sl_text_ud_free), switch @p px (an HTML push
 * parser not fed yet; borrowed for the call) to it, and fill @p tap with
 * the text's SAX callbacks for sl_web_links_tap (its ctx is @p t).
 * Nothing is taken once the text is full (a later <title> neither), so
 * how the page is cut into chunks does not matter.
 */
void sl_text_html_begin(struct sl_text_html *t,
                        struct _xmlParserCtxt *px,
                        const char *head,
                        size_t len,
                        const char *given,
                        struct uchardet **ud,
                        struct sl_web_tap *tap);
/**
 * @brief After the parse: the text (valid UTF-8, *@p len bytes), the
 * title ("" when the page has none) and the charset ("" when libxml2
 * could not read the chosen one), all borrowed from @p t and valid until
 * sl_text_html_free.  May be called again.
 * @return 1 when the text was cut at max_text, else 0.
 */
int sl_text_html_end(struct sl_text_html *t,
                     const char **text,
                     size_t *len,
                     const char **title,
                     const char **charset);
/** @brief Free @p t; NULL-safe. */
void sl_text_html_free(struct sl_text_html *t);
/** @brief Free the charset detector sl_text_html_begin made; NULL-safe. */
void sl_text_ud_free(struct uchardet *ud);

/* ------------------------------------------------------------------------
 * Archives (archive.c): the libarchive walk of the fileExtractor and the
 * webExtractor (docs/workers.md "fileExtractor").  Each regular entry
 * becomes one element (id "<top id>!/<inner path>"), nested archives are
 * spooled to an unlinked temporary file and walked recursively; depth,
 * entries, expanded bytes, expansion ratio and entry size are limited,
 * and a limit that is hit is reported, never an error.  The walk runs in
 * a C.UTF-8 locale of the calling thread (uselocale), so that libarchive
 * gives zip entry names flagged as UTF-8, and the process locale stays.
 * --------------------------------------------------------------------- */

/*
 * What the walk reports to sl_text_archive_sink.note, with a count and,
 * for the events that concern one document, its id: the entry's element
 * id, or the id of the archive (or message) whose remaining entries were
 * not walked.  The other events come with a NULL id.
 */
enum sl_text_archive_event {
    SL_TEXT_ARC_EXTRACTED = 0, /* an archive was opened */
    SL_TEXT_ARC_CORRUPT,       /* an archive (id) is corrupt or truncated */
    SL_TEXT_ARC_RECORDS,       /* element records written */
    SL_TEXT_ARC_BYTES,         /* element content bytes written */
    SL_TEXT_ARC_SANITISED,     /* entry names with "..", leading '/' */
    SL_TEXT_ARC_SKIPPED,       /* an entry (id) that is no regular file;
                                  NULL: a name that sanitises to nothing */
    SL_TEXT_ARC_UNNAMED,       /* names libarchive would not give */
    SL_TEXT_ARC_LIMIT_DEPTH,   /* nesting too deep: kept as a file (id) */
    SL_TEXT_ARC_LIMIT_ENTRIES, /* too many entries: the rest of the
                                  archive (id) skipped */
    SL_TEXT_ARC_LIMIT_TOTAL,   /* too many bytes: the rest of the top-level
                                  compound (id) skipped */
    SL_TEXT_ARC_LIMIT_RATIO,   /* expanded too much: as LIMIT_TOTAL */
    SL_TEXT_ARC_LIMIT_ENTRY,   /* an entry (id) too big: no content */
    SL_TEXT_ARC_NOT_ARCHIVE,   /* no archive format (a compressed file) */
    SL_TEXT_ARC_EVENTS
};

/* The limits of a walk (a top-level compound's; entries per archive). */
struct sl_text_archive_limits {
    uint64_t max_depth;   /* nesting of archives in archives */
    uint64_t max_entries; /* entries per archive */
    uint64_t max_total;   /* bytes expanded per top-level compound */
    uint64_t max_ratio;   /* expanded / compressed bytes, 0: no limit */
    uint64_t max_entry;   /* bytes of one entry */
};

/* Attribute names of the element records; each is borrowed (valid for
 * the walker's life); NULL: that attribute is not written. */
struct sl_text_archive_names {
    const char *path;      /* the element id again (filePath, httpUrl) */
    const char *name;      /* last segment of the inner path */
    const char *folder;    /* the element id up to its last '/' */
    const char *extension; /* what follows the last '.' of the name */
    const char *size;      /* entry size in bytes */
    const char *modified;  /* entry mtime (format: http_date) */
    const char *content;   /* attachment of the entry data; required */
    /* 1: modified as an HTTP date (IMF-fixdate, what a web server's
     * Last-Modified says), 0: as sl_time_format (ISO 8601) */
    int http_date;
};

/*
 * Where the elements go.  An element is begin (its metadata, a new
 * object the sink may keep a reference of, and @att, the attachment of
 * @size bytes, or NULL for none), write (its content, in order, exactly
 * @size bytes in all), end.  Each returns 0 or an SL_E* error, which ends
 * the walk with it.  canceled and note may be NULL.
 */
struct sl_text_archive_sink {
    void *arg;
    int (*begin)(void *arg, const json_t *meta, const char *att, uint64_t size);
    int (*write)(void *arg, const void *p, size_t n);
    int (*end)(void *arg);
    int (*canceled)(void *arg); /* non-zero: stop */
    /* an archive event, about document @id (NULL: none; borrowed) */
    void (*note)(void *arg, int event, double n, const char *id);
    /* The escaped form of inner path @raw in record ids: a new string the
     * walk frees with sl_free. */
    char *(*escape)(const char *raw);
    int (*is_archive)(const char *name); /* walk this entry as an archive */
};

struct sl_text_archive;

/** @brief A new walker (copies of @p lim, @p names and @p sink; the
 * strings stay borrowed) logging as @p who (borrowed); the caller frees
 * it with sl_text_archive_free. */
struct sl_text_archive *
sl_text_archive_new(const char *who,
                    const struct sl_text_archive_limits *lim,
                    const struct sl_text_archive_names *names,
                    const struct sl_text_archive_sink *sink);
/** @brief Free @p x; NULL-safe. */
void sl_text_archive_free(struct sl_text_archive *x);
/**
 * @brief Walk the archive open on @p fd (borrowed, read from its current
 * offset; @p size bytes, for the ratio limit) of top-level compound @p id
 * (source @p source or NULL; both borrowed for the call).  Limits,
 * sanitised names and corrupt archives are reported, never errors; the
 * compound's own record is the caller's.
 * @return 0, the sink's error, SL_EIO (a temporary file), SL_EINTERNAL or
 * SL_ECANCELED; the reason, when not the sink's, in @p err.
 */
int sl_text_archive_walk(struct sl_text_archive *x,
                         const char *id,
                         const char *source,
                         int fd,
                         uint64_t size,
                         struct sl_err *err);
/* What sl_text_archive_probe finds. */
enum sl_text_probe {
    SL_TEXT_PROBE_ARCHIVE = 0,    /* an archive format (maybe corrupt) */
    SL_TEXT_PROBE_COMPRESSED = 1, /* a compressed file, no archive inside */
    SL_TEXT_PROBE_OTHER = 2,      /* neither: the walk reports it corrupt */
    SL_TEXT_PROBE_MESSAGE = 3,    /* an e-mail: a document whose
                                   * attachments the walk makes elements */
};
/**
 * @brief What the file open on @p fd is, from its first bytes (as the
 * walk reads them: filters, then the archive formats, then raw); the
 * offset is set back to where it was.  A compressed file is a document,
 * not a compound: its record should carry its content instead of being
 * walked.  A message (an .eml) is both: its record carries its content
 * (its text), and the walk makes its attachments elements.  A mailbox is
 * an archive of messages.
 * @return an enum sl_text_probe (SL_TEXT_PROBE_ARCHIVE when libarchive
 * cannot be set up: the walk then says what went wrong).
 */
int sl_text_archive_probe(int fd);
/**
 * @brief A new unlinked temporary file under $TMPDIR (else /tmp), open
 * for reading and writing; -1 with errno set (logged).  The caller closes
 * it.
 */
int sl_text_spool_open(void);

#endif /* SL_TEXT_H_INCLUDED */
