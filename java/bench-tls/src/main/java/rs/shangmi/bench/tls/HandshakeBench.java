package rs.shangmi.bench.tls;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import rs.shangmi.tls.Rfc8998;

/**
 * RFC 8998 full handshakes (TLS_SM4_GCM_SM3, curveSM2, sm2sig_sm3, a one-certificate chain
 * under a root) between two BCJSSE engines in memory, one thread, with BCJSSE's crypto on
 * Shangmi or on BouncyCastle. The score is handshakes per second, both sides together;
 * the counters time the client's and the server's engine calls apart, so each side's cost
 * per handshake is {@code clientNanos / handshakes} and {@code serverNanos / handshakes}.
 * Each handshake is on new engines without a peer address, so none resumes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class HandshakeBench {
    @Param({"shangmi", "bc"})
    public String crypto;

    private SSLContext server;
    private SSLContext client;
    private final ByteBuffer empty = ByteBuffer.allocate(0);
    private ByteBuffer toServer;
    private ByteBuffer toClient;
    private ByteBuffer app;

    /** Nanoseconds in each side's engine calls (delegated tasks included), and handshakes. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Sides {
        public long clientNanos;
        public long serverNanos;
        public long handshakes;

        @Setup(Level.Iteration)
        public void reset() {
            clientNanos = 0;
            serverNanos = 0;
            handshakes = 0;
        }
    }

    @Setup
    public void setUp() throws Exception {
        Provider bc = Rfc8998.BC;
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC", bc);
        g.initialize(new ECGenParameterSpec("sm2p256v1"));
        KeyPair ca = g.generateKeyPair();
        KeyPair leaf = g.generateKeyPair();
        Date from = new Date(System.currentTimeMillis() - 3600_000L);
        Date to = new Date(System.currentTimeMillis() + 30 * 86400_000L);
        X500Name root = new X500Name("CN=Bench Root");
        JcaX509CertificateConverter conv = new JcaX509CertificateConverter().setProvider(bc);
        X509Certificate caCert = conv.getCertificate(new JcaX509v3CertificateBuilder(root, BigInteger.ONE, from, to,
                root, ca.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign))
                .build(new JcaContentSignerBuilder("SM3withSM2").setProvider(bc).build(ca.getPrivate())));
        X509Certificate leafCert = conv.getCertificate(new JcaX509v3CertificateBuilder(root, BigInteger.valueOf(2),
                from, to, new X500Name("CN=localhost"), leaf.getPublic())
                .addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(new GeneralName(GeneralName.dNSName, "localhost")))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                .build(new JcaContentSignerBuilder("SM3withSM2").setProvider(bc).build(ca.getPrivate())));
        List<X509Certificate> chain = Collections.singletonList(leafCert);
        List<X509Certificate> roots = Collections.singletonList(caCert);

        Provider jsse;
        String sigProvider;
        PrivateKey key;
        if (crypto.equals("shangmi")) {
            jsse = Rfc8998.JSSE;
            sigProvider = Rfc8998.SHANGMI.getName();
            key = KeyFactory.getInstance("SM2", Rfc8998.SHANGMI)
                    .generatePrivate(new PKCS8EncodedKeySpec(leaf.getPrivate().getEncoded()));
        } else if (crypto.equals("bc")) {
            jsse = new BouncyCastleJsseProvider(false, new JcaTlsCryptoProvider().setProvider(bc));
            sigProvider = null;
            key = leaf.getPrivate();
        } else {
            throw new IllegalArgumentException(crypto);
        }
        server = Rfc8998.context(jsse, sigProvider, chain, key, roots);
        client = Rfc8998.context(jsse, sigProvider, null, null, roots);
        int size = 1 << 17;
        toServer = ByteBuffer.allocate(size);
        toClient = ByteBuffer.allocate(size);
        app = ByteBuffer.allocate(size);
        Sides check = new Sides();
        handshake(check);
    }

    @Benchmark
    public void fullHandshake(Sides sides) throws Exception {
        handshake(sides);
    }

    private void handshake(Sides sides) throws Exception {
        SSLEngine c = client.createSSLEngine();
        c.setUseClientMode(true);
        Rfc8998.configure(c, "TLS_SM4_GCM_SM3");
        SSLEngine s = server.createSSLEngine();
        s.setUseClientMode(false);
        Rfc8998.configure(s, "TLS_SM4_GCM_SM3");
        toServer.clear();
        toClient.clear();
        long t0 = System.nanoTime();
        c.beginHandshake();
        long t1 = System.nanoTime();
        s.beginHandshake();
        long t2 = System.nanoTime();
        sides.clientNanos += t1 - t0;
        sides.serverNanos += t2 - t1;
        boolean clientDone = false;
        boolean serverDone = false;
        for (int rounds = 0; !(clientDone && serverDone); rounds++) {
            if (rounds > 100) {
                throw new IllegalStateException("the handshake does not finish: " + c.getHandshakeStatus() + " "
                        + s.getHandshakeStatus());
            }
            long a = System.nanoTime();
            clientDone = step(c, toClient, toServer);
            long b = System.nanoTime();
            serverDone = step(s, toServer, toClient);
            long d = System.nanoTime();
            sides.clientNanos += b - a;
            sides.serverNanos += d - b;
        }
        if (!"TLS_SM4_GCM_SM3".equals(c.getSession().getCipherSuite())) {
            throw new IllegalStateException("negotiated " + c.getSession().getCipherSuite());
        }
        sides.handshakes++;
    }

    /** Moves one engine as far as it goes with what has arrived; true once it is done. */
    private boolean step(SSLEngine e, ByteBuffer in, ByteBuffer out) throws Exception {
        while (true) {
            HandshakeStatus hs = e.getHandshakeStatus();
            switch (hs) {
                case NEED_TASK:
                    Runnable task;
                    while ((task = e.getDelegatedTask()) != null) {
                        task.run();
                    }
                    break;
                case NEED_WRAP:
                    e.wrap(empty, out);
                    break;
                case NEED_UNWRAP:
                    in.flip();
                    app.clear();
                    SSLEngineResult r = e.unwrap(in, app);
                    in.compact();
                    if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW
                            || (r.bytesConsumed() == 0 && r.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP)) {
                        return false;
                    }
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        throw new IllegalStateException("the peer closed the handshake");
                    }
                    break;
                default:
                    return true;
            }
        }
    }
}
