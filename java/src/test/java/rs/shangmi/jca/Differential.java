package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.security.Key;
import java.security.MessageDigest;
import java.security.Provider;
import java.security.Signature;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Random;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** What the BouncyCastle and Kona differentials share: the same operation here and there. */
abstract class Differential {
    static final Provider US = ProviderTest.P;
    final Random r = new Random(42);

    byte[] random(int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    /** `c` over `msg` in random pieces (update, then doFinal). */
    byte[] chunked(Cipher c, byte[] msg) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        while (at < msg.length) {
            int n = Math.min(msg.length - at, 1 + r.nextInt(100));
            byte[] part = c.update(msg, at, n);
            if (part != null) {
                out.write(part);
            }
            at += n;
        }
        out.write(c.doFinal());
        return out.toByteArray();
    }

    void digests(Provider peer) throws Exception {
        for (int i = 0; i < 200; i++) {
            byte[] msg = random(r.nextInt(3000));
            assertArrayEquals(MessageDigest.getInstance("SM3", peer).digest(msg),
                    MessageDigest.getInstance("SM3", US).digest(msg));
            byte[] key = random(1 + r.nextInt(100));
            Mac a = Mac.getInstance("HmacSM3", peer);
            Mac b = Mac.getInstance("HmacSM3", US);
            a.init(new SecretKeySpec(key, "HmacSM3"));
            b.init(new SecretKeySpec(key, "HmacSM3"));
            assertArrayEquals(a.doFinal(msg), b.doFinal(msg));
        }
    }

    /** SM4 in `transformation` both ways at random lengths, chunked on our side. */
    void sm4(Provider peer, String transformation, boolean wholeBlocks, boolean aead) throws Exception {
        for (int i = 0; i < 60; i++) {
            int len = r.nextInt(3000);
            if (wholeBlocks) {
                len -= len % 16;
            }
            byte[] msg = random(len);
            Key key = new SecretKeySpec(random(16), "SM4");
            AlgorithmParameterSpec spec = aead ? new GCMParameterSpec(128, random(12))
                    : transformation.contains("ECB") ? null : new IvParameterSpec(random(16));
            byte[] aad = random(r.nextInt(40));
            Cipher ours = Cipher.getInstance(transformation, US);
            Cipher theirs = Cipher.getInstance(transformation, peer);
            init(ours, Cipher.ENCRYPT_MODE, key, spec);
            init(theirs, Cipher.DECRYPT_MODE, key, spec);
            if (aead) {
                ours.updateAAD(aad);
                theirs.updateAAD(aad);
            }
            byte[] ct = chunked(ours, msg);
            assertArrayEquals(msg, theirs.doFinal(ct), transformation + " ours to theirs, " + len);
            ours = Cipher.getInstance(transformation, US);
            theirs = Cipher.getInstance(transformation, peer);
            init(theirs, Cipher.ENCRYPT_MODE, key, spec);
            init(ours, Cipher.DECRYPT_MODE, key, spec);
            if (aead) {
                ours.updateAAD(aad);
                theirs.updateAAD(aad);
            }
            byte[] ct2 = theirs.doFinal(msg);
            assertArrayEquals(ct, ct2, transformation + " same ciphertext, " + len);
            assertArrayEquals(msg, chunked(ours, ct2), transformation + " theirs to ours, " + len);
        }
    }

    static void init(Cipher c, int mode, Key k, AlgorithmParameterSpec spec) throws Exception {
        if (spec == null) {
            c.init(mode, k);
        } else {
            c.init(mode, k, spec);
        }
    }

    /** A signature by `signer` verified by `verifier`, each with the parameter its provider takes. */
    void signs(Signature signer, java.security.PrivateKey priv, AlgorithmParameterSpec signSpec,
            Signature verifier, java.security.PublicKey pub, AlgorithmParameterSpec verifySpec) throws Exception {
        for (int i = 0; i < 20; i++) {
            byte[] msg = random(r.nextInt(2000));
            if (signSpec != null) {
                signer.setParameter(signSpec);
            }
            signer.initSign(priv);
            signer.update(msg);
            byte[] sig = signer.sign();
            if (verifySpec != null) {
                verifier.setParameter(verifySpec);
            }
            verifier.initVerify(pub);
            verifier.update(msg);
            assertTrue(verifier.verify(sig), "a signature did not verify");
            verifier.update(random(1));
            assertTrue(!verifier.verify(sig), "a signature verified another message");
        }
    }
}
