/* Hostile input for every C function that sizes its output, built with
 * -fsanitize=address,undefined: NULLs, lengths near SIZE_MAX, buffers one byte short (heap
 * blocks of the exact size, so a write past them is caught), input and output the same or
 * overlapping, and tampered input. Each call must return an error code (never crash or write
 * past its buffer), and after any failure but ERR_BUFFER_TOO_SMALL leave *out_len 0 and no
 * output behind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shangmi.h"

static int failures = 0;
static const char *current = "";
#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d [%s]: CHECK failed: %s\n", __FILE__, __LINE__, current, \
                    #cond);                                                               \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static const uint8_t KEY[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t IV[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
static shangmi_sm2_private_key *SK;
static shangmi_sm2_public_key *PK;

/* One sized call: `in`/`len` to (out, cap, &n). */
typedef enum shangmi_status (*sized)(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
                                     size_t *n);

#define WRAP(name, call)                                                                     \
    static enum shangmi_status name(const uint8_t *in, size_t len, uint8_t *out, size_t cap, \
                                    size_t *n) {                                             \
        return call;                                                                         \
    }
WRAP(ecb_pad_enc, shangmi_sm4_ecb(KEY, 1, 1, in, len, out, cap, n))
WRAP(ecb_pad_dec, shangmi_sm4_ecb(KEY, 0, 1, in, len, out, cap, n))
WRAP(ecb_raw_enc, shangmi_sm4_ecb(KEY, 1, 0, in, len, out, cap, n))
WRAP(cbc_pad_enc, shangmi_sm4_cbc(KEY, IV, 1, 1, in, len, out, cap, n))
WRAP(cbc_pad_dec, shangmi_sm4_cbc(KEY, IV, 0, 1, in, len, out, cap, n))
WRAP(cfb_enc, shangmi_sm4_cfb(KEY, IV, 1, in, len, out, cap, n))
WRAP(ofb, shangmi_sm4_ofb(KEY, IV, in, len, out, cap, n))
WRAP(ctr, shangmi_sm4_ctr(KEY, IV, in, len, out, cap, n))
WRAP(xts_enc, shangmi_sm4_xts(KEY, SHANGMI_XTS_GB, 1, IV, in, len, out, cap, n))
WRAP(gcm_seal, shangmi_sm4_gcm_seal(KEY, 16, IV, 12, IV, 5, in, len, out, cap, n))
WRAP(gcm_open, shangmi_sm4_gcm_open(KEY, 16, IV, 12, IV, 5, in, len, out, cap, n))
WRAP(ccm_seal, shangmi_sm4_ccm_seal(KEY, 12, IV, 12, IV, 5, in, len, out, cap, n))
WRAP(ccm_open, shangmi_sm4_ccm_open(KEY, 12, IV, 12, IV, 5, in, len, out, cap, n))
WRAP(sm2_enc, shangmi_sm2_encrypt(PK, SHANGMI_SM2_C1C3C2, in, len, out, cap, n))
WRAP(sm2_dec, shangmi_sm2_decrypt(SK, SHANGMI_SM2_C1C3C2, in, len, out, cap, n))
WRAP(sm2_enc_asn1, shangmi_sm2_encrypt(PK, SHANGMI_SM2_ASN1, in, len, out, cap, n))
WRAP(sm2_dec_asn1, shangmi_sm2_decrypt(SK, SHANGMI_SM2_ASN1, in, len, out, cap, n))
WRAP(sm2_sign_raw, shangmi_sm2_sign(SK, NULL, 0, in, len, SHANGMI_SIG_RAW, out, cap, n))

struct op {
    const char *name;
    sized f;
    /* Makes valid input for `f` from `len` bytes of plaintext (an encryption of it for the
     * decrypting ops); NULL: the plaintext itself. */
    sized make;
    /* Whether a tampered input must fail authentication. */
    int authenticated;
    /* Whether the output may be written over its input (deterministic ops only). */
    int in_place;
};

