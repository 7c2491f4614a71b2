/* SM4-GCM, SM4-CCM and SM4-XTS from the provider through the EVP API, and its errors on
 * OpenSSL's error queue. OpenSSL 3.0 has none of these ciphers, so the references are the
 * standards' vectors (GB/T 36624-2018 / RFC 8998, GB/T 17964-2021) and round trips.
 * Decryption must never write plaintext that failed (or has not yet had) its tag check: every
 * refused call is checked to leave the output buffer as it was.
 * Contexts are copied as applications copy them (EVP_CIPHER_CTX_copy).
 * Built with AddressSanitizer by scripts/test-provider.sh. Usage: test_provider_aead DIR */
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
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

static void hex(const char *s, unsigned char *out) {
    for (size_t i = 0; s[2 * i]; i++) sscanf(s + 2 * i, "%2hhx", &out[i]);
}

/* Whether an error on the queue is ours with `want` in its text (OpenSSL may push its own
 * after it); empties the queue. */
static int queue_says(const char *want) {
    unsigned long e;
    int ok = 0;
    while ((e = ERR_get_error()) != 0) {
        const char *lib = ERR_lib_error_string(e), *why = ERR_reason_error_string(e);
        if (lib && strcmp(lib, "shangmi") == 0 && why && strstr(why, want)) ok = 1;
    }
    if (!ok) fprintf(stderr, "  no shangmi error saying \"%s\"\n", want);
    return ok;
}

static int all(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static unsigned char key[16], iv[12], aad[20], pt[64], ct[64], tag[16];

static void test_gcm(EVP_CIPHER *gcm) {
    unsigned char out[200], back[200], t[16];
    int n = 0, total = 0;
    /* Encryption streams: AAD in two pieces, the text in uneven ones. */
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, gcm, key, iv, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_get_iv_length(x) == 12);
    CHECK(EVP_EncryptUpdate(x, NULL, &n, aad, 7) == 1 && EVP_EncryptUpdate(x, NULL, &n, aad + 7, 13) == 1);
    for (int off = 0, piece = 1; off < 64; off += piece, piece = piece * 2 + 1) {
        if (piece > 64 - off) piece = 64 - off;
        CHECK(EVP_EncryptUpdate(x, out + total, &n, pt + off, piece) == 1 && n == piece);
        total += n;
    }
    CHECK(EVP_EncryptFinal_ex(x, out + total, &n) == 1 && n == 0);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t) == 1);
    CHECK(total == 64 && memcmp(out, ct, 64) == 0 && memcmp(t, tag, 16) == 0);
    unsigned char t12[12];
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, t12) == 1 && memcmp(t12, tag, 12) == 0);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 3, t12) != 1 && queue_says("tag length"));
    /* The nonce is spent: more data needs a new IV. */
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) != 1 && queue_says("not initialised"));
    EVP_CIPHER_CTX_free(x);

    /* Decryption: tag first, one update, checked before anything is written. */
    for (int tamper = 0; tamper < 4; tamper++) {
        unsigned char c2[64], tg[16];
        memcpy(c2, ct, 64);
        memcpy(tg, tag, 16);
        if (tamper == 1) c2[63] ^= 0x80;
        if (tamper == 2) tg[0] ^= 1;
        x = EVP_CIPHER_CTX_new();
        CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, tamper == 3 ? 12 : 16, tg) == 1);
        CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
        memset(back, 0xA5, sizeof back);
        int r = EVP_DecryptUpdate(x, back, &n, c2, 64);
        if (tamper == 0 || tamper == 3) {
            CHECK(r == 1 && n == 64 && memcmp(back, pt, 64) == 0);
            CHECK(EVP_DecryptFinal_ex(x, back + 64, &n) == 1 && n == 0);
        } else {
            CHECK(r != 1 && all(back, sizeof back, 0xA5) && queue_says("tag mismatch"));
            CHECK(EVP_DecryptFinal_ex(x, back + 64, &n) != 1);
            ERR_clear_error();
        }
        EVP_CIPHER_CTX_free(x);
    }
    /* The common pattern that sets the tag after the data is refused, writing nothing. */
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) == 1);
    CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
    memset(back, 0xA5, sizeof back);
    CHECK(EVP_DecryptUpdate(x, back, &n, ct, 64) != 1 && all(back, sizeof back, 0xA5));
    CHECK(queue_says("before the ciphertext"));
    EVP_CIPHER_CTX_free(x);
    /* A second data update is refused. */
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1);
    CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
    CHECK(EVP_DecryptUpdate(x, back, &n, ct, 64) == 1);
    CHECK(EVP_DecryptUpdate(x, back + 64, &n, ct, 16) != 1 && queue_says("one update"));
    EVP_CIPHER_CTX_free(x);

    /* Another IV length, in place, and GMAC (AAD only), round trips through one context. */
    unsigned char iv16[16];
    memset(iv16, 0x3c, 16);
    for (int len = 0; len <= 100; len += 50) {
        unsigned char buf[100];
        memcpy(buf, pt, len > 64 ? 64 : (size_t)len);
        memset(buf + 64, 0x11, 36);
        unsigned char keep[100];
        memcpy(keep, buf, 100);
        x = EVP_CIPHER_CTX_new();
        CHECK(EVP_EncryptInit_ex2(x, gcm, key, NULL, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL) == 1);
        CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv16, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_get_iv_length(x) == 16);
        CHECK(EVP_EncryptUpdate(x, NULL, &n, aad, 20) == 1);
        if (len) CHECK(EVP_EncryptUpdate(x, buf, &n, buf, len) == 1 && n == len);
        CHECK(EVP_EncryptFinal_ex(x, NULL, &n) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t) == 1);
        CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv16, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, t) == 1);
        CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
        if (len) CHECK(EVP_DecryptUpdate(x, buf, &n, buf, len) == 1 && n == len);
        CHECK(EVP_DecryptFinal_ex(x, NULL, &n) == 1);
        CHECK(memcmp(buf, keep, 100) == 0);
        if (len == 0) { /* GMAC with a wrong tag fails at final */
            t[5] ^= 1;
            CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv16, NULL) == 1);
            CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, t) == 1);
            CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
            CHECK(EVP_DecryptFinal_ex(x, NULL, &n) != 1 && queue_says("tag mismatch"));
        }
        EVP_CIPHER_CTX_free(x);
    }
}

