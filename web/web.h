/*
 * Sluice web: the rules of a polite web crawler, as a library without I/O
 * (docs/web.md).
 *
 * - URLs: the one normal form every web URL is kept in (libcurl's URL API
 *   parses and resolves), and the host key politeness and robots.txt are
 *   kept per.
 * - robots.txt (RFC 9309): parse once per host, then ask per URL.
 * - HTML links: a streaming extractor over libxml2's HTML push parser; no
 *   document tree is built.
 * - Sitemaps (sitemaps.org): a streaming parser over libxml2's XML push
 *   parser; gzip-compressed sitemaps are inflated on the fly.
 *
 * Errors: 0 or a negative SL_E* code of core/sl.h.  The URL functions
 * answer SL_EACCES for a URL that is well formed but refused by policy (a
 * scheme other than http and https: file:, ftp:, mailto:, javascript:,
 * data: ...), so callers can count refusals apart from SL_EINVAL (not a
 * usable URL) and SL_ETOOLARGE (longer than SL_WEB_URL_MAX).
 *
 * Threading: no global state besides libxml2's one-time initialisation,
 * which this module does itself.  A parsed robots object is read-only and
 * may be shared by any number of threads.  A link extractor or sitemap
 * parser belongs to one thread at a time; its callback runs on the thread
 * that calls feed or end, from inside those calls, never later.
 */
#ifndef SL_WEB_H_INCLUDED
#define SL_WEB_H_INCLUDED

#include <stddef.h>

#include "core/sl.h"

/* ------------------------------------------------------------------------
 * URLs.
 *
 * The normal form: http or https only; scheme and host in lower case
 * (ASCII letters only; an internationalised host stays as libcurl gives
 * it, in UTF-8); the default port (80, 443) dropped; no fragment; "." and
 * ".." segments resolved; an empty path is "/"; an empty query ("?")
 * dropped; every byte that may not appear in a path or query (space,
 * non-ASCII, "<>\"\\^`{|}[]" and a '%' not followed by two hex digits)
 * percent-encoded, all percent-encodings with upper-case hex digits;
 * other control characters inside make the URL invalid.  Existing
 * percent-encodings are never decoded but in the host (libcurl decodes
 * it: "a%41.com" is "aa.com"), and a host that is then not valid UTF-8 or
 * holds a control character (C0, DEL, C1) makes the URL invalid: no DNS
 * name comes of it; an IPv4 address in another form ("0x7f.1", also
 * percent-encoded) is written as a dotted quad.  The query is otherwise kept as
 * it is (no sorting, no parameter removal).  URLs with user info
 * ("user:password@") are refused with SL_EINVAL: a crawler does not send
 * credentials it found in a page.  Spaces and control characters around the URL
 * are trimmed and tabs and line breaks inside are removed, as browsers do with
 * href values.
 * --------------------------------------------------------------------- */
#define SL_WEB_URL_MAX 8192 /* bytes of an input or normalised URL */

/**
 * @brief Normalise the absolute URL @p url.
 * @param[out] out new string, caller frees with sl_free (NULL on error).
 * @return 0, SL_EINVAL (not an absolute URL with a host, bad port, user
 * info, control characters), SL_EACCES (scheme not http or https),
 * SL_ETOOLARGE (input or result longer than SL_WEB_URL_MAX),
 * SL_EINTERNAL (libcurl failed to allocate).
 */
int sl_web_url_normalize(const char *url, char **out);

/**
 * @brief Resolve @p href (absolute, or relative such as "../a", "?q",
 * "//host/p", "#frag", "") against the absolute @p base and normalise
 * the result (RFC 3986 section 5.2).
 * @param[in] base absolute http(s) URL; normalised first.
 * @param[out] out new string, caller frees with sl_free (NULL on error).
 * @return as sl_web_url_normalize; SL_EINVAL also when @p base is not a
 * usable http(s) URL.
 */
