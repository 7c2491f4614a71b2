package rs.shangmi.jca;

import java.security.InvalidKeyException;
import java.security.Key;

/** The argument checks the JCA's SPIs leave to providers. */
final class Checks {
    private Checks() {}

    /** {@code off..off+len} inside {@code a} (a null array is a null pointer). */
    static void range(byte[] a, int off, int len) {
        if (a == null) {
            throw new NullPointerException("input");
        }
        if (off < 0 || len < 0 || off > a.length - len) {
            throw new ArrayIndexOutOfBoundsException("offset " + off + " and length " + len
                    + " outside an array of " + a.length);
        }
    }

    /** The raw bytes of a secret key of one of {@code lengths} bytes. */
    static byte[] secretKey(Key key, String what, int... lengths) throws InvalidKeyException {
        if (key == null) {
            throw new InvalidKeyException(what + ": no key");
        }
        if (!(key instanceof javax.crypto.SecretKey) || !"RAW".equalsIgnoreCase(key.getFormat())) {
            throw new InvalidKeyException(what + " takes a raw secret key, not "
                    + key.getClass().getName());
        }
        byte[] k = key.getEncoded();
        if (k == null) {
            throw new InvalidKeyException(what + ": the key has no encoding");
        }
        if (lengths.length == 0) {
            return k;
        }
        for (int n : lengths) {
            if (k.length == n) {
                return k;
            }
        }
        java.util.Arrays.fill(k, (byte) 0);
        throw new InvalidKeyException(what + ": a key of " + k.length * 8 + " bits");
    }
}