/* EVP_CIPHER_CTX_copy: a keyed template copies; an encrypting copy needs its own IV; a copy in
 * the middle of a GCM encryption is refused. */
static void test_copy(EVP_CIPHER *gcm, EVP_CIPHER *xts, EVP_CIPHER *cbc) {
    unsigned char out[64], t[16];
    int n = 0;
    EVP_CIPHER_CTX *tmpl = EVP_CIPHER_CTX_new(), *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(tmpl, gcm, key, NULL, NULL) == 1);
    for (int i = 0; i < 2; i++) {
        CHECK(EVP_CIPHER_CTX_copy(x, tmpl) == 1);
        CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) == 1);
        CHECK(EVP_EncryptUpdate(x, NULL, &n, aad, 20) == 1);
        CHECK(EVP_EncryptUpdate(x, out, &n, pt, 64) == 1 && memcmp(out, ct, 64) == 0);
        CHECK(EVP_EncryptFinal_ex(x, NULL, &n) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t) == 1 && memcmp(t, tag, 16) == 0);
    }
    CHECK(EVP_EncryptInit_ex2(tmpl, NULL, NULL, iv, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_copy(x, tmpl) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) != 1 && queue_says("not initialised"));
    CHECK(EVP_EncryptUpdate(tmpl, out, &n, pt, 16) == 1);
    CHECK(EVP_CIPHER_CTX_copy(x, tmpl) != 1 && queue_says("middle of a message"));
    EVP_CIPHER_CTX_free(tmpl);
    EVP_CIPHER_CTX_free(x);

    unsigned char xk[32], xt[16], buf[48], a[48], b[48];
    for (int i = 0; i < 32; i++) xk[i] = (unsigned char)(i * 5 + 1);
    memset(xt, 9, 16);
    memset(buf, 0x42, sizeof buf);
    tmpl = EVP_CIPHER_CTX_new();
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(tmpl, xts, xk, xt, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_copy(x, tmpl) == 1);
    CHECK(EVP_EncryptUpdate(tmpl, a, &n, buf, 48) == 1 && EVP_EncryptUpdate(x, b, &n, buf, 48) == 1);
    CHECK(memcmp(a, b, 48) == 0 && memcmp(a, buf, 48) != 0);
    EVP_CIPHER_CTX_free(tmpl);
    EVP_CIPHER_CTX_free(x);

    tmpl = EVP_CIPHER_CTX_new();
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(tmpl, cbc, key, key, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_copy(x, tmpl) == 1);
    CHECK(EVP_EncryptUpdate(tmpl, a, &n, buf, 48) == 1 && EVP_EncryptUpdate(x, b, &n, buf, 48) == 1);
    CHECK(n == 48 && memcmp(a, b, 48) == 0);
    /* Mid-message too (test_provider.c checks the continuation in every mode). */
    CHECK(EVP_CIPHER_CTX_copy(x, tmpl) == 1);
    CHECK(EVP_EncryptUpdate(tmpl, a, &n, buf, 16) == 1 && EVP_EncryptUpdate(x, b, &n, buf, 16) == 1);
    CHECK(n == 16 && memcmp(a, b, 16) == 0);
    EVP_CIPHER_CTX_free(tmpl);
    EVP_CIPHER_CTX_free(x);
}

