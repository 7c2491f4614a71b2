// shangmi (WebAssembly) beside sm-crypto 0.5, sm-crypto-v2 and Node's own OpenSSL, in one
// process: each implementation runs in slices of SLICE ms, taking turns round by round so
// that drift of a shared machine hits all alike; medians of the rounds, ratios to each peer.
// Run by scripts/bench-npm.sh (which installs the package from its tarball beside the peers).
import crypto from 'node:crypto';
import os from 'node:os';
import s from 'shangmi';
import smCrypto from 'sm-crypto';
import * as smV2 from 'sm-crypto-v2';

const ROUNDS = Number(process.env.ROUNDS || 7);
const SLICE = Number(process.env.SLICE_MS || 300);

// Calls of `f` in about SLICE ms, as a rate (calls per second).
function slice(f) {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < SLICE) {
    f();
    n++;
    if ((n & 3) === 0 || now - start > SLICE / 4) now = performance.now();
  }
  return (n * 1000) / (performance.now() - start);
}

function median(v) {
  const a = [...v].sort((x, y) => x - y);
  return a[a.length >> 1];
}

// One case: every candidate's median rate; `work` turns calls into the unit (MB for MB/s).
function measure(name, candidates, unit, work = 1) {
  for (const [, f] of candidates) f(); // warm up, and fail before timing
  const rates = candidates.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    candidates.forEach(([, f], i) => rates[i].push(slice(f) * work));
  }
  const out = { name, unit, figures: {} };
  candidates.forEach(([imp], i) => (out.figures[imp] = median(rates[i])));
  return out;
}

const KiB = (n) => Uint8Array.from({ length: n * 1024 }, (_, i) => (i * 131 + 7) & 0xff);
const msg32 = KiB(1).subarray(0, 32);
const oneK = KiB(1);
const oneM = KiB(1024);
const MB = oneM.length / 1e6;
const results = [];

// SM2 signatures: sm-crypto's default (hash: true, Z with the default ID) on both peers.
{
  const kp = smCrypto.sm2.generateKeyPairHex();
  const k = s.PrivateKey.fromHex(kp.privateKey);
  const p = k.publicKey();
  const m = Array.from(msg32);
  const ours = k.sign(msg32);
  const theirs = smCrypto.sm2.doSignature(m, kp.privateKey, { hash: true });
  const theirs2 = smV2.sm2.doSignature(msg32, kp.privateKey, { hash: true });
  results.push(measure('SM2 sign (32 B)', [
    ['shangmi', () => k.sign(msg32)],
    ['sm-crypto', () => smCrypto.sm2.doSignature(m, kp.privateKey, { hash: true })],
    ['sm-crypto-v2', () => smV2.sm2.doSignature(msg32, kp.privateKey, { hash: true })],
  ], 'ops/s'));
  results.push(measure('SM2 verify (32 B)', [
    ['shangmi', () => { if (!p.verify(msg32, ours)) throw new Error('verify'); }],
    ['sm-crypto', () => { if (!smCrypto.sm2.doVerifySignature(m, theirs, kp.publicKey, { hash: true })) throw new Error('verify'); }],
    ['sm-crypto-v2', () => { if (!smV2.sm2.doVerifySignature(msg32, theirs2, kp.publicKey, { hash: true })) throw new Error('verify'); }],
  ], 'ops/s'));
  const m1k = Array.from(oneK);
  const ct = p.encrypt(oneK, { prefix: false });
  const cth = s.toHex(ct);
  results.push(measure('SM2 encrypt (1 KiB)', [
    ['shangmi', () => p.encrypt(oneK)],
    ['sm-crypto', () => smCrypto.sm2.doEncrypt(m1k, kp.publicKey, 1)],
    ['sm-crypto-v2', () => smV2.sm2.doEncrypt(oneK, kp.publicKey, 1)],
  ], 'ops/s'));
  results.push(measure('SM2 decrypt (1 KiB)', [
    ['shangmi', () => k.decrypt(ct)],
    ['sm-crypto', () => smCrypto.sm2.doDecrypt(cth, kp.privateKey, 1, { output: 'array' })],
    ['sm-crypto-v2', () => smV2.sm2.doDecrypt(cth, kp.privateKey, 1, { output: 'array' })],
  ], 'ops/s'));
}

