package rs.shangmi.jca;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.TearDown;

/**
 * The same operations as the JCA benchmarks, made with the fewest calls into the native
 * library and nothing of the provider around them: what the JCA path is measured against
 * (in the provider's package, for its package-private natives).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class NativeAloneBench {
    @Param({"64", "8192"})
    public int size;

    private long signing;
    private long verifying;
    private long sm4;
    private long gcm;
    private byte[] message;
    private final byte[] zAndMessage = new byte[64];
    private final byte[] digest = new byte[32];
    private byte[] signature;
    private final int[] inner = new int[8];
    private final int[] outer = new int[8];
    private byte[] out;
    private byte[] cbcCiphertext;
    private final byte[] iv16 = new byte[16];
    private long counter;

    private static byte[] fixed(BigInteger v, int n) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[n];
        int len = Math.min(b.length, n);
        System.arraycopy(b, b.length - len, out, n - len, len);
        return out;
    }

    @Setup
    public void setUp() throws Exception {
        KeyPair kp = KeyPairGenerator.getInstance("SM2", ShangmiProvider.instance()).generateKeyPair();
        signing = Native.sm2Private(fixed(((ECPrivateKey) kp.getPrivate()).getS(), 32));
        ECPublicKey pub = (ECPublicKey) kp.getPublic();
        byte[] point = new byte[65];
        point[0] = 4;
        System.arraycopy(fixed(pub.getW().getAffineX(), 32), 0, point, 1, 32);
        System.arraycopy(fixed(pub.getW().getAffineY(), 32), 0, point, 33, 32);
        verifying = Native.sm2Public(point);
        byte[] z = new byte[32];
        Native.sm2Z(verifying, "1234567812345678".getBytes("US-ASCII"), z);
        System.arraycopy(z, 0, zAndMessage, 0, 32);
        new Random(1).nextBytes(message = new byte[size]);
        System.arraycopy(message, 0, zAndMessage, 32, 32);
        byte[] sig = new byte[72];
        signature = Arrays.copyOf(sig, sm2Sign(sig));
        Native.hmacKey(new byte[32], inner, outer);
        sm4 = Native.sm4Key(new byte[16]);
        gcm = Native.gcmKey(new byte[16], 16);
        out = new byte[size + 16];
        cbcCiphertext = new byte[size];
        long s = Native.sm4Stream(sm4, 1, false, true, iv16);
        Native.streamUpdate(s, message, 0, size, cbcCiphertext, 0, size);
        Native.free(s);
    }

    @TearDown
    public void tearDown() {
        Native.free(signing);
        Native.free(verifying);
        Native.free(sm4);
        Native.free(gcm);
    }

    private int sm2Sign(byte[] sig) {
        Native.sm3Finish(Sm3Engine.IV.clone(), 0, zAndMessage, 0, 64, digest, 0);
        return Native.sm2SignDigest(signing, digest, sig, 0);
    }

    /** SM3withSM2 of a 32-byte message (Z precomputed, as the provider keeps it per key). */
    @Benchmark
    public int sm2SignMessage32() {
        return sm2Sign(new byte[72]);
    }

    @Benchmark
    public boolean sm2VerifyMessage32() {
        Native.sm3Finish(Sm3Engine.IV.clone(), 0, zAndMessage, 0, 64, digest, 0);
        return Native.sm2VerifyDigest(verifying, digest, signature, 0, signature.length);
    }

    @Benchmark
    public byte[] sm3() {
        Native.sm3Finish(Sm3Engine.IV.clone(), 0, message, 0, size, digest, 0);
        return digest;
    }

    @Benchmark
    public byte[] hmacSm3() {
        Native.hmacFinish(inner.clone(), 1, message, 0, size, outer, digest, 0);
        return digest;
    }

    @Benchmark
    public int gcmEncrypt() {
        byte[] iv = new byte[12];
        long c = ++counter;
        for (int i = 0; i < 8; i++) {
            iv[4 + i] = (byte) (c >>> (8 * i));
        }
        return Native.gcmSeal(gcm, iv, new byte[0], message, 0, size, out, 0);
    }

    @Benchmark
    public int cbcDecrypt() {
        long s = Native.sm4Stream(sm4, 1, false, false, iv16);
        try {
            return Native.streamUpdate(s, cbcCiphertext, 0, size, out, 0, out.length);
        } finally {
            Native.free(s);
        }
    }
}
