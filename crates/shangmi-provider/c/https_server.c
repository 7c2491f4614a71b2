/*
 * A small HTTPS server on OpenSSL's libssl: the recipe for a C server that serves RFC 8998
 * (TLS 1.3 with TLS_SM4_GCM_SM3, curveSM2 and an SM2 certificate) on OpenSSL 4.0, with the SM
 * algorithms from OpenSSL itself or from shangmi.so. Nothing in the code names the provider:
 * OPENSSL_CONF loads it and prefers it (see the provider's README), so the same binary runs
 * both ways, which is how the benchmark compares them.
 *
 *   https_server [-n CONNECTIONS] PORT CERT KEY [CIPHERSUITES [GROUPS [SIGALGS]]]
 *
 * With -n it exits (cleanly, so providers are unloaded) after that many connections.
 * One connection at a time, as a benchmark's one-core server: accept, handshake, read a request
 * head, answer with 1 KiB and `Connection: close`, close_notify, close. A client that stalls is
 * dropped after 5 s. It prints `listening on 127.0.0.1:PORT` once ready.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

static int fail(const char *what)
{
    fprintf(stderr, "https_server: %s\n", what);
    ERR_print_errors_fp(stderr);
    return 1;
}

/* Reads until the end of a request head (or 16 KiB, or the peer stops); 1 when one arrived. */
static int read_head(SSL *ssl)
{
    char buf[16384];
    size_t have = 0;
    while (have < sizeof(buf) - 1) {
        size_t got = 0;
        if (!SSL_read_ex(ssl, buf + have, sizeof(buf) - 1 - have, &got))
            return 0;
        have += got;
        buf[have] = 0;
        if (strstr(buf, "\r\n\r\n") != NULL)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long connections = -1;
    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        connections = strtol(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    }
    if (argc < 4 || connections == 0) {
        fprintf(stderr, "usage: https_server [-n CONNECTIONS] PORT CERT KEY "
                        "[CIPHERSUITES [GROUPS [SIGALGS]]]\n");
        return 2;
    }
    const char *suites = argc > 4 ? argv[4] : "TLS_SM4_GCM_SM3";
    const char *groups = argc > 5 ? argv[5] : "curveSM2";
    const char *sigalgs = argc > 6 ? argv[6] : "sm2sig_sm3";
    signal(SIGPIPE, SIG_IGN);

    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return fail("SSL_CTX_new");
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)
        || !SSL_CTX_set_ciphersuites(ctx, suites)
        || !SSL_CTX_set1_groups_list(ctx, groups)
        || !SSL_CTX_set1_sigalgs_list(ctx, sigalgs))
        return fail("the suites, groups or signature algorithms");
    if (SSL_CTX_use_certificate_chain_file(ctx, argv[2]) != 1
        || SSL_CTX_use_PrivateKey_file(ctx, argv[3], SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(ctx) != 1)
        return fail("the certificate or its key");

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(ls, 4096) != 0)
        return fail("listening");
    socklen_t len = sizeof(addr);
    getsockname(ls, (struct sockaddr *)&addr, &len);
    fprintf(stderr, "listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));

    static char answer[1024 + 128];
    int head = snprintf(answer, sizeof(answer),
                        "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n");
    memset(answer + head, 'x', 1024);
    size_t answer_len = (size_t)head + 1024;

    for (; connections != 0; connections -= connections > 0) {
        int s = accept(ls, NULL, NULL);
        if (s < 0)
            continue;
        struct timeval limit = {5, 0};
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        SSL *ssl = SSL_new(ctx);
        size_t wrote;
        if (ssl != NULL && SSL_set_fd(ssl, s) == 1 && SSL_accept(ssl) == 1 && read_head(ssl)
            && SSL_write_ex(ssl, answer, answer_len, &wrote))
            SSL_shutdown(ssl);
        ERR_clear_error();
        SSL_free(ssl);
        close(s);
    }
    close(ls);
    SSL_CTX_free(ctx);
    OPENSSL_cleanup();
    return 0;
}