// SM3 and SM4 on 1 MiB; Node's OpenSSL beside them where it has the algorithm.
{
  const arr = Array.from(oneM);
  results.push(measure('SM3 (1 MiB)', [
    ['shangmi', () => s.sm3(oneM)],
    ['node (OpenSSL)', () => crypto.createHash('sm3').update(oneM).digest()],
    ['sm-crypto', () => smCrypto.sm3(arr)],
    ['sm-crypto-v2', () => smV2.sm3(oneM)],
  ], 'MB/s', MB));
  const key = KiB(1).subarray(0, 16);
  const iv = KiB(1).subarray(16, 32);
  const keyHex = s.toHex(key);
  const ivHex = s.toHex(iv);
  results.push(measure('SM4-CBC encrypt (1 MiB)', [
    ['shangmi', () => s.sm4Encrypt(key, oneM, { mode: 'cbc', iv })],
    ['node (OpenSSL)', () => { const c = crypto.createCipheriv('sm4-cbc', key, iv); c.update(oneM); c.final(); }],
    ['sm-crypto', () => smCrypto.sm4.encrypt(arr, keyHex, { mode: 'cbc', iv: ivHex, output: 'array' })],
    ['sm-crypto-v2', () => smV2.sm4.encrypt(oneM, keyHex, { mode: 'cbc', iv: ivHex, output: 'array' })],
  ], 'MB/s', MB));
  const cbc = s.sm4Encrypt(key, oneM, { mode: 'cbc', iv });
  results.push(measure('SM4-CBC decrypt (1 MiB)', [
    ['shangmi', () => s.sm4Decrypt(key, cbc, { mode: 'cbc', iv })],
    ['node (OpenSSL)', () => { const d = crypto.createDecipheriv('sm4-cbc', key, iv); d.update(cbc); d.final(); }],
    ['sm-crypto', () => smCrypto.sm4.decrypt(Array.from(cbc), keyHex, { mode: 'cbc', iv: ivHex, output: 'array' })],
    ['sm-crypto-v2', () => smV2.sm4.decrypt(cbc, keyHex, { mode: 'cbc', iv: ivHex, output: 'array' })],
  ], 'MB/s', MB));
  const nonce = iv.subarray(0, 12);
  const nonceHex = s.toHex(nonce);
  results.push(measure('SM4-GCM encrypt (1 MiB)', [
    ['shangmi', () => s.sm4Encrypt(key, oneM, { mode: 'gcm', nonce })],
    ['sm-crypto-v2', () => smV2.sm4.encrypt(oneM, keyHex, { mode: 'gcm', iv: nonceHex, outputTag: true, output: 'array' })],
  ], 'MB/s', MB));
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`## shangmi for JavaScript beside the pure-JS SM libraries\n`);
console.log(`${cpu}, Node ${process.version}; ${s.version()}; sm-crypto 0.5.8, sm-crypto-v2 1.15.1;`);
console.log(`${ROUNDS} rounds of ${SLICE} ms per implementation, alternating; medians.\n`);
const peers = ['node (OpenSSL)', 'sm-crypto', 'sm-crypto-v2'];
console.log(`| op | unit | shangmi | ${peers.join(' | ')} | shangmi / each |`);
console.log(`|---|---|---:|${peers.map(() => '---:').join('|')}|---|`);
const fmt = (x) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1));
for (const r of results) {
  const ours = r.figures.shangmi;
  const cells = peers.map((p) => (r.figures[p] === undefined ? '' : fmt(r.figures[p])));
  const ratios = peers
    .filter((p) => r.figures[p] !== undefined)
    .map((p) => `${(ours / r.figures[p]).toFixed(1)}x ${p.replace(' (OpenSSL)', '')}`);
  console.log(`| ${r.name} | ${r.unit} | ${fmt(ours)} | ${cells.join(' | ')} | ${ratios.join(', ')} |`);
}
