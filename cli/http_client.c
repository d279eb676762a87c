/*
 * The CLI's HTTP client (libcurl): one request with an optional JSON body,
 * the reply collected in a bounded buffer, and the --server/--token options
 * of the client commands (`sluice search`, `job`, `source`, `worker`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"

static int unreachable; /* the commands are single-threaded */

int
sl_cli_unreachable(void)
{
    return unreachable;
}

/* libcurl write callback: collect the reply in a bounded buffer. */
static size_t
on_data(char *data, size_t size, size_t n, void *ctx)
{
    struct sl_buf *b = ctx;

    if (sl_buf_append(b, data, size * n) != 0) {
        return 0; /* makes libcurl fail with CURLE_WRITE_ERROR */
    }
    return size * n;
}

int
sl_cli_http(const char *prog,
            const char *method,
            const char *url,
            const char *token,
            const char *body,
            struct sl_buf *reply,
            long *status)
{
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *headers = NULL;
    char *auth = NULL;
    CURL *h = curl_easy_init();
    CURLcode cc = CURLE_OK;
    int rc = 0;

    *status = 0;
    sl_buf_reset(reply);
    if (h == NULL) {
        fprintf(stderr, "%s: cannot initialise libcurl\n", prog);
        return 1;
    }
    errbuf[0] = '\0';
    if (token != NULL) {
        auth = sl_asprintf("Authorization: Bearer %s", token);
        headers = curl_slist_append(headers, auth);
    }
    if (body != NULL) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_URL, url);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, reply);
    (void)curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    (void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cc = curl_easy_perform(h);
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
        cc == CURLE_OPERATION_TIMEDOUT) {
        unreachable = 1;
    }
    if (cc != CURLE_OK) {
        fprintf(stderr,
                "%s: %s: %s\n",
                prog,
                url,
                errbuf[0] ? errbuf : curl_easy_strerror(cc));
        rc = 1;
    } else {
        (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    }
    curl_slist_free_all(headers);
    sl_free(auth);
    curl_easy_cleanup(h);
    return rc;
}

json_t *
sl_cli_http_json(const char *prog,
                 const char *method,
                 const char *url,
                 const char *token,
                 const char *body,
                 long *status)
{
    struct sl_buf reply;
    json_t *j = NULL;

    sl_buf_init(&reply, SL_CLI_MAX_REPLY);
    if (sl_cli_http(prog, method, url, token, body, &reply, status) == 0) {
        j = json_loadb(reply.data ? reply.data : "", reply.len, 0, NULL);
        if (j == NULL) {
            fprintf(stderr,
                    "%s: %s: HTTP %ld with a reply that is not JSON\n",
                    prog,
                    url,
                    *status);
        }
    }
    sl_buf_free(&reply);
    return j;
}

int
sl_cli_call(const struct sl_cli_conn *conn,
            const char *prog,
            const char *method,
            const char *path,
            const char *body,
            json_t **out)
{
    char *url = sl_cli_url(conn->server, path);
    long status = 0;
    json_t *j = sl_cli_http_json(prog, method, url, conn->token, body, &status);

    sl_free(url);
    *out = NULL;
    if (j == NULL) {
        return 1;
    }
    if (status < 200 || status > 299) {
        sl_cli_print_error(prog, status, j);
        json_decref(j);
        return 1;
    }
    *out = j;
    return 0;
}

void
sl_cli_print_error(const char *prog, long status, const json_t *reply)
{
    const json_t *e = json_object_get(reply, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));

    fprintf(stderr,
            "%s: HTTP %ld: %s\n",
            prog,
            status,
            msg ? msg : "unexpected reply");
}

char *
sl_cli_url(const char *server, const char *path)
{
    size_t n = strlen(server);

    while (n > 0 && server[n - 1] == '/') {
        n--;
    }
    return sl_asprintf("%.*s%s", (int)n, server, path);
}

void
sl_cli_conn_init(struct sl_cli_conn *c, const char *dflt)
{
    const char *server = getenv("SLUICE_SERVER");
    const char *token = getenv("SLUICE_TOKEN");

    c->server = server != NULL && server[0] != '\0' ? server : dflt;
    c->token = token != NULL && token[0] != '\0' ? token : NULL;
}

void
sl_cli_conn_help(FILE *out, const char *dflt)
{
    fprintf(
        out,
        "  -s, --server URL   server base URL (default: $SLUICE_SERVER%s%s)\n"
        "      --token TOKEN  API token, sent as Authorization: Bearer\n"
        "                     (default: $SLUICE_TOKEN)\n",
        dflt != NULL ? ",\n                     else " : "",
        dflt != NULL ? dflt : "");
}

int
sl_cli_conn_option(struct sl_cli_conn *c, int opt, const char *arg)
{
    if (opt == 's') {
        c->server = arg;
        return 1;
    }
    if (opt == 'T') {
        c->token = arg;
        return 1;
    }
    return 0;
}
