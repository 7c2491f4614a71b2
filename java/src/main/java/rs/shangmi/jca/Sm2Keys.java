package rs.shangmi.jca;

import java.security.InvalidKeyException;
import java.security.Key;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Arrays;

/** SM2 keys from any provider's keys (BouncyCastle's, Kona's, SunEC's objects on the SM2
 * curve) or their encodings. */
final class Sm2Keys {
    private Sm2Keys() {}

    static Sm2PublicKey toPublic(Key k) throws InvalidKeyException {
        if (k instanceof Sm2PublicKey) {
            return (Sm2PublicKey) k;
        }
        if (k instanceof Sm2PrivateKey) {
            throw new InvalidKeyException("a private key where a public one is needed");
        }
        if (k instanceof ECPublicKey) {
            ECPublicKey e = (ECPublicKey) k;
            if (!Sm2Curve.is(e.getParams())) {
                throw new InvalidKeyException("an EC key on another curve than SM2's");
            }
            return new Sm2PublicKey(Sm2Curve.encode(e.getW()));
        }
        if (k != null && "X.509".equalsIgnoreCase(k.getFormat()) && k.getEncoded() != null) {
            return fromSpki(k.getEncoded());
        }
        throw new InvalidKeyException("not an SM2 public key: " + (k == null ? "null" : k.getClass().getName()));
    }

    static Sm2PrivateKey toPrivate(Key k) throws InvalidKeyException {
        if (k instanceof Sm2PrivateKey) {
            if (((Sm2PrivateKey) k).isDestroyed()) {
                throw new InvalidKeyException("the SM2 key was destroyed");
            }
            return (Sm2PrivateKey) k;
        }
        if (k instanceof ECPrivateKey) {
            ECPrivateKey e = (ECPrivateKey) k;
            if (!Sm2Curve.is(e.getParams())) {
                throw new InvalidKeyException("an EC key on another curve than SM2's");
            }
            byte[] d = Sm2Curve.bytes32(e.getS());
            try {
                return new Sm2PrivateKey(d);
            } finally {
                Arrays.fill(d, (byte) 0);
            }
        }
        if (k != null && "PKCS#8".equalsIgnoreCase(k.getFormat()) && k.getEncoded() != null) {
            return fromPkcs8(k.getEncoded());
        }
        throw new InvalidKeyException("not an SM2 private key: " + (k == null ? "null" : k.getClass().getName()));
    }

    static Sm2PublicKey fromSpki(byte[] der) throws InvalidKeyException {
        try {
            return new Sm2PublicKey(Native.sm2PublicFromDer(der));
        } catch (IllegalArgumentException e) {
            throw new InvalidKeyException("not an SM2 SubjectPublicKeyInfo: " + e.getMessage(), e);
        }
    }

    static Sm2PrivateKey fromPkcs8(byte[] der) throws InvalidKeyException {
        byte[] d;
        try {
            d = Native.sm2PrivateFromDer(der);
        } catch (IllegalArgumentException e) {
            throw new InvalidKeyException("not an SM2 PKCS#8 (or SEC1) key: " + e.getMessage(), e);
        }
        try {
            return new Sm2PrivateKey(d);
        } finally {
            Arrays.fill(d, (byte) 0);
        }
    }
}
