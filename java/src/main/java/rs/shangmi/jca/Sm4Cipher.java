package rs.shangmi.jca;

import java.security.AlgorithmParameters;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.InvalidParameterSpecException;
import java.util.Arrays;
import java.util.Locale;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.CipherSpi;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Cipher SM4 in the raw modes: ECB, CBC, CFB (CFB128), OFB and CTR, with PKCS#5/#7 padding
 * for ECB and CBC (PKCS5Padding is PKCS7Padding: SM4's blocks are 16 bytes). "SM4" alone is
 * SM4/ECB/PKCS5Padding, as BouncyCastle's and SunJCE's block ciphers default. The message runs
 * through one native stream, which keeps back a partial block (and, when decrypting with
 * padding, the last block until the padding is checked).
 */
public final class Sm4Cipher extends CipherSpi {
    private static final int ECB = 0;
    private static final int CBC = 1;
    private static final int CFB = 2;
    private static final int OFB = 3;
    private static final int CTR = 4;

    private int mode = ECB;
    private boolean padding = true;
    private NativeRef key;
    /** The key's bytes, to tell a re-initialisation with the same key (wiped on release). */
    private byte[] keyBytes;
    private NativeRef stream;
    private boolean encrypt;
    private byte[] iv;

    public Sm4Cipher() {
        Native.init();
    }

    @Override
    protected void engineSetMode(String m) throws NoSuchAlgorithmException {
        String u = m.toUpperCase(Locale.ROOT);
        if (u.equals("ECB")) {
            mode = ECB;
        } else if (u.equals("CBC")) {
            mode = CBC;
        } else if (u.equals("CFB") || u.equals("CFB128")) {
            mode = CFB;
        } else if (u.equals("OFB") || u.equals("OFB128")) {
            mode = OFB;
        } else if (u.equals("CTR") || u.equals("SIC")) {
            mode = CTR;
        } else {
            throw new NoSuchAlgorithmException("SM4: no mode " + m + " here (GCM and CCM are SM4/GCM/NoPadding, SM4/CCM/NoPadding)");
        }
        if (mode > CBC) {
            padding = false;
        }
    }

    @Override
    protected void engineSetPadding(String p) throws NoSuchPaddingException {
        String u = p.toUpperCase(Locale.ROOT);
        if (u.equals("NOPADDING")) {
            padding = false;
        } else if (u.equals("PKCS5PADDING") || u.equals("PKCS7PADDING")) {
            if (mode > CBC) {
                throw new NoSuchPaddingException("SM4: padding is for ECB and CBC; the stream modes take NoPadding");
            }
            padding = true;
        } else {
            throw new NoSuchPaddingException("SM4: no padding " + p);
        }
    }

    @Override
    protected int engineGetBlockSize() {
        return 16;
    }

    private long stream() {
        if (stream == null) {
            if (key == null) {
                throw new IllegalStateException("SM4 cipher not initialised");
            }
            // Made when first used: after an init or a doFinal (the next message starts over
            // from the same key and IV), so an init after a doFinal makes one, not two.
            stream = new NativeRef(this, Native.sm4Stream(key.handle(), mode, padding, encrypt, iv));
        }
        return stream.handle();
    }

    @Override
    protected int engineGetOutputSize(int inputLen) {
        long s = stream();
        int u = Native.streamUpdateLen(s, inputLen);
        return Math.max(u, 0) + Native.streamFinishLen(s);
    }

    @Override
    protected byte[] engineGetIV() {
        return iv == null ? null : iv.clone();
    }

    @Override
    protected AlgorithmParameters engineGetParameters() {
        if (iv == null) {
            return null;
        }
        try {
            AlgorithmParameters p = AlgorithmParameters.getInstance("SM4", ShangmiProvider.instance());
            p.init(new IvParameterSpec(iv));
            return p;
        } catch (NoSuchAlgorithmException | InvalidParameterSpecException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected void engineInit(int opmode, Key k, SecureRandom random) throws InvalidKeyException {
        try {
            engineInit(opmode, k, (AlgorithmParameterSpec) null, random);
        } catch (InvalidAlgorithmParameterException e) {
            throw new InvalidKeyException(e.getMessage(), e);
        }
    }

    @Override
    protected void engineInit(int opmode, Key k, AlgorithmParameters params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        AlgorithmParameterSpec spec = null;
        if (params != null) {
            try {
                spec = params.getParameterSpec(IvParameterSpec.class);
            } catch (InvalidParameterSpecException e) {
                throw new InvalidAlgorithmParameterException("SM4 takes an IV", e);
            }
        }
        engineInit(opmode, k, spec, random);
    }

    @Override
    protected void engineInit(int opmode, Key k, AlgorithmParameterSpec params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        boolean enc = opmode == Cipher.ENCRYPT_MODE || opmode == Cipher.WRAP_MODE;
        if (!enc && opmode != Cipher.DECRYPT_MODE && opmode != Cipher.UNWRAP_MODE) {
            throw new InvalidParameterException("SM4: no such mode of operation " + opmode);
        }
        byte[] raw = Checks.secretKey(k, "SM4", 16);
        byte[] newIv = null;
        if (mode != ECB) {
            if (params instanceof IvParameterSpec) {
                newIv = ((IvParameterSpec) params).getIV();
                if (newIv.length != 16) {
                    throw new InvalidAlgorithmParameterException("SM4: an IV of 16 bytes, not " + newIv.length);
                }
            } else if (params != null) {
                throw new InvalidAlgorithmParameterException("SM4 takes an IvParameterSpec");
            } else if (enc) {
                newIv = new byte[16];
                (random != null ? random : new SecureRandom()).nextBytes(newIv);
            } else {
                throw new InvalidAlgorithmParameterException("SM4: decryption needs the IV");
            }
        } else if (params != null) {
            throw new InvalidAlgorithmParameterException("SM4/ECB takes no IV");
        }
        if (key != null && keyBytes != null && MessageDigest.isEqual(keyBytes, raw)) {
            // The same key again (a new IV per message): its schedule is kept.
            Arrays.fill(raw, (byte) 0);
        } else {
            NativeRef newKey;
            try {
                newKey = new NativeRef(this, Native.sm4Key(raw));
            } catch (RuntimeException e) {
                Arrays.fill(raw, (byte) 0);
                throw e;
            }
            release();
            key = newKey;
            keyBytes = raw;
        }
        iv = newIv;
        encrypt = enc;
        restart();
    }

    /** Drops the stream in progress; the next use starts one from the key and IV. */
    private void restart() {
        if (stream != null) {
            stream.release();
            stream = null;
        }
    }

    private void release() {
        if (stream != null) {
            stream.release();
            stream = null;
        }
        if (key != null) {
            key.release();
            key = null;
        }
        if (keyBytes != null) {
            Arrays.fill(keyBytes, (byte) 0);
            keyBytes = null;
        }
    }

    @Override
    protected byte[] engineUpdate(byte[] in, int off, int len) {
        Checks.range(in, off, len);
        int n = Native.streamUpdateLen(stream(), len);
        if (n < 0) {
            throw new IllegalStateException("SM4: a message too long");
        }
        byte[] out = new byte[n];
        int w = update(in, off, len, out, 0, n);
        return w == n ? out : Arrays.copyOf(out, w);
    }

    @Override
    protected int engineUpdate(byte[] in, int off, int len, byte[] out, int outOff) throws ShortBufferException {
        Checks.range(in, off, len);
        int n = Native.streamUpdateLen(stream(), len);
        if (n < 0 || out == null || outOff < 0 || outOff > out.length || out.length - outOff < n) {
            throw new ShortBufferException("SM4: " + n + " bytes of output needed");
        }
        return update(in, off, len, out, outOff, n);
    }

    /** Runs the input through in pieces the library pins. */
    private int update(byte[] in, int off, int len, byte[] out, int outOff, int room) {
        long s = stream();
        int written = 0;
        do {
            int piece = Math.min(len, Native.CHUNK);
            int w = Native.streamUpdate(s, in, off, piece, out, outOff + written, room - written);
            if (w < 0) {
                throw new IllegalStateException("SM4: the stream refused its input");
            }
            written += w;
            off += piece;
            len -= piece;
        } while (len > 0);
        return written;
    }

    @Override
    protected byte[] engineDoFinal(byte[] in, int off, int len) throws IllegalBlockSizeException, BadPaddingException {
        if (in == null) {
            in = new byte[0];
            off = 0;
            len = 0;
        }
        byte[] out = new byte[engineGetOutputSize(len)];
        try {
            int n = engineDoFinal(in, off, len, out, 0);
            return n == out.length ? out : Arrays.copyOf(out, n);
        } catch (ShortBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected int engineDoFinal(byte[] in, int off, int len, byte[] out, int outOff)
            throws ShortBufferException, IllegalBlockSizeException, BadPaddingException {
        if (in == null) {
            in = new byte[0];
            off = 0;
            len = 0;
        }
        Checks.range(in, off, len);
        int need = engineGetOutputSize(len);
        if (out == null || outOff < 0 || outOff > out.length || out.length - outOff < need) {
            throw new ShortBufferException("SM4: " + need + " bytes of output needed");
        }
        try {
            int w = update(in, off, len, out, outOff, need);
            int f = Native.streamFinish(stream(), out, outOff + w, need - w);
            if (f == Native.BAD) {
                throw new BadPaddingException("SM4: bad padding");
            }
            if (f < 0) {
                throw new IllegalBlockSizeException("SM4: the input is not a whole number of blocks");
            }
            return w + f;
        } finally {
            restart();
        }
    }

    @Override
    protected int engineGetKeySize(Key k) throws InvalidKeyException {
        byte[] raw = Checks.secretKey(k, "SM4", 16);
        Arrays.fill(raw, (byte) 0);
        return 128;
    }

    @Override
    protected byte[] engineWrap(Key k) throws IllegalBlockSizeException, InvalidKeyException {
        byte[] raw = k.getEncoded();
        if (raw == null) {
            throw new InvalidKeyException("SM4: the key to wrap has no encoding");
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
            throw new InvalidKeyException("SM4: the wrapped key does not decrypt", e);
        }
        try {
            return Keys.unwrapped(raw, algorithm, type);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    /** Thrown for an operation mode the JCA does not define. */
    private static final class InvalidParameterException extends java.security.InvalidParameterException {
        private static final long serialVersionUID = 1L;

        InvalidParameterException(String m) {
            super(m);
        }
    }
}