static void test_ccm(EVP_CIPHER *ccm, const unsigned char *cct, const unsigned char *ctag) {
    unsigned char out[100], t[16], back[100];
    int n = 0;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, ccm, NULL, NULL, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, NULL) == 1);
    CHECK(EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, NULL, &n, NULL, 64) == 1);
    CHECK(EVP_EncryptUpdate(x, NULL, &n, aad, 20) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 64) == 1 && n == 64);
    CHECK(EVP_EncryptFinal_ex(x, out + 64, &n) == 1 && n == 0);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t) == 1);
    CHECK(memcmp(out, cct, 64) == 0 && memcmp(t, ctag, 16) == 0);
    EVP_CIPHER_CTX_free(x);
    for (int tamper = 0; tamper < 3; tamper++) {
        unsigned char c2[64], tg[16];
        memcpy(c2, cct, 64);
        memcpy(tg, ctag, 16);
        if (tamper == 1) c2[0] ^= 1;
        if (tamper == 2) tg[15] ^= 1;
        x = EVP_CIPHER_CTX_new();
        CHECK(EVP_DecryptInit_ex2(x, ccm, NULL, NULL, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tg) == 1);
        CHECK(EVP_DecryptInit_ex2(x, NULL, key, iv, NULL) == 1);
        CHECK(EVP_DecryptUpdate(x, NULL, &n, NULL, 64) == 1);
        CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
        memset(back, 0xA5, sizeof back);
        int r = EVP_DecryptUpdate(x, back, &n, c2, 64);
        if (tamper == 0) {
            CHECK(r == 1 && n == 64 && memcmp(back, pt, 64) == 0);
        } else {
            CHECK(r != 1 && all(back, sizeof back, 0xA5) && queue_says("tag mismatch"));
        }
        EVP_CIPHER_CTX_free(x);
    }
    /* A declared length that the data does not match. */
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, ccm, key, iv, NULL) == 1); /* default nonce length is 7 */
    CHECK(EVP_CIPHER_CTX_get_iv_length(x) == 7);
    CHECK(EVP_EncryptUpdate(x, NULL, &n, NULL, 10) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 11) != 1 && queue_says("data length"));
    EVP_CIPHER_CTX_free(x);
}

/* Tags shorter than 12 bytes only when the caller declared that length first (the tag's own
 * length never decides it), for GCM and CCM. */
static void test_short_tags(EVP_CIPHER *gcm, EVP_CIPHER *ccm) {
    unsigned char back[64], t[16];
    int n = 0;
    for (int declare = 0; declare <= 2; declare++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) == 1);
        if (declare == 1) CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, NULL) == 1);
        if (declare == 2) {
            size_t eight = 8;
            OSSL_PARAM ps[2] = {OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, &eight),
                                OSSL_PARAM_construct_end()};
            CHECK(EVP_CIPHER_CTX_set_params(x, ps) == 1);
        }
        int r = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, tag);
        if (declare == 0) {
            CHECK(r != 1 && queue_says("shorter than 12"));
        } else {
            CHECK(r == 1);
            CHECK(EVP_DecryptUpdate(x, NULL, &n, aad, 20) == 1);
            CHECK(EVP_DecryptUpdate(x, back, &n, ct, 64) == 1 && memcmp(back, pt, 64) == 0);
        }
        EVP_CIPHER_CTX_free(x);
    }
    /* A truncated tag of a length that was not declared (or another length) is refused. */
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 4, tag) != 1 && queue_says("shorter than 12"));
    EVP_CIPHER_CTX_free(x);

    /* CCM with M = 8: made with the length declared, read back only with it declared. */
    unsigned char out[64];
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, ccm, NULL, NULL, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, NULL) == 1);
    CHECK(EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 64) == 1 && n == 64);
    CHECK(EVP_EncryptFinal_ex(x, out + 64, &n) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 8, t) == 1);
    EVP_CIPHER_CTX_free(x);
    for (int declare = 0; declare <= 1; declare++) {
        x = EVP_CIPHER_CTX_new();
        CHECK(EVP_DecryptInit_ex2(x, ccm, NULL, NULL, NULL) == 1);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1);
        if (declare) CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, NULL) == 1);
        int r = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 8, t);
        if (!declare) {
            CHECK(r != 1 && queue_says("shorter than 12"));
        } else {
            CHECK(r == 1 && EVP_DecryptInit_ex2(x, NULL, key, iv, NULL) == 1);
            CHECK(EVP_DecryptUpdate(x, back, &n, out, 64) == 1 && memcmp(back, pt, 64) == 0);
        }
        EVP_CIPHER_CTX_free(x);
    }
}

