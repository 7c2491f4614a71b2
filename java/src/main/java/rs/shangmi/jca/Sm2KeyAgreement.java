package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.KeyAgreementSpi;
import javax.crypto.SecretKey;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

/**
 * KeyAgreement SM2 (GB/T 32918.3) and ECDH on sm2p256v1.
 *
 * <p>SM2 takes either provider's way of giving the exchange's four keys. BouncyCastle's:
 * {@code init(ownStaticPrivate, SM2KeyExchangeSpec(initiator, ownEphemeralPrivate,
 * peerEphemeralPublic, id, peerId))}, then {@code doPhase(peerStaticPublic, true)}; a 16-byte
 * key. Kona's: {@code init(ownEphemeralPrivate, SM2KeyAgreementParamSpec(id, ownStaticPrivate,
 * ownStaticPublic, peerId, peerStaticPublic, initiator, keyLength))}, then {@code
 * doPhase(peerEphemeralPublic, true)}; a key of the length asked. Either way the ephemeral key
 * is consumed: do not run a second exchange with it.
 *
 * <p>ECDH returns x(d Q), 32 bytes (as a {@code TlsPremasterSecret} for BCJSSE's curveSM2).
 */
public abstract class Sm2KeyAgreement extends KeyAgreementSpi {
    private final boolean sm2;
    private Sm2PrivateKey own;
    private Sm2PrivateKey ephemeral;
    private byte[] id;
    private byte[] peerId;
    private boolean initiator;
    private int keyLen;
    /** Which key doPhase brings: the peer's static key (BouncyCastle's way) or ephemeral one. */
    private boolean phaseIsStatic;
    private Sm2PublicKey peerStatic;
    private Sm2PublicKey peerEphemeral;
    private byte[] secret;

    Sm2KeyAgreement(boolean sm2) {
        Native.init();
        this.sm2 = sm2;
    }

    /** KeyAgreement SM2. */
    public static final class Sm2 extends Sm2KeyAgreement {
        public Sm2() {
            super(true);
        }
    }

    /** KeyAgreement ECDH on the SM2 curve. */
    public static final class Ecdh extends Sm2KeyAgreement {
        public Ecdh() {
            super(false);
        }
    }

    @Override
    protected void engineInit(Key key, SecureRandom random) throws InvalidKeyException {
        if (sm2) {
            throw new InvalidKeyException("SM2 key agreement needs SM2KeyExchangeSpec or SM2KeyAgreementParamSpec");
        }
        reset();
        own = Sm2Keys.toPrivate(privateKey(key));
    }

    private static PrivateKey privateKey(Key key) throws InvalidKeyException {
        if (!(key instanceof PrivateKey)) {
            throw new InvalidKeyException("a private key to agree with");
        }
        return (PrivateKey) key;
    }

    private static Sm2PublicKey publicKey(Object key) throws InvalidKeyException {
        if (!(key instanceof PublicKey)) {
            throw new InvalidKeyException("a public key, not " + (key == null ? "null" : key.getClass().getName()));
        }
        return Sm2Keys.toPublic((PublicKey) key);
    }

    private static PrivateKey privateOf(Object key) throws InvalidKeyException {
        if (!(key instanceof PrivateKey)) {
            throw new InvalidKeyException("a private key, not " + (key == null ? "null" : key.getClass().getName()));
        }
        return (PrivateKey) key;
    }

    private static byte[] bytes(Object v, byte[] dflt) {
        return v instanceof byte[] ? ((byte[]) v).clone() : dflt.clone();
    }

