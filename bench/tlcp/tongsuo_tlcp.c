/*
 * Tongsuo 8.5's TLCP (NTLS) timed the way shangmi-bench times shangmi's: client and server in
 * one thread over memory BIOs, the time of each side's calls summed apart. Both sides present
 * certificate pairs (ECDHE needs them). Prints one line per op: "<op> <rate>", handshakes per
 * second of that side's time, or MB/s of 16 KiB records sealed and opened.
 *
 * Usage: tongsuo_tlcp DIR SLICE_MS   (DIR holds ca.pem and {s,c}{s,e}.{pem,key})
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
    fprintf(stderr, "tongsuo_tlcp: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static char path[4096];
static const char *in(const char *dir, const char *name) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static SSL_CTX *context(int server, const char *dir, const char *suite) {
    SSL_CTX *ctx = SSL_CTX_new(server ? NTLS_server_method() : NTLS_client_method());
    if (ctx == NULL)
        die("context");
    SSL_CTX_enable_ntls(ctx);
    if (SSL_CTX_set_cipher_list(ctx, suite) != 1)
        die("cipher list");
    const char *p = server ? "s" : "c";
    char n[16];
    snprintf(n, sizeof n, "%ss.pem", p);
    if (SSL_CTX_use_sign_certificate_file(ctx, in(dir, n), SSL_FILETYPE_PEM) != 1)
        die("sign certificate");
    snprintf(n, sizeof n, "%ss.key", p);
    if (SSL_CTX_use_sign_PrivateKey_file(ctx, in(dir, n), SSL_FILETYPE_PEM) != 1)
        die("sign key");
    snprintf(n, sizeof n, "%se.pem", p);
    if (SSL_CTX_use_enc_certificate_file(ctx, in(dir, n), SSL_FILETYPE_PEM) != 1)
        die("enc certificate");
    snprintf(n, sizeof n, "%se.key", p);
    if (SSL_CTX_use_enc_PrivateKey_file(ctx, in(dir, n), SSL_FILETYPE_PEM) != 1)
        die("enc key");
    if (SSL_CTX_load_verify_locations(ctx, in(dir, "ca.pem"), NULL) != 1)
        die("trust anchor");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
    SSL_CTX_set_session_cache_mode(ctx, server ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_CLIENT);
    if (server)
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"bench", 5);
    return ctx;
}

static void move(BIO *from, BIO *to) {
    char buf[32768];
    int n;
    while ((n = BIO_read(from, buf, sizeof buf)) > 0)
        if (BIO_write(to, buf, n) != n)
            die("bio");
}

struct pair {
    SSL *c, *s;
    BIO *c_out, *s_out, *c_in, *s_in;
};

static void pair_new(struct pair *p, SSL_CTX *cctx, SSL_CTX *sctx, SSL_SESSION *resume,
                     double *tc, double *ts) {
    double t = now();
    p->c = SSL_new(cctx);
    p->c_in = BIO_new(BIO_s_mem());
    p->c_out = BIO_new(BIO_s_mem());
    SSL_set_bio(p->c, p->c_in, p->c_out);
    SSL_set_connect_state(p->c);
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

static void run(struct pair *p, double *tc, double *ts) {
    int cdone = 0, sdone = 0;
    for (int i = 0; i < 16 && !(cdone && sdone); i++) {
        double t = now();
        if (!cdone)
            cdone = step(p->c);
        *tc += now() - t;
        move(p->c_out, p->s_in);
        t = now();
        if (!sdone)
            sdone = step(p->s);
        *ts += now() - t;
        move(p->s_out, p->c_in);
    }
    if (!(cdone && sdone))
        die("handshake did not finish");
}

static SSL_SESSION *handshake(SSL_CTX *cctx, SSL_CTX *sctx, SSL_SESSION *resume, double *tc,
                              double *ts, int *reused) {
    struct pair p;
    pair_new(&p, cctx, sctx, resume, tc, ts);
    run(&p, tc, ts);
    double t = now();
    SSL_SESSION *sess = SSL_get1_session(p.c);
    *reused = SSL_session_reused(p.c);
    SSL_set_shutdown(p.c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(p.c);
    *tc += now() - t;
    t = now();
    SSL_set_shutdown(p.s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(p.s);
    *ts += now() - t;
    return sess;
}

static void handshakes(const char *dir, const char *suite, const char *name, double slice) {
    SSL_CTX *sctx = context(1, dir, suite), *cctx = context(0, dir, suite);
    double tc = 0, ts = 0;
    int reused;
    long n = 0;
    double start = now();
    while (now() - start < slice || n < 2) {
        SSL_SESSION_free(handshake(cctx, sctx, NULL, &tc, &ts, &reused));
        n++;
    }
    printf("tlcp-%s-full-handshake-client %.1f\ntlcp-%s-full-handshake-server %.1f\n", name,
           n / tc, name, n / ts);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
}

static void resumed(const char *dir, double slice) {
    SSL_CTX *sctx = context(1, dir, "ECC-SM2-SM4-GCM-SM3"), *cctx = context(0, dir, "ECC-SM2-SM4-GCM-SM3");
    double tc = 0, ts = 0;
    int reused;
    SSL_SESSION *sess = handshake(cctx, sctx, NULL, &tc, &ts, &reused);
    tc = ts = 0;
    long n = 0;
    double start = now();
    while (now() - start < slice || n < 2) {
        SSL_SESSION *next = handshake(cctx, sctx, sess, &tc, &ts, &reused);
        if (!reused)
            die("a resumption did not resume");
        SSL_SESSION_free(sess);
        sess = next;
        n++;
    }
    printf("tlcp-resumed-handshake-client %.1f\ntlcp-resumed-handshake-server %.1f\n", n / tc,
           n / ts);
    SSL_SESSION_free(sess);
}

static void records(const char *dir, const char *suite, const char *name, double slice) {
    SSL_CTX *sctx = context(1, dir, suite), *cctx = context(0, dir, suite);
    struct pair p;
    double t0 = 0, t1 = 0;
    pair_new(&p, cctx, sctx, NULL, &t0, &t1);
    run(&p, &t0, &t1);
    static unsigned char data[16384], got[16384];
    memset(data, 0x5a, sizeof data);
    long n = 0;
    double start = now();
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
    printf("tlcp-records-%s-16k %.1f\n", name, n * 16384.0 / (now() - start) / 1e6);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: tongsuo_tlcp DIR SLICE_MS\n");
        return 2;
    }
    double slice = atof(argv[2]) / 1000.0;
    handshakes(argv[1], "ECC-SM2-SM4-GCM-SM3", "ecc", slice);
    handshakes(argv[1], "ECDHE-SM2-SM4-GCM-SM3", "ecdhe", slice);
    resumed(argv[1], slice);
    records(argv[1], "ECC-SM2-SM4-GCM-SM3", "gcm", slice);
    records(argv[1], "ECC-SM2-SM4-CBC-SM3", "cbc", slice);
    return 0;
}
