package rs.shangmi.jca;

import java.security.Provider;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code Shangmi} JCA provider: SM2, SM3 and SM4 on shangmi's native core, under the
 * names BouncyCastle and Tencent Kona use for them. Add it with
 * {@code Security.addProvider(new ShangmiProvider())}, list it in {@code java.security}
 * ({@code security.provider.N=rs.shangmi.jca.ShangmiProvider}), or let
 * {@code ServiceLoader.load(Provider.class)} find it.
 *
 * <p>Its EC services (KeyPairGenerator, KeyFactory, KeyAgreement ECDH, AlgorithmParameters)
 * are for the SM2 curve only: placed before SunEC, they would refuse other curves, so add it
 * after the JDK's providers unless everything it serves is SM.
 */
public final class ShangmiProvider extends Provider {
    private static final long serialVersionUID = 1L;
    /** The provider's name, for {@code getInstance(algorithm, "Shangmi")}. */
    public static final String NAME = "Shangmi";
    private static final String P = "rs.shangmi.jca.";
    private static volatile ShangmiProvider instance;

    @SuppressWarnings("deprecation")
    public ShangmiProvider() {
        super(NAME, 0.1, "shangmi: SM2, SM3 and SM4 on a native core (" + Native.version() + ")");
        register();
    }

    /** One instance, for the provider's own lookups. */
    static ShangmiProvider instance() {
        ShangmiProvider p = instance;
        if (p == null) {
            synchronized (ShangmiProvider.class) {
                if (instance == null) {
                    instance = new ShangmiProvider();
                }
                p = instance;
            }
        }
        return p;
    }

    private void add(String type, String algorithm, String className, List<String> aliases,
            Map<String, String> attributes) {
        putService(new Service(this, type, algorithm, P + className, aliases, attributes));
    }

    private void add(String type, String algorithm, String className, String... aliases) {
        add(type, algorithm, className, Arrays.asList(aliases), null);
    }

    private void register() {
        add("MessageDigest", "SM3", "Sm3Digest", "1.2.156.10197.1.401", "OID.1.2.156.10197.1.401",
                "1.2.156.197.1.401");
        add("Mac", "HmacSM3", "HmacSm3", "SM3HMac", "HMAC-SM3");
        add("Mac", "SM4-CMAC", "Sm4Macs$Cmac", "SM4CMAC");
        add("Mac", "SM4-GMAC", "Sm4Macs$Gmac", "SM4GMAC");
        add("KeyGenerator", "SM4", "SecretKeyGenerators$Sm4", "1.2.156.10197.1.104");
        add("KeyGenerator", "HmacSM3", "SecretKeyGenerators$Hmac", "HMACSM3");
        add("SecretKeyFactory", "PBKDF2WithHmacSM3", "Pbkdf2Sm3", "PBKDF2WITHHMACSM3");

        Map<String, String> sm4 = new HashMap<String, String>();
        sm4.put("SupportedModes", "ECB|CBC|CFB|CFB128|OFB|OFB128|CTR|SIC");
        sm4.put("SupportedPaddings", "NOPADDING|PKCS5PADDING|PKCS7PADDING");
        sm4.put("SupportedKeyFormats", "RAW");
        add("Cipher", "SM4", "Sm4Cipher", Collections.<String>emptyList(), sm4);
        add("Cipher", "SM4/GCM/NoPadding", "Sm4AeadCipher$Gcm", "SM4-GCM", "SM4/GCM", "1.2.156.10197.1.104.8",
                "OID.1.2.156.10197.1.104.8");
        add("Cipher", "SM4/CCM/NoPadding", "Sm4AeadCipher$Ccm", "SM4-CCM", "SM4/CCM", "1.2.156.10197.1.104.9",
                "OID.1.2.156.10197.1.104.9");
        add("AlgorithmParameters", "SM4", "Parameters$Sm4");
        add("AlgorithmParameters", "GCM", "Parameters$Aead$Gcm");
        add("AlgorithmParameters", "CCM", "Parameters$Aead$Ccm");

        Map<String, String> ecKeys = new HashMap<String, String>();
        ecKeys.put("SupportedKeyClasses", "java.security.interfaces.ECPublicKey|java.security.interfaces.ECPrivateKey");
        add("Signature", "SM3withSM2", "Sm2Signature",
                Arrays.asList("SM2", "SM3WITHSM2", "1.2.156.10197.1.501", "OID.1.2.156.10197.1.501"), ecKeys);
        add("Cipher", "SM2", "Sm2Cipher", Arrays.asList("SM2withSM3", "1.2.156.10197.1.301.3",
                "OID.1.2.156.10197.1.301.3"), ecKeys);
        add("KeyAgreement", "SM2", "Sm2KeyAgreement$Sm2", Collections.<String>emptyList(), ecKeys);
        add("KeyAgreement", "ECDH", "Sm2KeyAgreement$Ecdh", Collections.<String>emptyList(), ecKeys);
        add("KeyPairGenerator", "SM2", "Sm2KeyPairGenerator", "1.2.156.10197.1.301");
        add("KeyPairGenerator", "EC", "Sm2KeyPairGenerator");
        add("KeyFactory", "SM2", "Sm2KeyFactory", "1.2.156.10197.1.301");
        add("KeyFactory", "EC", "Sm2KeyFactory");
        add("AlgorithmParameters", "EC", "Parameters$Ec", "SM2");
    }
}
