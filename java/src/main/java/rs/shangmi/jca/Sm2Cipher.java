package rs.shangmi.jca;

import java.security.AlgorithmParameters;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import java.util.Locale;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.CipherSpi;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.ShortBufferException;

/**
 * Cipher SM2 (also SM2withSM3): public-key encryption (GB/T 32918.4) in three layouts, chosen
 * by the mode: {@code C1C3C2} (the standard's, raw), {@code C1C2C3} (the 2010 draft's, raw,
 * BouncyCastle's default) and {@code ASN1} (GM/T 0009's DER of C1, C3 and C2: Kona's and
 * OpenSSL's). Plain "SM2" takes the layout in the system property {@value #DEFAULT_PROPERTY}
 * (C1C2C3 unless set, as BouncyCastle's "SM2"). Decryption tells DER (which starts 0x30) from
 * the raw layouts (0x04) by itself; between the two raw orders only the mode can say. The
 * nonce is the library's, from the operating system; a SecureRandom passed to init is not used.
 */
public final class Sm2Cipher extends CipherSpi {
    static final String DEFAULT_PROPERTY = "rs.shangmi.sm2.cipher";
    private static final int C1C3C2 = 0;
    private static final int C1C2C3 = 1;
    private static final int DER = 2;

    private int layout = -1;
    private Sm2PublicKey encryptTo;
    private Sm2PrivateKey decryptWith;
    private final Bytes data = new Bytes();

    public Sm2Cipher() {
        Native.init();
    }

    private static int parse(String mode) throws NoSuchAlgorithmException {
        String m = mode.toUpperCase(Locale.ROOT);
        if (m.equals("C1C3C2")) {
            return C1C3C2;
        }
        if (m.equals("C1C2C3")) {
            return C1C2C3;
        }
        if (m.equals("ASN1") || m.equals("ASN.1") || m.equals("DER")) {
            return DER;
        }
        throw new NoSuchAlgorithmException("SM2: no layout " + mode + " (C1C3C2, C1C2C3 or ASN1)");
    }

    private int layout() {
        if (layout >= 0) {
            return layout;
        }
        try {
            return parse(System.getProperty(DEFAULT_PROPERTY, "C1C2C3"));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("-D" + DEFAULT_PROPERTY + ": " + e.getMessage(), e);
        }
    }

    @Override
    protected void engineSetMode(String mode) throws NoSuchAlgorithmException {
        if (mode.equalsIgnoreCase("NONE") || mode.equalsIgnoreCase("ECB")) {
            layout = -1;
            return;
        }
        layout = parse(mode);
    }

    @Override
    protected void engineSetPadding(String padding) throws NoSuchPaddingException {
        if (!padding.equalsIgnoreCase("NoPadding")) {
            throw new NoSuchPaddingException("SM2 takes NoPadding");
        }
    }

    @Override
    protected int engineGetBlockSize() {
        return 0;
    }

    @Override
    protected int engineGetOutputSize(int inputLen) {
        long n = (long) data.length + Math.max(inputLen, 0);
        // C1 (65 bytes, or two INTEGERs in DER), C3 (32) and C2, with DER's headers.
        return (int) Math.min(Integer.MAX_VALUE, encryptTo != null ? n + 97 + 20 : n);
    }

    @Override
    protected byte[] engineGetIV() {
        return null;
    }

    @Override
    protected AlgorithmParameters engineGetParameters() {
        return null;
    }

    @Override
    protected void engineInit(int opmode, Key key, SecureRandom random) throws InvalidKeyException {
        data.clear();
        encryptTo = null;
        decryptWith = null;
        if (opmode == Cipher.ENCRYPT_MODE || opmode == Cipher.WRAP_MODE) {
            if (!(key instanceof PublicKey)) {
                throw new InvalidKeyException("SM2 encrypts to a public key");
            }
            encryptTo = Sm2Keys.toPublic(key);
        } else if (opmode == Cipher.DECRYPT_MODE || opmode == Cipher.UNWRAP_MODE) {
            if (!(key instanceof PrivateKey)) {
                throw new InvalidKeyException("SM2 decrypts with a private key");
            }
            decryptWith = Sm2Keys.toPrivate(key);
        } else {
            throw new java.security.InvalidParameterException("SM2: no such mode of operation " + opmode);
        }
    }

