package rs.shangmi.bench;

import java.security.Provider;
import java.security.Security;

/** The providers side by side, by the names the benchmarks' {@code provider} parameter takes. */
final class Providers {
    private Providers() {}

    static Provider get(String name) {
        switch (name) {
            case "shangmi":
                return new rs.shangmi.jca.ShangmiProvider();
            case "bc":
                return new org.bouncycastle.jce.provider.BouncyCastleProvider();
            case "kona":
                return new com.tencent.kona.crypto.KonaCryptoProvider();
            case "kona-native":
                return new com.tencent.kona.crypto.KonaCryptoNativeProvider();
            case "accp":
                com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider accp =
                        com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider.INSTANCE;
                accp.assertHealthy();
                return accp;
            case "sunec":
            case "sunjce":
                Provider p = Security.getProvider(name.equals("sunec") ? "SunEC" : "SunJCE");
                if (p == null) {
                    throw new IllegalStateException("no " + name + " in this JDK");
                }
                return p;
            default:
                throw new IllegalArgumentException("no provider " + name);
        }
    }
}
