package rs.shangmi.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.Security;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.X509CertSelector;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.jcajce.util.JcaJceHelper;
import org.bouncycastle.jcajce.util.ProviderJcaJceHelper;
import org.bouncycastle.jsse.BCSSLEngine;
import org.bouncycastle.jsse.BCSSLParameters;
import org.bouncycastle.jsse.BCSSLSocket;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;
import rs.shangmi.jca.ShangmiProvider;

/**
 * RFC 8998 (TLS 1.3 with TLS_SM4_GCM_SM3, curveSM2 and sm2sig_sm3) in JSSE: BouncyCastle's JSSE
 * provider running its TLS on the Shangmi provider's crypto. What an application needs is
 * here: the providers, an SSLContext from PEM files, and the parameters that pick the SM
 * suite, group and signature scheme.
 */
public final class Rfc8998 {
    /** The JCA provider every SM operation of the handshake runs on. */
    public static final Provider SHANGMI = new ShangmiProvider();
    /**
     * What Shangmi does not do: parsing X.509 (the JDK's parser refuses the SM2 curve's OID
     * in a certificate's key) and keystores. BouncyCastle's, for those alone.
     */
    public static final Provider BC = new BouncyCastleProvider();
    /** BCJSSE with its crypto on {@link #SHANGMI}. */
    public static final Provider JSSE = new BouncyCastleJsseProvider(false, cryptoProvider());

    /**
     * BouncyCastle's JCA-based TLS crypto on Shangmi, the peer's certificates parsed by
     * BouncyCastle. Its nonces come from a SecureRandom of their own: BouncyCastle would
     * otherwise build them with SHA-512 from the provider, which an SM provider does not have.
     */
    public static JcaTlsCryptoProvider cryptoProvider() {
        return new JcaTlsCryptoProvider() {
            @Override
            public JcaTlsCrypto create(SecureRandom random) {
                return create(random, new SecureRandom());
            }

            @Override
            public JcaTlsCrypto create(SecureRandom keyRandom, SecureRandom nonceRandom) {
                return new JcaTlsCrypto(new ShangmiHelper(), new ProviderJcaJceHelper(BC), keyRandom, nonceRandom) {};
            }

            /** What BCJSSE's trust managers build paths with: BouncyCastle's PKIX, as the
             * JDK's cannot read an SM2 key; its signatures checked by Shangmi ({@link
             * #context}'s sigProvider). */
            @Override
            public JcaJceHelper getHelper() {
                return new ShangmiHelper();
            }
        };
    }

    /** Every algorithm from Shangmi; certificates, which it does not parse, from BouncyCastle. */
    private static final class ShangmiHelper extends ProviderJcaJceHelper {
        ShangmiHelper() {
            super(SHANGMI);
        }

        @Override
        public CertificateFactory createCertificateFactory(String type) throws CertificateException {
            return CertificateFactory.getInstance(type, BC);
        }
    }

    static {
        // Certificate chains are checked with the JCA's PKIX, which needs SM3withSM2 from an
        // installed provider; after the JDK's, so other algorithms keep their providers.
        if (Security.getProvider(ShangmiProvider.NAME) == null) {
            Security.addProvider(SHANGMI);
        }
    }

    private Rfc8998() {}

    /** The certificates of a PEM file. */
    public static List<X509Certificate> certificates(Path pem) throws IOException, GeneralSecurityException {
        CertificateFactory f = CertificateFactory.getInstance("X.509", BC);
        Collection<? extends Certificate> all = f.generateCertificates(Files.newInputStream(pem));
        List<X509Certificate> out = new ArrayList<X509Certificate>();
        for (Certificate c : all) {
            out.add((X509Certificate) c);
        }
        return out;
    }

    /** An SM2 private key from a PKCS#8 PEM file. */
    public static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
        String text = new String(Files.readAllBytes(pem), StandardCharsets.US_ASCII);
        String b64 = text.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("SM2", SHANGMI).generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(b64)));
    }

    /**
     * An SSLContext for RFC 8998: with {@code chain} and {@code key} as its certificate (a
     * server's, or a client's for servers that ask), trusting {@code roots}.
     */
    public static SSLContext context(List<X509Certificate> chain, PrivateKey key, List<X509Certificate> roots)
            throws GeneralSecurityException, IOException {
        return context(JSSE, SHANGMI.getName(), chain, key, roots);
    }

    /**
     * The same on another BCJSSE instance (another TLS crypto, as the benchmarks compare),
     * certificate signatures checked by the installed provider named {@code sigProvider} (null:
     * the certificate factory's own).
     */
    public static SSLContext context(Provider jsse, String sigProvider, List<X509Certificate> chain, PrivateKey key,
            List<X509Certificate> roots) throws GeneralSecurityException, IOException {
        KeyStore trust = KeyStore.getInstance("PKCS12", BC);
        trust.load(null, null);
        for (int i = 0; i < roots.size(); i++) {
            trust.setCertificateEntry("root" + i, roots.get(i));
        }
        PKIXBuilderParameters pkix = new PKIXBuilderParameters(trust, new X509CertSelector());
        // Certificates revoked are refused by CRLs the application adds (pkix.addCertStore);
        // none is fetched from the network.
        pkix.setRevocationEnabled(false);
        pkix.setSigProvider(sigProvider);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX", jsse);
        tmf.init(new CertPathTrustManagerParameters(pkix));
        KeyManager[] keys = key == null ? null : new KeyManager[] {new Sm2KeyManager(chain, key)};
        SSLContext ctx = SSLContext.getInstance("TLSv1.3", jsse);
        ctx.init(keys, tmf.getTrustManagers(), new SecureRandom());
        return ctx;
    }

    /**
     * Asks a BCJSSE socket for RFC 8998 alone: TLS 1.3, curveSM2, sm2sig_sm3 and the SM
     * suites ({@code suites}, or both, GCM first).
     */
    public static void configure(javax.net.ssl.SSLSocket socket, String... suites) {
        BCSSLSocket s = (BCSSLSocket) socket;
        s.setParameters(sm(s.getParameters(), suites));
    }

    /** The same for a BCJSSE engine. */
    public static void configure(javax.net.ssl.SSLEngine engine, String... suites) {
        BCSSLEngine e = (BCSSLEngine) engine;
        e.setParameters(sm(e.getParameters(), suites));
    }

    private static BCSSLParameters sm(BCSSLParameters p, String... suites) {
        p.setProtocols(new String[] {"TLSv1.3"});
        p.setCipherSuites(suites.length > 0 ? suites.clone() : new String[] {"TLS_SM4_GCM_SM3", "TLS_SM4_CCM_SM3"});
        p.setNamedGroups(new String[] {"curveSM2"});
        p.setSignatureSchemes(new String[] {"sm2sig_sm3"});
        return p;
    }
}