int sl_web_url_resolve(const char *base, const char *href, char **out);

/**
 * @brief The politeness and robots.txt key of @p url:
 * "scheme://host:port", the port always written ("http://a.example:80").
 * @param[in] url any URL sl_web_url_normalize accepts.
 * @param[out] out new string, caller frees with sl_free.
 * @return as sl_web_url_normalize.
 */
int sl_web_url_host_key(const char *url, char **out);

/**
 * @brief The path and query of @p url in normal form ("/a/b?x=1"), the
 * string sl_web_robots_allowed wants.
 * @param[out] out new string, caller frees with sl_free.
 * @return as sl_web_url_normalize.
 */
int sl_web_url_path_query(const char *url, char **out);

/* ------------------------------------------------------------------------
 * robots.txt (RFC 9309).
 *
 * The group for the crawler is chosen by its product token, the part of
 * the configured user agent before the first '/' or space ("SluiceBot"
 * for "SluiceBot/0.1 (+https://...)"), compared without case with the
 * same part of each user-agent value.  All groups naming the token are
 * merged; without one, all "*" groups are merged; without those,
 * everything is allowed.  Consecutive user-agent lines share one group.
 * The longest matching rule wins (length of the rule's path in octets),
 * Allow wins a tie; no matching rule allows.  '*' matches any run of
 * characters and a final '$' anchors at the end; paths and rules are
 * compared with percent-encodings normalised (unreserved characters
 * decoded, other encodings with upper-case hex, non-ASCII encoded).
 * "/robots.txt" is always allowed.  Only the first SL_WEB_ROBOTS_MAX_BYTES
 * are read (a line cut there is dropped).  A byte order mark, CR, LF and
 * CRLF line ends, comments, blank lines, unknown keys and lines without a
 * colon are tolerated; rules before the first user-agent line and empty
 * rules are ignored.  Crawl-delay (not in RFC 9309) is taken from the
 * chosen groups (the first valid value).  Sitemap lines are global.
 * Matching is bounded: a rule set so pathological that one path needs
 * millions of matching steps ("*aaaa...b" against "/aaaa...") disallows
 * that path instead of burning the CPU.
 * --------------------------------------------------------------------- */
#define SL_WEB_ROBOTS_MAX_BYTES    (500u * 1024u) /* RFC 9309 2.5 */
#define SL_WEB_ROBOTS_MAX_SITEMAPS 1000u /* further Sitemap lines ignored */

struct sl_web_robots;

/**
 * @brief Parse the robots.txt body @p text (@p len bytes, need not be
 * NUL-terminated; any bytes are accepted) for the crawler @p user_agent.
 * @param[out] out new object, caller frees with sl_web_robots_free.
 * @return 0, SL_EINVAL (@p user_agent has an empty product token).
 */
int sl_web_robots_parse(const char *text,
                        size_t len,
                        const char *user_agent,
                        struct sl_web_robots **out);

/**
 * @brief A robots object that allows everything: for a robots.txt that is
 * missing or answered with a 4xx status (RFC 9309 2.3.1.3).
 * @return new object, caller frees with sl_web_robots_free.
 */
struct sl_web_robots *sl_web_robots_new_allow_all(void);

/**
 * @brief A robots object that disallows everything (but /robots.txt): for
 * a robots.txt that cannot be fetched or is answered with a 5xx status
 * (RFC 9309 2.3.1.4).
 * @return new object, caller frees with sl_web_robots_free.
 */
struct sl_web_robots *sl_web_robots_new_disallow_all(void);

/** @brief Free @p r; NULL-safe. */
void sl_web_robots_free(struct sl_web_robots *r);

/**
 * @brief Whether the crawler may fetch @p path_and_query ("/a/b?x=1", as
 * sl_web_url_path_query gives it; NULL or "" is "/").
 * @return 1 (allowed) or 0 (disallowed).
 */
int sl_web_robots_allowed(const struct sl_web_robots *r,
                          const char *path_and_query);

