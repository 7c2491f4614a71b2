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
import javax.crypto.AEADBadTagException;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.CipherSpi;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;

/**
 * Cipher SM4/GCM/NoPadding and SM4/CCM/NoPadding. The AEAD runs once, at {@code doFinal}:
 * {@code update} buffers and returns nothing, so decryption releases nothing (not into the
 * caller's buffer either) until the tag has checked, and a forged message is an {@link
 * AEADBadTagException} with the output untouched. Parameters: {@link GCMParameterSpec} (tag
 * length in bits; GCM: 32, 64 or 96 to 128; CCM: 32 to 128 in steps of 16), BouncyCastle's
 * {@code AEADParameterSpec} (nonce, tag length and associated data; read by reflection) or an
 * {@link IvParameterSpec} (128-bit tag); without them encryption draws a 12-byte IV. An encryption
 * cannot be repeated under the key and IV it finished with: the cipher must be initialised
 * again, with a new IV.
 */
public abstract class Sm4AeadCipher extends CipherSpi {
    private final boolean gcm;
    private final String name;
    private NativeRef key;
    private boolean encrypt;
    private byte[] iv;
    private int tagLen;
    private byte[] keyBytes;
    private final Bytes aad = new Bytes();
    private final Bytes data = new Bytes();
    /** Set after an encryption finished: the key and IV are spent. */
    private boolean spent;
    private boolean started;

    Sm4AeadCipher(boolean gcm) {
        Native.init();
        this.gcm = gcm;
        this.name = gcm ? "SM4-GCM" : "SM4-CCM";
    }

    /** Cipher SM4/GCM/NoPadding. */
    public static final class Gcm extends Sm4AeadCipher {
        public Gcm() {
            super(true);
        }
    }

    /** Cipher SM4/CCM/NoPadding. */
    public static final class Ccm extends Sm4AeadCipher {
        public Ccm() {
            super(false);
        }
    }

    @Override
    protected void engineSetMode(String m) throws NoSuchAlgorithmException {
        if (!m.equalsIgnoreCase(gcm ? "GCM" : "CCM")) {
            throw new NoSuchAlgorithmException(name + ": no mode " + m);
        }
    }

    @Override
    protected void engineSetPadding(String p) throws NoSuchPaddingException {
        if (!p.equalsIgnoreCase("NoPadding")) {
            throw new NoSuchPaddingException(name + " takes NoPadding");
        }
    }

    @Override
    protected int engineGetBlockSize() {
        return 16;
    }

    private void ready() {
        if (key == null) {
            throw new IllegalStateException(name + " not initialised");
        }
        if (spent) {
            throw new IllegalStateException(name + ": initialise again with a new IV before the next encryption");
        }
    }