/* No nonce serves two messages: a context initialised again without a new IV, after a
 * message was begun and abandoned, refuses to encrypt. */
static void test_nonce_reuse(EVP_CIPHER *gcm, EVP_CIPHER *ccm) {
    unsigned char out[64];
    int n = 0;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, gcm, key, iv, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) == 1);
    CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, NULL, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) != 1 && queue_says("not initialised"));
    CHECK(EVP_EncryptInit_ex2(x, NULL, key, NULL, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) != 1 && queue_says("not initialised"));
    /* A fresh IV starts a message again. */
    CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) == 1 && n == 16);
    EVP_CIPHER_CTX_free(x);

    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, ccm, key, iv, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) == 1);
    CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, NULL, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, pt, 16) != 1 && queue_says("not initialised"));
    EVP_CIPHER_CTX_free(x);
}

/* EVP_Cipher on ECB and CBC transforms exactly the bytes given, as OpenSSL's own SM4 does,
 * even with padding on (the default): no block held back, none added. */
static void test_evp_cipher(EVP_CIPHER *ours, EVP_CIPHER *theirs) {
    unsigned char a[64], b[64], c[64];
    for (int enc = 1; enc >= 0; enc--) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *y = EVP_CIPHER_CTX_new();
        CHECK(EVP_CipherInit_ex2(x, ours, key, key, enc, NULL) == 1);
        CHECK(EVP_CipherInit_ex2(y, theirs, key, key, enc, NULL) == 1);
        CHECK(EVP_Cipher(x, a, pt, 32) == 32 && EVP_Cipher(x, a + 32, pt + 32, 32) == 32);
        CHECK(EVP_Cipher(y, b, pt, 32) == 32 && EVP_Cipher(y, b + 32, pt + 32, 32) == 32);
        CHECK(memcmp(a, b, 64) == 0);
        /* In place too. */
        memcpy(c, pt, 64);
        CHECK(EVP_CipherInit_ex2(x, NULL, key, key, enc, NULL) == 1);
        CHECK(EVP_Cipher(x, c, c, 64) == 64 && memcmp(c, b, 64) == 0);
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_CTX_free(y);
    }
}

