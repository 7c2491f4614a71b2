// The TypeScript declarations checked by tsc --strict against a use of every entry point
// (scripts/test-npm.sh); not run.
import shangmi, { PrivateKey, PublicKey, EphemeralKey, sm3, sm4Encrypt, utf8, toHex, ShangmiError, Sm3 } from 'shangmi';
import compat, { sm2, sm4 } from 'shangmi/sm-crypto';
const k: PrivateKey = PrivateKey.generate();
const p: PublicKey = k.publicKey();
const sig: Uint8Array = k.sign(utf8('m'), { der: false });
const ok: boolean = p.verify(utf8('m'), sig, { der: false });
const e = EphemeralKey.generate();
const r = k.exchange(e, p, EphemeralKey.generate().publicKey(), { initiator: true, length: 16 });
const h: string = toHex(sm3(new Sm3().update(utf8('a')).digest()));
const c: Uint8Array = sm4Encrypt(new Uint8Array(16), utf8('x'), { mode: 'gcm', nonce: new Uint8Array(12) });
const kp = sm2.generateKeyPairHex();
const enc: string = sm2.doEncrypt('x', kp.publicKey, 1);
const s2: string = compat.sm3('abc');
const x = sm4.encrypt('x', '00112233445566778899aabbccddeeff');
const err: Error = new ShangmiError('x');
export const used = [ok, r.key.length, h, c.length, enc.length, s2, x, err, shangmi.version()];
