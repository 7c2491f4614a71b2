package rs.shangmi.bench;

import java.security.Provider;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** AES-128-GCM on 8 KiB as {@link Sm4Bench} runs SM4-GCM: the yardstick, SunJCE and ACCP. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AesBench {
    @Param({"sunjce", "accp"})
    public String provider;

    @Param({"8192"})
    public int size;

    private Cipher gcm;
    private SecretKeySpec key;
    private byte[] message;
    private byte[] sealed;
    private final byte[] iv12 = new byte[12];
    private byte[] out;
    private long counter;

    @Setup
    public void setUp() throws Exception {
        Provider p = Providers.get(provider);
        key = new SecretKeySpec(new byte[16], "AES");
        message = new byte[size];
        new Random(3).nextBytes(message);
        out = new byte[size + 16];
        gcm = Cipher.getInstance("AES/GCM/NoPadding", p);
        gcm.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv12));
        sealed = gcm.doFinal(message);
    }

    @Benchmark
    public int gcmEncrypt() throws Exception {
        byte[] iv = new byte[12];
        long c = ++counter;
        for (int i = 0; i < 8; i++) {
            iv[4 + i] = (byte) (c >>> (8 * i));
        }
        gcm.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
        return gcm.doFinal(message, 0, size, out, 0);
    }

    @Benchmark
    public int gcmDecrypt() throws Exception {
        gcm.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, iv12));
        return gcm.doFinal(sealed, 0, sealed.length, out, 0);
    }
}
