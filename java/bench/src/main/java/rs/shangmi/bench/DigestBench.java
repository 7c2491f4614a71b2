package rs.shangmi.bench;

import java.security.MessageDigest;
import java.security.Provider;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** SM3 and HMAC-SM3 of one message per call (update + doFinal), small and large. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DigestBench {
    @Param({"shangmi", "bc", "kona", "kona-native"})
    public String provider;

    @Param({"64", "8192"})
    public int size;

    private MessageDigest digest;
    private Mac mac;
    private byte[] message;

    @Setup
    public void setUp() throws Exception {
        Provider p = Providers.get(provider);
        message = new byte[size];
        new Random(2).nextBytes(message);
        digest = MessageDigest.getInstance("SM3", p);
        mac = Mac.getInstance("HmacSM3", p);
        mac.init(new SecretKeySpec(new byte[32], "HmacSM3"));
    }

    @Benchmark
    public byte[] sm3() {
        digest.update(message);
        return digest.digest();
    }

    @Benchmark
    public byte[] hmacSm3() {
        mac.update(message);
        return mac.doFinal();
    }
}
