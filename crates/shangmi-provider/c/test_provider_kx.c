/* The provider's ECDH on the SM2 curve and its SM2 ID rules, through the EVP API as libssl
 * drives them for RFC 8998: curveSM2 key shares made here, the peer's share set as an encoded
 * point on a parameters-only copy, the secret equal to the default provider's ECDH on the same
 * curve; hostile key shares, parameters of the wrong type and calls out of order refused with
 * the provider's reason on the error queue; SM2 signatures with no ID, the TLS 1.3 ID and an
 * explicit ID verified by the default provider. Built against OpenSSL 3.0 and 4.0 by
 * scripts/test-provider.sh, with AddressSanitizer.
 * Usage: test_provider_kx MODULE_DIR */
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

/* Whether the error queue holds a reason containing `text`; the queue is emptied. */
static int queued(const char *text) {
    unsigned long e;
    int found = 0;
    char buf[256];
    while ((e = ERR_get_error()) != 0) {
        ERR_error_string_n(e, buf, sizeof buf);
        if (strstr(buf, text) != NULL) found = 1;
    }
    return found;
}

static const char *provider_of(const EVP_PKEY *k) {
    return OSSL_PROVIDER_get0_name(EVP_PKEY_get0_provider(k));
}

/* A curveSM2 key share from the provider (as libssl makes one). */
static EVP_PKEY *share(void) {
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "curveSM2", "provider=shangmi");
    if (c != NULL && EVP_PKEY_keygen_init(c) > 0 && EVP_PKEY_CTX_set_group_name(c, "SM2") > 0)
        EVP_PKEY_keygen(c, &k);
    EVP_PKEY_CTX_free(c);
    return k;
}

/* The peer's share as libssl holds it: parameters copied from ours, then the point. */
static EVP_PKEY *peer_from(const EVP_PKEY *ours, const unsigned char *pt, size_t len) {
    EVP_PKEY *p = EVP_PKEY_new();
    if (p == NULL || EVP_PKEY_copy_parameters(p, ours) <= 0 ||
        EVP_PKEY_set1_encoded_public_key(p, pt, len) <= 0) {
        EVP_PKEY_free(p);
        return NULL;
    }
    return p;
}

static int derive(EVP_PKEY *own, EVP_PKEY *peer, unsigned char *out, size_t *len) {
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    int ok = c != NULL && EVP_PKEY_derive_init(c) > 0 && EVP_PKEY_derive_set_peer(c, peer) > 0 &&
             EVP_PKEY_derive(c, out, len) > 0;
    EVP_PKEY_CTX_free(c);
    return ok;
}

/* The default provider's EC key on the SM2 curve: the reference ECDH. */
static EVP_PKEY *reference_key(void) {
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", "provider=default");
    if (c != NULL && EVP_PKEY_keygen_init(c) > 0 && EVP_PKEY_CTX_set_group_name(c, "SM2") > 0)
        EVP_PKEY_keygen(c, &k);
    EVP_PKEY_CTX_free(c);
    return k;
}

