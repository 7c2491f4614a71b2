package rs.shangmi.jca;

import java.security.DigestException;
import java.security.MessageDigestSpi;

/** MessageDigest SM3. */
public final class Sm3Digest extends MessageDigestSpi implements Cloneable {
    private Sm3Engine engine = new Sm3Engine();

    public Sm3Digest() {
        Native.init();
    }

    @Override
    protected int engineGetDigestLength() {
        return 32;
    }

    @Override
    protected void engineUpdate(byte input) {
        engine.update(input);
    }

    @Override
    protected void engineUpdate(byte[] input, int offset, int len) {
        Checks.range(input, offset, len);
        engine.update(input, offset, len);
    }

    @Override
    protected byte[] engineDigest() {
        byte[] out = new byte[32];
        engine.digest(out, 0);
        return out;
    }

    @Override
    protected int engineDigest(byte[] buf, int offset, int len) throws DigestException {
        if (buf == null || offset < 0 || len < 32 || offset > buf.length - 32) {
            throw new DigestException("SM3 writes 32 bytes");
        }
        engine.digest(buf, offset);
        return 32;
    }

    @Override
    protected void engineReset() {
        engine.reset();
    }

    @Override
    public Object clone() throws CloneNotSupportedException {
        Sm3Digest c = (Sm3Digest) super.clone();
        c.engine = engine.clone();
        return c;
    }
}
