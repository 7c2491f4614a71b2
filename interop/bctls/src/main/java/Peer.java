// An RFC 8998 peer on BouncyCastle's low-level TLS API (org.bouncycastle.tls), for shangmi's
// interop tests. BC's JSSE key manager does not pick SM2 certificates for curveSM2, so the
// suites, group, signature scheme and credentials are set here directly.
//
//   Peer server --port P --cert CHAIN --key KEY [--client-ca CA] [--suite gcm|ccm]
//       prints "ready" once it listens; answers each connection's first line with
//       "bctls: <line> <suite>" and closes.
//   Peer client --port P --ca CA [--cert CHAIN --key KEY] [--suite gcm|ccm] [--message TEXT]
//       sends the message and a newline, prints what comes back on stdout and the suite on
//       stderr; exit 0 when the handshake and the exchange succeed, 1 otherwise.

import java.io.ByteArrayOutputStream;
import java.io.FileReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Vector;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.crypto.params.AsymmetricKeyParameter;
import org.bouncycastle.crypto.util.PrivateKeyFactory;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.tls.Certificate;
import org.bouncycastle.tls.CertificateEntry;
import org.bouncycastle.tls.CertificateRequest;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.DefaultTlsClient;
import org.bouncycastle.tls.DefaultTlsServer;
import org.bouncycastle.tls.NamedGroup;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.ServerOnlyTlsAuthentication;
import org.bouncycastle.tls.SignatureAndHashAlgorithm;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsServerCertificate;
import org.bouncycastle.tls.TlsServerProtocol;
import org.bouncycastle.tls.TlsUtils;
import org.bouncycastle.tls.crypto.TlsCertificate;
import org.bouncycastle.tls.crypto.TlsCryptoParameters;
import org.bouncycastle.tls.crypto.impl.bc.BcDefaultTlsCredentialedSigner;
import org.bouncycastle.tls.crypto.impl.bc.BcTlsCertificate;
import org.bouncycastle.tls.crypto.impl.bc.BcTlsCrypto;

