package rs.shangmi.tls;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * An RFC 8998 echo server in JSSE:
 * {@code java rs.shangmi.tls.Rfc8998Server PORT CHAIN.pem KEY.pem CA.pem [require-client-cert]}.
 * Prints {@code listening on PORT}, then for each connection sends back what it reads (until
 * the client closes) prefixed with the suite: {@code TLS_SM4_GCM_SM3: ...}.
 */
public final class Rfc8998Server {
    private Rfc8998Server() {}

    public static void main(String[] args) throws Exception {
        javax.net.ssl.SSLContext ctx = Rfc8998.context(Rfc8998.certificates(Paths.get(args[1])),
                Rfc8998.privateKey(Paths.get(args[2])), Rfc8998.certificates(Paths.get(args[3])));
        boolean clientAuth = args.length > 4 && args[4].equals("require-client-cert");
        SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory()
                .createServerSocket(Integer.parseInt(args[0]), 16, InetAddress.getLoopbackAddress());
        System.out.println("listening on " + server.getLocalPort());
        System.out.flush();
        while (true) {
            SSLSocket s = (SSLSocket) server.accept();
            try {
                Rfc8998.configure(s);
                s.setNeedClientAuth(clientAuth);
                s.setUseClientMode(false);
                s.startHandshake();
                String suite = s.getSession().getCipherSuite();
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                out.write((suite + ": ").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                byte[] buf = new byte[4096];
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (Exception e) {
                System.err.println("connection failed: " + e);
            } finally {
                s.close();
            }
        }
    }
}
