/* A complete program against the installed C library:
 *   ./scripts/install-c.sh "$HOME/.local"
 *   cc example.c $(PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig" pkg-config --cflags --libs shangmi)
 * Hashes, seals and opens a message with SM4-GCM, and signs and verifies it with SM2. */
#include <stdio.h>
#include <string.h>

#include <shangmi.h>

int main(void) {
    const uint8_t msg[] = "hello, shangmi";
    size_t len = sizeof msg - 1, n = 0;

    uint8_t digest[32];
    if (shangmi_sm3(msg, len, digest) != SHANGMI_STATUS_OK) return 1;
    printf("sm3: ");
    for (int i = 0; i < 32; i++) printf("%02x", digest[i]);
    printf("\n");

    uint8_t key[16] = {1, 2, 3}, nonce[12] = {9};
    uint8_t sealed[64], opened[64];
    if (shangmi_sm4_gcm_seal(key, 16, nonce, 12, NULL, 0, msg, len, sealed, sizeof sealed, &n))
        return 1;
    shangmi_status s = shangmi_sm4_gcm_open(key, 16, nonce, 12, NULL, 0, sealed, n, opened,
                                            sizeof opened, &n);
    printf("sm4-gcm: %s, %zu bytes back\n", shangmi_status_str(s), n);

    shangmi_sm2_private_key *sk = NULL;
    shangmi_sm2_public_key *pk = NULL;
    uint8_t sig[72];
    size_t sig_len = 0;
    if (shangmi_sm2_private_key_generate(&sk) || shangmi_sm2_private_key_public_key(sk, &pk))
        return 1;
    if (shangmi_sm2_sign(sk, NULL, 0, msg, len, SHANGMI_SIG_DER, sig, sizeof sig, &sig_len))
        return 1;
    s = shangmi_sm2_verify(pk, NULL, 0, msg, len, sig, sig_len, SHANGMI_SIG_DER);
    printf("sm2 signature (%zu bytes): %s\n", sig_len, shangmi_status_str(s));
    shangmi_sm2_public_key_free(pk);
    shangmi_sm2_private_key_free(sk);
    return s == SHANGMI_STATUS_OK ? 0 : 1;
}
