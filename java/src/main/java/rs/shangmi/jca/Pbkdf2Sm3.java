package rs.shangmi.jca;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.KeySpec;
import java.util.Arrays;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactorySpi;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * SecretKeyFactory PBKDF2WithHmacSM3: a {@link PBEKeySpec} (password, salt, iterations, key
 * length in bits) to a key of that length. The password's characters are taken as UTF-8, as
 * BouncyCastle's PBKDF2 factories and PKCS#5's examples take them.
 */
public final class Pbkdf2Sm3 extends SecretKeyFactorySpi {
    public Pbkdf2Sm3() {
        Native.init();
    }

    @Override
    protected SecretKey engineGenerateSecret(KeySpec spec) throws InvalidKeySpecException {
        if (!(spec instanceof PBEKeySpec)) {
            throw new InvalidKeySpecException("PBKDF2WithHmacSM3 takes a PBEKeySpec");
        }
        PBEKeySpec p = (PBEKeySpec) spec;
        if (p.getSalt() == null) {
            throw new InvalidKeySpecException("PBKDF2WithHmacSM3: no salt");
        }
        if (p.getIterationCount() <= 0) {
            throw new InvalidKeySpecException("PBKDF2WithHmacSM3: the iteration count must be positive");
        }
        if (p.getKeyLength() <= 0 || p.getKeyLength() % 8 != 0) {
            throw new InvalidKeySpecException("PBKDF2WithHmacSM3: a key length in whole bytes");
        }
        char[] chars = p.getPassword();
        ByteBuffer encoded = StandardCharsets.UTF_8.encode(CharBuffer.wrap(chars));
        byte[] pw = new byte[encoded.remaining()];
        encoded.get(pw);
        if (encoded.hasArray()) {
            Arrays.fill(encoded.array(), (byte) 0);
        }
        Arrays.fill(chars, '\0');
        byte[] key = new byte[p.getKeyLength() / 8];
        try {
            Native.pbkdf2Sm3(pw, p.getSalt(), p.getIterationCount(), key);
            return new SecretKeySpec(key, "PBKDF2WithHmacSM3");
        } finally {
            Arrays.fill(pw, (byte) 0);
            Arrays.fill(key, (byte) 0);
        }
    }

    @Override
    protected KeySpec engineGetKeySpec(SecretKey key, Class<?> spec) throws InvalidKeySpecException {
        throw new InvalidKeySpecException("PBKDF2WithHmacSM3 keys cannot be turned back into a password");
    }

    @Override
    protected SecretKey engineTranslateKey(SecretKey key) throws InvalidKeyException {
        if (key == null || !"RAW".equalsIgnoreCase(key.getFormat()) || key.getEncoded() == null) {
            throw new InvalidKeyException("PBKDF2WithHmacSM3: a raw key");
        }
        return new SecretKeySpec(key.getEncoded(), "PBKDF2WithHmacSM3");
    }
}
