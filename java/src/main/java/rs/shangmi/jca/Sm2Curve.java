package rs.shangmi.jca;

import java.math.BigInteger;
import java.security.spec.ECFieldFp;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.EllipticCurve;
import java.util.Locale;

/** The SM2 curve (GB/T 32918.5): sm2p256v1 to BouncyCastle, curveSM2 to Kona and RFC 8998,
 * OID 1.2.156.10197.1.301. */
final class Sm2Curve {
    static final String OID = "1.2.156.10197.1.301";
    static final BigInteger P = new BigInteger("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF", 16);
    static final BigInteger A = new BigInteger("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC", 16);
    static final BigInteger B = new BigInteger("28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93", 16);
    static final BigInteger GX = new BigInteger("32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7", 16);
    static final BigInteger GY = new BigInteger("BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0", 16);
    static final BigInteger N = new BigInteger("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123", 16);
    static final ECParameterSpec SPEC = new ECParameterSpec(
            new EllipticCurve(new ECFieldFp(P), A, B), new ECPoint(GX, GY), N, 1);
    /** The DER of the curve's OID, as it stands in key encodings. */
    static final byte[] OID_DER = {6, 8, 42, -127, 28, -49, 85, 1, -126, 45};

    private Sm2Curve() {}

    /** Whether a curve name names SM2. */
    static boolean isName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        return n.equals("sm2p256v1") || n.equals("curvesm2") || n.equals("sm2") || n.equals(OID)
                || n.equals("oid." + OID) || n.equals("wapip192v1-sm2");
    }

    /** Whether {@code spec} is the SM2 curve with its generator, order and cofactor. */
    static boolean is(ECParameterSpec spec) {
        if (spec == null) {
            return false;
        }
        EllipticCurve c = spec.getCurve();
        return c.getField() instanceof ECFieldFp && ((ECFieldFp) c.getField()).getP().equals(P)
                && c.getA().equals(A) && c.getB().equals(B) && spec.getGenerator().getAffineX().equals(GX)
                && spec.getGenerator().getAffineY().equals(GY) && spec.getOrder().equals(N)
                && spec.getCofactor() == 1;
    }

    /** 32 big-endian bytes of a value below 2^256. */
    static byte[] bytes32(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[32];
        if (b.length > 33 || (b.length == 33 && b[0] != 0) || v.signum() < 0) {
            throw new IllegalArgumentException("not a 256-bit value");
        }
        int n = Math.min(b.length, 32);
        System.arraycopy(b, b.length - n, out, 32 - n, n);
        return out;
    }

    /** The uncompressed SEC1 encoding of a point. */
    static byte[] encode(ECPoint w) {
        byte[] out = new byte[65];
        out[0] = 4;
        System.arraycopy(bytes32(w.getAffineX()), 0, out, 1, 32);
        System.arraycopy(bytes32(w.getAffineY()), 0, out, 33, 32);
        return out;
    }

    /** The point of a 65-byte uncompressed encoding. */
    static ECPoint decode(byte[] p) {
        return new ECPoint(new BigInteger(1, java.util.Arrays.copyOfRange(p, 1, 33)),
                new BigInteger(1, java.util.Arrays.copyOfRange(p, 33, 65)));
    }
}
