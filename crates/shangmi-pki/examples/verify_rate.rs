//! Chain verifications per second for a chain in files, to set beside gmsm's
//! (`interop/gmsm bench-verify`) on the same files: `cargo run --release -p shangmi-pki
//! --example verify_rate -- ROOT LEAF [INTERMEDIATE...]`. Prints the median of seven timed
//! rounds of 1,000 verifications, with one verifier (as a service keeps it: the issuer keys
//! precomputed after their first use) and with a fresh verifier each time.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: verify_rate ROOT LEAF [INTERMEDIATE...]");
        std::process::exit(2);
    }
    let read =
        |p: &String| shangmi_pki::certificates(&std::fs::read(p).expect("reads")).expect("parses");
    let root = read(&args[0]);
    let leaf = read(&args[1]).remove(0);
    let mid: Vec<_> = args[2..].iter().flat_map(read).collect();
    let v = shangmi_pki::Verifier::new(root);
    v.verify(&leaf, &mid).expect("the chain verifies");
    let mut rates = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..1000 {
            v.verify(&leaf, &mid).expect("verifies");
        }
        rates.push(1000.0 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "shangmi-pki: {:.0} chain verifications/s (median of 7, one verifier)",
        rates[3]
    );
    let anchors = read(&args[0]);
    let mut fresh = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..1000 {
            shangmi_pki::Verifier::new(anchors.clone())
                .verify(&leaf, &mid)
                .expect("verifies");
        }
        fresh.push(1000.0 / t.elapsed().as_secs_f64());
    }
    fresh.sort_by(f64::total_cmp);
    println!(
        "shangmi-pki: {:.0} chain verifications/s (median of 7, a fresh verifier each)",
        fresh[3]
    );
}