static void key_exchange(void) {
    EVP_PKEY *ours = share(), *ref = reference_key();
    CHECK(ours != NULL && ref != NULL);
    if (ours == NULL || ref == NULL) return;
    CHECK(strcmp(provider_of(ours), "shangmi") == 0);

    unsigned char *our_pt = NULL, *ref_pt = NULL;
    size_t our_len = EVP_PKEY_get1_encoded_public_key(ours, &our_pt);
    size_t ref_len = EVP_PKEY_get1_encoded_public_key(ref, &ref_pt);
    CHECK(our_len == 65 && our_pt[0] == 4);
    CHECK(ref_len == 65);

    /* Ours with the reference's point, and the reference with ours: one secret. */
    EVP_PKEY *ref_as_peer = peer_from(ours, ref_pt, ref_len);
    CHECK(ref_as_peer != NULL);
    EVP_PKEY *ours_as_peer = EVP_PKEY_new();
    CHECK(EVP_PKEY_copy_parameters(ours_as_peer, ref) > 0 &&
          EVP_PKEY_set1_encoded_public_key(ours_as_peer, our_pt, our_len) > 0);
    unsigned char a[64], b[64];
    size_t alen = sizeof a, blen = sizeof b;
    CHECK(derive(ours, ref_as_peer, a, &alen));
    CHECK(derive(ref, ours_as_peer, b, &blen));
    CHECK(alen == 32 && blen == 32 && memcmp(a, b, 32) == 0);
    /* The key is not used up: a second derivation gives the same secret. */
    alen = sizeof a;
    CHECK(derive(ours, ref_as_peer, a, &alen) && memcmp(a, b, 32) == 0);

    /* The parameters-only copy holds no private key (copy_parameters must not leak it). */
    EVP_PKEY *params_only = EVP_PKEY_new();
    CHECK(EVP_PKEY_copy_parameters(params_only, ours) > 0);
    {
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, params_only, NULL);
        CHECK(c != NULL && EVP_PKEY_derive_init(c) <= 0);
        EVP_PKEY_CTX_free(c);
        ERR_clear_error();
        /* ... and as a peer it has no point. */
        c = EVP_PKEY_CTX_new_from_pkey(NULL, ours, NULL);
        CHECK(c != NULL && EVP_PKEY_derive_init(c) > 0);
        CHECK(EVP_PKEY_derive_set_peer(c, params_only) <= 0);
        ERR_clear_error();
        /* Deriving before any peer is set. */
        size_t n = sizeof a;
        CHECK(EVP_PKEY_derive(c, a, &n) <= 0);
        CHECK(queued("no peer public key"));
        /* An output too short for the secret. */
        CHECK(EVP_PKEY_derive_set_peer(c, ref_as_peer) > 0);
        n = 16;
        CHECK(EVP_PKEY_derive(c, a, &n) <= 0);
        ERR_clear_error();
        EVP_PKEY_CTX_free(c);
    }

    /* Hostile key shares: refused when set, with the reason. */
    unsigned char bad[65];
    memcpy(bad, ref_pt, 65);
    bad[64] ^= 1; /* off the curve */
    struct {
        const unsigned char *p;
        size_t len;
    } cases[] = {{bad, 65}, {ref_pt, 64}, {ref_pt, 33}, {(const unsigned char *)"\0", 1},
                 {ref_pt + 1, 64}};
    unsigned char compressed[33];
    compressed[0] = 2 | (ref_pt[64] & 1);
    memcpy(compressed + 1, ref_pt + 1, 32);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        EVP_PKEY *p = peer_from(ours, cases[i].p, cases[i].len);
        CHECK(p == NULL);
        CHECK(queued("key share is not a 65-byte uncompressed point"));
        EVP_PKEY_free(p);
    }
    EVP_PKEY *p = peer_from(ours, compressed, sizeof compressed);
    CHECK(p == NULL); /* TLS takes the uncompressed form only */
    ERR_clear_error();
    EVP_PKEY_free(p);

    /* A KDF asked of the exchange is refused, not silently skipped. */
    {
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, ours, NULL);
        OSSL_PARAM ps[] = {OSSL_PARAM_utf8_string("kdf-type", "X963KDF", 7), OSSL_PARAM_END};
        CHECK(c != NULL && EVP_PKEY_derive_init(c) > 0);
        CHECK(EVP_PKEY_CTX_set_params(c, ps) <= 0);
        ERR_clear_error();
        EVP_PKEY_CTX_free(c);
    }

    OPENSSL_free(our_pt);
    OPENSSL_free(ref_pt);
    EVP_PKEY_free(params_only);
    EVP_PKEY_free(ours_as_peer);
    EVP_PKEY_free(ref_as_peer);
    EVP_PKEY_free(ref);
    EVP_PKEY_free(ours);
}

/* Signs `msg` through the provider with `ps` given at init; verifies with the default
 * provider under `id` (NULL: no distid set there either). */
static int sign_then_verify(EVP_PKEY *k, const OSSL_PARAM *ps, const char *id) {
    unsigned char sig[80];
    size_t siglen = sizeof sig;
    static const unsigned char msg[] = "message";
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    int ok = EVP_DigestSignInit_ex(m, NULL, "SM3", NULL, "provider=shangmi", k, ps) > 0 &&
             EVP_DigestSign(m, sig, &siglen, msg, sizeof msg) > 0;
    EVP_MD_CTX_free(m);
    if (!ok) return 0;
    /* The ID goes on the verifier after its init: OpenSSL 3.0's default provider (up to at
     * least 3.0.19) drops a distid passed to EVP_DigestVerifyInit_ex itself. */
    EVP_PKEY_CTX *pctx = NULL;
    m = EVP_MD_CTX_new();
    ok = EVP_DigestVerifyInit_ex(m, &pctx, "SM3", NULL, "provider=default", k, NULL) > 0 &&
         (id == NULL || EVP_PKEY_CTX_set1_id(pctx, id, strlen(id)) > 0) &&
         EVP_DigestVerify(m, sig, siglen, msg, sizeof msg) == 1;
    EVP_MD_CTX_free(m);
    ERR_clear_error();
    return ok;
}

