//! SignedData over 1 KiB (GM/T 0010 OIDs, one signer, signed attributes, the certificate
//! included), signed and verified per second, to set beside gmsm's (`interop/gmsm bench-cms`)
//! with the same certificate and key: `cargo run --release -p shangmi-pki --example cms_rate --
//! CERT KEY ROOT`. Verification checks the signer's chain to ROOT, with one verifier.

use std::time::Instant;

use shangmi_pki::{CmsSigner, Flavor, Verifier};

fn median(n: usize, mut f: impl FnMut()) -> f64 {
    let mut rates: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            n as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[3]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 {
        eprintln!("usage: cms_rate CERT KEY ROOT");
        std::process::exit(2);
    }
    let read = |p: &String| std::fs::read(p).expect("reads");
    let cert = shangmi_pki::certificates(&read(&args[0]))
        .expect("parses")
        .remove(0);
    let key = shangmi::sm2::SigningKey::from_key_file(&read(&args[1]), None).expect("a key");
    let root = shangmi_pki::certificates(&read(&args[2])).expect("parses");
    let data = vec![0u8; 1024];
    let signers = [CmsSigner {
        cert: &cert,
        key: &key,
    }];
    let msg = shangmi_pki::cms_sign(&data, &signers, &[], false, Flavor::Gm).expect("signs");
    let v = Verifier::new(root);
    shangmi_pki::cms_verify(&msg, None, &v).expect("verifies");
    let sign = median(500, || {
        shangmi_pki::cms_sign(&data, &signers, &[], false, Flavor::Gm).expect("signs");
    });
    let verify = median(500, || {
        shangmi_pki::cms_verify(&msg, None, &v).expect("verifies");
    });
    println!("shangmi-pki: sign {sign:.0}/s, verify (with chain) {verify:.0}/s (medians of 7)");
}
