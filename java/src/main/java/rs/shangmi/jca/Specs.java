package rs.shangmi.jca;

import java.lang.reflect.Method;
import java.security.spec.AlgorithmParameterSpec;

/**
 * Other providers' SM2 parameter classes, read by reflection so that neither is a dependency:
 * BouncyCastle's {@code org.bouncycastle.jcajce.spec.SM2ParameterSpec} ({@code getID()}) and
 * {@code SM2KeyExchangeSpec}, Kona's {@code com.tencent.kona.crypto.spec.SM2SignatureParameterSpec}
 * ({@code getId()}, {@code getPublicKey()}) and {@code SM2KeyAgreementParamSpec}.
 */
final class Specs {
    private Specs() {}

    /** The value of the no-argument method {@code name}, or null if the spec has none. */
    static Object call(Object spec, String name) {
        try {
            Method m = spec.getClass().getMethod(name);
            return m.invoke(spec);
        } catch (ReflectiveOperationException | SecurityException e) {
            return null;
        }
    }

    /** The ID of a signature parameter spec, or null when it carries none. */
    static byte[] signatureId(AlgorithmParameterSpec spec) {
        Object id = call(spec, "getID");
        if (id == null) {
            id = call(spec, "getId");
        }
        return id instanceof byte[] ? ((byte[]) id).clone() : null;
    }

    static boolean named(AlgorithmParameterSpec spec, String simpleName) {
        return spec != null && spec.getClass().getSimpleName().equals(simpleName);
    }
}