    @Override
    protected void engineInit(Key key, AlgorithmParameterSpec params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        if (!sm2) {
            if (params != null) {
                throw new InvalidAlgorithmParameterException("ECDH takes no parameters");
            }
            engineInit(key, random);
            return;
        }
        reset();
        if (Specs.named(params, "SM2KeyExchangeSpec")) {
            own = Sm2Keys.toPrivate(privateKey(key));
            ephemeral = Sm2Keys.toPrivate(privateOf(Specs.call(params, "getEphemeralPrivateKey")));
            peerEphemeral = publicKey(Specs.call(params, "getOtherPartyEphemeralKey"));
            id = bytes(Specs.call(params, "getId"), Sm2Signature.DEFAULT_ID);
            peerId = bytes(Specs.call(params, "getOtherPartyId"), Sm2Signature.DEFAULT_ID);
            initiator = Boolean.TRUE.equals(Specs.call(params, "isInitiator"));
            keyLen = 16;
            phaseIsStatic = true;
        } else if (Specs.named(params, "SM2KeyAgreementParamSpec")) {
            ephemeral = Sm2Keys.toPrivate(privateKey(key));
            own = Sm2Keys.toPrivate(privateOf(Specs.call(params, "privateKey")));
            peerStatic = publicKey(Specs.call(params, "peerPublicKey"));
            id = bytes(Specs.call(params, "id"), Sm2Signature.DEFAULT_ID);
            peerId = bytes(Specs.call(params, "peerId"), Sm2Signature.DEFAULT_ID);
            initiator = Boolean.TRUE.equals(Specs.call(params, "isInitiator"));
            Object n = Specs.call(params, "sharedKeyLength");
            keyLen = n instanceof Integer ? (Integer) n : 16;
            phaseIsStatic = false;
        } else {
            throw new InvalidAlgorithmParameterException(
                    "SM2 key agreement takes BouncyCastle's SM2KeyExchangeSpec or Kona's SM2KeyAgreementParamSpec");
        }
        if (keyLen <= 0) {
            throw new InvalidAlgorithmParameterException("SM2 key agreement: a positive key length");
        }
    }

    @Override
    protected Key engineDoPhase(Key key, boolean lastPhase) throws InvalidKeyException {
        if (own == null) {
            throw new IllegalStateException("key agreement not initialised");
        }
        if (!lastPhase) {
            throw new IllegalStateException("SM2 and ECDH agree between two parties: one phase");
        }
        final Sm2PublicKey peer = publicKey(key);
        if (!sm2) {
            secret = own.key().use(new Sm2Key.Op<byte[]>() {
                @Override
                public byte[] run(final long h) {
                    return peer.key().use(new Sm2Key.Op<byte[]>() {
                        @Override
                        public byte[] run(long p) {
                            return Native.sm2Ecdh(h, p);
                        }
                    });
                }
            });
            return null;
        }
        if (phaseIsStatic) {
            peerStatic = peer;
        } else {
            peerEphemeral = peer;
        }
        final byte[] r = Sm2Curve.bytes32(ephemeral.getS());
        final byte[] peerR = peerEphemeral.point();
        try {
            secret = own.key().use(new Sm2Key.Op<byte[]>() {
                @Override
                public byte[] run(final long h) {
                    return peerStatic.key().use(new Sm2Key.Op<byte[]>() {
                        @Override
                        public byte[] run(long p) {
                            return Native.sm2Exchange(h, r, initiator, id, p, peerId, peerR, keyLen);
                        }
                    });
                }
            });
        } catch (IllegalArgumentException e) {
            throw new InvalidKeyException("SM2 key agreement: " + e.getMessage(), e);
        } finally {
            Arrays.fill(r, (byte) 0);
        }
        return null;
    }

    private byte[] take() {
        if (secret == null) {
            throw new IllegalStateException("key agreement not completed (doPhase)");
        }
        byte[] s = secret;
        secret = null;
        return s;
    }

    @Override
    protected byte[] engineGenerateSecret() {
        return take();
    }

    @Override
    protected int engineGenerateSecret(byte[] out, int off) throws ShortBufferException {
        if (secret == null) {
            throw new IllegalStateException("key agreement not completed (doPhase)");
        }
        if (out == null || off < 0 || out.length - off < secret.length) {
            throw new ShortBufferException(secret.length + " bytes needed");
        }
        byte[] s = take();
        System.arraycopy(s, 0, out, off, s.length);
        Arrays.fill(s, (byte) 0);
        return s.length;
    }

    @Override
    protected SecretKey engineGenerateSecret(String algorithm) throws NoSuchAlgorithmException {
        byte[] s = take();
        try {
            return new SecretKeySpec(s, algorithm);
        } finally {
            Arrays.fill(s, (byte) 0);
        }
    }

    private void reset() {
        own = null;
        ephemeral = null;
        peerStatic = null;
        peerEphemeral = null;
        if (secret != null) {
            Arrays.fill(secret, (byte) 0);
            secret = null;
        }
    }
}
