use super::*;
use crate::sm4::modes::{cfb, ctr, ofb};

const KEY: [u8; 16] = [3; 16];
const IV: Block = [0x5a; 16];

/// The one-shot result of each mode, from the borrowing APIs the stream is built on.
fn one_shot(mode: Mode, encrypt: bool, data: &[u8]) -> Result<Vec<u8>, Error> {
    let c = Sm4::new(&KEY);
    let mut buf = data.to_vec();
    match (mode, encrypt) {
        (Mode::Ecb, true) => ecb::encrypt(&c, &mut buf)?,
        (Mode::Ecb, false) => ecb::decrypt(&c, &mut buf)?,
        (Mode::EcbPkcs7, true) => return Ok(ecb::encrypt_padded(&c, data)),
        (Mode::EcbPkcs7, false) => return ecb::decrypt_padded(&c, data),
        (Mode::Cbc(iv), true) => cbc::Encryptor::new(&c, &iv).encrypt_blocks(&mut buf)?,
        (Mode::Cbc(iv), false) => cbc::Decryptor::new(&c, &iv).decrypt_blocks(&mut buf)?,
        (Mode::CbcPkcs7(iv), true) => return Ok(cbc::encrypt_padded(&c, &iv, data)),
        (Mode::CbcPkcs7(iv), false) => return cbc::decrypt_padded(&c, &iv, data),
        (Mode::Cfb(iv), true) => cfb::Cfb::new(&c, &iv).encrypt(&mut buf),
        (Mode::Cfb(iv), false) => cfb::Cfb::new(&c, &iv).decrypt(&mut buf),
        (Mode::Ofb(iv), _) => ofb::Ofb::new(&c, &iv).apply_keystream(&mut buf),
        (Mode::Ctr(iv), _) => ctr::Ctr::new(&c, &iv).apply_keystream(&mut buf),
    }
    Ok(buf)
}

/// Runs `data` through a stream in pieces of the given sizes, copying the stream at
/// every piece and going on with the copy.
fn streamed(mode: Mode, dir: Direction, data: &[u8], pieces: &[usize]) -> Result<Vec<u8>, Error> {
    let mut s = Stream::new(&KEY, mode, dir);
    let mut out = Vec::new();
    let mut rest = data;
    for &p in pieces.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (now, later) = rest.split_at(p.min(rest.len()));
        let need = s.update_len(now.len()).unwrap();
        let mut buf = vec![0u8; need];
        if need > 0 {
            // One byte short changes nothing.
            assert_eq!(
                s.update(now, &mut buf[..need - 1]),
                Err(Error::BufferTooSmall)
            );
        }
        // In place, on a copy, gives the same bytes and leaves the copy where `s` is.
        let mut twin = s.clone();
        let mut inplace = now.to_vec();
        inplace.resize(need.max(now.len()), 0);
        assert_eq!(twin.update_in_place(&mut inplace, now.len())?, need);
        assert_eq!(s.update(now, &mut buf)?, need);
        assert_eq!(&inplace[..need], &buf[..], "{mode:?} in place");
        out.extend_from_slice(&buf);
        // Go on with the in-place twin after odd pieces, with a clone after even ones.
        s = if now.len() % 2 == 1 { twin } else { s.clone() };
        rest = later;
    }
    let mut last = vec![0u8; s.finish_len()];
    let n = s.finish(&mut last)?;
    out.extend_from_slice(&last[..n]);
    assert_eq!(s.finish(&mut last), Err(Error::Finished));
    Ok(out)
}

#[test]
fn streams_match_the_one_shots_in_every_mode_and_piece_size() {
    let modes = [
        Mode::Ecb,
        Mode::EcbPkcs7,
        Mode::Cbc(IV),
        Mode::CbcPkcs7(IV),
        Mode::Cfb(IV),
        Mode::Ofb(IV),
        Mode::Ctr(IV),
    ];
    let data: Vec<u8> = (0..200u8).collect();
    for mode in modes {
        for len in [0, 1, 15, 16, 17, 32, 100, 160, 200] {
            let d = &data[..len];
            let enc = one_shot(mode, true, d);
            for pieces in [&[1usize][..], &[7], &[16], &[5, 16, 33], &[1000]] {
                let ours = streamed(mode, Direction::Encrypt, d, pieces);
                assert_eq!(ours, enc, "{mode:?} encrypt {len} {pieces:?}");
                if let Ok(ct) = &enc {
                    let back = streamed(mode, Direction::Decrypt, ct, pieces);
                    assert_eq!(back, one_shot(mode, false, ct), "{mode:?} {len}");
                    assert_eq!(back.as_deref(), Ok(d), "{mode:?} {len} {pieces:?}");
                }
            }
        }
    }
}

#[test]
fn bad_padding_is_refused_with_nothing_written() {
    let mut ct = cbc::encrypt_padded(&Sm4::new(&KEY), &IV, b"sixteen bytes!!!");
    let last = ct.len() - 1;
    ct[last] ^= 1;
    let mut s = Stream::new(&KEY, Mode::CbcPkcs7(IV), Direction::Decrypt);
    let mut out = vec![0u8; s.update_len(ct.len()).unwrap()];
    assert_eq!(s.update(&ct, &mut out), Ok(16));
    let mut fin = [0xeeu8; 15];
    assert_eq!(s.finish(&mut fin), Err(Error::Decrypt));
    assert_eq!(fin, [0xee; 15]);
    // A partial block without padding is an error at the end, and decryption with padding
    // needs a whole last block.
    let mut s = Stream::new(&KEY, Mode::Cbc(IV), Direction::Encrypt);
    assert_eq!(s.update(&[1; 5], &mut []), Ok(0));
    assert_eq!(s.finish(&mut []), Err(Error::InvalidLength));
    let mut s = Stream::new(&KEY, Mode::EcbPkcs7, Direction::Decrypt);
    assert_eq!(s.finish(&mut [0; 15]), Err(Error::InvalidLength));
}

#[test]
fn sizes_that_overflow_are_refused() {
    let mut s = Stream::new(&KEY, Mode::Ecb, Direction::Encrypt);
    assert_eq!(s.update(&[1; 3], &mut []), Ok(0));
    assert_eq!(s.update_len(usize::MAX), None);
    assert_eq!(s.update_len(usize::MAX - 3), Some(usize::MAX - 15));
}
