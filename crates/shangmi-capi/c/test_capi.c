/* The C ABI from C, built with -fsanitize=address,undefined: known answers, every output
 * buffer rule, hostile inputs, and interop with OpenSSL's own SM2/SM3/SM4 (libcrypto). */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shangmi.h"

static int failures = 0;
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
            failures++;                                                                  \
        }                                                                                \
    } while (0)
#define OK(call) CHECK((call) == SHANGMI_STATUS_OK)

static void hex(const char *s, uint8_t *out) {
    for (size_t i = 0; s[2 * i]; i++) sscanf(s + 2 * i, "%2hhx", &out[i]);
}

static void fill(uint8_t *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static void test_sm3(void) {
    uint8_t d[32], e[32], want[32];
    hex("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0", want);
    OK(shangmi_sm3((const uint8_t *)"abc", 3, d));
    CHECK(memcmp(d, want, 32) == 0);
    shangmi_sm3_ctx *c = NULL, *c2 = NULL;
    OK(shangmi_sm3_new(&c));
    OK(shangmi_sm3_update(c, (const uint8_t *)"a", 1));
    OK(shangmi_sm3_dup(c, &c2));
    OK(shangmi_sm3_update(c, (const uint8_t *)"bc", 2));
    OK(shangmi_sm3_final(c, e));
    CHECK(memcmp(e, want, 32) == 0);
    OK(shangmi_sm3_update(c2, (const uint8_t *)"bc", 2));
    OK(shangmi_sm3_final(c2, e));
    CHECK(memcmp(e, want, 32) == 0);
    shangmi_sm3_free(c);
    shangmi_sm3_free(c2);
    shangmi_sm3_free(NULL);
    CHECK(shangmi_sm3(NULL, 5, d) == SHANGMI_STATUS_ERR_NULL_POINTER);
    CHECK(shangmi_sm3(NULL, 0, NULL) == SHANGMI_STATUS_ERR_NULL_POINTER);
    OK(shangmi_sm3(NULL, 0, d)); /* the empty message */
    uint8_t inplace[64];
    memset(inplace, 'a', sizeof inplace);
    OK(shangmi_sm3(inplace, 64, e));
    OK(shangmi_sm3(inplace, 64, inplace)); /* output over its own input */
    CHECK(memcmp(inplace, e, 32) == 0);

    /* Against OpenSSL's SM3 and HMAC-SM3 at many lengths. */
    static uint8_t buf[5000];
    fill(buf, sizeof buf, 1);
    for (size_t n = 0; n < sizeof buf; n += 97) {
        unsigned int l = 0;
        OK(shangmi_sm3(buf, n, d));
        EVP_Digest(buf, n, e, &l, EVP_sm3(), NULL);
        CHECK(l == 32 && memcmp(d, e, 32) == 0);
    }
    uint8_t kdf[100];
    OK(shangmi_sm3_kdf(buf, 64, kdf, sizeof kdf));
    OK(shangmi_pbkdf2_sm3((const uint8_t *)"pw", 2, (const uint8_t *)"salt", 4, 1000, kdf, 48));
    uint8_t ref[48];
    PKCS5_PBKDF2_HMAC("pw", 2, (const unsigned char *)"salt", 4, 1000, EVP_sm3(), 48, ref);
    CHECK(memcmp(kdf, ref, 48) == 0);
    CHECK(shangmi_pbkdf2_sm3((const uint8_t *)"pw", 2, NULL, 0, 0, kdf, 32) != SHANGMI_STATUS_OK);
}

/* Feeds the rest of a message to a stream whose output so far is out[0..at], finishes and
 * frees it; returns the total output length. */
static size_t finish_stream(shangmi_sm4_stream *s, const uint8_t *in, size_t len, uint8_t *out,
                            size_t cap, size_t at) {
    size_t n = 0;
    OK(shangmi_sm4_stream_update(s, in, len, out + at, cap - at, &n));
    at += n;
    OK(shangmi_sm4_stream_final(s, out + at, cap - at, &n));
    at += n;
    shangmi_sm4_stream_free(s);
    return at;
}

static int openssl_cipher(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv, int pad,
                          const uint8_t *in, int len, uint8_t *out) {
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int n = 0, m = 0;
    EVP_EncryptInit_ex(x, c, NULL, key, iv);
    EVP_CIPHER_CTX_set_padding(x, pad);
    EVP_EncryptUpdate(x, out, &n, in, len);
    EVP_EncryptFinal_ex(x, out + n, &m);
    EVP_CIPHER_CTX_free(x);
    return n + m;
}

static void test_sm4(void) {
    uint8_t key[16], iv[16], pt[4100], ct[4200], ref[4200], back[4200];
    size_t n = 0;
    fill(key, 16, 2);
    fill(iv, 16, 3);
    fill(pt, sizeof pt, 4);
    for (size_t len = 0; len <= 4100; len += 41) {
        int r = openssl_cipher(EVP_sm4_cbc(), key, iv, 1, pt, (int)len, ref);
        OK(shangmi_sm4_cbc(key, iv, 1, 1, pt, len, ct, sizeof ct, &n));
        CHECK(n == (size_t)r && memcmp(ct, ref, n) == 0);
        size_t m = 0;
        OK(shangmi_sm4_cbc(key, iv, 0, 1, ct, n, back, sizeof back, &m));
        CHECK(m == len && memcmp(back, pt, len) == 0);
        r = openssl_cipher(EVP_sm4_ctr(), key, iv, 0, pt, (int)len, ref);
        OK(shangmi_sm4_ctr(key, iv, pt, len, ct, sizeof ct, &n));
        CHECK(n == len && memcmp(ct, ref, len) == 0);
        r = openssl_cipher(EVP_sm4_cfb128(), key, iv, 0, pt, (int)len, ref);
        OK(shangmi_sm4_cfb(key, iv, 1, pt, len, ct, sizeof ct, &n));
        CHECK(memcmp(ct, ref, len) == 0);
        r = openssl_cipher(EVP_sm4_ofb(), key, iv, 0, pt, (int)len, ref);
        OK(shangmi_sm4_ofb(key, iv, pt, len, ct, sizeof ct, &n));
        CHECK(memcmp(ct, ref, len) == 0);
        r = openssl_cipher(EVP_sm4_ecb(), key, NULL, 1, pt, (int)len, ref);
        OK(shangmi_sm4_ecb(key, 1, 1, pt, len, ct, sizeof ct, &n));
        CHECK(n == (size_t)r && memcmp(ct, ref, n) == 0);
        (void)r;
    }

    /* In place, and the size rules: a query, a too-small buffer left untouched. */
    memcpy(back, pt, 100);
    OK(shangmi_sm4_ctr(key, iv, back, 100, back, 100, &n));
    OK(shangmi_sm4_ctr(key, iv, pt, 100, ct, sizeof ct, &n));
    CHECK(memcmp(back, ct, 100) == 0);
    CHECK(shangmi_sm4_cbc(key, iv, 1, 1, pt, 33, NULL, 0, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 48);
    memset(ct, 0xAA, 64);
    CHECK(shangmi_sm4_cbc(key, iv, 1, 1, pt, 33, ct, 47, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 48 && ct[0] == 0xAA && ct[46] == 0xAA);
    CHECK(shangmi_sm4_cbc(key, iv, 1, 0, pt, 33, ct, 64, &n) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
    CHECK(shangmi_sm4_cbc(NULL, iv, 1, 0, pt, 32, ct, 64, &n) == SHANGMI_STATUS_ERR_NULL_POINTER);
    CHECK(shangmi_sm4_ctr(key, iv, pt, 32, ct, 64, NULL) == SHANGMI_STATUS_ERR_NULL_POINTER);

    /* Bad padding: an error, the output it was given zeroed, *out_len 0, nothing past it. */
    OK(shangmi_sm4_cbc(key, iv, 1, 0, pt, 32, ct, 64, &n));
    memset(back, 0x55, 64);
    CHECK(shangmi_sm4_cbc(key, iv, 0, 1, ct, 32, back, 64, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(n == 0 && back[0] == 0 && back[31] == 0 && back[32] == 0x55);

    /* GCM: known answer (RFC 8998 A.1), tamper, in place. */
    uint8_t gk[16], gn[12], ga[20], gp[64], gc[64], gt[16];
    hex("0123456789abcdeffedcba9876543210", gk);
    hex("00001234567800000000abcd", gn);
    hex("feedfacedeadbeeffeedfacedeadbeefabaddad2", ga);
    hex("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccddddddddddddddddeeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa", gp);
    hex("17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d", gc);
    hex("83de3541e4c2b58177e065a9bf7b62ec", gt);
    uint8_t sealed[80], opened[80];
    OK(shangmi_sm4_gcm_seal(gk, 16, gn, 12, ga, 20, gp, 64, sealed, sizeof sealed, &n));
    CHECK(n == 80 && memcmp(sealed, gc, 64) == 0 && memcmp(sealed + 64, gt, 16) == 0);
    OK(shangmi_sm4_gcm_open(gk, 16, gn, 12, ga, 20, sealed, 80, opened, sizeof opened, &n));
    CHECK(n == 64 && memcmp(opened, gp, 64) == 0);
    sealed[79] ^= 1;
    memset(opened, 0x77, sizeof opened);
    CHECK(shangmi_sm4_gcm_open(gk, 16, gn, 12, ga, 20, sealed, 80, opened, sizeof opened, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    for (int i = 0; i < 64; i++) CHECK(opened[i] == 0 || opened[i] == 0x77);
    sealed[79] ^= 1;
    memcpy(opened, sealed, 80); /* in place: the tag is read before the output is written */
    OK(shangmi_sm4_gcm_open(gk, 16, gn, 12, ga, 20, opened, 80, opened, 80, &n));
    CHECK(memcmp(opened, gp, 64) == 0);
    CHECK(shangmi_sm4_gcm_open(gk, 16, gn, 12, ga, 20, sealed, 10, opened, 80, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_sm4_gcm_seal(gk, 3, gn, 12, ga, 20, gp, 64, sealed, 80, &n) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);

    /* CCM round trip and tamper. */
    OK(shangmi_sm4_ccm_seal(gk, 16, gn, 12, ga, 20, gp, 64, sealed, sizeof sealed, &n));
    OK(shangmi_sm4_ccm_open(gk, 16, gn, 12, ga, 20, sealed, n, opened, sizeof opened, &n));
    CHECK(n == 64 && memcmp(opened, gp, 64) == 0);
    sealed[0] ^= 1;
    CHECK(shangmi_sm4_ccm_open(gk, 16, gn, 12, ga, 20, sealed, 80, opened, sizeof opened, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);

    /* XTS: GB/T 17964-2021 B.7. */
    uint8_t xk[32], xt[16], xp[56], xc[56], xo[56];
    hex("2b7e151628aed2a6abf7158809cf4f3c000102030405060708090a0b0c0d0e0f", xk);
    hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", xt);
    hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17", xp);
    hex("e9538251c71d7b80bbe4483fef497bd12c5c581bd6242fc51e08964fb4f60fdb0ba42f63499279213d318d2c11f6886e903be7f93a1b3479", xc);
    OK(shangmi_sm4_xts(xk, SHANGMI_XTS_GB, 1, xt, xp, 56, xo, 56, &n));
    CHECK(n == 56 && memcmp(xo, xc, 56) == 0);
    CHECK(shangmi_sm4_xts(xk, 7, 1, xt, xp, 48, xo, 48, &n) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);

    /* Streaming equals one-shot, pieces of odd sizes. */
    int modes[] = {SHANGMI_SM4_ECB, SHANGMI_SM4_CBC, SHANGMI_SM4_CFB, SHANGMI_SM4_OFB, SHANGMI_SM4_CTR};
    for (int mi = 0; mi < 5; mi++) {
        int pad = modes[mi] <= SHANGMI_SM4_CBC;
        shangmi_sm4_stream *s = NULL;
        OK(shangmi_sm4_stream_new(modes[mi], key, modes[mi] == SHANGMI_SM4_ECB ? NULL : iv, 1, pad, &s));
        size_t total = 0;
        for (size_t off = 0; off < 1000;) {
            size_t piece = off % 37 + 1;
            if (off + piece > 1000) piece = 1000 - off;
            OK(shangmi_sm4_stream_update(s, pt + off, piece, ct + total, sizeof ct - total, &n));
            total += n;
            off += piece;
        }
        OK(shangmi_sm4_stream_final(s, ct + total, sizeof ct - total, &n));
        total += n;
        CHECK(shangmi_sm4_stream_update(s, pt, 1, ct, sizeof ct, &n) == SHANGMI_STATUS_ERR_STATE);
        shangmi_sm4_stream_free(s);
        size_t one = 0;
        switch (modes[mi]) {
            case SHANGMI_SM4_ECB: OK(shangmi_sm4_ecb(key, 1, 1, pt, 1000, ref, sizeof ref, &one)); break;
            case SHANGMI_SM4_CBC: OK(shangmi_sm4_cbc(key, iv, 1, 1, pt, 1000, ref, sizeof ref, &one)); break;
            case SHANGMI_SM4_CFB: OK(shangmi_sm4_cfb(key, iv, 1, pt, 1000, ref, sizeof ref, &one)); break;
            case SHANGMI_SM4_OFB: OK(shangmi_sm4_ofb(key, iv, pt, 1000, ref, sizeof ref, &one)); break;
            default: OK(shangmi_sm4_ctr(key, iv, pt, 1000, ref, sizeof ref, &one));
        }
        CHECK(total == one && memcmp(ct, ref, one) == 0);
        /* A copy made mid-message (517 bytes in: a partial block buffered) goes on as the
         * original would, after the original is gone; both directions. */
        for (int enc = 1; enc >= 0; enc--) {
            const uint8_t *src = enc ? pt : ct;
            size_t len = enc ? 1000 : one, done = 0;
            const uint8_t *want = enc ? ct : pt;
            size_t want_len = enc ? one : 1000;
            shangmi_sm4_stream *o = NULL, *d = NULL;
            OK(shangmi_sm4_stream_new(modes[mi], key, modes[mi] == SHANGMI_SM4_ECB ? NULL : iv, enc, pad, &o));
            OK(shangmi_sm4_stream_update(o, src, 517, back, sizeof back, &n));
            done = n;
            OK(shangmi_sm4_stream_dup(o, &d));
            CHECK(shangmi_sm4_stream_dup(NULL, &d) == SHANGMI_STATUS_ERR_NULL_POINTER);
            uint8_t first[4200];
            memcpy(first, back, done);
            size_t at = finish_stream(o, src + 517, len - 517, first, sizeof first, done);
            CHECK(at == want_len && memcmp(first, want, at) == 0);
            done = finish_stream(d, src + 517, len - 517, back, sizeof back, done);
            CHECK(done == want_len && memcmp(back, want, done) == 0);
        }
        /* And back. */
        OK(shangmi_sm4_stream_new(modes[mi], key, modes[mi] == SHANGMI_SM4_ECB ? NULL : iv, 0, pad, &s));
        size_t got = 0;
        OK(shangmi_sm4_stream_update(s, ct, total, back, sizeof back, &n));
        got += n;
        OK(shangmi_sm4_stream_final(s, back + got, sizeof back - got, &n));
        got += n;
        CHECK(got == 1000 && memcmp(back, pt, 1000) == 0);
        shangmi_sm4_stream_free(s);
        /* In place in pieces, both ways callers do it: output written where the input was
         * (out == in, so with a block buffered the output runs ahead of the input), and
         * output trailing the input through one buffer (out = start + bytes out so far). */
        for (int trailing = 0; trailing < 2; trailing++) {
            uint8_t buf[1100];
            memcpy(buf, ct, total);
            OK(shangmi_sm4_stream_new(modes[mi], key, modes[mi] == SHANGMI_SM4_ECB ? NULL : iv, 0, pad, &s));
            got = 0;
            uint8_t *dst = trailing ? buf : back;
            if (!trailing) memset(back, 0, sizeof back);
            for (size_t off = 0; off < total;) {
                size_t piece = off % 29 + 1;
                if (off + piece > total) piece = total - off;
                uint8_t *in = buf + off;
                if (!trailing) { /* the piece moves to where its output goes */
                    memmove(back + got, in, piece);
                    in = back + got;
                }
                OK(shangmi_sm4_stream_update(s, in, piece, dst + got, (trailing ? sizeof buf : sizeof back) - got, &n));
                got += n;
                off += piece;
            }
            OK(shangmi_sm4_stream_final(s, dst + got, (trailing ? sizeof buf : sizeof back) - got, &n));
            got += n;
            CHECK(got == 1000 && memcmp(dst, pt, 1000) == 0);
            shangmi_sm4_stream_free(s);
        }
    }
    uint8_t tag[16];
    OK(shangmi_sm4_cmac(key, pt, 100, tag));
}

static EVP_PKEY *openssl_key_from_pem(const char *pem) {
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    return k;
}

static void test_sm2(void) {
    shangmi_sm2_private_key *sk = NULL;
    shangmi_sm2_public_key *pk = NULL;
    OK(shangmi_sm2_private_key_generate(&sk));
    OK(shangmi_sm2_private_key_public_key(sk, &pk));
    const uint8_t msg[] = "message for SM2";
    size_t mlen = sizeof msg - 1, n = 0;
    uint8_t sig[80];
    CHECK(shangmi_sm2_sign(sk, NULL, 0, msg, mlen, SHANGMI_SIG_DER, NULL, 0, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 72);
    OK(shangmi_sm2_sign(sk, NULL, 0, msg, mlen, SHANGMI_SIG_DER, sig, sizeof sig, &n));
    OK(shangmi_sm2_verify(pk, NULL, 0, msg, mlen, sig, n, SHANGMI_SIG_DER));
    CHECK(shangmi_sm2_verify(pk, (const uint8_t *)"other", 5, msg, mlen, sig, n, SHANGMI_SIG_DER) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_sm2_verify(pk, NULL, 0, msg, mlen, sig, 3, SHANGMI_SIG_DER) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    size_t siglen = n;

    /* The PEM key goes to OpenSSL, which verifies our signature and signs for us. */
    char pem[1024];
    OK(shangmi_sm2_private_key_to_pem(sk, NULL, 0, (uint8_t *)pem, sizeof pem, &n));
    CHECK(n == strlen(pem) + 1);
    EVP_PKEY *ok = openssl_key_from_pem(pem);
    CHECK(ok != NULL);
    if (ok) {
        EVP_MD_CTX *m = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pc = NULL;
        EVP_DigestVerifyInit(m, &pc, EVP_sm3(), NULL, ok);
        EVP_PKEY_CTX_set1_id(pc, "1234567812345678", 16);
        CHECK(EVP_DigestVerify(m, sig, siglen, msg, mlen) == 1);
        EVP_MD_CTX_free(m);
        uint8_t osig[80];
        size_t olen = sizeof osig;
        m = EVP_MD_CTX_new();
        EVP_DigestSignInit(m, &pc, EVP_sm3(), NULL, ok);
        EVP_PKEY_CTX_set1_id(pc, "1234567812345678", 16);
        CHECK(EVP_DigestSign(m, osig, &olen, msg, mlen) == 1);
        EVP_MD_CTX_free(m);
        OK(shangmi_sm2_verify(pk, NULL, 0, msg, mlen, osig, olen, SHANGMI_SIG_DER));

        /* Encryption both ways in OpenSSL's ASN.1 layout. */
        uint8_t ct[300], pt[300];
        OK(shangmi_sm2_encrypt(pk, SHANGMI_SM2_ASN1, msg, mlen, ct, sizeof ct, &n));
        EVP_PKEY_CTX *dc = EVP_PKEY_CTX_new(ok, NULL);
        size_t plen = sizeof pt;
        EVP_PKEY_decrypt_init(dc);
        CHECK(EVP_PKEY_decrypt(dc, pt, &plen, ct, n) == 1 && plen == mlen && memcmp(pt, msg, mlen) == 0);
        size_t clen = sizeof ct;
        EVP_PKEY_encrypt_init(dc);
        CHECK(EVP_PKEY_encrypt(dc, ct, &clen, msg, mlen) == 1);
        EVP_PKEY_CTX_free(dc);
        OK(shangmi_sm2_decrypt(sk, SHANGMI_SM2_ASN1, ct, clen, pt, sizeof pt, &n));
        CHECK(n == mlen && memcmp(pt, msg, mlen) == 0);
        ct[clen - 1] ^= 1;
        memset(pt, 0x33, sizeof pt);
        CHECK(shangmi_sm2_decrypt(sk, SHANGMI_SM2_ASN1, ct, clen, pt, sizeof pt, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);
        CHECK(n == 0 && pt[0] == 0x33);
        EVP_PKEY_free(ok);
    }

    /* Raw layouts, exact sizes, round trips. */
    uint8_t ct[200], pt[200];
    CHECK(shangmi_sm2_encrypt(pk, SHANGMI_SM2_C1C3C2, msg, mlen, NULL, 0, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 97 + mlen);
    OK(shangmi_sm2_encrypt(pk, SHANGMI_SM2_C1C3C2, msg, mlen, ct, sizeof ct, &n));
    CHECK(n == 97 + mlen);
    OK(shangmi_sm2_decrypt(sk, SHANGMI_SM2_C1C3C2, ct, n, pt, sizeof pt, &n));
    CHECK(n == mlen && memcmp(pt, msg, mlen) == 0);
    CHECK(shangmi_sm2_decrypt(sk, 9, ct, n, pt, sizeof pt, &n) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
    OK(shangmi_sm2_encrypt(pk, SHANGMI_SM2_C1C2C3, msg, mlen, ct, sizeof ct, &n));
    OK(shangmi_sm2_decrypt(sk, SHANGMI_SM2_C1C2C3, ct, n, ct, sizeof ct, &n)); /* in place */
    CHECK(n == mlen && memcmp(ct, msg, mlen) == 0);

    /* Key files round trip, with and without a password; hostile key bytes. */
    uint8_t der[512];
    shangmi_sm2_private_key *sk2 = NULL;
    OK(shangmi_sm2_private_key_to_der(sk, (const uint8_t *)"pw", 2, der, sizeof der, &n));
    OK(shangmi_sm2_private_key_from_der(der, n, (const uint8_t *)"pw", 2, &sk2));
    CHECK(shangmi_sm2_private_key_from_der(der, n, (const uint8_t *)"no", 2, &sk2) == SHANGMI_STATUS_ERR_INVALID_KEY);
    CHECK(shangmi_sm2_private_key_from_der(der, n, NULL, 0, &sk2) == SHANGMI_STATUS_ERR_INVALID_KEY);
    uint8_t a[32], b[32];
    OK(shangmi_sm2_private_key_to_bytes(sk, a));
    OK(shangmi_sm2_private_key_to_bytes(sk2, b));
    CHECK(memcmp(a, b, 32) == 0);
    shangmi_sm2_private_key_free(sk2);
    for (size_t cut = 0; cut < n; cut += 7) {
        shangmi_sm2_private_key *bad = NULL;
        CHECK(shangmi_sm2_private_key_from_der(der, cut, (const uint8_t *)"pw", 2, &bad) != SHANGMI_STATUS_OK);
    }
    uint8_t zero[32] = {0};
    CHECK(shangmi_sm2_private_key_from_bytes(zero, &sk2) == SHANGMI_STATUS_ERR_INVALID_KEY);
    uint8_t point[65] = {4};
    shangmi_sm2_public_key *badpk = NULL;
    CHECK(shangmi_sm2_public_key_from_bytes(point, 65, &badpk) == SHANGMI_STATUS_ERR_INVALID_KEY);
    CHECK(shangmi_sm2_public_key_from_pem((const uint8_t *)"junk", 4, &badpk) == SHANGMI_STATUS_ERR_INVALID_KEY);
    char ppem[400];
    OK(shangmi_sm2_public_key_to_pem(pk, (uint8_t *)ppem, sizeof ppem, &n));
    OK(shangmi_sm2_public_key_from_pem((const uint8_t *)ppem, n - 1, &badpk));
    shangmi_sm2_public_key_free(badpk);

    /* Key exchange between two handles. */
    shangmi_sm2_private_key *kb = NULL;
    shangmi_sm2_public_key *pb = NULL, *ra = NULL, *rb = NULL;
    shangmi_sm2_ephemeral *ea = NULL, *eb = NULL;
    shangmi_sm2_agreement *aa = NULL, *ab = NULL;
    OK(shangmi_sm2_private_key_generate(&kb));
    OK(shangmi_sm2_private_key_public_key(kb, &pb));
    OK(shangmi_sm2_ephemeral_generate(&ea));
    OK(shangmi_sm2_ephemeral_generate(&eb));
    OK(shangmi_sm2_ephemeral_public_key(ea, &ra));
    OK(shangmi_sm2_ephemeral_public_key(eb, &rb));
    OK(shangmi_sm2_key_exchange(sk, ea, SHANGMI_SM2_INITIATOR, NULL, 0, pb, NULL, 0, rb, 16, &aa));
    OK(shangmi_sm2_key_exchange(kb, eb, SHANGMI_SM2_RESPONDER, NULL, 0, pk, NULL, 0, ra, 16, &ab));
    CHECK(shangmi_sm2_key_exchange(sk, ea, SHANGMI_SM2_INITIATOR, NULL, 0, pb, NULL, 0, rb, 16, &aa) == SHANGMI_STATUS_ERR_STATE);
    uint8_t k1[16], k2[16], sa[32], sb[32];
    OK(shangmi_sm2_agreement_key(aa, k1, 16, &n));
    OK(shangmi_sm2_agreement_key(ab, k2, 16, &n));
    CHECK(memcmp(k1, k2, 16) == 0);
    OK(shangmi_sm2_agreement_confirmation(aa, sa));
    OK(shangmi_sm2_agreement_confirmation(ab, sb));
    OK(shangmi_sm2_agreement_verify_confirmation(aa, sb, 32));
    OK(shangmi_sm2_agreement_verify_confirmation(ab, sa, 32));
    CHECK(shangmi_sm2_agreement_verify_confirmation(ab, sb, 32) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    shangmi_sm2_agreement_free(aa);
    shangmi_sm2_agreement_free(ab);
    shangmi_sm2_ephemeral_free(ea);
    shangmi_sm2_ephemeral_free(eb);
    shangmi_sm2_public_key_free(ra);
    shangmi_sm2_public_key_free(rb);
    shangmi_sm2_public_key_free(pb);
    shangmi_sm2_private_key_free(kb);
    shangmi_sm2_public_key_free(pk);
    shangmi_sm2_private_key_free(sk);
    CHECK(shangmi_sm2_sign(NULL, NULL, 0, msg, mlen, SHANGMI_SIG_DER, sig, sizeof sig, &n) == SHANGMI_STATUS_ERR_NULL_POINTER);
}

int main(void) {
    printf("shangmi %s\n", shangmi_version());
    CHECK(strcmp(shangmi_status_str(SHANGMI_STATUS_OK), "success") == 0);
    CHECK(strcmp(shangmi_status_str(12345), "unknown status") == 0);
    test_sm3();
    test_sm4();
    test_sm2();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("C ABI: all checks passed\n");
    return 0;
}
