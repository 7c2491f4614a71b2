package rs.shangmi.jca;

/** Hex for public values (key points in toString). */
final class Hex {
    private Hex() {}

    static String of(byte[] b) {
        StringBuilder s = new StringBuilder(b.length * 2);
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        }
        return s.toString();
    }
}
