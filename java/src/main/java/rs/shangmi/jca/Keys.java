package rs.shangmi.jca;

import java.security.InvalidKeyException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/** Keys out of unwrapped bytes. */
final class Keys {
    private Keys() {}

    static Key unwrapped(byte[] raw, String algorithm, int type) throws InvalidKeyException, NoSuchAlgorithmException {
        switch (type) {
            case Cipher.SECRET_KEY:
                return new SecretKeySpec(raw, algorithm);
            case Cipher.PRIVATE_KEY:
                try {
                    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(raw));
                } catch (InvalidKeySpecException e) {
                    throw new InvalidKeyException(e);
                }
            case Cipher.PUBLIC_KEY:
                try {
                    return KeyFactory.getInstance(algorithm).generatePublic(new X509EncodedKeySpec(raw));
                } catch (InvalidKeySpecException e) {
                    throw new InvalidKeyException(e);
                }
            default:
                throw new InvalidKeyException("no such key type " + type);
        }
    }
}
