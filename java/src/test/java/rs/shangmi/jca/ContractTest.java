package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import java.util.Random;
import javax.crypto.AEADBadTagException;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The JCA's contracts, checked as Wycheproof's generic tests check them: a message split
 * anywhere hashes, MACs and encrypts as one piece; objects are reusable after doFinal and
 * clone mid-message; ShortBufferException changes nothing; wrong keys and parameters are the
 * standard exceptions; a tampered tag releases nothing.
 */
class ContractTest {
    static final Random R = new Random(7);
    static final SecretKeySpec KEY = new SecretKeySpec(Hexes.bytes("0123456789abcdeffedcba9876543210"), "SM4");

    static byte[] random(int n) {
        byte[] b = new byte[n];
        R.nextBytes(b);
        return b;
    }

    @Test
    void digestsAndMacsSplitCloneAndReset() throws Exception {
        byte[] msg = random(9000);
        MessageDigest d = MessageDigest.getInstance("SM3", ProviderTest.P);
        byte[] whole = d.digest(msg);
        Mac mac = Mac.getInstance("HmacSM3", ProviderTest.P);
        mac.init(new SecretKeySpec(random(40), "HmacSM3"));
        byte[] tag = mac.doFinal(msg);
        for (int split : new int[] {0, 1, 63, 64, 65, 4095, 4096, 4097, 8999, 9000}) {
            d.update(msg, 0, split);
            MessageDigest c = (MessageDigest) d.clone();
            d.update(msg, split, msg.length - split);
            assertArrayEquals(whole, d.digest(), "split at " + split);
            c.update(msg, split, msg.length - split);
            assertArrayEquals(whole, c.digest(), "clone at " + split);
            mac.update(msg, 0, split);
            Mac m2 = (Mac) mac.clone();
            for (int i = split; i < msg.length; i++) {
                m2.update(msg[i]);
            }
            mac.update(msg, split, msg.length - split);
            assertArrayEquals(tag, mac.doFinal(), "mac split at " + split);
            assertArrayEquals(tag, m2.doFinal(), "mac clone at " + split);
        }
        d.update(random(10));
        d.reset();
        assertArrayEquals(whole, d.digest(msg));
        assertThrows(java.security.DigestException.class, () -> d.digest(new byte[31], 0, 31));
        assertThrows(IllegalStateException.class, () -> Mac.getInstance("HmacSM3", ProviderTest.P).doFinal());
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> mac.init(new SecretKeySpec(random(16), "HmacSM3"), new IvParameterSpec(new byte[16])));
    }

    static final String[] RAW = {"SM4/ECB/NoPadding", "SM4/ECB/PKCS5Padding", "SM4/CBC/NoPadding",
        "SM4/CBC/PKCS7Padding", "SM4/CFB/NoPadding", "SM4/OFB/NoPadding", "SM4/CTR/NoPadding", "SM4"};

    @Test
    void rawModesChunkedReusedAndInPlace() throws Exception {
        IvParameterSpec iv = new IvParameterSpec(random(16));
        for (String t : RAW) {
            boolean whole = t.contains("NoPadding") && (t.contains("ECB") || t.contains("CBC"));
            for (int len : new int[] {0, 1, 15, 16, 17, 31, 32, 100, 1000, 300_000}) {
                if (whole && len % 16 != 0) {
                    continue;
                }
                byte[] msg = random(len);
                Cipher c = Cipher.getInstance(t, ProviderTest.P);
                if (t.contains("ECB") || t.equals("SM4")) {
                    c.init(Cipher.ENCRYPT_MODE, KEY);
                } else {
                    c.init(Cipher.ENCRYPT_MODE, KEY, iv);
                }
                byte[] once = c.doFinal(msg);
                // Reused after doFinal: the same IV, the same ciphertext.
                assertArrayEquals(once, c.doFinal(msg), t + " reuse " + len);
                // Chunked at random.
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                int at = 0;
                while (at < len) {
                    int n = Math.min(len - at, R.nextInt(40));
                    byte[] part = c.update(msg, at, n);
                    if (part != null) {
                        out.write(part);
                    }
                    at += n;
                }
                out.write(c.doFinal());
                assertArrayEquals(once, out.toByteArray(), t + " chunked " + len);
                // In place.
                byte[] buf = Arrays.copyOf(msg, c.getOutputSize(len));
                int n = c.doFinal(buf, 0, len, buf, 0);
                assertArrayEquals(once, Arrays.copyOf(buf, n), t + " in place " + len);
                // Decrypted back.
                Cipher dcp = Cipher.getInstance(t, ProviderTest.P);
                if (c.getIV() == null) {
                    dcp.init(Cipher.DECRYPT_MODE, KEY);
                } else {
                    dcp.init(Cipher.DECRYPT_MODE, KEY, new IvParameterSpec(c.getIV()));
                }
                assertArrayEquals(msg, dcp.doFinal(once), t + " decrypt " + len);
                // Too small an output: refused, and the call can be repeated.
                if (len > 0) {
                    byte[] small = new byte[len - 1];
                    assertThrows(ShortBufferException.class, () -> dcp.doFinal(once, 0, once.length, small, 0));
                    assertArrayEquals(msg, dcp.doFinal(once), t + " after ShortBufferException");
                }
            }
        }
        // Bad padding and partial blocks are the standard exceptions.
        Cipher cbc = Cipher.getInstance("SM4/CBC/PKCS5Padding", ProviderTest.P);
        cbc.init(Cipher.DECRYPT_MODE, KEY, iv);
        assertThrows(BadPaddingException.class, () -> cbc.doFinal(random(32)));
        assertThrows(IllegalBlockSizeException.class, () -> cbc.doFinal(random(17)));
        Cipher raw = Cipher.getInstance("SM4/CBC/NoPadding", ProviderTest.P);
        raw.init(Cipher.ENCRYPT_MODE, KEY, iv);
        assertThrows(IllegalBlockSizeException.class, () -> raw.doFinal(random(15)));
    }

    /**
     * One cipher object re-initialised with key A, key B, then A again (and GCM with another
     * tag length) gives what a fresh object gives each time: the kept key schedule is the
     * current key's.
     */
    @Test
    void reinitialisedWithOtherKeysMatchesFreshCiphers() throws Exception {
        Random r = new Random(7);
        byte[] a = new byte[16];
        byte[] b = new byte[16];
        r.nextBytes(a);
        r.nextBytes(b);
        byte[] msg = new byte[100];
        r.nextBytes(msg);
        String[][] cases = {{"SM4/CBC/PKCS5Padding", "16"}, {"SM4/CTR/NoPadding", "16"}, {"SM4/GCM/NoPadding", "12"},
            {"SM4/CCM/NoPadding", "12"}};
        for (String[] c : cases) {
            Cipher reused = Cipher.getInstance(c[0], ProviderTest.P);
            int n = 0;
            for (byte[] key : new byte[][] {a, b, a, a, b}) {
                for (int tag : new int[] {128, 96}) {
                    byte[] iv = new byte[Integer.parseInt(c[1])];
                    iv[0] = (byte) ++n;
                    java.security.spec.AlgorithmParameterSpec spec = c[0].contains("CM/")
                            ? new GCMParameterSpec(tag, iv) : new IvParameterSpec(iv);
                    SecretKeySpec k = new SecretKeySpec(key, "SM4");
                    reused.init(Cipher.ENCRYPT_MODE, k, spec);
                    Cipher fresh = Cipher.getInstance(c[0], ProviderTest.P);
                    fresh.init(Cipher.ENCRYPT_MODE, k, spec);
                    byte[] ct = fresh.doFinal(msg);
                    assertArrayEquals(ct, reused.doFinal(msg), c[0] + " key " + (key == a ? "A" : "B") + " tag " + tag);
                    reused.init(Cipher.DECRYPT_MODE, k, spec);
                    assertArrayEquals(msg, reused.doFinal(ct));
                }
            }
        }
    }

    @Test
    void wrongKeysAndParametersAreTheStandardExceptions() throws Exception {
        Cipher c = Cipher.getInstance("SM4/CBC/PKCS5Padding", ProviderTest.P);
        assertThrows(InvalidKeyException.class, () -> c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(new byte[15], "SM4")));
        assertThrows(InvalidKeyException.class, () -> c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(new byte[24], "SM4")));
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> c.init(Cipher.ENCRYPT_MODE, KEY, new IvParameterSpec(new byte[12])));
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> c.init(Cipher.DECRYPT_MODE, KEY, (IvParameterSpec) null));
        Cipher ecb = Cipher.getInstance("SM4/ECB/NoPadding", ProviderTest.P);
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> ecb.init(Cipher.ENCRYPT_MODE, KEY, new IvParameterSpec(new byte[16])));
        Cipher gcm = Cipher.getInstance("SM4/GCM/NoPadding", ProviderTest.P);
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> gcm.init(Cipher.ENCRYPT_MODE, KEY, new GCMParameterSpec(128, new byte[0])));
        assertThrows(InvalidAlgorithmParameterException.class,
                () -> gcm.init(Cipher.ENCRYPT_MODE, KEY, new GCMParameterSpec(72, random(12))));
        assertThrows(java.security.NoSuchAlgorithmException.class,
                () -> Cipher.getInstance("SM4/XYZ/NoPadding", ProviderTest.P));
        assertThrows(javax.crypto.NoSuchPaddingException.class,
                () -> Cipher.getInstance("SM4/CTR/PKCS5Padding", ProviderTest.P));

        KeyPairGenerator g = KeyPairGenerator.getInstance("EC", ProviderTest.P);
        assertThrows(InvalidAlgorithmParameterException.class, () -> g.initialize(new ECGenParameterSpec("secp256r1")));
        g.initialize(new ECGenParameterSpec("sm2p256v1"));
        KeyPair kp = g.generateKeyPair();
        Signature s = Signature.getInstance("SM3withSM2", ProviderTest.P);
        KeyPair rsa = KeyPairGenerator.getInstance("RSA").generateKeyPair();
        assertThrows(InvalidKeyException.class, () -> s.initSign(rsa.getPrivate()));
        assertThrows(InvalidKeyException.class, () -> s.initVerify(rsa.getPublic()));
        KeyPairGenerator p256 = KeyPairGenerator.getInstance("EC", "SunEC");
        p256.initialize(new ECGenParameterSpec("secp256r1"));
        assertThrows(InvalidKeyException.class, () -> s.initSign(p256.generateKeyPair().getPrivate()));
        assertThrows(InvalidAlgorithmParameterException.class, () -> s.setParameter(new IvParameterSpec(new byte[16])));
        Cipher sm2 = Cipher.getInstance("SM2", ProviderTest.P);
        assertThrows(InvalidKeyException.class, () -> sm2.init(Cipher.ENCRYPT_MODE, KEY));
        assertThrows(InvalidKeyException.class, () -> sm2.init(Cipher.ENCRYPT_MODE, kp.getPrivate()));

        // A destroyed key signs nothing.
        Sm2PrivateKey priv = (Sm2PrivateKey) kp.getPrivate();
        priv.destroy();
        assertTrue(priv.isDestroyed());
        assertThrows(InvalidKeyException.class, () -> s.initSign(priv));
    }

    @Test
    void aeadReleasesNothingBeforeTheTagAndNeverReusesAnIv() throws Exception {
        for (String t : new String[] {"SM4/GCM/NoPadding", "SM4/CCM/NoPadding"}) {
            for (int len : new int[] {0, 1, 16, 1000, 300_000, 1 << 20}) {
                if (t.contains("CCM") && len > 300_000) {
                    continue;
                }
                byte[] msg = random(len);
                byte[] aad = random(20);
                GCMParameterSpec spec = new GCMParameterSpec(128, random(12));
                Cipher enc = Cipher.getInstance(t, ProviderTest.P);
                enc.init(Cipher.ENCRYPT_MODE, KEY, spec);
                enc.updateAAD(aad, 0, 10);
                enc.updateAAD(aad, 10, 10);
                byte[] sealed = concat(enc.update(msg, 0, len / 2), enc.doFinal(msg, len / 2, len - len / 2));
                assertEquals(len + 16, sealed.length);
                // The key and IV are spent: no second encryption until a new IV.
                assertThrows(IllegalStateException.class, () -> enc.doFinal(msg));
                assertThrows(InvalidAlgorithmParameterException.class, () -> enc.init(Cipher.ENCRYPT_MODE, KEY, spec));
                Cipher dec = Cipher.getInstance(t, ProviderTest.P);
                dec.init(Cipher.DECRYPT_MODE, KEY, spec);
                dec.updateAAD(aad);
                assertEquals(0, dec.update(sealed, 0, sealed.length / 2).length, "nothing before the tag");
                assertArrayEquals(msg, dec.doFinal(sealed, sealed.length / 2, sealed.length - sealed.length / 2));
                // Reusable for decryption, and AAD comes first.
                dec.update(sealed, 0, 1);
                assertThrows(IllegalStateException.class, () -> dec.updateAAD(aad));
                dec.init(Cipher.DECRYPT_MODE, KEY, spec);
                for (int bit : new int[] {0, sealed.length * 8 / 2, sealed.length * 8 - 1}) {
                    byte[] bad = sealed.clone();
                    bad[bit / 8] ^= (byte) (1 << (bit % 8));
                    byte[] out = new byte[len + 16];
                    Arrays.fill(out, (byte) 0x55);
                    dec.updateAAD(aad);
                    assertThrows(AEADBadTagException.class, () -> dec.doFinal(bad, 0, bad.length, out, 0));
                    for (byte b : out) {
                        assertEquals(0x55, b, t + ": output written for a forged message");
                    }
                }
                dec.updateAAD(aad);
                byte[] in = sealed.clone();
                int n = dec.doFinal(in, 0, in.length, in, 0);
                assertArrayEquals(msg, Arrays.copyOf(in, n), t + " in place");
            }
        }
    }

    static byte[] concat(byte[] a, byte[] b) {
        return WycheproofTest.concat(a == null ? new byte[0] : a, b);
    }

    @Test
    void signaturesResetAfterEachMessage() throws Exception {
        KeyPair kp = KeyPairGenerator.getInstance("SM2", ProviderTest.P).generateKeyPair();
        Signature s = Signature.getInstance("SM3withSM2", ProviderTest.P);
        s.initSign(kp.getPrivate());
        byte[] msg = random(5000);
        s.update(msg, 0, 100);
        s.update(msg, 100, 4900);
        byte[] a = s.sign();
        s.update(msg);
        byte[] b = s.sign();
        Signature v = Signature.getInstance("SM3withSM2", ProviderTest.P);
        v.initVerify(kp.getPublic());
        for (byte[] sig : new byte[][] {a, b}) {
            for (int i = 0; i < msg.length; i += 1000) {
                v.update(msg, i, Math.min(1000, msg.length - i));
            }
            assertTrue(v.verify(sig));
        }
        v.update(msg, 1, msg.length - 1);
        assertFalse(v.verify(a));
        byte[] bad = a.clone();
        bad[bad.length - 1] ^= 1;
        v.update(msg);
        assertFalse(v.verify(bad));
        v.update(msg);
        assertFalse(v.verify(new byte[] {0x30, 0}));
    }
}