/** @brief Crawl-delay of the chosen group in seconds, or -1 if absent. */
double sl_web_robots_crawl_delay(const struct sl_web_robots *r);

/** @brief Number of Sitemap lines (at most SL_WEB_ROBOTS_MAX_SITEMAPS). */
size_t sl_web_robots_sitemap_count(const struct sl_web_robots *r);

/**
 * @brief Sitemap URL @p i, as written (trimmed; resolve it against the
 * robots.txt URL with sl_web_url_resolve).
 * @return borrowed, valid while @p r lives; NULL when @p i is out of range.
 */
const char *sl_web_robots_sitemap(const struct sl_web_robots *r, size_t i);

/* ------------------------------------------------------------------------
 * X-Robots-Tag response header: the page-level directives of <meta
 * name="robots"> sent as a header, so that they also reach non-HTML
 * resources.  The value is a comma-separated list of directives; an item
 * "<agent>: <directive>" limits it and the items after it in the same
 * value to crawlers whose product token is <agent> (compared without case,
 * as in robots.txt), until the next such prefix.  "noindex", "nofollow"
 * and "none" (both) count; "all", "index", "follow", and the directives
 * with a value (unavailable_after, max-snippet, max-image-preview,
 * max-video-preview) are ignored.  Several header lines: OR the results.
 * --------------------------------------------------------------------- */
#define SL_WEB_NOINDEX  1u /* do not index this resource */
#define SL_WEB_NOFOLLOW 2u /* do not follow its links */

/**
 * @brief The directives of one X-Robots-Tag header value @p value for the
 * crawler @p user_agent (its product token, as sl_web_robots_parse).
 * @return SL_WEB_NOINDEX and SL_WEB_NOFOLLOW or'ed, 0 for none.
 */
unsigned sl_web_robots_tag(const char *value, const char *user_agent);

/* ------------------------------------------------------------------------
 * Feeding libxml2's HTML push parser (the link extractor here, the
 * textExtractor's HTML).  The input is gathered into blocks of
 * SL_WEB_HTML_BLOCK bytes and the parser is fed one block at a time, so
 * it sees the same chunks however the input arrives (over the network, a
 * few bytes per read, all at once).  libxml2 2.9.14 parses some pages
 * differently depending on where its chunks end (an odd attribute name,
 * a quote it does not count, a <script> that meets another end tag): with
 * fixed blocks a page gives the same links and text every time, and the
 * crawler's parse of a page gives the textExtractor's text.  Besides:
 * - an end tag of <script> or <style> cut between two blocks ("</scr"
 *   then "ipt>") made it take the rest of the page for script text, so a
 *   block ends before a '<' among its last SL_WEB_HTML_HOLD bytes, and
 *   the bytes from there begin the next one;
 * - it drops the input it has consumed only while it reads text, so a page
 *   of tags with nothing between them ("<br><br>...", minified markup)
 *   stayed whole in its buffer; the consumed input is dropped before each
 *   block, as the XML push parser does, once more than 64 KiB are consumed
 *   and no look-up for the end of a construct is pending (checkIndex is an
 *   offset into the buffer then).
 * --------------------------------------------------------------------- */
#define SL_WEB_HTML_HOLD 64u
#ifndef SL_WEB_HTML_BLOCK /* the fuzz build sets 256 bytes */
#define SL_WEB_HTML_BLOCK (64u * 1024u)
#endif

struct _xmlParserCtxt; /* libxml2's htmlParserCtxt */

/** The block being gathered; zero-initialise, one per parser. */
struct sl_web_html_feed {
    char *block; /* SL_WEB_HTML_BLOCK bytes, owned; NULL until the first */
    size_t len;
};

/**
 * @brief Add the @p k bytes at @p p to @p f's block, feeding @p px (an
 * HTML push parser) each block that fills.
 */
