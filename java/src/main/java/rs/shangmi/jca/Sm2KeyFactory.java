package rs.shangmi.jca;

import java.security.InvalidKeyException;
import java.security.Key;
import java.security.KeyFactorySpi;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.KeySpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/**
 * KeyFactory SM2 and EC for keys on the SM2 curve: X.509 (SubjectPublicKeyInfo) and PKCS#8
 * (or SEC1) encodings, {@link ECPublicKeySpec} and {@link ECPrivateKeySpec} (Kona's
 * SM2PublicKeySpec and SM2PrivateKeySpec are these), and the keys of other providers.
 */
public final class Sm2KeyFactory extends KeyFactorySpi {
    public Sm2KeyFactory() {
        Native.init();
    }

    @Override
    protected PublicKey engineGeneratePublic(KeySpec spec) throws InvalidKeySpecException {
        try {
            if (spec instanceof X509EncodedKeySpec) {
                return Sm2Keys.fromSpki(((X509EncodedKeySpec) spec).getEncoded());
            }
            if (spec instanceof ECPublicKeySpec) {
                ECPublicKeySpec e = (ECPublicKeySpec) spec;
                if (!Sm2Curve.is(e.getParams())) {
                    throw new InvalidKeySpecException("an EC key on another curve than SM2's");
                }
                Sm2PublicKey k = new Sm2PublicKey(Sm2Curve.encode(e.getW()));
                // Checked on the curve now, not at its first use.
                k.getEncoded();
                return k;
            }
        } catch (InvalidKeyException | IllegalArgumentException e) {
            throw new InvalidKeySpecException(e.getMessage(), e);
        }
        throw new InvalidKeySpecException("SM2 public keys from X509EncodedKeySpec or ECPublicKeySpec");
    }

    @Override
    protected PrivateKey engineGeneratePrivate(KeySpec spec) throws InvalidKeySpecException {
        try {
            if (spec instanceof PKCS8EncodedKeySpec) {
                return Sm2Keys.fromPkcs8(((PKCS8EncodedKeySpec) spec).getEncoded());
            }
            if (spec instanceof ECPrivateKeySpec) {
                ECPrivateKeySpec e = (ECPrivateKeySpec) spec;
                if (!Sm2Curve.is(e.getParams())) {
                    throw new InvalidKeySpecException("an EC key on another curve than SM2's");
                }
                byte[] d = Sm2Curve.bytes32(e.getS());
                try {
                    Sm2PrivateKey k = new Sm2PrivateKey(d);
                    k.publicKey();
                    return k;
                } finally {
                    Arrays.fill(d, (byte) 0);
                }
            }
        } catch (InvalidKeyException | IllegalArgumentException e) {
            throw new InvalidKeySpecException(e.getMessage(), e);
        }
        throw new InvalidKeySpecException("SM2 private keys from PKCS8EncodedKeySpec or ECPrivateKeySpec");
    }

    @Override
    @SuppressWarnings("unchecked")
    protected <T extends KeySpec> T engineGetKeySpec(Key key, Class<T> spec) throws InvalidKeySpecException {
        try {
            if (key instanceof PublicKey) {
                Sm2PublicKey k = Sm2Keys.toPublic(key);
                if (spec.isAssignableFrom(X509EncodedKeySpec.class)) {
                    return (T) new X509EncodedKeySpec(k.getEncoded());
                }
                if (spec.isAssignableFrom(ECPublicKeySpec.class)) {
                    return (T) new ECPublicKeySpec(k.getW(), Sm2Curve.SPEC);
                }
            } else {
                Sm2PrivateKey k = Sm2Keys.toPrivate(key);
                if (spec.isAssignableFrom(PKCS8EncodedKeySpec.class)) {
                    return (T) new PKCS8EncodedKeySpec(k.getEncoded());
                }
                if (spec.isAssignableFrom(ECPrivateKeySpec.class)) {
                    return (T) new ECPrivateKeySpec(k.getS(), Sm2Curve.SPEC);
                }
            }
        } catch (InvalidKeyException e) {
            throw new InvalidKeySpecException(e.getMessage(), e);
        }
        throw new InvalidKeySpecException("no " + spec.getName() + " for SM2 keys");
    }

    @Override
    protected Key engineTranslateKey(Key key) throws InvalidKeyException {
        if (key instanceof PublicKey) {
            return Sm2Keys.toPublic(key);
        }
        if (key instanceof PrivateKey) {
            return Sm2Keys.toPrivate(key);
        }
        throw new InvalidKeyException("not an SM2 key");
    }
}
