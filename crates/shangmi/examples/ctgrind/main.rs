//! The constant-time check's driver, run under valgrind by `scripts/ct-valgrind.sh`:
//! `ctgrind all` runs every probe on two inputs, `ctgrind control` runs the deliberately
//! leaky control, which valgrind must report.

#[cfg(shangmi_ctgrind)]
fn main() {
    use shangmi::ct_probes as probes;
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "control" {
        println!("control: {}", probes::leaky_control(7));
        return;
    }
    // Every profile valgrind can run: it emulates AVX2, AES-NI, PCLMULQDQ and BMI2, not
    // ADX, VAES, GFNI or AVX-512.
    for profile in shangmi::Backend::available() {
        for name in probes::PROBES {
            if mode != "all" && mode != name {
                continue;
            }
            for seed in [1u8, 2] {
                let out = probes::run(name, seed, profile).expect("known probe");
                println!(
                    "{name} ({profile}) seed {seed}: {} output bytes, first {:02x?}",
                    out.len(),
                    &out[..4]
                );
            }
        }
    }
}

#[cfg(not(shangmi_ctgrind))]
fn main() {
    eprintln!(
        "ctgrind: build with RUSTFLAGS=\"--cfg shangmi_ctgrind\" (see scripts/ct-valgrind.sh)"
    );
    std::process::exit(2);
}
