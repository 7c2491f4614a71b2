package rs.shangmi.jca;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * A native handle owned by a Java object: freed once, by {@link #release()} or, when the
 * object becomes unreachable, by a daemon thread watching a reference queue (the Cleaner of
 * Java 9 and later, written for Java 8 as Kona's and Conscrypt's are). An object used by one
 * thread at a time (a cipher, a MAC) reads the handle with {@link #handle()}; a key that many
 * threads may use at once guards its uses and its release with a lock of its own
 * ({@link Sm2Key}).
 */
final class NativeRef extends PhantomReference<Object> {
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<Object>();
    /** Keeps the references themselves reachable until they are released. */
    private static final Set<NativeRef> LIVE = Collections.synchronizedSet(
            Collections.newSetFromMap(new IdentityHashMap<NativeRef, Boolean>()));

    static {
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                while (true) {
                    try {
                        ((NativeRef) QUEUE.remove()).release();
                    } catch (InterruptedException ignored) {
                        // A daemon: it ends with the VM.
                    }
                }
            }
        }, "shangmi-native-cleaner");
        t.setDaemon(true);
        t.start();
    }

    private volatile long handle;

    NativeRef(Object owner, long handle) {
        super(owner, QUEUE);
        if (handle == 0) {
            throw new IllegalStateException("shangmi: no native object");
        }
        this.handle = handle;
        LIVE.add(this);
    }

    /** The handle; 0 once released. */
    long handle() {
        return handle;
    }

    /** Frees the handle now (a second call does nothing). */
    synchronized void release() {
        if (handle != 0) {
            Native.free(handle);
            handle = 0;
        }
        LIVE.remove(this);
    }

    boolean isReleased() {
        return handle == 0;
    }
}
