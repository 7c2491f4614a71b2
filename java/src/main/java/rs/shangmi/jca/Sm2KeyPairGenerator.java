package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidParameterException;
import java.security.KeyPair;
import java.security.KeyPairGeneratorSpi;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.util.Arrays;

/**
 * KeyPairGenerator SM2 and EC: key pairs on sm2p256v1 (the default, also for EC, where
 * BouncyCastle's EC defaults to P-256 and its SM2 to prime239v1), asked for by a size of 256,
 * an {@link ECGenParameterSpec} naming sm2p256v1, curveSM2 or the OID, or the curve's {@link
 * ECParameterSpec} (Kona's SM2ParameterSpec among them). The key comes from the operating
 * system's generator; the caller's SecureRandom is not used.
 */
public final class Sm2KeyPairGenerator extends KeyPairGeneratorSpi {
    public Sm2KeyPairGenerator() {
        Native.init();
    }

    @Override
    public void initialize(int keysize, SecureRandom random) {
        if (keysize != 256) {
            throw new InvalidParameterException("SM2 keys are 256 bits");
        }
    }

    @Override
    public void initialize(AlgorithmParameterSpec params, SecureRandom random) throws InvalidAlgorithmParameterException {
        if (params instanceof ECGenParameterSpec && Sm2Curve.isName(((ECGenParameterSpec) params).getName())) {
            return;
        }
        if (params instanceof ECParameterSpec && Sm2Curve.is((ECParameterSpec) params)) {
            return;
        }
        throw new InvalidAlgorithmParameterException("shangmi generates keys on the SM2 curve (sm2p256v1) only");
    }

    @Override
    public KeyPair generateKeyPair() {
        byte[] both = new byte[97];
        long handle = Native.sm2GenerateKey(both);
        byte[] d = Arrays.copyOf(both, 32);
        try {
            Sm2PublicKey pub = new Sm2PublicKey(Arrays.copyOfRange(both, 32, 97));
            return new KeyPair(pub, new Sm2PrivateKey(d, handle, pub));
        } finally {
            Arrays.fill(d, (byte) 0);
            Arrays.fill(both, (byte) 0);
        }
    }
}
