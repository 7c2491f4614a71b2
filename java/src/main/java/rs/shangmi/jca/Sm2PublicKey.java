package rs.shangmi.jca;

import java.security.interfaces.ECPublicKey;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.util.Arrays;

/** An SM2 public key: an {@link ECPublicKey} on sm2p256v1, X.509 (SubjectPublicKeyInfo)
 * encoded with id-ecPublicKey and the curve's OID, as BouncyCastle and OpenSSL write it. */
public final class Sm2PublicKey implements ECPublicKey {
    private static final long serialVersionUID = 1L;

    private final byte[] point;
    private transient volatile Sm2Key key;
    private transient volatile byte[] encoded;

    /** From the 65-byte uncompressed point (checked on the curve when first used). */
    Sm2PublicKey(byte[] point) {
        if (point.length != 65 || point[0] != 4) {
            throw new IllegalArgumentException("an uncompressed SM2 point is 65 bytes starting 04");
        }
        this.point = point.clone();
    }

    Sm2Key key() {
        Sm2Key k = key;
        if (k == null) {
            synchronized (this) {
                if (key == null) {
                    key = new Sm2Key(this, point, false);
                }
                k = key;
            }
        }
        return k;
    }

    /** The 65-byte uncompressed point. */
    byte[] point() {
        return point.clone();
    }

    @Override
    public ECPoint getW() {
        return Sm2Curve.decode(point);
    }

    @Override
    public ECParameterSpec getParams() {
        return Sm2Curve.SPEC;
    }

    @Override
    public String getAlgorithm() {
        return "EC";
    }

    @Override
    public String getFormat() {
        return "X.509";
    }

    @Override
    public byte[] getEncoded() {
        byte[] e = encoded;
        if (e == null) {
            e = key().use(new Sm2Key.Op<byte[]>() {
                @Override
                public byte[] run(long h) {
                    return Native.sm2PublicToSpki(h);
                }
            });
            encoded = e;
        }
        return e.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof Sm2PublicKey) {
            return Arrays.equals(point, ((Sm2PublicKey) o).point);
        }
        if (o instanceof ECPublicKey) {
            ECPublicKey k = (ECPublicKey) o;
            return Sm2Curve.is(k.getParams()) && k.getW().equals(getW());
        }
        return false;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(point);
    }

    @Override
    public String toString() {
        return "SM2 public key " + Hex.of(point);
    }
}