static const struct op OPS[] = {
    {"ecb-pkcs7-enc", ecb_pad_enc, NULL, 0, 1},
    {"ecb-pkcs7-dec", ecb_pad_dec, ecb_pad_enc, 0, 1},
    {"ecb-enc", ecb_raw_enc, NULL, 0, 1},
    {"cbc-pkcs7-enc", cbc_pad_enc, NULL, 0, 1},
    {"cbc-pkcs7-dec", cbc_pad_dec, cbc_pad_enc, 0, 1},
    {"cfb-enc", cfb_enc, NULL, 0, 1},
    {"ofb", ofb, NULL, 0, 1},
    {"ctr", ctr, NULL, 0, 1},
    {"xts-enc", xts_enc, NULL, 0, 1},
    {"gcm-seal", gcm_seal, NULL, 0, 1},
    {"gcm-open", gcm_open, gcm_seal, 1, 1},
    {"ccm-seal", ccm_seal, NULL, 0, 1},
    {"ccm-open", ccm_open, ccm_seal, 1, 1},
    {"sm2-encrypt", sm2_enc, NULL, 0, 0},
    {"sm2-decrypt", sm2_dec, sm2_enc, 1, 0},
    {"sm2-decrypt-asn1", sm2_dec_asn1, sm2_enc_asn1, 1, 0},
    {"sm2-sign", sm2_sign_raw, NULL, 0, 0},
};

/* A heap block of exactly `n` bytes (at least 1, so the pointer is real), filled with 0xEE. */
static uint8_t *block(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    if (!p) abort();
    memset(p, 0xEE, n ? n : 1);
    return p;
}

static int untouched(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xEE) return 0;
    return 1;
}

static int zeroed(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0) return 0;
    return 1;
}

/* Valid input of about `len` bytes for `op`, in a fresh block; its length in *in_len. */
static uint8_t *valid_input(const struct op *op, size_t len, size_t *in_len) {
    uint8_t *pt = block(len);
    for (size_t i = 0; i < len; i++) pt[i] = (uint8_t)(i * 7 + 3);
    if (!op->make) {
        *in_len = len;
        return pt;
    }
    size_t need = 0;
    op->make(pt, len, NULL, 0, &need);
    uint8_t *ct = block(need);
    CHECK(op->make(pt, len, ct, need, in_len) == SHANGMI_STATUS_OK);
    free(pt);
    return ct;
}

