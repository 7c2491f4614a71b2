package rs.shangmi.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RFC 8998 in JSSE (BCJSSE on the Shangmi provider) against the other implementations on
 * loopback, both directions: shangmi's own {@code tls serve}/{@code tls connect}, and
 * OpenSSL 4.0's {@code s_server}/{@code s_client}; both suites, client certificates,
 * certificates from shangmi's CLI and from OpenSSL, and the failures that must fail.
 *
 * <p>The tools' paths come from the system properties {@code shangmi.cli} and {@code
 * shangmi.openssl4} (scripts/test-java.sh sets them); without them the test fails.
 */
class InteropTest {
    static final String[] SUITES = {"TLS_SM4_GCM_SM3", "TLS_SM4_CCM_SM3"};

    @TempDir
    static Path dir;

    static String cli;
    static String openssl;
    static SSLContext server;
    static SSLContext client;
    static SSLContext anonymousClient;
    static EchoServer jsse;
    static EchoServer jsseNeedsClientCert;

    static String tool(String property) {
        String p = System.getProperty(property);
        if (p == null || p.isEmpty() || !Files.isExecutable(java.nio.file.Paths.get(p))) {
            throw new IllegalStateException("system property " + property + " must name the tool (scripts/test-java.sh sets it)");
        }
        return p;
    }

    @BeforeAll
    static void setUp() throws Exception {
        cli = tool("shangmi.cli");
        openssl = tool("shangmi.openssl4");
        ok(cli, "sm2", "keygen", "-o", "ca.key");
        ok(cli, "sm2", "keygen", "-o", "server.key");
        ok(cli, "sm2", "keygen", "-o", "client.key");
        ok(cli, "x509", "req", "--key", "ca.key", "--subject", "/CN=Interop Root", "-o", "ca.csr");
        ok(cli, "x509", "sign", "--csr", "ca.csr", "--self", "--key", "ca.key", "--ca", "--days", "30", "-o", "ca.pem");
        ok(cli, "x509", "req", "--key", "server.key", "--subject", "/CN=localhost", "--san", "DNS:localhost", "-o", "server.csr");
        ok(cli, "x509", "sign", "--csr", "server.csr", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "--days", "30", "-o", "server.pem");
        ok(cli, "x509", "req", "--key", "client.key", "--subject", "/CN=java client", "-o", "client.csr");
        ok(cli, "x509", "sign", "--csr", "client.csr", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "--days", "30", "-o", "client.pem");
        // A second root nobody here trusts, for the failures.
        ok(cli, "sm2", "keygen", "-o", "other.key");
        ok(cli, "x509", "req", "--key", "other.key", "--subject", "/CN=Other Root", "-o", "other.csr");
        ok(cli, "x509", "sign", "--csr", "other.csr", "--self", "--key", "other.key", "--ca", "--days", "30", "-o", "other.pem");

        List<X509Certificate> roots = Rfc8998.certificates(dir.resolve("ca.pem"));
        server = Rfc8998.context(Rfc8998.certificates(dir.resolve("server.pem")),
                Rfc8998.privateKey(dir.resolve("server.key")), roots);
        client = Rfc8998.context(Rfc8998.certificates(dir.resolve("client.pem")),
                Rfc8998.privateKey(dir.resolve("client.key")), roots);
        anonymousClient = Rfc8998.context(null, null, roots);
        jsse = new EchoServer(server, false);
        jsseNeedsClientCert = new EchoServer(server, true);
    }

    @AfterAll
    static void tearDown() throws IOException {
        if (jsse != null) {
            jsse.close();
        }
        if (jsseNeedsClientCert != null) {
            jsseNeedsClientCert.close();
        }
    }

    // ---- shangmi's CLI ----

    @Test
    void jsseClientToShangmiServer() throws Exception {
        try (Peer p = Peer.start(dir, listenLine(), cli, "tls", "serve", "--listen", "127.0.0.1:0", "--cert",
                "server.pem", "--key", "server.key", "--response", "hello from shangmi")) {
            for (String suite : SUITES) {
                String got = fetch(anonymousClient, p.port, "localhost", suite, "ignored");
                assertEquals("TLSv1.3 " + suite + "\nhello from shangmi", got);
            }
        }
    }

    @Test
    void jsseClientCertificateToShangmiServer() throws Exception {
        try (Peer p = Peer.start(dir, listenLine(), cli, "tls", "serve", "--listen", "127.0.0.1:0", "--cert",
                "server.pem", "--key", "server.key", "--client-ca", "ca.pem", "--response", "hello, client")) {
            for (String suite : SUITES) {
                assertEquals("TLSv1.3 " + suite + "\nhello, client", fetch(client, p.port, "localhost", suite, "x"));
            }
            // Without a certificate the server refuses: the handshake or the first read fails.
            assertThrows(IOException.class, () -> fetch(anonymousClient, p.port, "localhost", SUITES[0], "x"));
        }
    }

