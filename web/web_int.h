/*
 * Private declarations shared by the files of web/.
 */
#ifndef SL_WEB_INT_H_INCLUDED
#define SL_WEB_INT_H_INCLUDED

#include <curl/curl.h>

#include "web/web.h"

/**
 * @brief Parse and normalise the absolute URL @p url into a libcurl URL
 * handle, for resolving many hrefs against one base.
 * @param[out] out new handle, caller frees with curl_url_cleanup.
 * @return as sl_web_url_normalize.
 */
int sl__web_url_base(const char *url, CURLU **out);
/** @brief sl__web_url_base that also gives, in *dir_out, the directory
 * of the normal form: up to and including the last '/' of its path, no
 * query (new string, caller frees with sl_free; NULL allowed). */
int sl__web_url_base_dir(const char *url, CURLU **out, char **dir_out);

/**
 * @brief sl__web_url_resolve_h through the cache @p c (NULL: no cache):
 * a reference whose result depends on the base only through its
 * directory @p dir (from sl__web_url_base_dir) is resolved
 * by libcurl once per (dir, href without its fragment) and answered from
 * @p c after that, error codes included.
 */
int sl__web_url_resolve_cached(struct sl_web_url_cache *c,
                               const char *dir,
                               CURLU *base,
                               const char *href,
                               char **out);

/**
 * @brief sl_web_url_resolve against a handle from sl__web_url_base.
 * @param[in] base borrowed, not changed (curl 7.88 declares curl_url_dup
 * without const).
 * @param[out] out new string, caller frees with sl_free.
 */
int sl__web_url_resolve_h(CURLU *base, const char *href, char **out);

/**
 * @brief Whether @p href refers to the document it is in: empty, or only
 * a fragment, after the whitespace a URL may carry is removed.
 */
int sl__web_href_same_document(const char *href);

/**
 * @brief Append @p n bytes of a URL path or query to @p b, percent-encoded
 * the way the normal form wants: escapes get upper-case hex digits (and
 * are decoded when @p decode and the byte is unreserved, RFC 3986 2.3),
 * bytes other than unreserved, sub-delims, ':', '@', '/' and '?' become
 * %XX ('%' without two hex digits too).
 * @return 0 or @p b's error.
 */
int sl__web_pct_append(struct sl_buf *b, const char *s, size_t n, int decode);

/** @brief libxml2's one-time initialisation; safe from any thread. */
void sl__web_xml_init(void);

#endif /* SL_WEB_INT_H_INCLUDED */
