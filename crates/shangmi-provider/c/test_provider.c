/* The provider through libcrypto's EVP API, as applications use it: every mode fed in random
 * pieces (in place half the time), SM3 in pieces and duplicated mid-stream, each compared
 * with OpenSSL's default provider. Built with AddressSanitizer by scripts/test-provider.sh.
 * Usage: test_provider MODULE_DIR */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static unsigned rnd_state = 12345;
static unsigned rnd(void) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* Runs a cipher over `in` in random pieces; returns the output length, or -1 on failure. */
static int run(EVP_CIPHER *c, int enc, int pad, const unsigned char *key, const unsigned char *iv,
               const unsigned char *in, int len, unsigned char *out) {
    /* In place only for the stream modes: with a partial block buffered, a block mode's
     * output runs ahead of its input, and OpenSSL's own implementation then reads bytes it
     * has already overwritten, so there is no reference to compare with. */
    int stream = EVP_CIPHER_get_block_size(c) == 1;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int total = 0, n = 0, ok = EVP_CipherInit_ex2(x, c, key, iv, enc, NULL);
    EVP_CIPHER_CTX_set_padding(x, pad);
    for (int off = 0; ok && off < len;) {
        int piece = (int)(rnd() % 100) + 1;
        if (piece > len - off) piece = len - off;
        if (stream && (rnd() & 1)) { /* in place: the piece moves to where its output goes */
            memmove(out + total, in + off, (size_t)piece);
            ok = EVP_CipherUpdate(x, out + total, &n, out + total, piece);
        } else {
            ok = EVP_CipherUpdate(x, out + total, &n, in + off, piece);
        }
        total += n;
        off += piece;
    }
    if (ok) ok = EVP_CipherFinal_ex(x, out + total, &n);
    total += n;
    EVP_CIPHER_CTX_free(x);
    return ok ? total : -1;
}

/* Imports an SM2 key into the provider from raw parameters, as EVP_PKEY_fromdata callers
 * (and OpenSSL's own decoders) hand them over; returns whether it was accepted. */
