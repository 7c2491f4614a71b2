package rs.shangmi.jca;

/**
 * The natives of {@code libshangmi_jni} (crates/shangmi-jni): static, on primitives and arrays
 * only, writing into arrays the caller supplies or returning fresh ones, never calling back.
 * Negative returns are the failures a caller expects ({@link #BAD}: a bad tag, bad padding;
 * {@link #BAD_LENGTH}: a length the mode cannot take); bad arguments throw.
 */
final class Native {
    static final int BAD = -1;
    static final int BAD_LENGTH = -2;
    /** The most bytes one call pins in place; longer inputs are passed in pieces of this. */
    static final int CHUNK = 256 * 1024;

    static {
        NativeLoader.load();
    }

    private Native() {}

    /** Makes sure the library is loaded (its static initialiser ran). */
    static void init() {}

    static native String version();

    static native void free(long handle);

    // SM3: the chaining state in Java, the library for whole blocks and the end.
    static native void sm3Blocks(int[] state, byte[] in, int off, int blocks);

    static native void sm3Finish(int[] state, long blocks, byte[] in, int off, int len, byte[] out, int outOff);

    static native void hmacKey(byte[] key, int[] inner, int[] outer);

    static native void hmacFinish(int[] inner, long blocks, byte[] in, int off, int len, int[] outer,
            byte[] out, int outOff);

    static native void pbkdf2Sm3(byte[] password, byte[] salt, int iterations, byte[] out);

    // SM4.
    static native long sm4Key(byte[] key);

    static native long sm4Stream(long key, int mode, boolean padding, boolean encrypt, byte[] iv);

    static native int streamUpdateLen(long stream, int len);

    static native int streamFinishLen(long stream);

    static native int streamUpdate(long stream, byte[] in, int off, int len, byte[] out, int outOff, int outLen);

    static native int streamFinish(long stream, byte[] out, int outOff, int outLen);

    static native long gcmKey(byte[] key, int tagLen);

    static native int gcmSeal(long gcm, byte[] iv, byte[] aad, byte[] in, int off, int len, byte[] out, int outOff);

    static native int gcmOpen(long gcm, byte[] iv, byte[] aad, byte[] in, int off, int len, byte[] out, int outOff);

    static native long gcmStart(long gcm, byte[] iv, byte[] aad);

    static native void gcmEncrypt(long stream, byte[] in, int off, int len, byte[] out, int outOff);

    static native void gcmDecryptVerified(long stream, byte[] in, int off, int len, byte[] out, int outOff);

    static native void gcmAbsorb(long stream, byte[] in, int off, int len);

    static native void gcmTag(long stream, byte[] out, int outOff);

    static native boolean gcmVerify(long stream, byte[] tag, int off, int len);

    static native int ccmSeal(long key, int tagLen, byte[] nonce, byte[] aad, byte[] in, int off, int len,
            byte[] out, int outOff);

    static native int ccmOpen(long key, int tagLen, byte[] nonce, byte[] aad, byte[] in, int off, int len,
            byte[] out, int outOff);

    static native long cmacNew(long key);

    static native void cmacUpdate(long cmac, byte[] in, int off, int len);

    static native void cmacFinish(long cmac, byte[] out, int outOff);

    // SM2.
    /** A new key's handle; its d and point (97 bytes) into {@code out}. */
    static native long sm2GenerateKey(byte[] out);

    static native long sm2Private(byte[] d);

    static native long sm2Public(byte[] point);

    static native byte[] sm2Point(long key);

    static native void sm2Z(long key, byte[] id, byte[] out);

    static native int sm2SignDigest(long key, byte[] e, byte[] out, int outOff);

    static native boolean sm2VerifyDigest(long key, byte[] e, byte[] sig, int off, int len);

    static native byte[] sm2Encrypt(long key, byte[] msg, int off, int len, int format);

    static native byte[] sm2Decrypt(long key, byte[] ct, int off, int len, int format);

    static native byte[] sm2Ecdh(long key, long peer);

    static native byte[] sm2Exchange(long key, byte[] ephemeral, boolean initiator, byte[] id, long peer,
            byte[] peerId, byte[] peerEphemeral, int keyLen);

    static native byte[] sm2PrivateFromDer(byte[] der);

    static native byte[] sm2PublicFromDer(byte[] der);

    static native byte[] sm2PrivateToPkcs8(long key);

    static native byte[] sm2PublicToSpki(long key);
}
