package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidParameterException;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.KeyGeneratorSpi;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/** KeyGenerator SM4 (128 bits) and HmacSM3 (256 bits by default). */
public abstract class SecretKeyGenerators extends KeyGeneratorSpi {
    private final String algorithm;
    private final boolean anyLength;
    private int bytes;
    private SecureRandom random;

    SecretKeyGenerators(String algorithm, int bytes, boolean anyLength) {
        this.algorithm = algorithm;
        this.bytes = bytes;
        this.anyLength = anyLength;
    }

    @Override
    protected void engineInit(SecureRandom random) {
        this.random = random;
    }

    @Override
    protected void engineInit(AlgorithmParameterSpec params, SecureRandom random)
            throws InvalidAlgorithmParameterException {
        throw new InvalidAlgorithmParameterException(algorithm + " key generation takes no parameters");
    }

    @Override
    protected void engineInit(int keysize, SecureRandom random) {
        if (keysize <= 0 || keysize % 8 != 0 || (!anyLength && keysize != bytes * 8)) {
            throw new InvalidParameterException(algorithm + ": no " + keysize + "-bit keys");
        }
        this.bytes = keysize / 8;
        this.random = random;
    }

    @Override
    protected SecretKey engineGenerateKey() {
        byte[] k = new byte[bytes];
        (random != null ? random : new SecureRandom()).nextBytes(k);
        try {
            return new SecretKeySpec(k, algorithm);
        } finally {
            Arrays.fill(k, (byte) 0);
        }
    }

    /** KeyGenerator SM4. */
    public static final class Sm4 extends SecretKeyGenerators {
        public Sm4() {
            super("SM4", 16, false);
        }
    }

    /** KeyGenerator HmacSM3. */
    public static final class Hmac extends SecretKeyGenerators {
        public Hmac() {
            super("HmacSM3", 32, true);
        }
    }
}
