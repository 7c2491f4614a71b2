package rs.shangmi.tls;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * An RFC 8998 client in JSSE:
 * {@code java rs.shangmi.tls.Rfc8998Client HOST PORT CA.pem MESSAGE [CHAIN.pem KEY.pem]}.
 * Sends the message, prints the protocol and suite, then what comes back up to the echo of
 * the message (BCJSSE has no half-close in TLS 1.3, so the client cannot signal its end).
 */
public final class Rfc8998Client {
    private Rfc8998Client() {}

    public static void main(String[] args) throws Exception {
        List<X509Certificate> chain = args.length > 5 ? Rfc8998.certificates(Paths.get(args[4])) : null;
        PrivateKey key = args.length > 5 ? Rfc8998.privateKey(Paths.get(args[5])) : null;
        javax.net.ssl.SSLContext ctx = Rfc8998.context(chain, key, Rfc8998.certificates(Paths.get(args[2])));
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(args[0], Integer.parseInt(args[1]));
        try {
            SSLParameters p = s.getSSLParameters();
            p.setServerNames(Collections.singletonList(new SNIHostName(args[0])));
            p.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(p);
            Rfc8998.configure(s);
            s.startHandshake();
            System.out.println(s.getSession().getProtocol() + " " + s.getSession().getCipherSuite());
            s.setSoTimeout(10000);
            s.getOutputStream().write(args[3].getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while (!new String(got.toByteArray(), StandardCharsets.UTF_8).endsWith(args[3]) && (n = in.read(buf)) > 0) {
                got.write(buf, 0, n);
            }
            System.out.println(new String(got.toByteArray(), StandardCharsets.UTF_8));
        } finally {
            s.close();
        }
    }
}
