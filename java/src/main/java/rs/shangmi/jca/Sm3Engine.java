package rs.shangmi.jca;

import java.util.Arrays;

/**
 * SM3 with its state in Java: the chaining value ({@code int[8]}), the whole blocks absorbed
 * and a buffer. Updates that fit the buffer are copied there and cost no native call; the
 * library compresses whole blocks when the buffer fills (or straight from a long input, in
 * pieces of {@link Native#CHUNK}) and finishes the hash. So a digest of a short message is
 * one native call, and cloning or resetting is an array copy. The buffer starts at two
 * blocks and grows as updates need: a TLS handshake makes hundreds of short-lived hashes and
 * MACs, each cloned, and 4 KiB apiece of garbage cost more than the hashing.
 */
final class Sm3Engine implements Cloneable {
    static final int[] IV = {
        0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
        0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e,
    };
    /** Buffered bytes at most: small updates batch up to this many between native calls. */
    private static final int BUFFER = 4096;

    private int[] start;
    private final long startBlocks;
    int[] state;
    long blocks;
    byte[] buf = new byte[128];
    int bufLen;

    /** A hash from the beginning. */
    Sm3Engine() {
        this(IV, 0);
    }

    /** A hash that starts (and restarts on reset) from {@code start} after {@code blocks}. */
    Sm3Engine(int[] start, long blocks) {
        this.start = start.clone();
        this.startBlocks = blocks;
        this.state = start.clone();
        this.blocks = blocks;
    }

    void update(byte b) {
        if (bufLen == BUFFER) {
            flush();
        }
        room(1);
        buf[bufLen++] = b;
    }

    /** Grows the buffer (up to {@link #BUFFER}) to take {@code n} more bytes. */
    private void room(int n) {
        if (bufLen + n > buf.length) {
            byte[] bigger = Arrays.copyOf(buf, Math.min(BUFFER, Math.max(2 * buf.length, bufLen + n)));
            Arrays.fill(buf, (byte) 0);
            buf = bigger;
        }
    }

    void update(byte[] in, int off, int len) {
        if (len <= BUFFER - bufLen) {
            room(len);
            System.arraycopy(in, off, buf, bufLen, len);
            bufLen += len;
            return;
        }
        // Top the buffer up to a whole block, compress it, then take whole blocks from the input.
        int top = (64 - bufLen % 64) % 64;
        int take = Math.min(top, len);
        room(take);
        System.arraycopy(in, off, buf, bufLen, take);
        bufLen += take;
        off += take;
        len -= take;
        flush();
        while (len >= 64 && bufLen == 0) {
            int n = Math.min(len, Native.CHUNK) / 64;
            Native.sm3Blocks(state, in, off, n);
            blocks += n;
            off += n * 64;
            len -= n * 64;
        }
        room(len);
        System.arraycopy(in, off, buf, bufLen, len);
        bufLen += len;
    }

    /** Compresses the whole blocks in the buffer, keeping the rest at its front. */
    private void flush() {
        int n = bufLen / 64;
        if (n == 0) {
            return;
        }
        Native.sm3Blocks(state, buf, 0, n);
        blocks += n;
        int rest = bufLen - n * 64;
        System.arraycopy(buf, n * 64, buf, 0, rest);
        bufLen = rest;
    }

    /** The digest into {@code out} at {@code off}; the hash starts over. */
    void digest(byte[] out, int off) {
        Native.sm3Finish(state, blocks, buf, 0, bufLen, out, off);
        reset();
    }

    void reset() {
        System.arraycopy(start, 0, state, 0, 8);
        blocks = startBlocks;
        Arrays.fill(buf, 0, bufLen, (byte) 0);
        bufLen = 0;
    }

    /** Forgets the start as well (a MAC's keyed state). */
    void wipe() {
        Arrays.fill(start, 0);
        Arrays.fill(state, 0);
        Arrays.fill(buf, (byte) 0);
        bufLen = 0;
    }

    @Override
    public Sm3Engine clone() {
        try {
            Sm3Engine c = (Sm3Engine) super.clone();
            c.start = start.clone();
            c.state = state.clone();
            c.buf = buf.clone();
            return c;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