    @Test
    void shangmiClientToJsseServer() throws Exception {
        for (String suite : new String[] {"sm4-gcm", "sm4-ccm"}) {
            Ran r = Ran.run(dir, "hello from the CLI".getBytes(StandardCharsets.UTF_8), cli, "tls", "connect",
                    "127.0.0.1:" + jsse.port(), "--servername", "localhost", "--ca", "ca.pem", "--suite", suite);
            assertEquals(0, r.code, r.err);
            String name = suite.equals("sm4-gcm") ? "TLS_SM4_GCM_SM3" : "TLS_SM4_CCM_SM3";
            assertEquals(name + " none: hello from the CLI", r.out);
            assertTrue(r.err.contains("suite " + name + ", group curveSM2, signature sm2sig_sm3"), r.err);
        }
    }

    @Test
    void shangmiClientCertificateToJsseServer() throws Exception {
        Ran r = Ran.run(dir, "with a certificate".getBytes(StandardCharsets.UTF_8), cli, "tls", "connect",
                "127.0.0.1:" + jsseNeedsClientCert.port(), "--servername", "localhost", "--ca", "ca.pem",
                "--cert", "client.pem", "--key", "client.key");
        assertEquals(0, r.code, r.err);
        assertEquals("TLS_SM4_GCM_SM3 CN=java client: with a certificate", r.out);
        Ran without = Ran.run(dir, "no certificate".getBytes(StandardCharsets.UTF_8), cli, "tls", "connect",
                "127.0.0.1:" + jsseNeedsClientCert.port(), "--servername", "localhost", "--ca", "ca.pem");
        assertTrue(without.code != 0 && without.out.isEmpty(), without.out + without.err);
    }

    @Test
    void shangmiClientRefusesJsseServerOfAnotherRoot() throws Exception {
        Ran r = Ran.run(dir, "x".getBytes(StandardCharsets.UTF_8), cli, "tls", "connect",
                "127.0.0.1:" + jsse.port(), "--servername", "localhost", "--ca", "other.pem");
        assertTrue(r.code != 0 && r.out.isEmpty(), r.out + r.err);
    }

    // ---- OpenSSL 4.0 ----

    @Test
    void jsseClientToOpensslServer() throws Exception {
        for (String suite : SUITES) {
            int port = freePort();
            try (Peer p = Peer.start(dir, null, openssl, "s_server", "-accept", "127.0.0.1:" + port, "-cert",
                    "server.pem", "-key", "server.key", "-www", "-ciphersuites", suite, "-sigalgs", "sm2sig_sm3",
                    "-groups", "curveSM2")) {
                p.port = port;
                p.awaitListening();
                String got = fetch(anonymousClient, port, "localhost", suite, "GET / HTTP/1.0\r\n\r\n");
                assertTrue(got.startsWith("TLSv1.3 " + suite + "\nHTTP/1.0 200 ok"), got);
                assertTrue(got.contains("Cipher is " + suite), got);
            }
        }
    }

    @Test
    void jsseClientCertificateToOpensslServer() throws Exception {
        int port = freePort();
        try (Peer p = Peer.start(dir, null, openssl, "s_server", "-accept", "127.0.0.1:" + port, "-cert",
                "server.pem", "-key", "server.key", "-www", "-Verify", "2", "-CAfile", "ca.pem",
                "-verify_return_error", "-ciphersuites", "TLS_SM4_GCM_SM3", "-sigalgs", "sm2sig_sm3",
                "-groups", "curveSM2")) {
            p.port = port;
            p.awaitListening();
            String got = fetch(client, port, "localhost", SUITES[0], "GET / HTTP/1.0\r\n\r\n");
            assertTrue(got.contains("Cipher is TLS_SM4_GCM_SM3"), got);
            assertTrue(got.contains("CN=java client") || got.contains("CN = java client"), got);
        }
    }

    @Test
    void opensslClientToJsseServer() throws Exception {
        for (String suite : SUITES) {
            Ran r = Ran.run(dir, "hello from openssl".getBytes(StandardCharsets.UTF_8), openssl, "s_client",
                    "-connect", "127.0.0.1:" + jsse.port(), "-servername", "localhost", "-CAfile", "ca.pem",
                    "-verify_return_error", "-verify_hostname", "localhost", "-ign_eof", "-ciphersuites", suite,
                    "-sigalgs", "sm2sig_sm3", "-groups", "curveSM2");
            assertEquals(0, r.code, r.err);
            assertTrue(r.out.contains(suite + " none: hello from openssl"), r.out);
            assertTrue(r.out.contains("Verify return code: 0 (ok)"), r.out);
        }
    }

