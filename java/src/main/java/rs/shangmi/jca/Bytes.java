package rs.shangmi.jca;

import java.util.Arrays;

/** A growable byte buffer that wipes what it held when cleared or grown. */
final class Bytes {
    byte[] data = new byte[0];
    int length;

    void append(byte[] in, int off, int len) {
        if (len == 0) {
            return;
        }
        if (length + len > data.length) {
            if (length + len < 0) {
                throw new OutOfMemoryError("shangmi: a message over 2 GiB");
            }
            byte[] grown = Arrays.copyOf(data, Math.max(length + len, Math.min(Integer.MAX_VALUE - 8, data.length * 2)));
            Arrays.fill(data, (byte) 0);
            data = grown;
        }
        System.arraycopy(in, off, data, length, len);
        length += len;
    }

    /** The contents and {@code in[off..off+len]} as one array (this buffer's own when the
     * extra is empty, to spare a copy). */
    byte[] with(byte[] in, int off, int len) {
        append(in == null ? new byte[0] : in, off, len);
        return data;
    }

    void clear() {
        Arrays.fill(data, 0, length, (byte) 0);
        length = 0;
    }
}
