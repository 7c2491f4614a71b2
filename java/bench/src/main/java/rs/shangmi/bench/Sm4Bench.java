package rs.shangmi.bench;

import java.security.Provider;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * SM4 on 8 KiB messages, one message per call, each initialised with its IV as a protocol
 * does per record: GCM with a fresh IV each encryption, CTR, CBC both ways (NoPadding). AES
 * beside it ({@link AesBench}) as the yardstick.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class Sm4Bench {
    @Param({"shangmi", "bc", "kona", "kona-native"})
    public String provider;

    @Param({"8192"})
    public int size;

    private Cipher gcm;
    private Cipher ctr;
    private Cipher cbc;
    private SecretKeySpec key;
    private byte[] message;
    private byte[] sealed;
    private byte[] cbcCiphertext;
    private final byte[] iv12 = new byte[12];
    private final byte[] iv16 = new byte[16];
    private byte[] out;
    private long counter;

    @Setup
    public void setUp() throws Exception {
        Provider p = Providers.get(provider);
        String alg = "SM4";
        key = new SecretKeySpec(new byte[16], alg);
        message = new byte[size];
        new Random(3).nextBytes(message);
        out = new byte[size + 16];
        gcm = Cipher.getInstance(alg + "/GCM/NoPadding", p);
        ctr = Cipher.getInstance(alg + "/CTR/NoPadding", p);
        cbc = Cipher.getInstance(alg + "/CBC/NoPadding", p);
        gcm.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv12));
        sealed = gcm.doFinal(message);
        cbc.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv16));
        cbcCiphertext = cbc.doFinal(message);
    }

    private GCMParameterSpec freshIv() {
        byte[] iv = new byte[12];
        long c = ++counter;
        for (int i = 0; i < 8; i++) {
            iv[4 + i] = (byte) (c >>> (8 * i));
        }
        return new GCMParameterSpec(128, iv);
    }

    @Benchmark
    public int gcmEncrypt() throws Exception {
        gcm.init(Cipher.ENCRYPT_MODE, key, freshIv());
        return gcm.doFinal(message, 0, size, out, 0);
    }

    @Benchmark
    public int gcmDecrypt() throws Exception {
        gcm.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, iv12));
        return gcm.doFinal(sealed, 0, sealed.length, out, 0);
    }

    @Benchmark
    public int ctr() throws Exception {
        ctr.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv16));
        return ctr.doFinal(message, 0, size, out, 0);
    }

    @Benchmark
    public int cbcEncrypt() throws Exception {
        cbc.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv16));
        return cbc.doFinal(message, 0, size, out, 0);
    }

    @Benchmark
    public int cbcDecrypt() throws Exception {
        cbc.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv16));
        return cbc.doFinal(cbcCiphertext, 0, size, out, 0);
    }
}
