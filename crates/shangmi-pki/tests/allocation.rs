//! What parsing a certificate allocates: every certificate of the corpus, and one of 6 KiB
//! with 300 names, read from DER under a counting allocator. The bytes allocated in total (not
//! only at the peak) stay under twice the encoding plus a fixed 6 KiB: the owned structure
//! costs about 4-5 KiB however small the certificate (a 500-byte one allocates about ten times
//! its size in some 35 allocations), and a large one little more than its own size, plus the
//! one copy of its bytes a `Cert` keeps (what its signature is checked over).

/// (encoding length, bytes allocated in total) for parsing `der`.
fn cost(der: &[u8]) -> (usize, u64) {
    let mut parsed = None;
    let info = allocation_counter::measure(|| {
        parsed = Some(shangmi_pki::certificates(der).unwrap());
    });
    drop(parsed);
    (der.len(), info.bytes_total)
}

fn bounded(what: &str, (len, used): (usize, u64)) {
    assert!(
        used <= 2 * len as u64 + 6144,
        "{what}: {used} bytes allocated for {len} bytes"
    );
}

#[test]
fn corpus_certificates_allocate_twice_their_size_plus_a_fixed_cost() {
    let dir = format!("{}/tests/vectors/x509", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let Ok(ders) = shangmi_pki::certificate_ders(&data) else {
            continue;
        };
        for der in ders {
            bounded(&path.display().to_string(), cost(&der));
            seen += 1;
        }
    }
    assert!(seen > 20, "{seen} certificates");
}

#[test]
fn a_large_certificate_allocates_little_more_than_itself() {
    let key = shangmi::sm2::SigningKey::random().unwrap();
    let sans: Vec<String> = (0..300)
        .map(|i| format!("DNS:host{i}.example.com"))
        .collect();
    let sans: Vec<&str> = sans.iter().map(String::as_str).collect();
    let csr = shangmi_pki::request(&key, "CN=big", &sans).unwrap();
    let cert = shangmi_pki::self_sign_request(&csr, &key, &shangmi_pki::Issue::leaf(1)).unwrap();
    let der = der::Encode::to_der(&cert).unwrap();
    let (len, used) = cost(&der);
    assert!(len > 6000);
    // The decoded view about 1.3 times the encoding, the kept bytes once.
    assert!(used < 5 * len as u64 / 2, "{used} for {len}");
}