static void test_xts(EVP_CIPHER *xts) {
    unsigned char xk[32], xt[16], xp[56], xc[56], out[56], back[56];
    hex("2b7e151628aed2a6abf7158809cf4f3c000102030405060708090a0b0c0d0e0f", xk);
    hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", xt);
    hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17", xp);
    hex("e9538251c71d7b80bbe4483fef497bd12c5c581bd6242fc51e08964fb4f60fdb0ba42f63499279213d318d2c11f6886e903be7f93a1b3479", xc);
    int n = 0;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, xts, xk, xt, NULL) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, xp, 56) == 1 && n == 56 && memcmp(out, xc, 56) == 0);
    CHECK(EVP_EncryptUpdate(x, out, &n, xp, 15) != 1 && queue_says("data length"));
    /* IEEE 1619 tweaks give another ciphertext, which decrypts back. */
    OSSL_PARAM ps[2] = {OSSL_PARAM_construct_utf8_string("xts_standard", "IEEE", 0), OSSL_PARAM_construct_end()};
    CHECK(EVP_EncryptInit_ex2(x, NULL, xk, xt, ps) == 1);
    CHECK(EVP_EncryptUpdate(x, out, &n, xp, 56) == 1 && memcmp(out, xc, 56) != 0);
    CHECK(EVP_DecryptInit_ex2(x, NULL, xk, xt, ps) == 1);
    CHECK(EVP_DecryptUpdate(x, back, &n, out, 56) == 1 && memcmp(back, xp, 56) == 0);
    ps[0] = OSSL_PARAM_construct_utf8_string("xts_standard", "NIST", 0);
    CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, NULL, ps) != 1 && queue_says("unsupported"));
    EVP_CIPHER_CTX_free(x);
    /* Equal key halves void XTS's argument: refused. */
    memcpy(xk + 16, xk, 16);
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, xts, xk, xt, NULL) != 1 && queue_says("invalid key"));
    EVP_CIPHER_CTX_free(x);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    OSSL_PROVIDER_set_default_search_path(NULL, argv[1]);
    OSSL_PROVIDER *ours = OSSL_PROVIDER_load(NULL, "shangmi");
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(NULL, "default");
    CHECK(ours != NULL && dflt != NULL);
    if (!ours || !dflt) return 1;
    hex("0123456789abcdeffedcba9876543210", key);
    hex("00001234567800000000abcd", iv);
    hex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad);
    hex("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccddddddddddddddddeeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa", pt);
    hex("17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d", ct);
    hex("83de3541e4c2b58177e065a9bf7b62ec", tag);
    unsigned char cct[64], ctag[16];
    hex("48af93501fa62adbcd414cce6034d895dda1bf8f132f042098661572e7483094fd12e518ce062c98acee28d95df4416bed31a2f04476c18bb40c84a74b97dc5b", cct);
    hex("16842d4fa186f56ab33256971fa110f4", ctag);

    EVP_CIPHER *gcm = EVP_CIPHER_fetch(NULL, "SM4-GCM", "provider=shangmi");
    EVP_CIPHER *ccm = EVP_CIPHER_fetch(NULL, "SM4-CCM", "provider=shangmi");
    EVP_CIPHER *xts = EVP_CIPHER_fetch(NULL, "SM4-XTS", "provider=shangmi");
    CHECK(gcm && ccm && xts);
    if (gcm) {
        CHECK(EVP_CIPHER_get_mode(gcm) == EVP_CIPH_GCM_MODE);
        CHECK(EVP_CIPHER_get_flags(gcm) & EVP_CIPH_FLAG_AEAD_CIPHER);
        test_gcm(gcm);
    }
    if (ccm) {
        CHECK(EVP_CIPHER_get_mode(ccm) == EVP_CIPH_CCM_MODE);
        test_ccm(ccm, cct, ctag);
    }
    if (xts) {
        CHECK(EVP_CIPHER_get_mode(xts) == EVP_CIPH_XTS_MODE && EVP_CIPHER_get_key_length(xts) == 32);
        test_xts(xts);
    }

    /* Failures of the older pieces reach the queue too: a bad CBC padding, a bad key length. */
    EVP_CIPHER *cbc = EVP_CIPHER_fetch(NULL, "SM4-CBC", "provider=shangmi");
    if (gcm && xts && cbc) test_copy(gcm, xts, cbc);
    if (gcm && ccm) {
        test_short_tags(gcm, ccm);
        test_nonce_reuse(gcm, ccm);
    }
    const char *raw[] = {"SM4-CBC", "SM4-ECB", "SM4-CTR", "SM4-OFB", "SM4-CFB"};
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        EVP_CIPHER *o = EVP_CIPHER_fetch(NULL, raw[i], "provider=shangmi");
        EVP_CIPHER *t = EVP_CIPHER_fetch(NULL, raw[i], "provider=default");
        CHECK(o && t);
        if (o && t) test_evp_cipher(o, t);
        EVP_CIPHER_free(o);
        EVP_CIPHER_free(t);
    }
    if (cbc) {
        unsigned char buf[32], out[64];
        int n = 0, m = 0;
        memset(buf, 7, sizeof buf);
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        CHECK(EVP_DecryptInit_ex2(x, cbc, key, key, NULL) == 1);
        CHECK(EVP_DecryptUpdate(x, out, &n, buf, 32) == 1);
        CHECK(EVP_DecryptFinal_ex(x, out + n, &m) != 1 && queue_says("padding"));
        EVP_CIPHER_CTX_free(x);
    }
    EVP_CIPHER_free(cbc);
    EVP_CIPHER_free(gcm);
    EVP_CIPHER_free(ccm);
    EVP_CIPHER_free(xts);
    OSSL_PROVIDER_unload(ours);
    OSSL_PROVIDER_unload(dflt);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("provider AEAD/XTS through EVP: all checks passed\n");
    return 0;
}
