/* Certificates and CMS from C, built with -fsanitize=address,undefined: chains from the real
 * certificates of crates/shangmi-pki/tests/vectors/x509 verify or fail, SignedData,
 * EnvelopedData and SignedAndEnvelopedData round trip and refuse tampering or the wrong key,
 * PKCS#12 keystores are written, read back and read from OpenSSL 4.0's, and hostile calls (NULLs,
 * SIZE_MAX lengths, buffers one byte short) return an error without writing past a buffer.
 * Run from the repository root. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shangmi.h"

static int failures = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)
#define OK(call) CHECK((call) == SHANGMI_STATUS_OK)

#define DIR "crates/shangmi-pki/tests/vectors/x509/"
#define GMCERT_TIME 1677154833u /* inside the www.gmcert.org certificates' validity */

static uint8_t *slurp(const char *name, size_t *len) {
    FILE *f = fopen(name, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", name);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) exit(2);
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* A heap block of exactly n bytes, so a write past it is caught. */
static uint8_t *block(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    if (!p) abort();
    memset(p, 0xEE, n ? n : 1);
    return p;
}

int main(void) {
    size_t rl, sl, ll, el, ol, cl, kl;
    uint8_t *root = slurp(DIR "tongsuo-tlcp-root.pem", &rl);
    uint8_t *sub = slurp(DIR "tongsuo-tlcp-subca.pem", &sl);
    uint8_t *leaf = slurp(DIR "tongsuo-tlcp-server-sign.pem", &ll);
    uint8_t *expired = slurp(DIR "tongsuo-tlcp-server-sign-expired.pem", &el);
    uint8_t *other = slurp(DIR "gotlcp-test-ca.pem", &ol);
    uint8_t *cert = slurp(DIR "gmcert-sign.pem", &cl);
    uint8_t *keypem = slurp(DIR "gmcert-sign-key.p8.pem", &kl);

    /* Chains. */
    OK(shangmi_x509_verify(leaf, ll, root, rl, sub, sl, NULL, 0, NULL, 0, 0));
    CHECK(shangmi_x509_verify(expired, el, root, rl, sub, sl, NULL, 0, NULL, 0, 0) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_x509_verify(leaf, ll, root, rl, NULL, 0, NULL, 0, NULL, 0, 0) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_x509_verify(leaf, ll, other, ol, sub, sl, NULL, 0, NULL, 0, 0) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_x509_verify(leaf, ll, root, rl, sub, sl, NULL, 0, (const uint8_t *)"", 0, 0) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_x509_verify((const uint8_t *)"junk", 4, root, rl, NULL, 0, NULL, 0, NULL, 0, 0) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
    CHECK(shangmi_x509_verify(NULL, 5, root, rl, NULL, 0, NULL, 0, NULL, 0, 0) == SHANGMI_STATUS_ERR_NULL_POINTER);
    CHECK(shangmi_x509_verify(leaf, SIZE_MAX, root, rl, NULL, 0, NULL, 0, NULL, 0, 0) != SHANGMI_STATUS_OK);

    /* SignedData: size query, exact buffer, one byte short, verify, tamper. */
    shangmi_sm2_private_key *key = NULL;
    OK(shangmi_sm2_private_key_from_pem(keypem, kl, NULL, 0, &key));
    const uint8_t msg[] = "a contract between two parties";
    size_t need = 0, n = 0;
    CHECK(shangmi_cms_sign(msg, sizeof msg, cert, cl, key, 0, 1, NULL, 0, &need) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    uint8_t *p7 = block(need);
    OK(shangmi_cms_sign(msg, sizeof msg, cert, cl, key, 0, 1, p7, need, &n));
    CHECK(n <= need);
    uint8_t *shortbuf = block(10);
    size_t m = 999;
    CHECK(shangmi_cms_sign(msg, sizeof msg, cert, cl, key, 0, 1, shortbuf, 10, &m) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL && m > 10);
    size_t vneed = 0;
    CHECK(shangmi_cms_verify(p7, n, other, ol, NULL, 0, GMCERT_TIME, NULL, 0, &vneed) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(vneed == sizeof msg);
    uint8_t *content = block(vneed), *less = block(vneed - 1);
    size_t got = 0;
    OK(shangmi_cms_verify(p7, n, other, ol, NULL, 0, GMCERT_TIME, content, vneed, &got));
    CHECK(got == sizeof msg && memcmp(content, msg, got) == 0);
    CHECK(shangmi_cms_verify(p7, n, other, ol, NULL, 0, GMCERT_TIME, less, vneed - 1, &got) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    /* Today the signer has expired; another anchor; a flipped byte. */
    got = 999;
    CHECK(shangmi_cms_verify(p7, n, other, ol, NULL, 0, 0, content, vneed, &got) == SHANGMI_STATUS_ERR_AUTHENTICATION && got == 0);
    CHECK(shangmi_cms_verify(p7, n, root, rl, NULL, 0, GMCERT_TIME, content, vneed, &got) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    for (size_t i = 0; i < n; i += 5) {
        p7[i] ^= 0x01;
        uint8_t out[64];
        size_t o = 999;
        shangmi_status st = shangmi_cms_verify(p7, n, other, ol, NULL, 0, GMCERT_TIME, out, sizeof out, &o);
        CHECK(st != SHANGMI_STATUS_OK || (o == sizeof msg && memcmp(out, msg, o) == 0));
        p7[i] ^= 0x01;
    }
    /* Detached: the content given beside it; another content refused. */
    uint8_t det[2048];
    size_t dn = 0;
    OK(shangmi_cms_sign(msg, sizeof msg, cert, cl, key, 1, 0, det, sizeof det, &dn));
    OK(shangmi_cms_verify(det, dn, other, ol, msg, sizeof msg, GMCERT_TIME, content, vneed, &got));
    CHECK(shangmi_cms_verify(det, dn, other, ol, msg, sizeof msg - 1, GMCERT_TIME, content, vneed, &got) == SHANGMI_STATUS_ERR_AUTHENTICATION);

    /* EnvelopedData: to the certificate, opened with its key, refused for another key. */
    uint8_t env[2048], plain[256];
    size_t en = 0, pn = 0;
    OK(shangmi_cms_encrypt(msg, sizeof msg, cert, cl, 1, env, sizeof env, &en));
    OK(shangmi_cms_decrypt(env, en, key, cert, cl, plain, sizeof plain, &pn));
    CHECK(pn == sizeof msg && memcmp(plain, msg, pn) == 0);
    OK(shangmi_cms_decrypt(env, en, key, NULL, 0, plain, sizeof plain, &pn));
    shangmi_sm2_private_key *stranger = NULL;
    OK(shangmi_sm2_private_key_generate(&stranger));
    memset(plain, 0xEE, sizeof plain);
    pn = 999;
    CHECK(shangmi_cms_decrypt(env, en, stranger, NULL, 0, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(pn == 0 && plain[0] == 0xEE);
    uint8_t *tight = block(sizeof msg - 1);
    CHECK(shangmi_cms_decrypt(env, en, key, NULL, 0, tight, sizeof msg - 1, &pn) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL && pn == sizeof msg);
    CHECK(shangmi_cms_encrypt(msg, sizeof msg, NULL, 0, 0, env, sizeof env, &en) == SHANGMI_STATUS_ERR_NULL_POINTER && en == 0);
    /* Every envelope option opens; an unknown option bit is refused. */
    const int forms[] = {0, SHANGMI_CMS_SM4_GCM, SHANGMI_CMS_GM | SHANGMI_CMS_SM4_GCM,
                         SHANGMI_CMS_CFCA | SHANGMI_CMS_BY_KEY_ID, SHANGMI_CMS_CFCA | SHANGMI_CMS_SM4_GCM,
                         SHANGMI_CMS_GMSSL};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        OK(shangmi_cms_encrypt(msg, sizeof msg, cert, cl, forms[i], env, sizeof env, &en));
        OK(shangmi_cms_decrypt(env, en, key, cert, cl, plain, sizeof plain, &pn));
        CHECK(pn == sizeof msg && memcmp(plain, msg, pn) == 0);
        CHECK(shangmi_cms_decrypt(env, en, stranger, NULL, 0, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    }
    CHECK(shangmi_cms_encrypt(msg, sizeof msg, cert, cl, 32, env, sizeof env, &en) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT && en == 0);
    CHECK(shangmi_cms_encrypt(msg, sizeof msg, cert, cl, SHANGMI_CMS_GMSSL | SHANGMI_CMS_CFCA, env, sizeof env, &en) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
    CHECK(shangmi_cms_decrypt(env, SIZE_MAX, key, NULL, 0, plain, sizeof plain, &pn) != SHANGMI_STATUS_OK && pn == 0);
    CHECK(shangmi_cms_decrypt((const uint8_t *)"junk", 4, key, NULL, 0, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);

    /* SignedAndEnvelopedData: signed by the certificate's key, to the same certificate;
     * opened only with the key and the anchor, nothing written otherwise. */
    uint8_t sed[4096];
    size_t sn = 0, sneed = 0;
    CHECK(shangmi_cms_sign_encrypt(msg, sizeof msg, cert, cl, key, cert, cl, 1, NULL, 0, &sneed) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    OK(shangmi_cms_sign_encrypt(msg, sizeof msg, cert, cl, key, cert, cl, 1, sed, sizeof sed, &sn));
    CHECK(sn <= sneed);
    OK(shangmi_cms_decrypt_verify(sed, sn, key, other, ol, GMCERT_TIME, plain, sizeof plain, &pn));
    CHECK(pn == sizeof msg && memcmp(plain, msg, pn) == 0);
    memset(plain, 0xEE, sizeof plain);
    pn = 999;
    CHECK(shangmi_cms_decrypt_verify(sed, sn, key, root, rl, GMCERT_TIME, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(pn == 0 && plain[0] == 0xEE);
    CHECK(shangmi_cms_decrypt_verify(sed, sn, stranger, other, ol, GMCERT_TIME, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(shangmi_cms_sign_encrypt(msg, sizeof msg, cert, cl, key, NULL, 0, 1, sed, sizeof sed, &sn) == SHANGMI_STATUS_ERR_NULL_POINTER);
    /* The CA key delivery of the corpus is signed with the CA's certificate-signing key:
     * refused (key usage), with nothing written. */
    size_t dl = 0;
    uint8_t *delivery = slurp(DIR "gmcert-signed-enveloped-enckey.p7.pem", &dl);
    memset(plain, 0xEE, sizeof plain);
    pn = 999;
    CHECK(shangmi_cms_decrypt_verify(delivery, dl, key, other, ol, 0, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(pn == 0 && plain[0] == 0xEE);
    /* Allowed: 32 zero bytes, then the delivered key; an unknown option bit is refused. */
    OK(shangmi_cms_decrypt_verify_opts(delivery, dl, key, other, ol, 0, SHANGMI_CMS_ALLOW_CA_SIGNER, plain, sizeof plain, &pn));
    CHECK(pn == 64 && plain[0] == 0 && plain[31] == 0 && plain[32] == 0xca);
    CHECK(shangmi_cms_decrypt_verify_opts(delivery, dl, key, other, ol, 0, 64, plain, sizeof plain, &pn) == SHANGMI_STATUS_ERR_INVALID_ARGUMENT);
    free(delivery);

    /* PKCS#12: written (size query, exact buffer), read back to the same key and chain; a
     * wrong password, a flipped byte or a chain buffer one byte short return no key. */
    const uint8_t pw[] = "correct horse";
    size_t pneed = 0, plen = 0;
    CHECK(shangmi_pkcs12_write(key, cert, cl, pw, sizeof pw - 1, "signer", 0, NULL, 0, &pneed) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    uint8_t *p12 = block(pneed);
    OK(shangmi_pkcs12_write(key, cert, cl, pw, sizeof pw - 1, "signer", 0, p12, pneed, &plen));
    CHECK(plen == pneed);
    shangmi_sm2_private_key *back = NULL;
    size_t cneed = 0, clen = 0;
    CHECK(shangmi_pkcs12_read(p12, plen, pw, sizeof pw - 1, &back, NULL, 0, &cneed) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(back == NULL && cneed > 1);
    uint8_t *chain = block(cneed);
    CHECK(shangmi_pkcs12_read(p12, plen, pw, sizeof pw - 1, &back, chain, cneed - 1, &clen) == SHANGMI_STATUS_ERR_BUFFER_TOO_SMALL);
    CHECK(back == NULL);
    OK(shangmi_pkcs12_read(p12, plen, pw, sizeof pw - 1, &back, chain, cneed, &clen));
    CHECK(back != NULL && clen == cneed && chain[clen - 1] == 0);
    CHECK(strstr((const char *)chain, "-----BEGIN CERTIFICATE-----") != NULL);
    uint8_t d1[32], d2[32];
    OK(shangmi_sm2_private_key_to_bytes(key, d1));
    if (back) {
        OK(shangmi_sm2_private_key_to_bytes(back, d2));
        CHECK(memcmp(d1, d2, 32) == 0);
        /* The certificate read back chains as the one written does (the CMS checks above). */
        OK(shangmi_x509_verify(chain, clen - 1, other, ol, NULL, 0, NULL, 0, NULL, 0, GMCERT_TIME));
    }
    shangmi_sm2_private_key_free(back);
    back = NULL;
    CHECK(shangmi_pkcs12_read(p12, plen, (const uint8_t *)"wrong", 5, &back, chain, cneed, &clen) == SHANGMI_STATUS_ERR_AUTHENTICATION);
    CHECK(back == NULL && clen == 0);
    p12[plen / 2] ^= 0x01;
    CHECK(shangmi_pkcs12_read(p12, plen, pw, sizeof pw - 1, &back, chain, cneed, &clen) != SHANGMI_STATUS_OK);
    CHECK(back == NULL && clen == 0);
    CHECK(shangmi_pkcs12_read(p12, SIZE_MAX, pw, sizeof pw - 1, &back, chain, cneed, &clen) != SHANGMI_STATUS_OK);
    CHECK(shangmi_pkcs12_read(p12, plen, pw, sizeof pw - 1, NULL, chain, cneed, &clen) == SHANGMI_STATUS_ERR_NULL_POINTER);
    /* The compatible parameters; and a keystore OpenSSL 4.0 wrote with SM4-CBC and an SM3 MAC. */
    uint8_t big[8192];
    OK(shangmi_pkcs12_write(key, cert, cl, pw, sizeof pw - 1, NULL, 1, big, sizeof big, &plen));
    OK(shangmi_pkcs12_read(big, plen, pw, sizeof pw - 1, &back, chain, cneed, &clen));
    shangmi_sm2_private_key_free(back);
    back = NULL;
    size_t theirs_len = 0;
    uint8_t *theirs = slurp("fuzz/seeds/pki_parsers/openssl4-sm.p12", &theirs_len);
    uint8_t theirs_chain[8192];
    OK(shangmi_pkcs12_read(theirs, theirs_len, (const uint8_t *)"fuzz", 4, &back, theirs_chain, sizeof theirs_chain, &clen));
    CHECK(back != NULL && clen > 1);
    shangmi_sm2_private_key_free(back);
    free(theirs), free(p12), free(chain);

    shangmi_sm2_private_key_free(key);
    shangmi_sm2_private_key_free(stranger);
    free(root), free(sub), free(leaf), free(expired), free(other), free(cert), free(keypem);
    free(p7), free(shortbuf), free(content), free(less), free(tight);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("C ABI certificates, CMS and PKCS#12: all checks passed\n");
    return 0;
}