void sl_web_html_feed(struct _xmlParserCtxt *px,
                      struct sl_web_html_feed *f,
                      const char *p,
                      size_t k);
/** @brief End of input: feed what @p f holds, terminate @p px, and free
 * the block. */
void sl_web_html_end(struct _xmlParserCtxt *px, struct sl_web_html_feed *f);
/** @brief Free @p f's block without feeding it (a parse given up). */
void sl_web_html_feed_free(struct sl_web_html_feed *f);

/* ------------------------------------------------------------------------
 * HTML links, streaming.
 *
 * Sources: <a href>, <area href>, <link href> whose rel (a space-separated
 * token list, compared without case) has "alternate" (but not also
 * "stylesheet") or "canonical", <frame src>, <iframe src>.  Each link is
 * resolved against the page URL, or against the first <base href> (the
 * links of the head, up to 64 KiB of hrefs, wait for the end of the head,
 * so a base anywhere in the head applies to them; a base in the body
 * applies to the links after it), and normalised.  Skipped and counted:
 * rel="nofollow" on a, area and link; refused schemes; hrefs that are not URLs;
 * references to the same document ("", "#top"); links past the limit.  <meta
 * name="robots"> (name without case) with "nofollow" or "none" in its content
 * suppresses every further link and the head's links waiting so far, except a
 * canonical link (it names the page, it is not one to follow:
 * sl_web_links_nofollow tells the callback); links of the body reported
 * before such a late meta stay reported.  "noindex" or "none"
 * sets the summary's meta_noindex.  Links are not de-duplicated.
 *
 * Charset: @p charset (from the HTTP Content-Type) wins; otherwise the
 * document's own declaration (BOM, <meta charset>); otherwise libxml2
 * reads UTF-8 and falls back to ISO-8859-1 at the first invalid byte.
 * Non-ASCII characters of hrefs are percent-encoded as UTF-8.
 * --------------------------------------------------------------------- */
#define SL_WEB_LINKS_DEFAULT_MAX 10000u /* links reported per page */

enum sl_web_link_kind {
    SL_WEB_LINK_A = 1,         /* <a href> */
    SL_WEB_LINK_AREA = 2,      /* <area href> */
    SL_WEB_LINK_ALTERNATE = 3, /* <link rel="alternate" href> */
    SL_WEB_LINK_CANONICAL = 4, /* <link rel="canonical" href> */
    SL_WEB_LINK_FRAME = 5,     /* <frame src> */
    SL_WEB_LINK_IFRAME = 6,    /* <iframe src> */
};

/** @brief "a", "area", "alternate", "canonical", "frame", "iframe" or "?". */
const char *sl_web_link_kind_name(enum sl_web_link_kind kind);

struct sl_web_links_summary {
    size_t reported;      /* links given to the callback */
    size_t nofollow;      /* skipped: rel="nofollow" */
    size_t refused;       /* skipped: scheme not http or https */
    size_t invalid;       /* skipped: not a URL, user info, too long */
    size_t same_document; /* skipped: "" or "#fragment" */
    size_t suppressed;    /* not reported because of meta robots nofollow */
    size_t over_limit;    /* not reported: past max_links */
    int meta_nofollow;    /* <meta name="robots"> said nofollow or none */
    int meta_noindex;     /* <meta name="robots"> said noindex or none */
    int base_used;        /* a valid <base href> replaced the page URL */
};

struct sl_web_links;
struct sl_web_url_cache;

/**
 * @brief Start extracting links from the HTML page at @p page_url.
 * @param[in] page_url absolute http(s) URL of the page (after redirects).
 * @param[in] charset charset from the HTTP header, or NULL.
 * @param[in] max_links links to report at most; 0 = the default.
 * @param[in] cb called once per link with the normalised absolute URL
 * (borrowed, valid during the call) and its kind; returns 0 to go on or
 * an SL_E* code that stops the extractor (it then fails with that code).
 * @param[in] ctx passed to @p cb.
 * @param[out] out new object; caller ends it with sl_web_links_end or
 * frees it with sl_web_links_free.
 * @return 0, SL_EINVAL or SL_EACCES (@p page_url), SL_EINTERNAL (libxml2).
 * @note @p cb runs only from inside sl_web_links_feed and
 * sl_web_links_end.
 */
