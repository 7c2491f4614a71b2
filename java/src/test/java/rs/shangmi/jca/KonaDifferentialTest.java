package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tencent.kona.crypto.KonaCryptoProvider;
import com.tencent.kona.crypto.spec.SM2KeyAgreementParamSpec;
import com.tencent.kona.crypto.spec.SM2PrivateKeySpec;
import com.tencent.kona.crypto.spec.SM2PublicKeySpec;
import com.tencent.kona.crypto.spec.SM2SignatureParameterSpec;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import org.junit.jupiter.api.Test;

/** shangmi against Tencent Kona 1.0.19 (its pure-Java provider), both ways. */
class KonaDifferentialTest extends Differential {
    static final Provider KONA = new KonaCryptoProvider();

    static KeyPair konaPair() throws Exception {
        return KeyPairGenerator.getInstance("SM2", KONA).generateKeyPair();
    }

    @Test
    void sm3AndHmac() throws Exception {
        digests(KONA);
    }

    @Test
    void sm4InKonasModes() throws Exception {
        // Kona takes PKCS7Padding (not PKCS5Padding) and CBC, CTR, ECB and GCM.
        sm4(KONA, "SM4/CBC/PKCS7Padding", false, false);
        sm4(KONA, "SM4/ECB/PKCS7Padding", false, false);
        sm4(KONA, "SM4/CTR/NoPadding", false, false);
        sm4(KONA, "SM4/CBC/NoPadding", true, false);
        sm4(KONA, "SM4/GCM/NoPadding", false, true);
    }

    @Test
    void signaturesBothWaysWithKonasSpec() throws Exception {
        KeyPair ours = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
        KeyPair theirs = konaPair();
        byte[] id = "bob@example.cn".getBytes("UTF-8");
        // Kona takes our keys as any ECPrivateKey/ECPublicKey.
        signs(Signature.getInstance("SM2", US), ours.getPrivate(),
                new SM2SignatureParameterSpec(id, (ECPublicKey) ours.getPublic()),
                Signature.getInstance("SM2", KONA), ours.getPublic(),
                new SM2SignatureParameterSpec(id, (ECPublicKey) ours.getPublic()));
        signs(Signature.getInstance("SM2", KONA), theirs.getPrivate(),
                new SM2SignatureParameterSpec((ECPublicKey) theirs.getPublic()),
                Signature.getInstance("SM3withSM2", US), theirs.getPublic(), null);
        signs(Signature.getInstance("SM2", KONA), theirs.getPrivate(),
                new SM2SignatureParameterSpec(id, (ECPublicKey) theirs.getPublic()),
                Signature.getInstance("SM3withSM2", US), theirs.getPublic(),
                new SM2SignatureParameterSpec(id, (ECPublicKey) theirs.getPublic()));
    }

    @Test
    void encryptionInKonasDerLayoutBothWays() throws Exception {
        KeyPair kp = konaPair();
        for (int len : new int[] {1, 32, 33, 1000}) {
            byte[] msg = random(len);
            Cipher ours = Cipher.getInstance("SM2/ASN1/NoPadding", US);
            Cipher theirs = Cipher.getInstance("SM2", KONA);
            ours.init(Cipher.ENCRYPT_MODE, kp.getPublic());
            theirs.init(Cipher.DECRYPT_MODE, kp.getPrivate());
            assertArrayEquals(msg, theirs.doFinal(ours.doFinal(msg)), "to Kona");
            theirs.init(Cipher.ENCRYPT_MODE, kp.getPublic());
            // Plain "SM2" tells Kona's DER from the raw layouts by itself.
            Cipher plain = Cipher.getInstance("SM2", US);
            plain.init(Cipher.DECRYPT_MODE, kp.getPrivate());
            assertArrayEquals(msg, plain.doFinal(theirs.doFinal(msg)), "from Kona");
        }
    }

    @Test
    void keysBothWays() throws Exception {
        KeyPair theirs = konaPair();
        KeyFactory f = KeyFactory.getInstance("SM2", US);
        // Kona's raw specs are EC key specs.
        PublicKey pub = f.generatePublic(new SM2PublicKeySpec(((ECPublicKey) theirs.getPublic()).getW()));
        PrivateKey priv = f.generatePrivate(new SM2PrivateKeySpec(((ECPrivateKey) theirs.getPrivate()).getS()));
        assertEquals(((ECPublicKey) theirs.getPublic()).getW(), ((ECPublicKey) pub).getW());
        signs(Signature.getInstance("SM2", US), priv, null, Signature.getInstance("SM2", KONA), theirs.getPublic(),
                new SM2SignatureParameterSpec((ECPublicKey) theirs.getPublic()));
        KeyPair ours = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
        KeyFactory kf = KeyFactory.getInstance("SM2", KONA);
        PublicKey kp = kf.generatePublic(new SM2PublicKeySpec(((ECPublicKey) ours.getPublic()).getW()));
        PrivateKey kk = kf.generatePrivate(new SM2PrivateKeySpec(((ECPrivateKey) ours.getPrivate()).getS()));
        signs(Signature.getInstance("SM2", KONA), kk, new SM2SignatureParameterSpec((ECPublicKey) kp),
                Signature.getInstance("SM2", US), ours.getPublic(), null);
    }

    @Test
    void keyExchangeInBothRoles() throws Exception {
        for (boolean weInitiate : new boolean[] {true, false}) {
            KeyPair us = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
            KeyPair usR = KeyPairGenerator.getInstance("SM2", US).generateKeyPair();
            KeyPair them = konaPair();
            KeyPair themR = konaPair();
            byte[] idUs = "us".getBytes("UTF-8");
            byte[] idThem = "them".getBytes("UTF-8");
            KeyAgreement a = KeyAgreement.getInstance("SM2", US);
            a.init(usR.getPrivate(), new SM2KeyAgreementParamSpec(idUs, (ECPrivateKey) us.getPrivate(),
                    (ECPublicKey) us.getPublic(), idThem, (ECPublicKey) them.getPublic(), weInitiate, 32));
            a.doPhase(themR.getPublic(), true);
            KeyAgreement b = KeyAgreement.getInstance("SM2", KONA);
            b.init(themR.getPrivate(), new SM2KeyAgreementParamSpec(idThem, (ECPrivateKey) them.getPrivate(),
                    (ECPublicKey) them.getPublic(), idUs, (ECPublicKey) us.getPublic(), !weInitiate, 32));
            b.doPhase(usR.getPublic(), true);
            assertArrayEquals(b.generateSecret(), a.generateSecret(), "initiator: us " + weInitiate);
        }
    }
}
