package rs.shangmi.jca;

import java.io.IOException;
import java.security.AlgorithmParametersSpi;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.InvalidParameterSpecException;
import java.util.Arrays;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;

/** AlgorithmParameters EC (for sm2p256v1: what BCJSSE asks the provider for curveSM2), SM4
 * (an IV, DER OCTET STRING) and GCM and CCM (RFC 5084's nonce and tag length). */
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

    /**
     * AlgorithmParameters GCM and CCM: a {@link GCMParameterSpec}, encoded as RFC 5084's
     * {@code SEQUENCE { nonce OCTET STRING, icvLen INTEGER DEFAULT 12 }} (the two modes share
     * the form). BCJSSE asks the cipher's provider for these to set each record's nonce.
     */
    public static class Aead extends AlgorithmParametersSpi {
        private final String name;
        private byte[] nonce;
        private int tagBytes;

        Aead(String name) {
            this.name = name;
        }

        /** AlgorithmParameters GCM. */
        public static final class Gcm extends Aead {
            public Gcm() {
                super("GCM");
            }
        }

        /** AlgorithmParameters CCM. */
        public static final class Ccm extends Aead {
            public Ccm() {
                super("CCM");
            }
        }

        @Override
        protected void engineInit(AlgorithmParameterSpec spec) throws InvalidParameterSpecException {
            if (!(spec instanceof GCMParameterSpec)) {
                throw new InvalidParameterSpecException(name + " parameters are a GCMParameterSpec");
            }
            GCMParameterSpec g = (GCMParameterSpec) spec;
            if (g.getTLen() % 8 != 0 || g.getTLen() < 32 || g.getTLen() > 128 || g.getIV().length == 0) {
                throw new InvalidParameterSpecException(name + ": no " + g.getTLen() + "-bit tag or empty nonce");
            }
            nonce = g.getIV();
            tagBytes = g.getTLen() / 8;
        }

        @Override
        protected void engineInit(byte[] der) throws IOException {
            // SEQUENCE, short or one/two-byte long lengths: nonces are at most a few hundred bytes.
            int[] at = {0};
            int seqEnd = header(der, at, 0x30);
            if (seqEnd != der.length) {
                throw new IOException(name + " parameters: trailing bytes");
            }
            int nonceEnd = header(der, at, 0x04);
            byte[] n = Arrays.copyOfRange(der, at[0], nonceEnd);
            at[0] = nonceEnd;
            int tag = 12;
            if (at[0] < seqEnd) {
                int intEnd = header(der, at, 0x02);
                if (intEnd != seqEnd || intEnd - at[0] != 1 || der[at[0]] < 4 || der[at[0]] > 16) {
                    throw new IOException(name + " parameters: the tag length is 4 to 16 bytes");
                }
                tag = der[at[0]];
            }
            if (n.length == 0) {
                throw new IOException(name + " parameters: an empty nonce");
            }
            nonce = n;
            tagBytes = tag;
        }

        private int header(byte[] der, int[] at, int tag) throws IOException {
            int i = at[0];
            if (i + 2 > der.length || (der[i] & 0xff) != tag) {
                throw new IOException(name + " parameters: not RFC 5084's form");
            }
            int len = der[i + 1] & 0xff;
            i += 2;
            if (len == 0x81 || len == 0x82) {
                int k = len & 0x7f;
                if (i + k > der.length) {
                    throw new IOException(name + " parameters: truncated");
                }
                len = 0;
                for (int j = 0; j < k; j++) {
                    len = (len << 8) | (der[i++] & 0xff);
                }
                if (len < (k == 1 ? 0x80 : 0x100)) {
                    throw new IOException(name + " parameters: a length not in DER");
                }
            } else if (len > 0x7f) {
                throw new IOException(name + " parameters: not RFC 5084's form");
            }
            if (len > der.length - i) {
                throw new IOException(name + " parameters: truncated");
            }
            at[0] = i;
            return i + len;
        }

        @Override
        protected void engineInit(byte[] der, String format) throws IOException {
            engineInit(der);
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <T extends AlgorithmParameterSpec> T engineGetParameterSpec(Class<T> spec)
                throws InvalidParameterSpecException {
            if (nonce == null || !spec.isAssignableFrom(GCMParameterSpec.class)) {
                throw new InvalidParameterSpecException(name + " parameters are a GCMParameterSpec");
            }
            return (T) new GCMParameterSpec(tagBytes * 8, nonce);
        }

        @Override
        protected byte[] engineGetEncoded() {
            boolean dflt = tagBytes == 12;
            byte[] octets = withHeader(0x04, nonce);
            byte[] body = Arrays.copyOf(octets, octets.length + (dflt ? 0 : 3));
            if (!dflt) {
                body[octets.length] = 2;
                body[octets.length + 1] = 1;
                body[octets.length + 2] = (byte) tagBytes;
            }
            return withHeader(0x30, body);
        }

        private static byte[] withHeader(int tag, byte[] content) {
            int n = content.length;
            int h = n < 0x80 ? 2 : n < 0x100 ? 3 : 4;
            byte[] out = new byte[h + n];
            out[0] = (byte) tag;
            if (h == 2) {
                out[1] = (byte) n;
            } else if (h == 3) {
                out[1] = (byte) 0x81;
                out[2] = (byte) n;
            } else {
                out[1] = (byte) 0x82;
                out[2] = (byte) (n >> 8);
                out[3] = (byte) n;
            }
            System.arraycopy(content, 0, out, h, n);
            return out;
        }

        @Override
        protected byte[] engineGetEncoded(String format) {
            return engineGetEncoded();
        }

        @Override
        protected String engineToString() {
            return name + " nonce " + Hex.of(nonce) + ", " + tagBytes * 8 + "-bit tag";
        }
    }
}