    @Override
    protected void engineInit(int opmode, Key key, AlgorithmParameterSpec params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        if (params != null) {
            throw new InvalidAlgorithmParameterException("SM2 encryption takes no parameters");
        }
        engineInit(opmode, key, random);
    }

    @Override
    protected void engineInit(int opmode, Key key, AlgorithmParameters params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        if (params != null) {
            throw new InvalidAlgorithmParameterException("SM2 encryption takes no parameters");
        }
        engineInit(opmode, key, random);
    }

    private void initialised() {
        if (encryptTo == null && decryptWith == null) {
            throw new IllegalStateException("SM2 cipher not initialised");
        }
    }

    @Override
    protected byte[] engineUpdate(byte[] in, int off, int len) {
        initialised();
        Checks.range(in, off, len);
        data.append(in, off, len);
        return new byte[0];
    }

    @Override
    protected int engineUpdate(byte[] in, int off, int len, byte[] out, int outOff) {
        engineUpdate(in, off, len);
        return 0;
    }

    @Override
    protected byte[] engineDoFinal(byte[] in, int off, int len) throws IllegalBlockSizeException, BadPaddingException {
        initialised();
        if (in != null) {
            Checks.range(in, off, len);
            data.append(in, off, len);
        }
        final byte[] msg = data.data;
        final int n = data.length;
        try {
            if (encryptTo != null) {
                final int f = layout();
                return encryptTo.key().use(new Sm2Key.Op<byte[]>() {
                    @Override
                    public byte[] run(long h) {
                        return Native.sm2Encrypt(h, msg, 0, n, f);
                    }
                });
            }
            final int f = n > 0 && msg[0] == 0x30 ? DER : (layout() == DER ? C1C3C2 : layout());
            byte[] pt = decryptWith.key().use(new Sm2Key.Op<byte[]>() {
                @Override
                public byte[] run(long h) {
                    return Native.sm2Decrypt(h, msg, 0, n, f);
                }
            });
            if (pt == null) {
                throw new BadPaddingException("SM2: the ciphertext does not decrypt");
            }
            return pt;
        } catch (IllegalArgumentException e) {
            throw new IllegalBlockSizeException("SM2: " + e.getMessage());
        } finally {
            data.clear();
        }
    }

    @Override
    protected int engineDoFinal(byte[] in, int off, int len, byte[] out, int outOff)
            throws ShortBufferException, IllegalBlockSizeException, BadPaddingException {
        int bound = engineGetOutputSize(in == null ? 0 : len);
        if (out == null || outOff < 0 || outOff > out.length || (encryptTo != null && out.length - outOff < bound)) {
            throw new ShortBufferException("SM2: " + bound + " bytes of output needed");
        }
        byte[] r = engineDoFinal(in, off, len);
        if (out.length - outOff < r.length) {
            Arrays.fill(r, (byte) 0);
            throw new ShortBufferException("SM2: " + r.length + " bytes of output needed");
        }
        System.arraycopy(r, 0, out, outOff, r.length);
        Arrays.fill(r, (byte) 0);
        return r.length;
    }

    @Override
    protected int engineGetKeySize(Key key) {
        return 256;
    }

    @Override
    protected byte[] engineWrap(Key key) throws IllegalBlockSizeException, InvalidKeyException {
        byte[] raw = key.getEncoded();
        if (raw == null) {
            throw new InvalidKeyException("SM2: the key to wrap has no encoding");
        }
        try {
            return engineDoFinal(raw, 0, raw.length);
        } catch (BadPaddingException e) {
            throw new IllegalStateException(e);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    @Override
    protected Key engineUnwrap(byte[] wrapped, String algorithm, int type)
            throws InvalidKeyException, NoSuchAlgorithmException {
        byte[] raw;
        try {
            raw = engineDoFinal(wrapped, 0, wrapped.length);
        } catch (IllegalBlockSizeException | BadPaddingException e) {
            throw new InvalidKeyException("SM2: the wrapped key does not decrypt", e);
        }
        try {
            return Keys.unwrapped(raw, algorithm, type);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }
}