static void hostile(const struct op *op) {
    current = op->name;
    size_t lens[] = {0, 1, 15, 16, 17, 32, 100};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t len = lens[li], in_len = 0;
        if (op->f == xts_enc && len < 16) continue;
        if (op->f == ecb_raw_enc && len % 16) continue;
        uint8_t *in = valid_input(op, len, &in_len);
        size_t need = 12345;
        enum shangmi_status q = op->f(in, in_len, NULL, 0, &need);
        CHECK(q == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL || (q == SHANGMI_STATUS_OK && need == 0));

        /* Exactly the size asked for: success, nothing written past it (ASan). */
        uint8_t *out = block(need);
        size_t n = 999;
        CHECK(op->f(in, in_len, out, need, &n) == SHANGMI_STATUS_OK);
        CHECK(n <= need);
        uint8_t *first = block(n);
        memcpy(first, out, n);

        /* One byte short: refused, untouched, the size reported again. */
        if (need > 0) {
            uint8_t *shorter = block(need - 1);
            n = 999;
            CHECK(op->f(in, in_len, shorter, need - 1, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
            CHECK(n == need && untouched(shorter, need - 1));
            free(shorter);
        }

        /* In place: the same bytes as into a separate buffer. */
        if (op->in_place && need >= in_len) {
            uint8_t *both = block(need);
            memcpy(both, in, in_len);
            CHECK(op->f(both, in_len, both, need, &n) == SHANGMI_STATUS_OK);
            CHECK(memcmp(both, first, n) == 0);
            free(both);
        }

        /* Tampered: an authentication error, *out_len 0, no plaintext left: the output is
         * zeroed where decryption had begun in it, untouched where it had not. */
        if (op->authenticated && in_len > 0) {
            uint8_t *bad = block(in_len);
            memcpy(bad, in, in_len);
            bad[in_len - 1] ^= 0x01;
            memset(out, 0xEE, need);
            n = 999;
            enum shangmi_status st = op->f(bad, in_len, out, need, &n);
            CHECK(st == SHANGMI_STATUS_ERR_AUTHENTICATION || st == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
            CHECK(n == 0 && (zeroed(out, need) || untouched(out, need)));
            free(bad);
        }

        /* NULLs: an error, never a crash. */
        n = 999;
        if (in_len > 0) {
            CHECK(op->f(NULL, in_len, out, need, &n) != SHANGMI_STATUS_OK && n == 0);
        }
        CHECK(op->f(in, in_len, out, need, NULL) == SHANGMI_STATUS_ERR_NULL_POINTER);
        free(first);
        free(out);
        free(in);
    }

    /* Lengths no object has (over PTRDIFF_MAX, or over what the output can take): an error,
     * nothing read or written. */
    const size_t huge[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 15, SIZE_MAX - 16, SIZE_MAX / 2 + 1};
    uint8_t small_in[64] = {0}, *out = block(64);
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        size_t n = 999;
        enum shangmi_status st = op->f(small_in, huge[i], out, 64, &n);
        CHECK(st != SHANGMI_STATUS_OK);
        CHECK(st == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL || n == 0);
        CHECK(untouched(out, 64));
        st = op->f(small_in, huge[i], NULL, 0, &n);
        CHECK(st != SHANGMI_STATUS_OK);
    }
    free(out);
}

/* The stream: every boundary of `update` and `final` under the same rules, and overlapping
 * input and output. */
static void hostile_stream(void) {
    current = "stream";
    int modes[] = {SHANGMI_SM4_ECB, SHANGMI_SM4_CBC, SHANGMI_SM4_CFB, SHANGMI_SM4_OFB,
                   SHANGMI_SM4_CTR};
    for (size_t m = 0; m < 5; m++) {
        for (int pad = 0; pad <= 1; pad++) {
            shangmi_sm4_stream *s = NULL;
            enum shangmi_status st = shangmi_sm4_stream_new(modes[m], KEY, IV, 1, pad, &s);
            if (pad && modes[m] != SHANGMI_SM4_ECB && modes[m] != SHANGMI_SM4_CBC) {
                CHECK(st == SHANGMI_STATUS_ERR_INVALID_ARGUMENT && s == NULL);
                continue;
            }
            CHECK(st == SHANGMI_STATUS_OK);
            shangmi_sm4_stream *twin = NULL;
            CHECK(shangmi_sm4_stream_dup(s, &twin) == SHANGMI_STATUS_OK);
            uint8_t buf[96], ref[96];
            for (size_t i = 0; i < sizeof buf; i++) buf[i] = ref[i] = (uint8_t)i;
            size_t n = 999, m1 = 0, m2 = 0;
            /* Huge lengths: refused, the stream unchanged. */
            CHECK(shangmi_sm4_stream_update(s, buf, SIZE_MAX, buf, sizeof buf, &n) != SHANGMI_STATUS_OK);
            CHECK(shangmi_sm4_stream_update(s, buf, SIZE_MAX - 20, NULL, 0, &n) != SHANGMI_STATUS_OK);
            CHECK(shangmi_sm4_stream_update(s, NULL, 5, buf, sizeof buf, &n) != SHANGMI_STATUS_OK && n == 0);
            CHECK(shangmi_sm4_stream_update(s, buf, 5, buf, sizeof buf, NULL) == SHANGMI_STATUS_ERR_NULL_POINTER);
            /* Overlapping by a few bytes (the output 3 bytes ahead of the input): the same
             * bytes as the twin writes into a separate buffer. */
            uint8_t sep[96];
            CHECK(shangmi_sm4_stream_update(twin, ref + 3, 80, sep, sizeof sep, &m2) == SHANGMI_STATUS_OK);
            CHECK(shangmi_sm4_stream_update(s, buf + 3, 80, buf, sizeof buf, &m1) == SHANGMI_STATUS_OK);
            CHECK(m1 == m2 && memcmp(buf, sep, m1) == 0);
            /* Final: one byte short refused and retryable. */
            size_t fn = 0;
            CHECK(shangmi_sm4_stream_final(s, NULL, 0, &fn) ==
                  (pad ? SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL : SHANGMI_STATUS_OK));
            if (pad) {
                uint8_t *last = block(fn - 1);
                CHECK(shangmi_sm4_stream_final(s, last, fn - 1, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
                free(last);
                uint8_t *exact = block(fn);
                CHECK(shangmi_sm4_stream_final(s, exact, fn, &n) == SHANGMI_STATUS_OK && n == 16);
                free(exact);
            }
            CHECK(shangmi_sm4_stream_final(s, buf, sizeof buf, &n) == SHANGMI_STATUS_ERR_STATE && n == 0);
            CHECK(shangmi_sm4_stream_update(s, buf, 1, buf, sizeof buf, &n) == SHANGMI_STATUS_ERR_STATE);
            shangmi_sm4_stream_free(s);
            shangmi_sm4_stream_free(twin);
        }
    }
    CHECK(shangmi_sm4_stream_update(NULL, IV, 1, NULL, 0, NULL) == SHANGMI_STATUS_ERR_NULL_POINTER);
    CHECK(shangmi_sm4_stream_new(SHANGMI_SM4_CBC, KEY, NULL, 1, 0, NULL) != SHANGMI_STATUS_OK);

    /* Decrypting with bad padding: final fails with nothing written and *out_len 0. */
    uint8_t ct[32];
    size_t n = 0;
    CHECK(shangmi_sm4_cbc(KEY, IV, 1, 0, IV, 16, ct, sizeof ct, &n) == SHANGMI_STATUS_OK);
    shangmi_sm4_stream *d = NULL;
    CHECK(shangmi_sm4_stream_new(SHANGMI_SM4_CBC, KEY, IV, 0, 1, &d) == SHANGMI_STATUS_OK);
    uint8_t pt[32];
    CHECK(shangmi_sm4_stream_update(d, ct, 16, pt, sizeof pt, &n) == SHANGMI_STATUS_OK && n == 0);
    memset(pt, 0xEE, sizeof pt);
    n = 999;
    CHECK(shangmi_sm4_stream_final(d, pt, sizeof pt, &n) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(n == 0 && zeroed(pt, 15));
    shangmi_sm4_stream_free(d);
}

/* The fixed-size and self-overlapping functions: HMAC and PBKDF2 with the output over their
 * own inputs, SIZE_MAX-class key lengths for the KDFs. */
static void hostile_fixed(void) {
    current = "sm3";
    uint8_t buf[64], want[32];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)i;
    CHECK(shangmi_hmac_sm3(buf, 32, buf + 16, 40, want) == SHANGMI_STATUS_OK);
    CHECK(shangmi_hmac_sm3(buf, 32, buf + 16, 40, buf + 8) == SHANGMI_STATUS_OK);
    CHECK(memcmp(buf + 8, want, 32) == 0);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)i;
    CHECK(shangmi_pbkdf2_sm3(buf, 20, buf + 20, 16, 10, want, 32) == SHANGMI_STATUS_OK);
    CHECK(shangmi_pbkdf2_sm3(buf, 20, buf + 20, 16, 10, buf + 4, 32) == SHANGMI_STATUS_OK);
    CHECK(memcmp(buf + 4, want, 32) == 0);
    CHECK(shangmi_pbkdf2_sm3(buf, 20, buf, 16, 10, buf, SIZE_MAX) != SHANGMI_STATUS_OK);
    CHECK(shangmi_sm3_kdf(buf, 20, buf, SIZE_MAX) != SHANGMI_STATUS_OK);
    CHECK(shangmi_hmac_sm3(NULL, 5, buf, 5, want) == SHANGMI_STATUS_ERR_NULL_POINTER);
    CHECK(shangmi_sm4_cmac(KEY, buf, SIZE_MAX, NULL) != SHANGMI_STATUS_OK);
    /* A seal refused after the plaintext was moved into the output leaves none of it there. */
    current = "aead-seal";
    size_t n = 999;
    uint8_t msg[32], o[48];
    memset(msg, 'S', sizeof msg);
    memset(o, 0xEE, sizeof o);
    CHECK(shangmi_sm4_gcm_seal(KEY, 16, IV, 0, NULL, 0, msg, 32, o, 48, &n) != SHANGMI_STATUS_OK);
    CHECK(n == 0 && (zeroed(o, 48) || untouched(o, 48)));
    size_t big = 70000; /* over CCM's limit for a 13-byte nonce (2-byte length field) */
    uint8_t *bm = block(big), *bo = block(big + 16);
    memset(bm, 'S', big);
    n = 999;
    CHECK(shangmi_sm4_ccm_seal(KEY, 16, IV, 13, NULL, 0, bm, big, bo, big + 16, &n) != SHANGMI_STATUS_OK);
    CHECK(n == 0 && memchr(bo, 'S', big + 16) == NULL);
    free(bm);
    free(bo);
    current = "sm2-keys";
    n = 999;
    CHECK(shangmi_sm2_public_key_to_bytes(PK, 0, buf, 64, &n) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL && n == 65);
    CHECK(shangmi_sm2_public_key_to_bytes(NULL, 0, buf, 64, &n) == SHANGMI_STATUS_ERR_NULL_POINTER && n == 0);
}

int main(void) {
    if (shangmi_sm2_private_key_generate(&SK) != SHANGMI_STATUS_OK ||
        shangmi_sm2_private_key_public_key(SK, &PK) != SHANGMI_STATUS_OK)
        return 2;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) hostile(&OPS[i]);
    hostile_stream();
    hostile_fixed();
    shangmi_sm2_public_key_free(PK);
    shangmi_sm2_private_key_free(SK);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("C ABI hostile input: all checks passed\n");
    return 0;
}
