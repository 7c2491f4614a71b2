package rs.shangmi.tls;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import org.bouncycastle.jsse.BCX509ExtendedKeyManager;
import org.bouncycastle.jsse.BCX509Key;

/**
 * One SM2 certificate chain and its key, offered when the handshake asks for an SM2 key.
 *
 * <p>A BouncyCastle key manager rather than a plain JSSE one: BCJSSE checks a plain key
 * manager's answer against its own table of TLS 1.3 key types, which has no entry for SM2
 * ("EC/sm2p256v1", what sm2sig_sm3 asks for), and so would refuse every SM2 certificate.
 */
final class Sm2KeyManager extends BCX509ExtendedKeyManager {
    private static final String ALIAS = "sm2";
    /** The key type BCJSSE names for sm2sig_sm3 in TLS 1.3. */
    static final String KEY_TYPE = "EC/sm2p256v1";

    private final X509Certificate[] chain;
    private final PrivateKey key;

    /** Refuses a chain whose leaf does not hold an SM2 key. */
    Sm2KeyManager(List<X509Certificate> chain, PrivateKey key) throws GeneralSecurityException {
        if (chain.isEmpty()) {
            throw new GeneralSecurityException("an empty certificate chain");
        }
        // Shangmi's key factory takes SM2 keys alone: a key on another curve fails here.
        KeyFactory.getInstance("SM2", Rfc8998.SHANGMI).translateKey(chain.get(0).getPublicKey());
        this.chain = chain.toArray(new X509Certificate[0]);
        this.key = key;
    }

    private static boolean asksForSm2(String keyType) {
        return KEY_TYPE.equals(keyType);
    }

    private static boolean asksForSm2(String[] keyTypes) {
        if (keyTypes != null) {
            for (String t : keyTypes) {
                if (asksForSm2(t)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    protected BCX509Key getKeyBC(final String keyType, String alias) {
        if (!ALIAS.equals(alias) || !asksForSm2(keyType)) {
            return null;
        }
        return new BCX509Key() {
            @Override
            public X509Certificate[] getCertificateChain() {
                return chain.clone();
            }

            @Override
            public String getKeyType() {
                return keyType;
            }

            @Override
            public PrivateKey getPrivateKey() {
                return key;
            }
        };
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return asksForSm2(keyType) ? new String[] {ALIAS} : null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return asksForSm2(keyType) ? ALIAS : null;
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return asksForSm2(keyType) ? new String[] {ALIAS} : null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return asksForSm2(keyType) ? ALIAS : null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return asksForSm2(keyType) ? ALIAS : null;
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return asksForSm2(keyType) ? ALIAS : null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return ALIAS.equals(alias) ? chain.clone() : null;
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return ALIAS.equals(alias) ? key : null;
    }
}