static int import_sm2(const char *priv_hex, const unsigned char *pub, size_t pub_len) {
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    BIGNUM *d = NULL;
    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0);
    if (priv_hex) {
        BN_hex2bn(&d, priv_hex);
        OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, d);
    }
    if (pub) OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, pub_len);
    OSSL_PARAM *ps = OSSL_PARAM_BLD_to_param(b);
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "SM2", "provider=shangmi");
    EVP_PKEY *k = NULL;
    int ok = c && EVP_PKEY_fromdata_init(c) == 1 &&
             EVP_PKEY_fromdata(c, &k, priv_hex ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, ps) == 1;
    EVP_PKEY_free(k);
    EVP_PKEY_CTX_free(c);
    OSSL_PARAM_free(ps);
    OSSL_PARAM_BLD_free(b);
    BN_free(d);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    OSSL_PROVIDER_set_default_search_path(NULL, argv[1]);
    OSSL_PROVIDER *ours = OSSL_PROVIDER_load(NULL, "shangmi");
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(NULL, "default");
    CHECK(ours != NULL && dflt != NULL);
    if (!ours || !dflt) return 1;

    static unsigned char key[16], iv[16], pt[3000], a[3100], b[3100], back[3100];
    for (int i = 0; i < 16; i++) key[i] = (unsigned char)(i * 7 + 1), iv[i] = (unsigned char)(i * 3);
    for (int i = 0; i < 3000; i++) pt[i] = (unsigned char)rnd();

    const char *names[] = {"SM4-ECB", "SM4-CBC", "SM4-CFB", "SM4-OFB", "SM4-CTR"};
    for (int m = 0; m < 5; m++) {
        EVP_CIPHER *mine = EVP_CIPHER_fetch(NULL, names[m], "provider=shangmi");
        EVP_CIPHER *theirs = EVP_CIPHER_fetch(NULL, names[m], "provider=default");
        CHECK(mine != NULL && theirs != NULL);
        if (!mine || !theirs) continue;
        CHECK(EVP_CIPHER_get0_provider(mine) == ours);
        CHECK(EVP_CIPHER_get_block_size(mine) == EVP_CIPHER_get_block_size(theirs));
        CHECK(EVP_CIPHER_get_iv_length(mine) == EVP_CIPHER_get_iv_length(theirs));
        CHECK(EVP_CIPHER_get_mode(mine) == EVP_CIPHER_get_mode(theirs));
        int block = m <= 1;
        for (int t = 0; t < 60; t++) {
            int len = (int)(rnd() % 3000);
            int pad = block ? (int)(rnd() & 1) : 0;
            if (block && !pad) len -= len % 16;
            int x = run(mine, 1, pad, key, iv, pt, len, a);
            int y = run(theirs, 1, pad, key, iv, pt, len, b);
            CHECK(x >= 0 && x == y && memcmp(a, b, (size_t)x) == 0);
            int z = run(mine, 0, pad, key, iv, b, y, back);
            CHECK(z == len && memcmp(back, pt, (size_t)len) == 0);
        }
        /* A context copied mid-message (a partial block buffered) goes on as the original
         * does, after the original is freed: EVP_CIPHER_CTX_copy reaches the provider's dupctx. */
        for (int enc = 1; enc >= 0; enc--) {
            int len = 2000, y = run(theirs, 1, block, key, iv, pt, len, b);
            const unsigned char *in = enc ? pt : b;
            const unsigned char *want = enc ? b : pt;
            int in_len = enc ? len : y, want_len = enc ? y : len, n = 0, k = 0;
            EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *c2 = EVP_CIPHER_CTX_new();
            CHECK(EVP_CipherInit_ex2(x, mine, key, iv, enc, NULL) == 1);
            EVP_CIPHER_CTX_set_padding(x, block);
            CHECK(EVP_CipherUpdate(x, a, &n, in, 517) == 1);
            CHECK(EVP_CIPHER_CTX_copy(c2, x) == 1);
            CHECK(EVP_CipherUpdate(x, a + n, &k, in + 517, in_len - 517) == 1);
            int m2 = 0;
            CHECK(EVP_CipherFinal_ex(x, a + n + k, &m2) == 1);
            CHECK(n + k + m2 == want_len && memcmp(a, want, (size_t)want_len) == 0);
            EVP_CIPHER_CTX_free(x);
            memset(a + n, 0, sizeof a - (size_t)n);
            CHECK(EVP_CipherUpdate(c2, a + n, &k, in + 517, in_len - 517) == 1);
            CHECK(EVP_CipherFinal_ex(c2, a + n + k, &m2) == 1);
            CHECK(n + k + m2 == want_len && memcmp(a, want, (size_t)want_len) == 0);
            EVP_CIPHER_CTX_free(c2);
        }
        if (m == 1) { /* a tampered last block: the padding check fails, as OpenSSL's does */
            int x = run(mine, 1, 1, key, iv, pt, 100, a);
            a[x - 1] ^= 0x5a;
            CHECK(run(mine, 0, 1, key, iv, a, x, back) < 0);
            CHECK(run(theirs, 0, 1, key, iv, a, x, back) < 0);
        }
        EVP_CIPHER_free(mine);
        EVP_CIPHER_free(theirs);
    }

    EVP_MD *md = EVP_MD_fetch(NULL, "SM3", "provider=shangmi");
    EVP_MD *ref = EVP_MD_fetch(NULL, "SM3", "provider=default");
    CHECK(md != NULL && ref != NULL && EVP_MD_get_size(md) == 32 && EVP_MD_get_block_size(md) == 64);
    if (md && ref) {
        CHECK(EVP_MD_get0_provider(md) == ours);
        for (int t = 0; t < 40; t++) {
            int len = (int)(rnd() % 3000), cut = len ? (int)(rnd() % (unsigned)len) : 0;
            unsigned char d1[32], d2[32], d3[32];
            unsigned int l = 0;
            EVP_MD_CTX *c = EVP_MD_CTX_new(), *dup = EVP_MD_CTX_new();
            EVP_DigestInit_ex2(c, md, NULL);
            EVP_DigestUpdate(c, pt, (size_t)cut);
            CHECK(EVP_MD_CTX_copy_ex(dup, c) == 1);
            EVP_DigestUpdate(c, pt + cut, (size_t)(len - cut));
            EVP_DigestFinal_ex(c, d1, &l);
            EVP_DigestUpdate(dup, pt + cut, (size_t)(len - cut));
            EVP_DigestFinal_ex(dup, d2, &l);
            EVP_Digest(pt, (size_t)len, d3, &l, ref, NULL);
            CHECK(memcmp(d1, d3, 32) == 0 && memcmp(d2, d3, 32) == 0);
            EVP_MD_CTX_free(c);
            EVP_MD_CTX_free(dup);
        }
    }
    EVP_MD_free(md);
    EVP_MD_free(ref);

    /* CMAC (OpenSSL's) over the provider's SM4-CBC, duplicated mid-message: both copies give
     * the default provider's MAC. */
    EVP_MAC *cmac = EVP_MAC_fetch(NULL, "CMAC", "provider=default");
    CHECK(cmac != NULL);
    for (int w = 0; cmac && w < 2; w++) {
        OSSL_PARAM ps[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, "SM4-CBC", 0),
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES, (char *)(w ? "provider=default" : "provider=shangmi"), 0),
            OSSL_PARAM_construct_end(),
        };
        unsigned char t1[16], t2[16];
        size_t l1 = 0, l2 = 0;
        EVP_MAC_CTX *c = EVP_MAC_CTX_new(cmac);
        CHECK(c && EVP_MAC_init(c, key, 16, ps) == 1);
        CHECK(EVP_MAC_update(c, pt, 1001) == 1);
        EVP_MAC_CTX *dup = EVP_MAC_CTX_dup(c);
        CHECK(dup != NULL);
        CHECK(EVP_MAC_update(c, pt + 1001, 999) == 1 && EVP_MAC_final(c, t1, &l1, 16) == 1);
        EVP_MAC_CTX_free(c);
        if (dup) CHECK(EVP_MAC_update(dup, pt + 1001, 999) == 1 && EVP_MAC_final(dup, t2, &l2, 16) == 1);
        EVP_MAC_CTX_free(dup);
        static unsigned char first[16];
        if (w == 0) memcpy(first, t1, 16);
        CHECK(l1 == 16 && l2 == 16 && memcmp(t1, t2, 16) == 0 && memcmp(first, t1, 16) == 0);
    }
    EVP_MAC_free(cmac);

    /* SM2: a key made and held by the default provider; every operation fetched from each
     * provider in turn, so each one's output goes through the other (the key moves across by
     * export and import). */
    EVP_PKEY *sm2key = EVP_PKEY_Q_keygen(NULL, "provider=default", "SM2");
    CHECK(sm2key != NULL);
    const char *props[2] = {"provider=shangmi", "provider=default"};
    for (int w = 0; sm2key && w < 2; w++) {
        const char *sp = props[w], *vp = props[1 - w];
        unsigned char sig[80], msg[100];
        size_t sl = sizeof sig;
        memcpy(msg, pt, sizeof msg);
        EVP_MD_CTX *m = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pc = NULL;
        CHECK(EVP_DigestSignInit_ex(m, &pc, "SM3", NULL, sp, sm2key, NULL) == 1);
        CHECK(EVP_PKEY_CTX_get0_provider(pc) == (w == 0 ? ours : dflt));
        CHECK(EVP_PKEY_CTX_set1_id(pc, "alice@example.com", 17) == 1);
        CHECK(EVP_DigestSignUpdate(m, msg, 40) == 1 && EVP_DigestSignUpdate(m, msg + 40, 60) == 1);
        CHECK(EVP_DigestSignFinal(m, NULL, &sl) == 1 && sl >= 70);
        CHECK(EVP_DigestSignFinal(m, sig, &sl) == 1);
        /* The context signs again after an init that passes no key (it keeps its own), as
         * OpenSSL's SM2 does; the second signature verifies on the other provider. */
        unsigned char sig2[80];
        size_t sl2 = sizeof sig2;
        CHECK(EVP_DigestSignInit_ex(m, NULL, NULL, NULL, NULL, NULL, NULL) == 1);
        CHECK(EVP_DigestSign(m, sig2, &sl2, msg, 50) == 1);
        EVP_MD_CTX_free(m);
        m = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pv = NULL;
        CHECK(EVP_DigestVerifyInit_ex(m, &pv, "SM3", NULL, vp, sm2key, NULL) == 1);
        CHECK(EVP_PKEY_CTX_set1_id(pv, "alice@example.com", 17) == 1); /* kept across init */
        CHECK(EVP_DigestVerify(m, sig2, sl2, msg, 50) == 1);
        EVP_MD_CTX_free(m);
        for (int tamper = 0; tamper < 3; tamper++) {
            m = EVP_MD_CTX_new();
            CHECK(EVP_DigestVerifyInit_ex(m, &pc, "SM3", NULL, vp, sm2key, NULL) == 1);
            CHECK(EVP_PKEY_CTX_set1_id(pc, tamper == 2 ? "bob" : "alice@example.com", tamper == 2 ? 3 : 17) == 1);
            msg[0] ^= (unsigned char)(tamper == 1);
            int r = EVP_DigestVerify(m, sig, sl, msg, sizeof msg);
            msg[0] ^= (unsigned char)(tamper == 1);
            CHECK(r == (tamper == 0 ? 1 : 0));
            EVP_MD_CTX_free(m);
        }
        unsigned char ct[300], back2[300];
        size_t cl = sizeof ct, bl = sizeof back2;
        EVP_PKEY_CTX *e = EVP_PKEY_CTX_new_from_pkey(NULL, sm2key, sp);
        CHECK(EVP_PKEY_encrypt_init(e) == 1 && EVP_PKEY_CTX_get0_provider(e) == (w == 0 ? ours : dflt));
        CHECK(EVP_PKEY_encrypt(e, ct, &cl, msg, 33) == 1);
        EVP_PKEY_CTX_free(e);
        EVP_PKEY_CTX *d = EVP_PKEY_CTX_new_from_pkey(NULL, sm2key, vp);
        CHECK(EVP_PKEY_decrypt_init(d) == 1);
        CHECK(EVP_PKEY_decrypt(d, back2, &bl, ct, cl) == 1 && bl == 33 && memcmp(back2, msg, 33) == 0);
        ct[cl - 1] ^= 1;
        bl = sizeof back2;
        CHECK(EVP_PKEY_decrypt(d, back2, &bl, ct, cl) != 1);
        EVP_PKEY_CTX_free(d);
    }
    EVP_PKEY_free(sm2key);

    /* Hostile key material through import: refused, never half-imported. The key is
     * d = 1 (public key G); n is the group order. */
    static const char *n_hex = "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123";
    unsigned char g[65];
    const char *gx = "32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7";
    const char *gy = "BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0";
    g[0] = 4;
    for (int i = 0; i < 32; i++) {
        sscanf(gx + 2 * i, "%2hhx", &g[1 + i]);
        sscanf(gy + 2 * i, "%2hhx", &g[33 + i]);
    }
    CHECK(import_sm2("01", g, sizeof g) == 1);
    CHECK(import_sm2(NULL, g, sizeof g) == 1);
    CHECK(import_sm2("00", NULL, 0) == 0);                   /* d = 0 */
    CHECK(import_sm2(n_hex, NULL, 0) == 0);                  /* d = n */
    CHECK(import_sm2("02", g, sizeof g) == 0);               /* a public key not d's */
    g[64] ^= 1;
    CHECK(import_sm2(NULL, g, sizeof g) == 0);               /* not on the curve */
    CHECK(import_sm2(NULL, g, 33) == 0);                     /* truncated */
    OSSL_PROVIDER_unload(ours);
    OSSL_PROVIDER_unload(dflt);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("provider through EVP: all checks passed\n");
    return 0;
}
