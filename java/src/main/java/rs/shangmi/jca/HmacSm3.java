package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.MacSpi;

/**
 * Mac HmacSM3. The key's ipad and opad states are computed once by the library; the message
 * runs through an {@link Sm3Engine} from the ipad state, so short messages cost one native
 * call (inner and outer hash together) and the MAC clones without native memory.
 */
public final class HmacSm3 extends MacSpi implements Cloneable {
    private int[] outer;
    private Sm3Engine inner;

    public HmacSm3() {
        Native.init();
    }

    @Override
    protected int engineGetMacLength() {
        return 32;
    }

    @Override
    protected void engineInit(Key key, AlgorithmParameterSpec params)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        if (params != null) {
            throw new InvalidAlgorithmParameterException("HmacSM3 takes no parameters");
        }
        byte[] k = Checks.secretKey(key, "HmacSM3");
        int[] i = new int[8];
        int[] o = new int[8];
        try {
            Native.hmacKey(k, i, o);
        } finally {
            Arrays.fill(k, (byte) 0);
        }
        if (inner != null) {
            inner.wipe();
            Arrays.fill(outer, 0);
        }
        inner = new Sm3Engine(i, 1);
        outer = o;
        Arrays.fill(i, 0);
    }

    private Sm3Engine engine() {
        if (inner == null) {
            throw new IllegalStateException("HmacSM3 not initialised");
        }
        return inner;
    }

    @Override
    protected void engineUpdate(byte input) {
        engine().update(input);
    }

    @Override
    protected void engineUpdate(byte[] input, int offset, int len) {
        Checks.range(input, offset, len);
        engine().update(input, offset, len);
    }

    @Override
    protected byte[] engineDoFinal() {
        Sm3Engine e = engine();
        byte[] tag = new byte[32];
        Native.hmacFinish(e.state, e.blocks, e.buf, 0, e.bufLen, outer, tag, 0);
        e.reset();
        return tag;
    }

    @Override
    protected void engineReset() {
        if (inner != null) {
            inner.reset();
        }
    }

    @Override
    public Object clone() throws CloneNotSupportedException {
        HmacSm3 c = (HmacSm3) super.clone();
        if (inner != null) {
            c.inner = inner.clone();
            c.outer = outer.clone();
        }
        return c;
    }
}
