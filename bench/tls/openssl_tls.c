/*
 * OpenSSL 4.0's own RFC 8998 (TLS_SM4_GCM_SM3, curveSM2, sm2sig_sm3) timed the way
 * shangmi-bench times rustls: client and server in one thread over memory BIOs, the time of
 * each side's calls summed apart (as OpenSSL's perf tool `handshake` also runs both ends in
 * memory). Prints one line per op: "<op> <rate>", handshakes per second of that side's time,
 * or MB/s of 16 KiB records sealed and opened.
 *
 * Usage: openssl_tls CHAIN.pem KEY.pem CA.pem SLICE_MS
 */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "openssl_tls: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static SSL_CTX *context(int server, const char *chain, const char *key, const char *ca) {
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL
        || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)
        || !SSL_CTX_set_ciphersuites(ctx, "TLS_SM4_GCM_SM3")
        || !SSL_CTX_set1_groups_list(ctx, "curveSM2")
        || !SSL_CTX_set1_sigalgs_list(ctx, "sm2sig_sm3"))
        die("context");
    if (server) {
        if (SSL_CTX_use_certificate_chain_file(ctx, chain) != 1
            || SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
            die("server certificate");
    } else {
        if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
            die("trust anchor");
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT);
    }
    return ctx;
}

/* Moves what one side wrote to the other side's input. */
static void move(BIO *from, BIO *to) {
    char buf[32768];
    int n;
    while ((n = BIO_read(from, buf, sizeof buf)) > 0)
        if (BIO_write(to, buf, n) != n)
            die("bio");
}

struct pair {
    SSL *c, *s;
    BIO *c_out, *s_out; /* what each side wrote */
    BIO *c_in, *s_in;   /* what each side reads */
};

static void pair_new(struct pair *p, SSL_CTX *cctx, SSL_CTX *sctx, SSL_SESSION *resume,
                     double *tc, double *ts) {
    double t = now();
    p->c = SSL_new(cctx);
    p->c_in = BIO_new(BIO_s_mem());
    p->c_out = BIO_new(BIO_s_mem());
    SSL_set_bio(p->c, p->c_in, p->c_out);
    SSL_set_connect_state(p->c);
    SSL_set_tlsext_host_name(p->c, "localhost");
    SSL_set1_dnsname(p->c, "localhost");
    if (resume != NULL && SSL_set_session(p->c, resume) != 1)
        die("session");
    *tc += now() - t;
    t = now();
    p->s = SSL_new(sctx);
    p->s_in = BIO_new(BIO_s_mem());
    p->s_out = BIO_new(BIO_s_mem());
    SSL_set_bio(p->s, p->s_in, p->s_out);
    SSL_set_accept_state(p->s);
    *ts += now() - t;
}

static int step(SSL *ssl) {
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    int e = SSL_get_error(ssl, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        die("handshake");
    return 0;
}

/* One handshake; the client then reads the server's tickets. Returns the client's session. */
static SSL_SESSION *handshake(SSL_CTX *cctx, SSL_CTX *sctx, SSL_SESSION *resume, double *tc,
                              double *ts, int *reused) {
    struct pair p;
    pair_new(&p, cctx, sctx, resume, tc, ts);
    int cdone = 0, sdone = 0;
    for (int i = 0; i < 16 && !(cdone && sdone); i++) {
        double t = now();
        if (!cdone)
            cdone = step(p.c);
        *tc += now() - t;
        move(p.c_out, p.s_in);
        t = now();
        if (!sdone)
            sdone = step(p.s);
        *ts += now() - t;
        move(p.s_out, p.c_in);
    }
    if (!(cdone && sdone))
        die("handshake did not finish");
    char b;
    double t = now();
    SSL_read(p.c, &b, 1); /* processes the NewSessionTicket messages */
    SSL_SESSION *sess = SSL_get1_session(p.c);
    *tc += now() - t;
    *reused = SSL_session_reused(p.c);
    t = now();
    /* A connection freed without a shutdown marks its session unusable: close it as a
     * client that sent and received close_notify would. */
    SSL_set_shutdown(p.c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(p.c);
    *tc += now() - t;
    t = now();
    SSL_set_shutdown(p.s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(p.s);
    *ts += now() - t;
    return sess;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: openssl_tls CHAIN KEY CA SLICE_MS\n");
        return 2;
    }
    double slice = atof(argv[4]) / 1000.0;
    SSL_CTX *sctx = context(1, argv[1], argv[2], argv[3]);
    SSL_CTX *cctx = context(0, argv[1], argv[2], argv[3]);
    int reused;
    double tc = 0, ts = 0;
    SSL_SESSION *sess = handshake(cctx, sctx, NULL, &tc, &ts, &reused);

    /* Full handshakes. */
    tc = ts = 0;
    long n = 0;
    double start = now();
    while (now() - start < slice || n < 2) {
        SSL_SESSION_free(handshake(cctx, sctx, NULL, &tc, &ts, &reused));
        if (reused)
            die("a full handshake resumed");
        n++;
    }
    printf("tls13-full-handshake-client %.1f\ntls13-full-handshake-server %.1f\n", n / tc, n / ts);

    /* Resumed handshakes, each with the ticket the previous one left. */
    tc = ts = 0;
    n = 0;
    start = now();
    while (now() - start < slice || n < 2) {
        SSL_SESSION *next = handshake(cctx, sctx, sess, &tc, &ts, &reused);
        if (!reused)
            die("a resumption did not resume");
        SSL_SESSION_free(sess);
        sess = next;
        n++;
    }
    printf("tls13-resumed-handshake-client %.1f\ntls13-resumed-handshake-server %.1f\n", n / tc,
           n / ts);

    /* 16 KiB records, client to server. */
    struct pair p;
    double t0 = 0, t1 = 0;
    pair_new(&p, cctx, sctx, NULL, &t0, &t1);
    int cdone = 0, sdone = 0;
    for (int i = 0; i < 16 && !(cdone && sdone); i++) {
        if (!cdone)
            cdone = step(p.c);
        move(p.c_out, p.s_in);
        if (!sdone)
            sdone = step(p.s);
        move(p.s_out, p.c_in);
    }
    static unsigned char data[16384], got[16384];
    memset(data, 0x5a, sizeof data);
    n = 0;
    start = now();
    while (now() - start < slice || n < 4) {
        if (SSL_write(p.c, data, sizeof data) != (int)sizeof data)
            die("write");
        move(p.c_out, p.s_in);
        size_t have = 0;
        while (have < sizeof got) {
            int r = SSL_read(p.s, got + have, (int)(sizeof got - have));
            if (r <= 0)
                die("read");
            have += (size_t)r;
        }
        n++;
    }
    printf("tls13-records-16k %.1f\n", n * 16384.0 / (now() - start) / 1e6);
    SSL_SESSION_free(sess);
    return 0;
}
