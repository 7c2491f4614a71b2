package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;
import java.util.ServiceLoader;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.KeyGenerator;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import org.junit.jupiter.api.Test;

/** The provider as users find it: by ServiceLoader, by name, under every name BC and Kona use. */
class ProviderTest {
    static final Provider P = new ShangmiProvider();

    @Test
    void serviceLoaderFindsTheProvider() {
        boolean found = false;
        for (Provider p : ServiceLoader.load(Provider.class)) {
            found |= p.getName().equals("Shangmi");
        }
        assertTrue(found, "no META-INF/services entry");
        assertEquals("Shangmi", P.getName());
        assertTrue(P.getInfo().contains("shangmi 0.1.0 ("), P.getInfo());
    }

    @Test
    void everyNameResolves() throws Exception {
        for (String n : new String[] {"SM3", "1.2.156.10197.1.401", "OID.1.2.156.10197.1.401", "1.2.156.197.1.401"}) {
            assertNotNull(MessageDigest.getInstance(n, P));
        }
        for (String n : new String[] {"HmacSM3", "HMACSM3", "SM3HMac", "SM4-CMAC", "SM4-GMAC"}) {
            assertNotNull(Mac.getInstance(n, P));
        }
        for (String n : new String[] {"SM3withSM2", "SM3WITHSM2", "SM2", "1.2.156.10197.1.501", "OID.1.2.156.10197.1.501"}) {
            assertNotNull(Signature.getInstance(n, P));
        }
        for (String n : new String[] {"SM4", "SM4/ECB/PKCS5Padding", "SM4/ECB/PKCS7Padding", "SM4/CBC/PKCS5Padding",
            "SM4/CBC/NoPadding", "SM4/CTR/NoPadding", "SM4/CFB/NoPadding", "SM4/OFB/NoPadding", "SM4/GCM/NoPadding",
            "SM4/CCM/NoPadding", "SM4-GCM", "SM4-CCM", "SM2", "SM2withSM3", "SM2/C1C3C2/NoPadding",
            "SM2/C1C2C3/NoPadding", "SM2/ASN1/NoPadding"}) {
            assertNotNull(Cipher.getInstance(n, P), n);
        }
        for (String n : new String[] {"SM2", "EC"}) {
            assertNotNull(KeyPairGenerator.getInstance(n, P));
            assertNotNull(KeyFactory.getInstance(n, P));
        }
        assertNotNull(KeyAgreement.getInstance("SM2", P));
        assertNotNull(KeyAgreement.getInstance("ECDH", P));
        assertNotNull(KeyGenerator.getInstance("SM4", P));
        assertNotNull(KeyGenerator.getInstance("HmacSM3", P));
        assertNotNull(SecretKeyFactory.getInstance("PBKDF2WithHmacSM3", P));
    }

    @Test
    void addedLikeAnyProvider() throws Exception {
        Security.addProvider(new ShangmiProvider());
        MessageDigest d = MessageDigest.getInstance("SM3", "Shangmi");
        byte[] abc = d.digest("abc".getBytes("US-ASCII"));
        assertArrayEquals(Hexes.bytes("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"), abc);
    }
}