    @Test
    void opensslClientCertificateToJsseServer() throws Exception {
        Ran r = Ran.run(dir, "with a certificate".getBytes(StandardCharsets.UTF_8), openssl, "s_client",
                "-connect", "127.0.0.1:" + jsseNeedsClientCert.port(), "-servername", "localhost", "-CAfile",
                "ca.pem", "-verify_return_error", "-cert", "client.pem", "-key", "client.key", "-ign_eof",
                "-ciphersuites", "TLS_SM4_GCM_SM3", "-sigalgs", "sm2sig_sm3", "-groups", "curveSM2");
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("TLS_SM4_GCM_SM3 CN=java client: with a certificate"), r.out);
    }

    @Test
    void opensslCertificatesInJsse() throws Exception {
        // A root and server certificate OpenSSL made, served by BCJSSE, trusted by BCJSSE.
        ok(openssl, "genpkey", "-algorithm", "SM2", "-out", "o-ca.key");
        ok(openssl, "req", "-new", "-x509", "-key", "o-ca.key", "-sm3", "-sigopt", "distid:1234567812345678",
                "-subj", "/CN=OpenSSL Root", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign", "-days", "30", "-out", "o-ca.pem");
        ok(openssl, "genpkey", "-algorithm", "SM2", "-out", "o-server.key");
        ok(openssl, "req", "-new", "-key", "o-server.key", "-sm3", "-sigopt", "distid:1234567812345678",
                "-subj", "/CN=localhost", "-out", "o-server.csr");
        Files.write(dir.resolve("o-ext.cnf"), "subjectAltName=DNS:localhost\n".getBytes(StandardCharsets.US_ASCII));
        ok(openssl, "x509", "-req", "-in", "o-server.csr", "-CA", "o-ca.pem", "-CAkey", "o-ca.key",
                "-CAcreateserial", "-sm3", "-sigopt", "distid:1234567812345678", "-vfyopt",
                "distid:1234567812345678", "-extfile", "o-ext.cnf", "-days", "30", "-out", "o-server.pem");
        SSLContext srv = Rfc8998.context(Rfc8998.certificates(dir.resolve("o-server.pem")),
                Rfc8998.privateKey(dir.resolve("o-server.key")), Rfc8998.certificates(dir.resolve("o-ca.pem")));
        SSLContext cl = Rfc8998.context(null, null, Rfc8998.certificates(dir.resolve("o-ca.pem")));
        try (EchoServer s = new EchoServer(srv, false)) {
            assertEquals("TLSv1.3 TLS_SM4_GCM_SM3\nTLS_SM4_GCM_SM3 none: both openssl's",
                    fetch(cl, s.port(), "localhost", SUITES[0], "both openssl's"));
            // And OpenSSL's client checks BCJSSE's signature over the chain OpenSSL made.
            Ran r = Ran.run(dir, "hi".getBytes(StandardCharsets.UTF_8), openssl, "s_client", "-connect",
                    "127.0.0.1:" + s.port(), "-servername", "localhost", "-CAfile", "o-ca.pem",
                    "-verify_return_error", "-ign_eof", "-ciphersuites", "TLS_SM4_GCM_SM3", "-sigalgs",
                    "sm2sig_sm3", "-groups", "curveSM2");
            assertTrue(r.out.contains("TLS_SM4_GCM_SM3 none: hi"), r.out + r.err);
        }
    }

    // ---- the failures ----

    @Test
    void jsseClientRefusesAnotherRootAndAnotherName() throws Exception {
        SSLContext trustsOther = Rfc8998.context(null, null, Rfc8998.certificates(dir.resolve("other.pem")));
        assertThrows(IOException.class, () -> fetch(trustsOther, jsse.port(), "localhost", SUITES[0], "x"));
        assertThrows(IOException.class, () -> fetch(anonymousClient, jsse.port(), "not-localhost", SUITES[0], "x"));
        // And the good case on the same server, so the failures above are not the server's.
        assertEquals("TLSv1.3 TLS_SM4_GCM_SM3\nTLS_SM4_GCM_SM3 none: x",
                fetch(anonymousClient, jsse.port(), "localhost", SUITES[0], "x"));
    }

    @Test
    void jsseServerWithoutClientCertificateRefuses() {
        assertThrows(IOException.class, () -> fetch(anonymousClient, jsseNeedsClientCert.port(), "localhost", SUITES[0], "x"));
    }

    @Test
    void jsseBetweenThemselvesWithClientCertificates() throws Exception {
        for (String suite : SUITES) {
            assertEquals("TLSv1.3 " + suite + "\n" + suite + " CN=java client: both jsse",
                    fetch(client, jsseNeedsClientCert.port(), "localhost", suite, "both jsse"));
        }
    }

    // ---- helpers ----

    /** One connection: the negotiated protocol and suite, a newline, then all the server sent. */
    static String fetch(SSLContext ctx, int port, String name, String suite, String send) throws IOException {
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket();
        try {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10000);
            s.setSoTimeout(20000);
            SSLParameters p = s.getSSLParameters();
            p.setServerNames(Collections.singletonList(new SNIHostName(name)));
            p.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(p);
            Rfc8998.configure(s, suite);
            s.startHandshake();
            String head = s.getSession().getProtocol() + " " + s.getSession().getCipherSuite() + "\n";
            OutputStream out = s.getOutputStream();
            out.write(send.getBytes(StandardCharsets.UTF_8));
            out.flush();
            return head + new String(readAll(s.getInputStream()), StandardCharsets.UTF_8);
        } finally {
            s.close();
        }
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        int n;
        while ((n = in.read(buf)) > 0) {
            got.write(buf, 0, n);
        }
        return got.toByteArray();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static Pattern listenLine() {
        return Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");
    }

    static void ok(String... cmd) throws Exception {
        Ran r = Ran.run(dir, new byte[0], cmd);
        if (r.code != 0) {
            throw new AssertionError(Arrays.toString(cmd) + " failed: " + r.out + r.err);
        }
    }

    /**
     * A BCJSSE server on loopback: per connection, one read, answered with the suite, the
     * client certificate's subject (or "none") and what it read; then it closes.
     */
    static final class EchoServer implements AutoCloseable {
        final SSLServerSocket socket;
        final Thread thread;

        EchoServer(SSLContext ctx, final boolean needClientAuth) throws IOException {
            socket = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 16, InetAddress.getLoopbackAddress());
            thread = new Thread(() -> {
                while (!socket.isClosed()) {
                    try (SSLSocket s = (SSLSocket) socket.accept()) {
                        s.setSoTimeout(20000);
                        Rfc8998.configure(s);
                        s.setNeedClientAuth(needClientAuth);
                        s.startHandshake();
                        String who = "none";
                        try {
                            who = ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
                        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
                            // no client certificate: "none"
                        }
                        byte[] buf = new byte[4096];
                        int n = s.getInputStream().read(buf);
                        OutputStream out = s.getOutputStream();
                        out.write((s.getSession().getCipherSuite() + " " + who + ": ").getBytes(StandardCharsets.UTF_8));
                        if (n > 0) {
                            out.write(buf, 0, n);
                        }
                        out.flush();
                    } catch (IOException e) {
                        // a failed connection (the tests of failures make some); next one
                    }
                }
            }, "jsse-echo");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A finished command: exit code, stdout, stderr. */
    static final class Ran {
        int code;
        String out;
        String err;

        static Ran run(Path cwd, byte[] stdin, String... cmd) throws Exception {
            ProcessBuilder b = new ProcessBuilder(cmd).directory(cwd.toFile());
            Path out = Files.createTempFile(cwd, "out", ".txt");
            Path err = Files.createTempFile(cwd, "err", ".txt");
            b.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = b.start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin);
            }
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(Arrays.toString(cmd) + " did not finish");
            }
            Ran r = new Ran();
            r.code = p.exitValue();
            r.out = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
            r.err = new String(Files.readAllBytes(err), StandardCharsets.UTF_8);
            return r;
        }
    }

    /** A peer server process, killed on close. */
    static final class Peer implements AutoCloseable {
        final Process process;
        final Path log;
        int port;

        private Peer(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        /** Starts it; with {@code listen}, waits for the line on stderr that names its port. */
        static Peer start(Path cwd, Pattern listen, String... cmd) throws Exception {
            Path log = Files.createTempFile(cwd, "peer", ".log");
            ProcessBuilder b = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            Peer p = new Peer(b.start(), log);
            if (listen != null) {
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (System.nanoTime() < end) {
                    Matcher m = listen.matcher(new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
                    if (m.find()) {
                        p.port = Integer.parseInt(m.group(1));
                        return p;
                    }
                    if (!p.process.isAlive()) {
                        break;
                    }
                    Thread.sleep(20);
                }
                p.close();
                throw new AssertionError(Arrays.toString(cmd) + " did not start: " + p.output());
            }
            return p;
        }

        /** Waits until something accepts on the port. */
        void awaitListening() throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < end && process.isAlive()) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                    return;
                } catch (IOException e) {
                    Thread.sleep(20);
                }
            }
            throw new AssertionError("the peer did not listen: " + output());
        }

        String output() throws IOException {
            return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
