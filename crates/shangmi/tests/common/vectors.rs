//! Reader for the known-answer files in `tests/vectors/`.
//!
//! A file is records separated by blank lines; a record is `key = value` lines; `#` starts a
//! comment line. Every attribute of a record must be read by the test: a record dropped with an
//! unread attribute fails the test, so a vector file cannot carry a value that nothing checks.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// One record of a vector file.
pub struct Record {
    attrs: BTreeMap<String, String>,
    read: RefCell<BTreeSet<String>>,
    place: String,
}

impl Record {
    /// The attribute as text; panics (failing the test) when it is missing.
    pub fn str(&self, key: &str) -> &str {
        self.read.borrow_mut().insert(key.to_string());
        match self.attrs.get(key) {
            Some(v) => v,
            None => panic!("{}: no attribute `{key}`", self.place),
        }
    }

    /// The attribute decoded from hex (an empty value is an empty string of bytes).
    pub fn hex(&self, key: &str) -> Vec<u8> {
        let v = self.str(key);
        hex::decode(v).unwrap_or_else(|e| panic!("{}: `{key}` is not hex: {e}", self.place))
    }

    /// The attribute as a number.
    pub fn num(&self, key: &str) -> u64 {
        let v = self.str(key);
        v.parse()
            .unwrap_or_else(|e| panic!("{}: `{key}` is not a number: {e}", self.place))
    }

    /// The attribute if present.
    pub fn opt_str(&self, key: &str) -> Option<&str> {
        if self.attrs.contains_key(key) {
            Some(self.str(key))
        } else {
            None
        }
    }

    /// Where the record starts, for messages.
    pub fn place(&self) -> &str {
        &self.place
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let read = self.read.borrow();
        let unread: Vec<&String> = self.attrs.keys().filter(|k| !read.contains(*k)).collect();
        assert!(
            unread.is_empty(),
            "{}: attributes never checked: {unread:?}",
            self.place
        );
    }
}

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

/// All records of `tests/vectors/<name>`.
pub fn load(name: &str) -> Vec<Record> {
    let path = vectors_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(name, &text)
}

/// Parses vector text; `name` labels error messages.
pub fn parse(name: &str, text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut attrs = BTreeMap::new();
    let mut start = 0;
    let flush = |attrs: &mut BTreeMap<String, String>, start: usize, out: &mut Vec<Record>| {
        if !attrs.is_empty() {
            out.push(Record {
                attrs: std::mem::take(attrs),
                read: RefCell::new(BTreeSet::new()),
                place: format!("{name}:{start}"),
            });
        }
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            flush(&mut attrs, start, &mut records);
            continue;
        }
        if attrs.is_empty() {
            start = i + 1;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{name}:{}: expected `key = value`", i + 1));
        let prev = attrs.insert(k.trim().to_string(), v.trim().to_string());
        assert!(
            prev.is_none(),
            "{name}:{}: `{}` given twice",
            i + 1,
            k.trim()
        );
    }
    flush(&mut attrs, start, &mut records);
    records
}