int sl_web_links_begin(const char *page_url,
                       const char *charset,
                       size_t max_links,
                       int (*cb)(void *ctx,
                                 const char *url,
                                 enum sl_web_link_kind kind),
                       void *ctx,
                       struct sl_web_links **out);

/**
 * @brief A cache of link resolutions for many pages (one crawler task):
 * libcurl resolves an href once per base directory (RFC 3986 5.2.2: a
 * reference with a path depends on the base only up to its last '/'),
 * so the links every page of a site repeats (its menu, "/") cost one
 * resolution per directory.  At most @p max_entries (0: 4096) entries;
 * when full it starts over.  One thread at a time.
 * @return new object, caller frees with sl_web_url_cache_free.
 */
struct sl_web_url_cache *sl_web_url_cache_new(size_t max_entries);
/** @brief Free the cache; NULL-safe. */
void sl_web_url_cache_free(struct sl_web_url_cache *c);
/** @brief Answers from the cache and resolutions by libcurl so far. */
void sl_web_url_cache_stats(const struct sl_web_url_cache *c,
                            uint64_t *hits,
                            uint64_t *misses);
/**
 * @brief Resolve the page's links through @p cache (borrowed, must outlive
 * @p lx; NULL: none) from now on.  The links are the same with or
 * without a cache.
 */
void sl_web_links_use_cache(struct sl_web_links *lx,
                            struct sl_web_url_cache *cache);

/**
 * @brief Feed the next @p len bytes of the page; chunks may be cut
 * anywhere, the links are the same for any cutting.  The page is parsed
 * in blocks of SL_WEB_HTML_BLOCK bytes, so the links of a block are
 * reported when it fills, or at sl_web_links_end.
 * @return 0, the callback's error or SL_EINTERNAL (libcurl) (the
 * extractor has then failed), or SL_EBADSTATE after an earlier failure.
 */
int sl_web_links_feed(struct sl_web_links *lx, const char *data, size_t len);

/**
 * @brief Finish the page (links still waiting are reported), fill
 * @p summary (may be NULL) and free @p lx.
 * @return 0, or the error that failed the extractor (also an earlier
 * one); the summary is filled either way.
 */
int sl_web_links_end(struct sl_web_links *lx,
                     struct sl_web_links_summary *summary);

/**
 * @brief Whether a <meta name="robots"> of the page said nofollow or none
 * so far: the callback of a canonical link asks it (no other link is
 * reported after it).
 */
int sl_web_links_nofollow(const struct sl_web_links *lx);

/** @brief Free @p lx without finishing (no more callbacks); NULL-safe. */
void sl_web_links_free(struct sl_web_links *lx);

/**
 * A second reader of a page's parse, so that a page is parsed once (the
 * webCrawler's text, extractText): the elements and the text of the page
 * as libxml2's HTML SAX parser gives them.  @c text gets characters,
 * ignorable white space and CDATA alike.
 */
struct sl_web_tap {
    void *ctx;
    void (*start)(void *ctx,
                  const unsigned char *tag,
                  const unsigned char **atts);
    void (*end)(void *ctx, const unsigned char *tag);
    void (*text)(void *ctx, const unsigned char *s, int len);
};

/**
 * @brief Give @p tap (copied; its ctx borrowed) every element and piece
 * of text of the page from now on.  Call it before the first
 * sl_web_links_feed.  When the extractor fails (sl_web_links_feed or
 * sl_web_links_end return an error) the parse stops: what the tap got is
 * then only a part of the page.
 */
void sl_web_links_tap(struct sl_web_links *lx, const struct sl_web_tap *tap);