static void signature_ids(void) {
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, "provider=default", "SM2");
    CHECK(k != NULL);
    if (k == NULL) return;
    int version = 0x0304;
    OSSL_PARAM tls13[] = {OSSL_PARAM_int("tls-version", &version), OSSL_PARAM_END};
    OSSL_PARAM gmt[] = {OSSL_PARAM_octet_string("distid", "1234567812345678", 16),
                        OSSL_PARAM_END};
    /* No ID on either side: the running OpenSSL's default on both. */
    CHECK(sign_then_verify(k, NULL, NULL));
    /* OpenSSL 4 defaults to GM/T 0009's ID, 3.x to the empty one. */
    CHECK(sign_then_verify(k, NULL, OPENSSL_VERSION_MAJOR >= 4 ? "1234567812345678" : ""));
    CHECK(sign_then_verify(k, gmt, "1234567812345678"));
    CHECK(sign_then_verify(k, tls13, "TLSv1.3+GM+Cipher+Suite"));
    CHECK(!sign_then_verify(k, tls13, "1234567812345678"));
    /* Another TLS version leaves the ID alone. */
    version = 0x0303;
    CHECK(sign_then_verify(k, tls13, OPENSSL_VERSION_MAJOR >= 4 ? "1234567812345678" : ""));

    /* Parameters of the wrong type or size: refused with a reason, never a crash. */
    OSSL_PARAM wrong_version[] = {OSSL_PARAM_utf8_string("tls-version", "TLSv1.3", 7),
                                  OSSL_PARAM_END};
    OSSL_PARAM wrong_id[] = {OSSL_PARAM_utf8_string("distid", "1234567812345678", 16),
                             OSSL_PARAM_END};
    static char long_id[9000];
    memset(long_id, 'a', sizeof long_id);
    OSSL_PARAM too_long[] = {OSSL_PARAM_octet_string("distid", long_id, sizeof long_id),
                             OSSL_PARAM_END};
    OSSL_PARAM *bad[] = {wrong_version, wrong_id, too_long};
    for (size_t i = 0; i < 3; i++) {
        EVP_MD_CTX *m = EVP_MD_CTX_new();
        CHECK(EVP_DigestSignInit_ex(m, NULL, "SM3", NULL, "provider=shangmi", k, bad[i]) <= 0);
        CHECK(queued("invalid argument"));
        EVP_MD_CTX_free(m);
    }
    EVP_PKEY_free(k);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    OSSL_PROVIDER_set_default_search_path(NULL, argv[1]);
    OSSL_PROVIDER *ours = OSSL_PROVIDER_load(NULL, "shangmi");
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(NULL, "default");
    if (ours == NULL || dflt == NULL) {
        fprintf(stderr, "cannot load the providers\n");
        return 1;
    }
    key_exchange();
    signature_ids();

    /* The provider's own account: it made the share, derived and signed. */
    char served[512] = "";
    OSSL_PARAM q[] = {OSSL_PARAM_utf8_string("served", served, sizeof served), OSSL_PARAM_END};
    CHECK(OSSL_PROVIDER_get_params(ours, q) == 1);
    CHECK(strstr(served, "sm2-keygen=1 ") != NULL);
    CHECK(strstr(served, "sm2-derive=2 ") != NULL);
    CHECK(strstr(served, "sm2-sign=6 ") != NULL);

    OSSL_PROVIDER_unload(ours);
    OSSL_PROVIDER_unload(dflt);
    if (failures) {
        fprintf(stderr, "%d check(s) failed (OpenSSL %s)\n", failures, OPENSSL_VERSION_STR);
        return 1;
    }
    printf("provider key exchange and SM2 IDs: ok (OpenSSL %s)\n", OPENSSL_VERSION_STR);
    return 0;
}
