package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import java.security.AlgorithmParameters;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.jcajce.spec.AEADParameterSpec;
import org.bouncycastle.jcajce.spec.SM2KeyExchangeSpec;
import org.bouncycastle.jcajce.spec.SM2ParameterSpec;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.junit.jupiter.api.Test;

/** shangmi against BouncyCastle 1.87, both ways, for everything both do. */
class BcDifferentialTest extends Differential {
    static final Provider BC = new BouncyCastleProvider();

    static KeyPair bcPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC", BC);
        g.initialize(new ECGenParameterSpec("sm2p256v1"));
        return g.generateKeyPair();
    }

    @Test
    void sm3AndHmac() throws Exception {
        digests(BC);
    }

    @Test
    void sm4EveryModeAndPadding() throws Exception {
        for (String t : new String[] {"SM4/ECB/PKCS5Padding", "SM4/ECB/PKCS7Padding", "SM4/CBC/PKCS5Padding",
            "SM4/CBC/PKCS7Padding", "SM4/CTR/NoPadding", "SM4/CFB/NoPadding", "SM4/OFB/NoPadding"}) {
            sm4(BC, t, false, false);
        }
        sm4(BC, "SM4/ECB/NoPadding", true, false);
        sm4(BC, "SM4/CBC/NoPadding", true, false);
        sm4(BC, "SM4/GCM/NoPadding", false, true);
        sm4(BC, "SM4/CCM/NoPadding", false, true);
    }

    @Test
    void signaturesBothWaysWithBothIds() throws Exception {
        KeyPair ours = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
        KeyPair theirs = bcPair();
        byte[] id = "alice@example.cn".getBytes("UTF-8");
        for (SM2ParameterSpec spec : new SM2ParameterSpec[] {null, new SM2ParameterSpec(id)}) {
            signs(Signature.getInstance("SM3withSM2", US), ours.getPrivate(), spec,
                    Signature.getInstance("SM3withSM2", BC), ours.getPublic(), spec);
            signs(Signature.getInstance("SM3withSM2", BC), theirs.getPrivate(), spec,
                    Signature.getInstance("SM3withSM2", US), theirs.getPublic(), spec);
        }
    }

    @Test
    void encryptionBothWaysInBothRawLayouts() throws Exception {
        KeyPair kp = bcPair();
        for (String[] t : new String[][] {{"SM2", "SM2"}, {"SM2/C1C2C3/NoPadding", "SM2"},
            {"SM2/C1C3C2/NoPadding", "SM2/C1C3C2/NoPadding"}}) {
            for (int len : new int[] {1, 31, 32, 33, 1000}) {
                byte[] msg = random(len);
                Cipher ours = Cipher.getInstance(t[0], US);
                Cipher theirs = Cipher.getInstance(t[1], BC);
                ours.init(Cipher.ENCRYPT_MODE, kp.getPublic());
                theirs.init(Cipher.DECRYPT_MODE, kp.getPrivate());
                assertArrayEquals(msg, theirs.doFinal(ours.doFinal(msg)), t[0] + " to BC");
                theirs.init(Cipher.ENCRYPT_MODE, kp.getPublic());
                ours.init(Cipher.DECRYPT_MODE, kp.getPrivate());
                assertArrayEquals(msg, ours.doFinal(theirs.doFinal(msg)), "BC to " + t[0]);
            }
        }
    }

    @Test
    void keyEncodingsBothWays() throws Exception {
        KeyPair ours = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
        KeyFactory bcf = KeyFactory.getInstance("EC", BC);
        PublicKey pub = bcf.generatePublic(new X509EncodedKeySpec(ours.getPublic().getEncoded()));
        PrivateKey priv = bcf.generatePrivate(new PKCS8EncodedKeySpec(ours.getPrivate().getEncoded()));
        assertEquals(ours.getPublic(), KeyFactory.getInstance("EC", US).translateKey(pub));
        Signature bcSig = Signature.getInstance("SM3withSM2", BC);
        bcSig.initSign(priv);
        bcSig.update(new byte[3]);
        Signature v = Signature.getInstance("SM3withSM2", US);
        v.initVerify(ours.getPublic());
        v.update(new byte[3]);
        assertEquals(true, v.verify(bcSig.sign()));

        KeyPair theirs = bcPair();
        KeyFactory f = KeyFactory.getInstance("EC", US);
        PublicKey p2 = f.generatePublic(new X509EncodedKeySpec(theirs.getPublic().getEncoded()));
        PrivateKey k2 = f.generatePrivate(new PKCS8EncodedKeySpec(theirs.getPrivate().getEncoded()));
        assertEquals(((java.security.interfaces.ECPublicKey) theirs.getPublic()).getW(),
                ((java.security.interfaces.ECPublicKey) p2).getW());
        assertEquals(((java.security.interfaces.ECPrivateKey) theirs.getPrivate()).getS(),
                ((java.security.interfaces.ECPrivateKey) k2).getS());
        // Specs, and BC's key objects given straight to ours.
        f.generatePublic(f.getKeySpec(theirs.getPublic(), ECPublicKeySpec.class));
        f.generatePrivate(f.getKeySpec(theirs.getPrivate(), ECPrivateKeySpec.class));
        signs(Signature.getInstance("SM3withSM2", US), theirs.getPrivate(), null,
                Signature.getInstance("SM3withSM2", BC), theirs.getPublic(), null);
    }

    @Test
    void keyExchangeInBothRoles() throws Exception {
        for (boolean weInitiate : new boolean[] {true, false}) {
            KeyPair us = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
            KeyPair usR = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
            KeyPair them = bcPair();
            KeyPair themR = bcPair();
            byte[] idUs = "us".getBytes("UTF-8");
            byte[] idThem = "them".getBytes("UTF-8");
            KeyAgreement a = KeyAgreement.getInstance("SM2", US);
            a.init(us.getPrivate(), new SM2KeyExchangeSpec(weInitiate, usR.getPrivate(), themR.getPublic(), idUs, idThem));
            a.doPhase(them.getPublic(), true);
            // BouncyCastle takes its own key objects only: ours re-read by its factory.
            KeyFactory bcf = KeyFactory.getInstance("EC", BC);
            PublicKey usPub = bcf.generatePublic(new X509EncodedKeySpec(us.getPublic().getEncoded()));
            PublicKey usRPub = bcf.generatePublic(new X509EncodedKeySpec(usR.getPublic().getEncoded()));
            KeyAgreement b = KeyAgreement.getInstance("SM2", BC);
            b.init(them.getPrivate(), new SM2KeyExchangeSpec(!weInitiate, themR.getPrivate(), usRPub, idThem, idUs));
            b.doPhase(usPub, true);
            assertArrayEquals(b.generateSecret(), a.generateSecret(), "initiator: us " + weInitiate);
        }
    }

    @Test
    void pbkdf2() throws Exception {
        for (int i = 0; i < 10; i++) {
            char[] pw = ("pass word " + i + " 口令").toCharArray();
            PBEKeySpec spec = new PBEKeySpec(pw, random(16), 1 + r.nextInt(3000), 8 * (1 + r.nextInt(64)));
            assertArrayEquals(SecretKeyFactory.getInstance("PBKDF2WithHmacSM3", BC).generateSecret(spec).getEncoded(),
                    SecretKeyFactory.getInstance("PBKDF2WithHmacSM3", US).generateSecret(spec).getEncoded());
        }
    }

    /**
     * GCM and CCM AlgorithmParameters encode as BouncyCastle's do, and BouncyCastle's
     * AEADParameterSpec (which BCJSSE falls back on) means the same nonce, tag and AAD here.
     */
    @Test
    void aeadParametersAndBcSpec() throws Exception {
        for (String mode : new String[] {"GCM", "CCM"}) {
            for (int tagBits : new int[] {96, 112, 128}) {
                GCMParameterSpec g = new GCMParameterSpec(tagBits, random(12));
                AlgorithmParameters theirs = AlgorithmParameters.getInstance(mode, BC);
                theirs.init(g);
                AlgorithmParameters ours = AlgorithmParameters.getInstance(mode, US);
                ours.init(g);
                assertArrayEquals(theirs.getEncoded(), ours.getEncoded(), mode + " " + tagBits);
                AlgorithmParameters back = AlgorithmParameters.getInstance(mode, US);
                back.init(theirs.getEncoded());
                GCMParameterSpec got = back.getParameterSpec(GCMParameterSpec.class);
                assertEquals(tagBits, got.getTLen());
                assertArrayEquals(g.getIV(), got.getIV());

                SecretKeySpec key = new SecretKeySpec(random(16), "SM4");
                byte[] aad = random(13);
                byte[] msg = random(100);
                Cipher bc = Cipher.getInstance("SM4/" + mode + "/NoPadding", BC);
                bc.init(Cipher.ENCRYPT_MODE, key, new AEADParameterSpec(g.getIV(), tagBits, aad));
                byte[] expected = bc.doFinal(msg);
                Cipher us = Cipher.getInstance("SM4/" + mode + "/NoPadding", US);
                us.init(Cipher.ENCRYPT_MODE, key, new AEADParameterSpec(g.getIV(), tagBits, aad));
                assertArrayEquals(expected, us.doFinal(msg), mode + " AEADParameterSpec");
                us.init(Cipher.DECRYPT_MODE, key, ours);
                us.updateAAD(aad);
                assertArrayEquals(msg, us.doFinal(expected));
                assertArrayEquals(theirs.getEncoded(), us.getParameters().getEncoded());
            }
        }
    }
}
