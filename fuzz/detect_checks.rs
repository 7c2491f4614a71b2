//! The gateway's first-flight decision on arbitrary bytes: it never panics, asks only for
//! more than it has, and a hello once read is read the same with more bytes after it and
//! not before all of it. Replayed on stable over the committed seeds by
//! crates/shangmi-gateway/tests/fuzz_corpus.rs.

use shangmi_gateway::detect::{Detected, Detector, detect};

pub fn detect_flight(data: &[u8]) {
    // Fed in pieces, the detector that keeps its place decides as one reading it whole.
    let whole = detect(data);
    let mut d = Detector::default();
    let step = 1 + data.first().map_or(0, |&b| usize::from(b % 7));
    let mut n = 0;
    let pieces = loop {
        n = (n + step).min(data.len());
        match d.detect(&data[..n]) {
            Detected::NeedMore(_) if n < data.len() => continue,
            other => break other,
        }
    };
    assert_eq!(pieces, whole);
    match whole {
        Detected::NeedMore(want) => {
            assert!(want > data.len(), "asked for {want} of {}", data.len())
        }
        Detected::Invalid(why) => assert!(!why.is_empty()),
        Detected::Hello(h) => {
            let mut more = data.to_vec();
            more.extend_from_slice(&[23, 3, 3, 0, 1, 0]);
            assert_eq!(detect(&more), Detected::Hello(h.clone()));
            for n in [0, data.len() / 2, data.len().saturating_sub(1)] {
                if n < data.len()
                    && let Detected::Hello(early) = detect(&data[..n])
                {
                    // A hello may end before the data does: the prefix then holds it whole.
                    assert_eq!(early, h);
                }
            }
            // An SM2 point is offered for gathering only when an SM group is the client's
            // first among the server's, and it is that group's point.
            for server in [&[0x0029u16][..], &[0x11EE, 0x0029], &[0x001D]] {
                if let Some(point) = h.sm2_point(server) {
                    let first = h.groups.iter().find(|g| server.contains(g));
                    let want = match first {
                        Some(0x0029) => &h.sm2_points.curve_sm2,
                        Some(0x11EE) => &h.sm2_points.hybrid,
                        other => panic!("a point for {other:?}"),
                    };
                    assert_eq!(Some(point), want.as_deref());
                }
            }
            // A server name, when read, is a lower-case host name.
            if let Some(name) = &h.server_name {
                assert!(!name.is_empty() && name.bytes().all(|b| !b.is_ascii_uppercase()));
            }
        }
    }
}