public final class Peer {
    private static final BouncyCastleProvider BC = new BouncyCastleProvider();

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage();
        }
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length || !args[i].startsWith("--")) {
                usage();
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        BcTlsCrypto crypto = new BcTlsCrypto(new SecureRandom());
        switch (args[0]) {
            case "server" -> server(crypto, opts);
            case "client" -> System.exit(client(crypto, opts) ? 0 : 1);
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: Peer server|client --port P ...");
        System.exit(2);
    }

    private static int[] suites(Map<String, String> opts) {
        String s = opts.getOrDefault("suite", "both");
        return switch (s) {
            case "gcm" -> new int[] {CipherSuite.TLS_SM4_GCM_SM3};
            case "ccm" -> new int[] {CipherSuite.TLS_SM4_CCM_SM3};
            default -> new int[] {CipherSuite.TLS_SM4_GCM_SM3, CipherSuite.TLS_SM4_CCM_SM3};
        };
    }

    private static String suiteName(int s) {
        return s == CipherSuite.TLS_SM4_GCM_SM3 ? "TLS_SM4_GCM_SM3"
            : s == CipherSuite.TLS_SM4_CCM_SM3 ? "TLS_SM4_CCM_SM3" : String.format("0x%04x", s);
    }

    private static Vector<SignatureAndHashAlgorithm> sm2Schemes() {
        Vector<SignatureAndHashAlgorithm> v = new Vector<>();
        v.add(SignatureAndHashAlgorithm.sm2sig_sm3);
        return v;
    }

    private static Vector<Integer> curveSm2() {
        Vector<Integer> v = new Vector<>();
        v.add(NamedGroup.curveSM2);
        return v;
    }

    // --- certificates and keys ---

    private static List<X509CertificateHolder> readCerts(String path) throws IOException {
        List<X509CertificateHolder> out = new ArrayList<>();
        try (PEMParser p = new PEMParser(new FileReader(path, StandardCharsets.UTF_8))) {
            Object o;
            while ((o = p.readObject()) != null) {
                if (o instanceof X509CertificateHolder h) {
                    out.add(h);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IOException("no certificate in " + path);
        }
        return out;
    }

    private static AsymmetricKeyParameter readKey(String path) throws IOException {
        try (PEMParser p = new PEMParser(new FileReader(path, StandardCharsets.UTF_8))) {
            Object o = p.readObject();
            PrivateKeyInfo info = o instanceof PEMKeyPair kp ? kp.getPrivateKeyInfo()
                : o instanceof PrivateKeyInfo pk ? pk : null;
            if (info == null) {
                throw new IOException("no private key in " + path);
            }
            return PrivateKeyFactory.createKey(info);
        }
    }

    private static Certificate tlsChain(BcTlsCrypto crypto, List<X509CertificateHolder> chain)
            throws IOException {
        CertificateEntry[] entries = new CertificateEntry[chain.size()];
        for (int i = 0; i < chain.size(); i++) {
            entries[i] = new CertificateEntry(new BcTlsCertificate(crypto, chain.get(i).getEncoded()), null);
        }
        return new Certificate(TlsUtils.EMPTY_BYTES, entries);
    }

    // Each certificate signed by the next, the last by a trusted root: SM2 signatures with
    // GM/T 0009's default ID (BC's SM3withSM2). Enough for a test peer; not a full validator.
    private static void verifyChain(Certificate received, List<X509CertificateHolder> roots)
            throws IOException {
        TlsCertificate[] list = received.getCertificateList();
        if (list.length == 0) {
            throw new TlsFatalAlert(AlertDescription.certificate_required);
        }
        try {
            List<X509CertificateHolder> chain = new ArrayList<>();
            for (TlsCertificate c : list) {
                chain.add(new X509CertificateHolder(c.getEncoded()));
            }
            for (int i = 0; i + 1 < chain.size(); i++) {
                if (!chain.get(i).isSignatureValid(verifier(chain.get(i + 1)))) {
                    throw new TlsFatalAlert(AlertDescription.bad_certificate);
                }
            }
            X509CertificateHolder last = chain.get(chain.size() - 1);
            for (X509CertificateHolder root : roots) {
                if (root.equals(last) || (last.getIssuer().equals(root.getSubject())
                        && last.isSignatureValid(verifier(root)))) {
                    return;
                }
            }
        } catch (TlsFatalAlert e) {
            throw e;
        } catch (Exception e) {
            throw new TlsFatalAlert(AlertDescription.bad_certificate, e);
        }
        throw new TlsFatalAlert(AlertDescription.unknown_ca);
    }

    private static org.bouncycastle.operator.ContentVerifierProvider verifier(X509CertificateHolder issuer)
            throws Exception {
        return new JcaContentVerifierProviderBuilder().setProvider(BC).build(issuer);
    }

    // --- server ---

    private static void server(BcTlsCrypto crypto, Map<String, String> opts) throws Exception {
        int port = Integer.parseInt(opts.get("port"));
        List<X509CertificateHolder> chain = readCerts(opts.get("cert"));
        AsymmetricKeyParameter key = readKey(opts.get("key"));
        List<X509CertificateHolder> clientRoots =
            opts.containsKey("client-ca") ? readCerts(opts.get("client-ca")) : null;
        int[] suites = suites(opts);
        try (ServerSocket ss = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
            System.out.println("ready");
            System.out.flush();
            while (true) {
                Socket s = ss.accept();
                new Thread(() -> serveOne(crypto, s, chain, key, clientRoots, suites)).start();
            }
        }
    }

    private static void serveOne(BcTlsCrypto crypto, Socket s, List<X509CertificateHolder> chain,
            AsymmetricKeyParameter key, List<X509CertificateHolder> clientRoots, int[] suites) {
        try (s) {
            TlsServerProtocol protocol = new TlsServerProtocol(s.getInputStream(), s.getOutputStream());
            int[] picked = new int[1];
            DefaultTlsServer server = new DefaultTlsServer(crypto) {
                @Override
                public int getSelectedCipherSuite() throws IOException {
                    picked[0] = super.getSelectedCipherSuite();
                    return picked[0];
                }

                @Override
                protected ProtocolVersion[] getSupportedVersions() {
                    return ProtocolVersion.TLSv13.only();
                }

                @Override
                protected int[] getSupportedCipherSuites() {
                    return suites;
                }

                @Override
                public int[] getSupportedGroups() {
                    return new int[] {NamedGroup.curveSM2};
                }

                @Override
                public TlsCredentials getCredentials() throws IOException {
                    return new BcDefaultTlsCredentialedSigner(new TlsCryptoParameters(context), crypto, key,
                        tlsChain(crypto, chain), SignatureAndHashAlgorithm.sm2sig_sm3);
                }

                @Override
                public CertificateRequest getCertificateRequest() throws IOException {
                    if (clientRoots == null) {
                        return null;
                    }
                    return new CertificateRequest(TlsUtils.EMPTY_BYTES, sm2Schemes(), null, null);
                }

                @Override
                public void notifyClientCertificate(Certificate clientCertificate) throws IOException {
                    verifyChain(clientCertificate, clientRoots);
                }
            };
            protocol.accept(server);
            InputStream in = protocol.getInputStream();
            OutputStream out = protocol.getOutputStream();
            String line = readLine(in);
            String suite = suiteName(picked[0]);
            out.write(("bctls: " + line + " " + suite + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            protocol.close();
            System.err.println("bctls server: served " + suite);
        } catch (Exception e) {
            System.err.println("bctls server: connection failed: " + e);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            b.write(c);
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    // --- client ---

    private static boolean client(BcTlsCrypto crypto, Map<String, String> opts) throws Exception {
        int port = Integer.parseInt(opts.get("port"));
        List<X509CertificateHolder> roots = readCerts(opts.get("ca"));
        List<X509CertificateHolder> chain = opts.containsKey("cert") ? readCerts(opts.get("cert")) : null;
        AsymmetricKeyParameter key = opts.containsKey("key") ? readKey(opts.get("key")) : null;
        int[] suites = suites(opts);
        String message = opts.getOrDefault("message", "hello from bctls");
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(20000);
            TlsClientProtocol protocol = new TlsClientProtocol(s.getInputStream(), s.getOutputStream());
            int[] picked = new int[1];
            DefaultTlsClient client = new DefaultTlsClient(crypto) {
                @Override
                public void notifySelectedCipherSuite(int selected) {
                    picked[0] = selected;
                    super.notifySelectedCipherSuite(selected);
                }

                @Override
                protected ProtocolVersion[] getSupportedVersions() {
                    return ProtocolVersion.TLSv13.only();
                }

                @Override
                protected int[] getSupportedCipherSuites() {
                    return suites;
                }

                @Override
                protected Vector getSupportedGroups(Vector namedGroupRoles) {
                    return curveSm2();
                }

                @Override
                public Vector getEarlyKeyShareGroups() {
                    return curveSm2();
                }

                @Override
                protected Vector getSupportedSignatureAlgorithms() {
                    return sm2Schemes();
                }

                @Override
                public TlsAuthentication getAuthentication() {
                    return new TlsAuthentication() {
                        @Override
                        public void notifyServerCertificate(TlsServerCertificate serverCertificate)
                                throws IOException {
                            verifyChain(serverCertificate.getCertificate(), roots);
                        }

                        @Override
                        public TlsCredentials getClientCredentials(CertificateRequest request)
                                throws IOException {
                            if (chain == null) {
                                return null;
                            }
                            return new BcDefaultTlsCredentialedSigner(new TlsCryptoParameters(context), crypto,
                                key, tlsChain(crypto, chain), SignatureAndHashAlgorithm.sm2sig_sm3);
                        }
                    };
                }
            };
            protocol.connect(client);
            String suite = suiteName(picked[0]);
            System.err.println("bctls client: suite " + suite);
            OutputStream out = protocol.getOutputStream();
            out.write((message + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            String answer = readLine(protocol.getInputStream());
            System.out.println(answer);
            System.out.flush();
            protocol.close();
            return !answer.isEmpty();
        } catch (Exception e) {
            System.err.println("bctls client: failed: " + e);
            return false;
        }
    }
}
