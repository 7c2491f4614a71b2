//! The vector reader refuses records a test did not fully check.

mod common;

use common::vectors::parse;

#[test]
fn a_fully_read_record_passes() {
    let recs = parse("inline", "# comment\na = 01\nb = x\n\nc = 2\n");
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].hex("a"), [1]);
    assert_eq!(recs[0].str("b"), "x");
    assert_eq!(recs[1].num("c"), 2);
}

#[test]
#[should_panic(expected = "attributes never checked")]
fn an_unread_attribute_fails_the_test() {
    let recs = parse("inline", "a = 01\nextra = 02\n");
    assert_eq!(recs[0].hex("a"), [1]);
}

#[test]
#[should_panic(expected = "given twice")]
fn a_repeated_attribute_is_refused() {
    parse("inline", "a = 01\na = 02\n");
}
