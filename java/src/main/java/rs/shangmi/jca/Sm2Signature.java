package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.SignatureException;
import java.security.SignatureSpi;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;

/**
 * Signature SM3withSM2 (also named SM2): e = SM3(Z || M) hashed in Java as the message
 * arrives, signed or verified by the library; signatures are DER (SEQUENCE of r and s), as
 * BouncyCastle, Kona, OpenSSL and GmSSL write them. The ID is GM/T 0009's default
 * {@code 1234567812345678} unless a parameter spec gives one: BouncyCastle's SM2ParameterSpec
 * or Kona's SM2SignatureParameterSpec, before or after init (not once the message has
 * begun). The nonce comes from the operating system's generator, hedged with the key and the
 * message: a SecureRandom passed to {@code initSign} is not used.
 */
public final class Sm2Signature extends SignatureSpi {
    static final byte[] DEFAULT_ID = "1234567812345678".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private Sm2PrivateKey signer;
    private Sm2PublicKey verifier;
    private byte[] id = DEFAULT_ID;
    private Sm3Engine hash;
    private boolean started;

    public Sm2Signature() {
        Native.init();
    }

    @Override
    protected void engineInitVerify(PublicKey publicKey) throws InvalidKeyException {
        verifier = Sm2Keys.toPublic(publicKey);
        signer = null;
        begin();
    }

    @Override
    protected void engineInitSign(PrivateKey privateKey) throws InvalidKeyException {
        signer = Sm2Keys.toPrivate(privateKey);
        verifier = signer.publicKey();
        begin();
    }

    @Override
    protected void engineInitSign(PrivateKey privateKey, SecureRandom random) throws InvalidKeyException {
        engineInitSign(privateKey);
    }

    /** Z of the key under the ID, absorbed first. */
    private void begin() {
        final byte[] z = new byte[32];
        verifier.key().use(new Sm2Key.Op<Void>() {
            @Override
            public Void run(long h) {
                Native.sm2Z(h, id, z);
                return null;
            }
        });
        zState = new Sm3Engine();
        zState.update(z, 0, 32);
        hash = zState.clone();
        started = false;
    }

    /** The hash just after Z, to start each next message from. */
    private Sm3Engine zState;

    private Sm3Engine hash() throws SignatureException {
        if (hash == null) {
            throw new SignatureException("SM3withSM2 not initialised");
        }
        return hash;
    }

    @Override
    protected void engineUpdate(byte b) throws SignatureException {
        hash().update(b);
        started = true;
    }

    @Override
    protected void engineUpdate(byte[] b, int off, int len) throws SignatureException {
        Checks.range(b, off, len);
        hash().update(b, off, len);
        started = true;
    }

    private byte[] digest() throws SignatureException {
        byte[] e = new byte[32];
        hash().digest(e, 0);
        hash = zState.clone();
        started = false;
        return e;
    }

    @Override
    protected byte[] engineSign() throws SignatureException {
        if (signer == null) {
            throw new SignatureException("SM3withSM2 not initialised for signing");
        }
        final byte[] e = digest();
        final byte[] out = new byte[72];
        int n = signer.key().use(new Sm2Key.Op<Integer>() {
            @Override
            public Integer run(long h) {
                return Native.sm2SignDigest(h, e, out, 0);
            }
        });
        return Arrays.copyOf(out, n);
    }

    @Override
    protected boolean engineVerify(final byte[] sig) throws SignatureException {
        if (verifier == null || signer != null) {
            throw new SignatureException("SM3withSM2 not initialised for verification");
        }
        final byte[] e = digest();
        if (sig == null) {
            return false;
        }
        return verifier.key().use(new Sm2Key.Op<Boolean>() {
            @Override
            public Boolean run(long h) {
                return Native.sm2VerifyDigest(h, e, sig, 0, sig.length);
            }
        });
    }

    @Override
    protected void engineSetParameter(AlgorithmParameterSpec params) throws InvalidAlgorithmParameterException {
        byte[] newId = params == null ? null : Specs.signatureId(params);
        if (newId == null) {
            throw new InvalidAlgorithmParameterException(
                    "SM3withSM2 takes BouncyCastle's SM2ParameterSpec or Kona's SM2SignatureParameterSpec");
        }
        if (newId.length > 8191) {
            throw new InvalidAlgorithmParameterException("an SM2 ID is at most 8191 bytes");
        }
        if (started) {
            throw new InvalidAlgorithmParameterException("SM3withSM2: the ID is set before the message");
        }
        id = newId;
        if (verifier != null) {
            begin();
        }
    }

    @Override
    @Deprecated
    protected void engineSetParameter(String param, Object value) {
        throw new java.security.InvalidParameterException("SM3withSM2 takes an AlgorithmParameterSpec");
    }

    @Override
    @Deprecated
    protected Object engineGetParameter(String param) {
        throw new java.security.InvalidParameterException("SM3withSM2 has no string parameters");
    }
}
