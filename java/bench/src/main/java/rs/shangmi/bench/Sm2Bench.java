package rs.shangmi.bench;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Provider;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * SM2 signatures of a 32-byte message (SM3withSM2, default ID: Z, the hash and the
 * signature), each provider with a key of its own; and ECDSA P-256 (SHA256withECDSA) as the
 * yardstick, in SunEC, ACCP and BC.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class Sm2Bench {
    @Param({"shangmi", "bc", "kona", "kona-native", "p256-sunec", "p256-accp", "p256-bc"})
    public String provider;

    private Signature signer;
    private Signature verifier;
    private KeyPair pair;
    private final byte[] message = new byte[32];
    private byte[] signature;

    @Setup
    public void setUp() throws Exception {
        new Random(1).nextBytes(message);
        boolean p256 = provider.startsWith("p256-");
        Provider p = Providers.get(p256 ? provider.substring(5) : provider);
        // BC's KeyPairGenerator SM2 defaults to prime239v1 (and its SM2 then runs on the
        // generic curve code, 20-30x slower): BC users name the curve, as here.
        boolean bc = provider.equals("bc");
        KeyPairGenerator g = KeyPairGenerator.getInstance(p256 || bc ? "EC" : "SM2", p);
        if (p256) {
            g.initialize(new ECGenParameterSpec("secp256r1"));
        } else if (bc) {
            g.initialize(new ECGenParameterSpec("sm2p256v1"));
        }
        pair = g.generateKeyPair();
        String alg = p256 ? "SHA256withECDSA" : "SM3withSM2";
        signer = Signature.getInstance(alg, p);
        signer.initSign(pair.getPrivate());
        verifier = Signature.getInstance(alg, p);
        verifier.initVerify(pair.getPublic());
        signature = sign();
        if (!verify()) {
            throw new IllegalStateException(provider + ": its own signature does not verify");
        }
    }

    @Benchmark
    public byte[] sign() throws Exception {
        signer.update(message);
        return signer.sign();
    }

    @Benchmark
    public boolean verify() throws Exception {
        verifier.update(message);
        return verifier.verify(signature);
    }
}
