package rs.shangmi.jca;

import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * What an SM2 key object holds natively: the library's key (with its precomputations), made
 * when first used and freed when the key is destroyed or unreachable. Many threads may sign
 * or verify with one key at once; a destroy waits for the uses in progress.
 */
final class Sm2Key {
    /** A native operation on the key's handle. */
    interface Op<T> {
        T run(long handle);
    }

    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    private final Object owner;
    private final boolean isPrivate;
    private byte[] material;
    private NativeRef ref;

    /** A key from {@code material} and the native key already made from it. */
    Sm2Key(Object owner, byte[] material, boolean isPrivate, long handle) {
        this(owner, material, isPrivate);
        this.ref = new NativeRef(owner, handle);
    }

    /** A key from {@code material}: d (32 bytes) when private, else the 65-byte point. */
    Sm2Key(Object owner, byte[] material, boolean isPrivate) {
        this.owner = owner;
        this.material = material.clone();
        this.isPrivate = isPrivate;
    }

    <T> T use(Op<T> op) {
        lock.readLock().lock();
        try {
            return op.run(handle());
        } finally {
            lock.readLock().unlock();
        }
    }

    private long handle() {
        NativeRef r = ref;
        if (r == null) {
            synchronized (this) {
                if (material == null) {
                    throw new IllegalStateException("shangmi: the SM2 key was destroyed");
                }
                if (ref == null) {
                    ref = new NativeRef(owner, isPrivate ? Native.sm2Private(material) : Native.sm2Public(material));
                }
                r = ref;
            }
        }
        return r.handle();
    }

    /** Frees the native key and wipes the material. */
    void destroy() {
        lock.writeLock().lock();
        try {
            synchronized (this) {
                if (ref != null) {
                    ref.release();
                    ref = null;
                }
                if (material != null) {
                    java.util.Arrays.fill(material, (byte) 0);
                    material = null;
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    synchronized boolean isDestroyed() {
        return material == null;
    }
}
