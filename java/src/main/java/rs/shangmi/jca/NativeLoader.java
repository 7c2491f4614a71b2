package rs.shangmi.jca;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Loads {@code libshangmi_jni}: from the path in the system property {@code
 * rs.shangmi.jni.library} when set, else from the jar (one library per platform under {@code
 * rs/shangmi/jca/native/}), copied into a directory only this user can read (under {@code
 * rs.shangmi.jni.tmpdir}, default {@code java.io.tmpdir}), loaded, and deleted again (the
 * mapping outlives the file).
 */
final class NativeLoader {
    static final String LIBRARY_PROPERTY = "rs.shangmi.jni.library";
    static final String TMPDIR_PROPERTY = "rs.shangmi.jni.tmpdir";

    private NativeLoader() {}

    /** The platform's directory name: linux-x86_64 or linux-aarch64. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.startsWith("linux")) {
            throw new UnsatisfiedLinkError("shangmi: no native library for " + os + " (Linux only)");
        }
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            return "linux-x86_64";
        }
        if (arch.equals("aarch64") || arch.equals("arm64")) {
            return "linux-aarch64";
        }
        throw new UnsatisfiedLinkError("shangmi: no native library for Linux on " + arch);
    }

    static synchronized void load() {
        String path = System.getProperty(LIBRARY_PROPERTY);
        if (path != null && !path.isEmpty()) {
            System.load(new File(path).getAbsolutePath());
            return;
        }
        String resource = "native/" + platform() + "/libshangmi_jni.so";
        Path dir = null;
        Path lib = null;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("shangmi: the jar carries no " + resource
                        + " (set -D" + LIBRARY_PROPERTY + "=PATH to use a library of your own)");
            }
            String tmp = System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir"));
            dir = Files.createTempDirectory(Paths.get(tmp), "shangmi-jni",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            lib = dir.resolve("libshangmi_jni.so");
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            System.load(lib.toAbsolutePath().toString());
        } catch (IOException e) {
            UnsatisfiedLinkError err = new UnsatisfiedLinkError("shangmi: extracting " + resource + ": " + e);
            err.initCause(e);
            throw err;
        } finally {
            try {
                if (lib != null) {
                    Files.deleteIfExists(lib);
                }
                if (dir != null) {
                    Files.deleteIfExists(dir);
                }
            } catch (IOException ignored) {
                // Left in a private directory; nothing else can read it.
            }
        }
    }
}