/**
 * @brief The libxml2 HTML push parser of @p lx (borrowed), to switch it to
 * a charset (xmlSwitchToEncoding) before the first byte is fed.
 */
struct _xmlParserCtxt *sl_web_links_parser(struct sl_web_links *lx);

/* ------------------------------------------------------------------------
 * Sitemaps (sitemaps.org protocol 0.9), streaming.
 *
 * <urlset><url><loc> (with <lastmod>) gives pages, <sitemapindex><sitemap>
 * <loc> gives nested sitemaps; elements are matched by local name, the
 * namespace is not checked.  Each loc is trimmed, resolved against the
 * sitemap URL and normalised; refused and invalid ones are counted.  The
 * caller decides whether a loc on another host is acceptable.  Input that
 * starts with the gzip magic bytes is inflated first.  At most
 * SL_WEB_SITEMAP_MAX_BYTES of XML (after inflating) are read; DTDs and
 * external entities are never loaded.  RSS, Atom and text sitemaps are not
 * handled (SL_EINVAL).
 * --------------------------------------------------------------------- */
#define SL_WEB_SITEMAP_DEFAULT_MAX_URLS 50000u      /* per sitemap */
#define SL_WEB_SITEMAP_MAX_BYTES        (50u << 20) /* XML bytes */
#define SL_WEB_SITEMAP_LASTMOD_MAX      64u         /* longer: ignored */

struct sl_web_sitemap_summary {
    size_t reported;   /* locs given to the callback */
    size_t refused;    /* skipped: scheme not http or https */
    size_t invalid;    /* skipped: not a URL, too long, empty */
    size_t over_limit; /* not reported: past max_urls */
    int is_index;      /* the root was <sitemapindex> */
};

struct sl_web_sitemap;

/**
 * @brief Start parsing the sitemap fetched from @p sitemap_url.
 * @param[in] max_urls locs to report at most; 0 = the default.
 * @param[in] cb called once per loc with the normalised URL and the
 * trimmed lastmod text or NULL (both borrowed, valid during the call) and
 * @p nested = 1 for a sitemap of a sitemap index; returns 0 to go on or
 * an SL_E* code that stops the parser (it then fails with that code).
 * @param[out] out new object; caller ends it with sl_web_sitemap_end or
 * frees it with sl_web_sitemap_free.
 * @return 0, SL_EINVAL or SL_EACCES (@p sitemap_url), SL_EINTERNAL.
 * @note @p cb runs only from inside feed and end.
 */
int sl_web_sitemap_begin(
    const char *sitemap_url,
    size_t max_urls,
    int (*cb)(void *ctx, const char *url, const char *lastmod, int nested),
    void *ctx,
    struct sl_web_sitemap **out);

/**
 * @brief Feed the next @p len bytes (plain or gzip), cut anywhere.
 * @return 0, SL_ECORRUPT (not well-formed XML, bad gzip data), SL_EINVAL
 * (the root is not urlset or sitemapindex), SL_ETOOLARGE (past
 * SL_WEB_SITEMAP_MAX_BYTES), the callback's error, or SL_EBADSTATE after
 * an earlier failure.  Locs before an error have been
 * reported.
 */
int
sl_web_sitemap_feed(struct sl_web_sitemap *sm, const char *data, size_t len);

/**
 * @brief Finish, fill @p summary (may be NULL) and free @p sm.
 * @return 0, an error as sl_web_sitemap_feed (also an earlier one),
 * or SL_ETRUNCATED (the document or the gzip stream ended early).
 * The summary is filled either way.
 */
int sl_web_sitemap_end(struct sl_web_sitemap *sm,
                       struct sl_web_sitemap_summary *summary);

/** @brief Free @p sm without finishing; NULL-safe. */
void sl_web_sitemap_free(struct sl_web_sitemap *sm);

#endif /* SL_WEB_H_INCLUDED */
