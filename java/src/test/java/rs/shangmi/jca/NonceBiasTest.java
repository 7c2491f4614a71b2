package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The nonces of SM2 signatures, recovered from the signatures and the key (k = s(1 + d) + r d
 * mod n, as Wycheproof's ECDSA bias test recovers them): all different, and with no bias a
 * lattice attack could use. Their mean over n, and the means of c k mod n over n for a few
 * random c, are 1/2 within five standard deviations (1/sqrt(12 N)) of a uniform draw.
 */
class NonceBiasTest {
    static final BigInteger N = new BigInteger("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123", 16);
    static final org.bouncycastle.math.ec.ECPoint G =
            org.bouncycastle.asn1.gm.GMNamedCurves.getByName("sm2p256v1").getG();

    static BigInteger[] rs(byte[] der) {
        // SEQUENCE { INTEGER r, INTEGER s }, short form lengths (r and s are at most 33 bytes).
        int at = 2;
        int rl = der[at + 1];
        BigInteger r = new BigInteger(1, java.util.Arrays.copyOfRange(der, at + 2, at + 2 + rl));
        at += 2 + rl;
        int sl = der[at + 1];
        BigInteger s = new BigInteger(1, java.util.Arrays.copyOfRange(der, at + 2, at + 2 + sl));
        return new BigInteger[] {r, s};
    }

    @Test
    void nonceHasNoBias() throws Exception {
        KeyPair kp = KeyPairGenerator.getInstance("SM2", ProviderTest.P).generateKeyPair();
        BigInteger d = ((ECPrivateKey) kp.getPrivate()).getS();
        Signature sig = Signature.getInstance("SM3withSM2", ProviderTest.P);
        sig.initSign(kp.getPrivate());
        int count = 5000;
        Random rnd = new Random(1);
        BigInteger[] c = new BigInteger[4];
        c[0] = BigInteger.ONE;
        for (int i = 1; i < c.length; i++) {
            c[i] = new BigInteger(256, rnd).mod(N);
        }
        double[] sums = new double[c.length];
        Set<BigInteger> seen = new HashSet<BigInteger>();
        BigInteger firstE = null;
        byte[] msg = "the same message every time".getBytes("US-ASCII");
        for (int i = 0; i < count; i++) {
            sig.update(msg);
            BigInteger[] v = rs(sig.sign());
            BigInteger k = v[1].multiply(BigInteger.ONE.add(d)).add(v[0].multiply(d)).mod(N);
            assertTrue(seen.add(k), "a nonce came twice");
            if (i < 20) {
                // k is the nonce: r - x(k G) is e, one value for one message, key and ID.
                BigInteger x1 = G.multiply(k).normalize().getAffineXCoord().toBigInteger();
                BigInteger e = v[0].subtract(x1).mod(N);
                if (firstE == null) {
                    firstE = e;
                }
                assertEquals(firstE, e, "the recovered nonce is not the signature's");
            }
            for (int j = 0; j < c.length; j++) {
                sums[j] += new java.math.BigDecimal(k.multiply(c[j]).mod(N))
                        .divide(new java.math.BigDecimal(N), java.math.MathContext.DECIMAL64).doubleValue();
            }
        }
        double bound = 5 / Math.sqrt(12.0 * count);
        for (int j = 0; j < c.length; j++) {
            double mean = sums[j] / count;
            assertTrue(Math.abs(mean - 0.5) < bound, "mean " + mean + " for c #" + j);
        }
        assertEquals(count, seen.size());
    }
}
