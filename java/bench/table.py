#!/usr/bin/env python3
"""The Java benchmark table: JMH JSON results (one file per JDK, primitives and handshakes
together) in, the Markdown BENCHMARKS.md carries out. Each figure is the median of the
measurement iterations; ratios are of figures from the same run.

Usage: table.py LABEL=RESULTS.json [LABEL=RESULTS.json ...]
"""
import json
import statistics
import sys


def load(path):
    out = {}
    for r in json.load(open(path)):
        name = r["benchmark"].rsplit(".", 2)
        key = (name[-2], name[-1], r.get("params", {}).get("provider") or r.get("params", {}).get("crypto"),
               r.get("params", {}).get("size"))
        raw = [x for fork in r["primaryMetric"]["rawData"] for x in fork]
        entry = {"ops": statistics.median(raw)}
        for sec, m in r.get("secondaryMetrics", {}).items():
            vals = [x for fork in m["rawData"] for x in fork]
            entry[sec] = sum(vals)
        out[key] = entry
    return out


def fmt(v):
    if v is None:
        return "—"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e4:
        return f"{v / 1e3:.0f} k"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def ratio(a, b):
    return f"{a / b:.1f}x" if a and b else "—"


ROWS = [
    ("SM2 sign (32 B)", "Sm2Bench", "sign", None, ("NativeAloneBench", "sm2SignMessage32", None, "64")),
    ("SM2 verify (32 B)", "Sm2Bench", "verify", None, ("NativeAloneBench", "sm2VerifyMessage32", None, "64")),
    ("SM3 64 B", "DigestBench", "sm3", "64", ("NativeAloneBench", "sm3", None, "64")),
    ("SM3 8 KiB", "DigestBench", "sm3", "8192", ("NativeAloneBench", "sm3", None, "8192")),
    ("HMAC-SM3 64 B", "DigestBench", "hmacSm3", "64", ("NativeAloneBench", "hmacSm3", None, "64")),
    ("HMAC-SM3 8 KiB", "DigestBench", "hmacSm3", "8192", ("NativeAloneBench", "hmacSm3", None, "8192")),
    ("SM4-GCM enc 8 KiB", "Sm4Bench", "gcmEncrypt", "8192", ("NativeAloneBench", "gcmEncrypt", None, "8192")),
    ("SM4-GCM dec 8 KiB", "Sm4Bench", "gcmDecrypt", "8192", None),
    ("SM4-CTR 8 KiB", "Sm4Bench", "ctr", "8192", None),
    ("SM4-CBC enc 8 KiB", "Sm4Bench", "cbcEncrypt", "8192", None),
    ("SM4-CBC dec 8 KiB", "Sm4Bench", "cbcDecrypt", "8192", ("NativeAloneBench", "cbcDecrypt", None, "8192")),
]


def table(label, res):
    g = lambda *k: res.get(k, {}).get("ops")
    print(f"**{label}** (ops/s, median of the iterations; JCA/native: the provider against the same "
          "operation made by calling the library's natives directly)\n")
    print("| op | shangmi | BC 1.87 | Kona | Kona native | vs BC | vs Kona | vs Kona native | JCA/native |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, cls, m, size, native in ROWS:
        us, bc, kona, kn = (g(cls, m, p, size) for p in ("shangmi", "bc", "kona", "kona-native"))
        nat = g(*native) if native else None
        jca = f"{100 * us / nat:.0f}%" if us and nat else "—"
        print(f"| {name} | {fmt(us)} | {fmt(bc)} | {fmt(kona)} | {fmt(kn)} | {ratio(us, bc)} | "
              f"{ratio(us, kona)} | {ratio(us, kn)} | {jca} |")
    print()
    print("| yardstick | SunEC / SunJCE | ACCP 2.5.0 | BC 1.87 | shangmi SM2 / SM4 vs ACCP |")
    print("|---|---:|---:|---:|---:|")
    for op, m in (("sign", "sign"), ("verify", "verify")):
        s, a, b = (g("Sm2Bench", m, "p256-" + p, None) for p in ("sunec", "accp", "bc"))
        print(f"| ECDSA P-256 {op} | {fmt(s)} | {fmt(a)} | {fmt(b)} | {ratio(g('Sm2Bench', m, 'shangmi', None), a)} |")
    for op, m in (("enc", "gcmEncrypt"), ("dec", "gcmDecrypt")):
        s, a = (g("AesBench", m, p, "8192") for p in ("sunjce", "accp"))
        print(f"| AES-128-GCM {op} 8 KiB | {fmt(s)} | {fmt(a)} | — | "
              f"{ratio(g('Sm4Bench', m, 'shangmi', '8192'), a)} |")
    print()
    hs = {c: res.get(("HandshakeBench", "fullHandshake", c, None)) for c in ("shangmi", "bc")}
    if all(hs.values()):
        print("| RFC 8998 full handshake in BCJSSE 1.84 | crypto on shangmi | crypto on BC | shangmi vs BC |")
        print("|---|---:|---:|---:|")
        us, bc = hs["shangmi"], hs["bc"]
        print(f"| handshakes/s, both sides in one thread | {fmt(us['ops'])} | {fmt(bc['ops'])} | "
              f"{ratio(us['ops'], bc['ops'])} |")
        for side in ("client", "server"):
            a = us[side + "Nanos"] / us["handshakes"] / 1e3
            b = bc[side + "Nanos"] / bc["handshakes"] / 1e3
            print(f"| {side}: µs per handshake | {a:.0f} | {b:.0f} | {b / a:.1f}x |")
        print()


def main():
    for arg in sys.argv[1:]:
        label, _, paths = arg.partition("=")
        res = {}
        for p in paths.split(","):
            res.update(load(p))
        table(label, res)


if __name__ == "__main__":
    main()
