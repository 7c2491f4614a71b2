package rs.shangmi.jca;

import java.io.IOException;
import java.security.AlgorithmParametersSpi;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.InvalidParameterSpecException;
import java.util.Arrays;
import javax.crypto.spec.IvParameterSpec;

/** AlgorithmParameters EC (for sm2p256v1: what BCJSSE asks the provider for curveSM2) and
 * SM4 (an IV, DER OCTET STRING). */
public final class Parameters {
    private Parameters() {}

    /** AlgorithmParameters EC on the SM2 curve: its named-curve OID, or its explicit form. */
    public static final class Ec extends AlgorithmParametersSpi {
        private boolean set;

        @Override
        protected void engineInit(AlgorithmParameterSpec spec) throws InvalidParameterSpecException {
            if (spec instanceof ECGenParameterSpec && Sm2Curve.isName(((ECGenParameterSpec) spec).getName())) {
                set = true;
            } else if (spec instanceof ECParameterSpec && Sm2Curve.is((ECParameterSpec) spec)) {
                set = true;
            } else {
                throw new InvalidParameterSpecException("shangmi knows the SM2 curve (sm2p256v1) only");
            }
        }

        @Override
        protected void engineInit(byte[] params) throws IOException {
            if (!Arrays.equals(params, Sm2Curve.OID_DER)) {
                throw new IOException("not the SM2 curve's OID");
            }
            set = true;
        }

        @Override
        protected void engineInit(byte[] params, String format) throws IOException {
            engineInit(params);
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <T extends AlgorithmParameterSpec> T engineGetParameterSpec(Class<T> spec)
                throws InvalidParameterSpecException {
            if (!set) {
                throw new InvalidParameterSpecException("not initialised");
            }
            if (spec.isAssignableFrom(ECParameterSpec.class)) {
                return (T) Sm2Curve.SPEC;
            }
            if (spec.isAssignableFrom(ECGenParameterSpec.class)) {
                return (T) new ECGenParameterSpec(Sm2Curve.OID);
            }
            throw new InvalidParameterSpecException("no " + spec.getName() + " for EC parameters");
        }

        @Override
        protected byte[] engineGetEncoded() {
            return Sm2Curve.OID_DER.clone();
        }

        @Override
        protected byte[] engineGetEncoded(String format) {
            return engineGetEncoded();
        }

        @Override
        protected String engineToString() {
            return "sm2p256v1 (" + Sm2Curve.OID + ")";
        }
    }

    /** AlgorithmParameters SM4: a 16-byte IV. */
    public static final class Sm4 extends AlgorithmParametersSpi {
        private byte[] iv;

        @Override
        protected void engineInit(AlgorithmParameterSpec spec) throws InvalidParameterSpecException {
            if (!(spec instanceof IvParameterSpec) || ((IvParameterSpec) spec).getIV().length != 16) {
                throw new InvalidParameterSpecException("SM4 parameters are a 16-byte IV");
            }
            iv = ((IvParameterSpec) spec).getIV();
        }

        @Override
        protected void engineInit(byte[] der) throws IOException {
            if (der.length != 18 || der[0] != 4 || der[1] != 16) {
                throw new IOException("SM4 parameters are an OCTET STRING of 16 bytes");
            }
            iv = Arrays.copyOfRange(der, 2, 18);
        }

        @Override
        protected void engineInit(byte[] der, String format) throws IOException {
            engineInit(der);
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <T extends AlgorithmParameterSpec> T engineGetParameterSpec(Class<T> spec)
                throws InvalidParameterSpecException {
            if (iv == null || !spec.isAssignableFrom(IvParameterSpec.class)) {
                throw new InvalidParameterSpecException("SM4 parameters are an IvParameterSpec");
            }
            return (T) new IvParameterSpec(iv);
        }

        @Override
        protected byte[] engineGetEncoded() {
            byte[] out = new byte[18];
            out[0] = 4;
            out[1] = 16;
            System.arraycopy(iv, 0, out, 2, 16);
            return out;
        }

        @Override
        protected byte[] engineGetEncoded(String format) {
            return engineGetEncoded();
        }

        @Override
        protected String engineToString() {
            return "SM4 IV " + Hex.of(iv);
        }
    }
}
