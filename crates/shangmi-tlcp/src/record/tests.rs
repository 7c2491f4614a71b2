use super::*;

fn cbc_pair() -> (Protector, Protector) {
    let mk = || Protector::Cbc {
        mac: HmacSm3::new(&[7; 32]),
        cipher: Box::new(Sm4::new(&[9; 16])),
        seq: 0,
    };
    (mk(), mk())
}

fn gcm_pair() -> (Protector, Protector) {
    let mk = || Protector::Gcm {
        aead: Box::new(Sm4Gcm::new(&[9; 16])),
        fixed: [1, 2, 3, 4],
        seq: 0,
    };
    (mk(), mk())
}

/// A fresh receiver of the same kind at sequence number `seq`.
fn receiver(gcm: bool, seq: u64) -> Protector {
    let mut p = if gcm { gcm_pair().1 } else { cbc_pair().1 };
    match &mut p {
        Protector::Cbc { seq: s, .. } | Protector::Gcm { seq: s, .. } => *s = seq,
        Protector::Null => {}
    }
    p
}

#[test]
fn every_length_round_trips_and_any_flipped_bit_fails() {
    for gcm in [false, true] {
        let (mut tx, mut rx) = if gcm { gcm_pair() } else { cbc_pair() };
        let mut seq = 0;
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 1000, MAX_PLAINTEXT] {
            let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let rec = tx.seal(APPLICATION_DATA, &msg).unwrap();
            assert_eq!(
                usize::from(u16::from_be_bytes([rec[3], rec[4]])),
                rec.len() - 5
            );
            // Any flipped bit, in the explicit IV/nonce, the body or the tag, fails.
            for pos in [5, 5 + 8, rec.len() / 2, rec.len() - 17, rec.len() - 1] {
                let mut bad = rec.clone();
                bad[pos] ^= 0x20;
                assert!(
                    receiver(gcm, seq)
                        .open(APPLICATION_DATA, &bad[5..])
                        .is_err(),
                    "gcm {gcm} len {len} pos {pos}"
                );
            }
            // Another record type than the one sealed fails (it is authenticated).
            assert!(receiver(gcm, seq).open(HANDSHAKE, &rec[5..]).is_err());
            let got = rx.open(APPLICATION_DATA, &rec[5..]).unwrap();
            assert_eq!(&got[..], &msg[..]);
            seq += 1;
            // The same record replayed: the sequence number moved on, so it fails.
            assert!(matches!(
                receiver(gcm, seq).open(APPLICATION_DATA, &rec[5..]),
                Err(Error::BadRecordMac)
            ));
        }
    }
}

#[test]
fn cbc_bad_padding_and_bad_mac_give_the_same_error() {
    // Build records by hand with a chosen padding: valid MAC + bad padding, and valid
    // padding + bad MAC; both must be BadRecordMac.
    let key = [9u8; 16];
    let mac_key = [7u8; 32];
    let make = |payload: &[u8], pad: usize, corrupt_pad: bool, corrupt_mac: bool| {
        let mut m = HmacSm3::new(&mac_key);
        m.update(&pseudo_header(0, APPLICATION_DATA, payload.len()));
        m.update(payload);
        let mut tag = m.finalize();
        if corrupt_mac {
            tag[0] ^= 1;
        }
        let mut body = payload.to_vec();
        body.extend_from_slice(&tag);
        body.extend(core::iter::repeat_n(pad as u8, pad + 1));
        if corrupt_pad {
            let n = body.len();
            body[n - 2] ^= 1;
        }
        let iv = [3u8; 16];
        cbc::Encryptor::new(&Sm4::new(&key), &iv)
            .encrypt_blocks(&mut body)
            .unwrap();
        let mut f = iv.to_vec();
        f.extend_from_slice(&body);
        f
    };
    let payload = [0x41u8; 45]; // 45 + 32 + 1 = 78: pad 2 (or 18, 34, ...) aligns it.
    for pad in [2usize, 18, 34, 242] {
        let rx = || Protector::Cbc {
            mac: HmacSm3::new(&mac_key),
            cipher: Box::new(Sm4::new(&key)),
            seq: 0,
        };
        assert_eq!(
            &rx()
                .open(APPLICATION_DATA, &make(&payload, pad, false, false))
                .unwrap()[..],
            &payload[..]
        );
        assert!(matches!(
            rx().open(APPLICATION_DATA, &make(&payload, pad, true, false)),
            Err(Error::BadRecordMac)
        ));
        assert!(matches!(
            rx().open(APPLICATION_DATA, &make(&payload, pad, false, true)),
            Err(Error::BadRecordMac)
        ));
    }
}

#[test]
fn deframer_waits_for_whole_records_and_refuses_oversized_ones() {
    let mut d = Deframer::default();
    d.push(&[22, 1, 1, 0, 3, 1]);
    assert!(d.next().unwrap().is_none());
    d.push(&[2, 3, 23]);
    let r = d.next().unwrap().unwrap();
    assert_eq!((r.typ, r.version), (22, 0x0101));
    assert_eq!(d.fragment(&r), [1, 2, 3]);
    assert!(d.has_pending() && d.next().unwrap().is_none());
    let mut d = Deframer::default();
    d.push(&[23, 1, 1, 0xff, 0xff]);
    assert!(matches!(d.next(), Err(Error::RecordOverflow)));
    let mut d = Deframer::default();
    d.push(&[99, 1, 1, 0, 0]);
    assert!(d.next().is_err());
}

/// Records of one byte, pushed a byte at a time, each consumed as it completes: the
/// buffer stays the size of what is unconsumed (it is compacted, not grown) and every
/// record comes out whole and in order.
#[test]
fn the_deframer_consumes_by_offset_and_compacts() {
    let mut d = Deframer::default();
    for i in 0..10_000u32 {
        for b in [22, 1, 1, 0, 1, i as u8] {
            d.push(&[b]);
            if let Some(r) = d.next().unwrap() {
                assert_eq!(d.fragment(&r), [i as u8]);
            }
        }
        assert!(d.buf.len() <= 64, "the buffer grew to {}", d.buf.len());
    }
    assert!(!d.has_pending());
}