    @Override
    protected int engineGetOutputSize(int inputLen) {
        long total = (long) data.length + Math.max(inputLen, 0);
        long n = encrypt ? total + tagLen : Math.max(0, total - tagLen);
        return (int) Math.min(Integer.MAX_VALUE, n);
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
            AlgorithmParameters p = AlgorithmParameters.getInstance(gcm ? "GCM" : "CCM", ShangmiProvider.instance());
            p.init(new GCMParameterSpec(tagLen * 8, iv));
            return p;
        } catch (NoSuchAlgorithmException | InvalidParameterSpecException e) {
            return null;
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
                spec = params.getParameterSpec(GCMParameterSpec.class);
            } catch (InvalidParameterSpecException e) {
                throw new InvalidAlgorithmParameterException(name + " takes GCMParameterSpec", e);
            }
        }
        engineInit(opmode, k, spec, random);
    }

    @Override
    protected void engineInit(int opmode, Key k, AlgorithmParameterSpec params, SecureRandom random)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        boolean enc = opmode == Cipher.ENCRYPT_MODE || opmode == Cipher.WRAP_MODE;
        if (!enc && opmode != Cipher.DECRYPT_MODE && opmode != Cipher.UNWRAP_MODE) {
            throw new java.security.InvalidParameterException(name + ": no such mode of operation " + opmode);
        }
        byte[] raw = Checks.secretKey(k, name, 16);
        byte[] newIv;
        int bits;
        byte[] initialAad = null;
        if (Specs.named(params, "AEADParameterSpec")) {
            // BouncyCastle's: an IvParameterSpec that also carries the tag length and AAD.
            Object n = Specs.call(params, "getNonce");
            Object b = Specs.call(params, "getMacSizeInBits");
            Object a = Specs.call(params, "getAssociatedData");
            if (!(n instanceof byte[]) || !(b instanceof Integer)) {
                throw new InvalidAlgorithmParameterException(name + ": unreadable AEADParameterSpec");
            }
            newIv = (byte[]) n;
            bits = (Integer) b;
            initialAad = a instanceof byte[] ? (byte[]) a : null;
        } else if (params instanceof GCMParameterSpec) {
            newIv = ((GCMParameterSpec) params).getIV();
            bits = ((GCMParameterSpec) params).getTLen();
        } else if (params instanceof IvParameterSpec) {
            newIv = ((IvParameterSpec) params).getIV();
            bits = 128;
        } else if (params != null) {
            throw new InvalidAlgorithmParameterException(name + " takes GCMParameterSpec");
        } else if (enc) {
            newIv = new byte[12];
            (random != null ? random : new SecureRandom()).nextBytes(newIv);
            bits = 128;
        } else {
            throw new InvalidAlgorithmParameterException(name + ": decryption needs the IV and tag length");
        }
        boolean bitsOk = gcm
                ? bits == 32 || bits == 64 || (bits >= 96 && bits <= 128 && bits % 8 == 0)
                : bits >= 32 && bits <= 128 && bits % 16 == 0;
        if (!bitsOk) {
            throw new InvalidAlgorithmParameterException(name + ": no " + bits + "-bit tags");
        }
        boolean ivOk = gcm ? newIv.length > 0 : newIv.length >= 7 && newIv.length <= 13;
        if (!ivOk) {
            throw new InvalidAlgorithmParameterException(name + ": no IV of " + newIv.length + " bytes");
        }
        if (enc && keyBytes != null && MessageDigest.isEqual(keyBytes, raw) && Arrays.equals(iv, newIv)) {
            Arrays.fill(raw, (byte) 0);
            throw new InvalidAlgorithmParameterException(name + ": encryption cannot reuse the key and IV");
        }
        // The same key again (a new IV per message, as protocols do) keeps its schedule and, for
        // GCM, its hash key tables; GCM's are made for one tag length.
        boolean sameKey = key != null && keyBytes != null && MessageDigest.isEqual(keyBytes, raw)
                && (!gcm || tagLen == bits / 8);
        if (sameKey) {
            Arrays.fill(raw, (byte) 0);
        } else {
            NativeRef newKey;
            try {
                newKey = new NativeRef(this, gcm ? Native.gcmKey(raw, bits / 8) : Native.sm4Key(raw));
            } catch (IllegalArgumentException e) {
                Arrays.fill(raw, (byte) 0);
                throw new InvalidAlgorithmParameterException(name + ": " + e.getMessage(), e);
            }
            if (key != null) {
                key.release();
            }
            if (keyBytes != null) {
                Arrays.fill(keyBytes, (byte) 0);
            }
            key = newKey;
            keyBytes = raw;
        }
        iv = newIv;
        tagLen = bits / 8;
        encrypt = enc;
        spent = false;
        started = false;
        aad.clear();
        data.clear();
        if (initialAad != null) {
            aad.append(initialAad, 0, initialAad.length);
        }
    }

    @Override
    protected void engineUpdateAAD(byte[] src, int offset, int len) {
        ready();
        Checks.range(src, offset, len);
        if (started) {
            throw new IllegalStateException(name + ": associated data must come before the message");
        }
        aad.append(src, offset, len);
    }

    @Override
    protected byte[] engineUpdate(byte[] in, int off, int len) {
        ready();
        Checks.range(in, off, len);
        started = true;
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
        ready();
        int n = engineGetOutputSize(in == null ? 0 : len);
        byte[] out = new byte[n];
        try {
            int w = engineDoFinal(in, off, len, out, 0);
            return w == n ? out : Arrays.copyOf(out, w);
        } catch (ShortBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected int engineDoFinal(byte[] in, int off, int len, byte[] out, int outOff)
            throws ShortBufferException, IllegalBlockSizeException, BadPaddingException {
        ready();
        if (in == null) {
            in = new byte[0];
            off = 0;
            len = 0;
        }
        Checks.range(in, off, len);
        int need = engineGetOutputSize(len);
        if (out == null || outOff < 0 || outOff > out.length || out.length - outOff < need) {
            throw new ShortBufferException(name + ": " + need + " bytes of output needed");
        }
        byte[] msg;
        int msgOff;
        int msgLen;
        if (data.length == 0) {
            msg = in;
            msgOff = off;
            msgLen = len;
        } else {
            msg = data.with(in, off, len);
            msgOff = 0;
            msgLen = data.length;
        }
        byte[] ad = Arrays.copyOf(aad.data, aad.length);
        try {
            if (encrypt) {
                int w = gcm ? seal(ad, msg, msgOff, msgLen, out, outOff)
                        : Native.ccmSeal(key.handle(), tagLen, iv, ad, msg, msgOff, msgLen, out, outOff);
                if (w < 0) {
                    throw new IllegalBlockSizeException(name + ": the message is too long");
                }
                spent = true;
                return w;
            }
            if (msgLen < tagLen) {
                throw new AEADBadTagException(name + ": shorter than its tag");
            }
            int w = gcm ? open(ad, msg, msgOff, msgLen, out, outOff)
                    : Native.ccmOpen(key.handle(), tagLen, iv, ad, msg, msgOff, msgLen, out, outOff);
            if (w == Native.BAD) {
                throw new AEADBadTagException(name + ": the tag does not match");
            }
            if (w < 0) {
                throw new IllegalBlockSizeException(name + ": the message is too long");
            }
            return w;
        } finally {
            aad.clear();
            data.clear();
            started = false;
            Arrays.fill(ad, (byte) 0);
        }
    }

    /** GCM encryption: one pinned call, or in pieces for long messages. */
    private int seal(byte[] ad, byte[] m, int off, int len, byte[] out, int outOff) {
        long g = key.handle();
        if (len <= Native.CHUNK) {
            return Native.gcmSeal(g, iv, ad, m, off, len, out, outOff);
        }
        NativeRef s = new NativeRef(this, Native.gcmStart(g, iv, ad));
        try {
            for (int done = 0; done < len; done += Native.CHUNK) {
                int piece = Math.min(Native.CHUNK, len - done);
                Native.gcmEncrypt(s.handle(), m, off + done, piece, out, outOff + done);
            }
            Native.gcmTag(s.handle(), out, outOff + len);
            return len + tagLen;
        } finally {
            s.release();
        }
    }

    /** GCM decryption: one pinned call, or for long messages a pass that checks the tag and
     * only then a pass that decrypts. */
    private int open(byte[] ad, byte[] m, int off, int len, byte[] out, int outOff) {
        long g = key.handle();
        if (len <= Native.CHUNK) {
            return Native.gcmOpen(g, iv, ad, m, off, len, out, outOff);
        }
        int ct = len - tagLen;
        NativeRef check = new NativeRef(this, Native.gcmStart(g, iv, ad));
        try {
            for (int done = 0; done < ct; done += Native.CHUNK) {
                Native.gcmAbsorb(check.handle(), m, off + done, Math.min(Native.CHUNK, ct - done));
            }
            if (!Native.gcmVerify(check.handle(), m, off + ct, tagLen)) {
                return Native.BAD;
            }
        } finally {
            check.release();
        }
        NativeRef s = new NativeRef(this, Native.gcmStart(g, iv, ad));
        try {
            for (int done = 0; done < ct; done += Native.CHUNK) {
                int piece = Math.min(Native.CHUNK, ct - done);
                Native.gcmDecryptVerified(s.handle(), m, off + done, piece, out, outOff + done);
            }
            return ct;
        } finally {
            s.release();
        }
    }

    @Override
    protected int engineGetKeySize(Key k) throws InvalidKeyException {
        byte[] raw = Checks.secretKey(k, name, 16);
        Arrays.fill(raw, (byte) 0);
        return 128;
    }

    @Override
    protected byte[] engineWrap(Key k) throws IllegalBlockSizeException, InvalidKeyException {
        byte[] raw = k.getEncoded();
        if (raw == null) {
            throw new InvalidKeyException(name + ": the key to wrap has no encoding");
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
            throw new InvalidKeyException(name + ": the wrapped key does not open", e);
        }
        try {
            return Keys.unwrapped(raw, algorithm, type);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    static String upper(String s) {
        return s.toUpperCase(Locale.ROOT);
    }
}
