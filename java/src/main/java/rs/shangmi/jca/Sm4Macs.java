package rs.shangmi.jca;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.MacSpi;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;

/** Mac SM4-CMAC and SM4-GMAC. */
public final class Sm4Macs {
    private Sm4Macs() {}

    /** Mac SM4-CMAC (NIST SP 800-38B with SM4): a 16-byte tag. */
    public static final class Cmac extends MacSpi {
        private NativeRef key;
        private NativeRef mac;

        public Cmac() {
            Native.init();
        }

        @Override
        protected int engineGetMacLength() {
            return 16;
        }

        @Override
        protected void engineInit(Key k, AlgorithmParameterSpec params)
                throws InvalidKeyException, InvalidAlgorithmParameterException {
            if (params != null) {
                throw new InvalidAlgorithmParameterException("SM4-CMAC takes no parameters");
            }
            byte[] raw = Checks.secretKey(k, "SM4-CMAC", 16);
            try {
                NativeRef newKey = new NativeRef(this, Native.sm4Key(raw));
                NativeRef newMac = new NativeRef(this, Native.cmacNew(newKey.handle()));
                if (mac != null) {
                    mac.release();
                    key.release();
                }
                key = newKey;
                mac = newMac;
            } finally {
                Arrays.fill(raw, (byte) 0);
            }
        }

        private long mac() {
            if (mac == null) {
                throw new IllegalStateException("SM4-CMAC not initialised");
            }
            return mac.handle();
        }

        @Override
        protected void engineUpdate(byte input) {
            engineUpdate(new byte[] {input}, 0, 1);
        }

        @Override
        protected void engineUpdate(byte[] in, int off, int len) {
            Checks.range(in, off, len);
            long m = mac();
            for (int done = 0; done < len; done += Native.CHUNK) {
                Native.cmacUpdate(m, in, off + done, Math.min(Native.CHUNK, len - done));
            }
        }

        @Override
        protected byte[] engineDoFinal() {
            byte[] tag = new byte[16];
            Native.cmacFinish(mac(), tag, 0);
            return tag;
        }

        @Override
        protected void engineReset() {
            if (mac != null) {
                Native.cmacFinish(mac.handle(), new byte[16], 0);
            }
        }
    }

    /** Mac SM4-GMAC: GCM's tag over the message as associated data, under a 12-byte (or
     * longer) IV given as {@link IvParameterSpec} or {@link GCMParameterSpec}. */
    public static final class Gmac extends MacSpi {
        private NativeRef gcm;
        private byte[] iv;
        private final Bytes data = new Bytes();

        public Gmac() {
            Native.init();
        }

        @Override
        protected int engineGetMacLength() {
            return 16;
        }

        @Override
        protected void engineInit(Key k, AlgorithmParameterSpec params)
                throws InvalidKeyException, InvalidAlgorithmParameterException {
            byte[] newIv;
            if (params instanceof IvParameterSpec) {
                newIv = ((IvParameterSpec) params).getIV();
            } else if (params instanceof GCMParameterSpec && ((GCMParameterSpec) params).getTLen() == 128) {
                newIv = ((GCMParameterSpec) params).getIV();
            } else {
                throw new InvalidAlgorithmParameterException("SM4-GMAC takes an IV (IvParameterSpec)");
            }
            if (newIv.length == 0) {
                throw new InvalidAlgorithmParameterException("SM4-GMAC: an empty IV");
            }
            byte[] raw = Checks.secretKey(k, "SM4-GMAC", 16);
            try {
                NativeRef g = new NativeRef(this, Native.gcmKey(raw, 16));
                if (gcm != null) {
                    gcm.release();
                }
                gcm = g;
                iv = newIv;
                data.clear();
            } finally {
                Arrays.fill(raw, (byte) 0);
            }
        }

        @Override
        protected void engineUpdate(byte input) {
            engineUpdate(new byte[] {input}, 0, 1);
        }

        @Override
        protected void engineUpdate(byte[] in, int off, int len) {
            if (gcm == null) {
                throw new IllegalStateException("SM4-GMAC not initialised");
            }
            Checks.range(in, off, len);
            data.append(in, off, len);
        }

        @Override
        protected byte[] engineDoFinal() {
            if (gcm == null) {
                throw new IllegalStateException("SM4-GMAC not initialised");
            }
            byte[] tag = new byte[16];
            byte[] ad = Arrays.copyOf(data.data, data.length);
            try {
                if (Native.gcmSeal(gcm.handle(), iv, ad, new byte[0], 0, 0, tag, 0) != 16) {
                    throw new IllegalStateException("SM4-GMAC: the message is too long");
                }
                return tag;
            } finally {
                Arrays.fill(ad, (byte) 0);
                data.clear();
            }
        }

        @Override
        protected void engineReset() {
            data.clear();
        }
    }
}
