package rs.shangmi.jca;

import java.math.BigInteger;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECParameterSpec;
import javax.security.auth.Destroyable;

/**
 * An SM2 private key: an {@link ECPrivateKey} on sm2p256v1, PKCS#8 encoded. Its native key
 * is freed, and its scalar wiped, by {@link #destroy()} (or when it becomes unreachable).
 */
public final class Sm2PrivateKey implements ECPrivateKey, Destroyable {
    private static final long serialVersionUID = 1L;

    private final transient Sm2Key key;
    private transient byte[] d;
    private transient volatile Sm2PublicKey publicKey;

    /** From d (32 bytes, in [1, n-2]; checked when first used). */
    Sm2PrivateKey(byte[] d) {
        if (d.length != 32) {
            throw new IllegalArgumentException("an SM2 private key is 32 bytes");
        }
        this.d = d.clone();
        this.key = new Sm2Key(this, d, true);
    }

    /** From d, its native key {@code handle} and its public key, as the generator made them. */
    Sm2PrivateKey(byte[] d, long handle, Sm2PublicKey publicKey) {
        if (d.length != 32) {
            throw new IllegalArgumentException("an SM2 private key is 32 bytes");
        }
        this.d = d.clone();
        this.key = new Sm2Key(this, d, true, handle);
        this.publicKey = publicKey;
    }

    Sm2Key key() {
        return key;
    }

    /** The public key of this private key. */
    Sm2PublicKey publicKey() {
        Sm2PublicKey p = publicKey;
        if (p == null) {
            p = new Sm2PublicKey(key.use(new Sm2Key.Op<byte[]>() {
                @Override
                public byte[] run(long h) {
                    return Native.sm2Point(h);
                }
            }));
            publicKey = p;
        }
        return p;
    }

    @Override
    public BigInteger getS() {
        synchronized (key) {
            if (d == null) {
                throw new IllegalStateException("the SM2 key was destroyed");
            }
            return new BigInteger(1, d);
        }
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
        return "PKCS#8";
    }

    @Override
    public byte[] getEncoded() {
        return key.use(new Sm2Key.Op<byte[]>() {
            @Override
            public byte[] run(long h) {
                return Native.sm2PrivateToPkcs8(h);
            }
        });
    }

    @Override
    public void destroy() {
        key.destroy();
        synchronized (key) {
            if (d != null) {
                java.util.Arrays.fill(d, (byte) 0);
                d = null;
            }
        }
    }

    @Override
    public boolean isDestroyed() {
        return key.isDestroyed();
    }

    @Override
    public String toString() {
        return "SM2 private key";
    }
}
