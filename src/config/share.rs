//! `--share i/n`: one machine's part of a run split across n machines (a Kubernetes
//! indexed Job's pods, or hosts by hand), merged afterwards by `blobrace merge`.
//! Split by size class, every n-th from the i-th: each machine loads only the
//! datasets it measures, and every engine of a size (the floor included) is measured
//! on one machine, so each comparison with the floor stays within one run.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::size::SizeClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// 1-based.
    pub index: u32,
    pub of: u32,
}

impl Share {
    /// The size classes of this share, in the run's order.
    pub fn sizes_of(self, sizes: &[SizeClass]) -> Vec<SizeClass> {
        sizes
            .iter()
            .enumerate()
            .filter(|(k, _)| *k as u32 % self.of == self.index - 1)
            .map(|(_, &s)| s)
            .collect()
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

pub fn parse_share(text: &str) -> Result<Share, String> {
    let bad = |why: &str| format!("--share {text:?} {why}");
    let (i, n) = text
        .trim()
        .split_once('/')
        .ok_or_else(|| bad("is not a share: give i/n, this machine's share i of n (1/2, 2/2)"))?;
    let number = |s: &str| s.trim().parse::<u32>().ok().filter(|&v| v >= 1);
    match (number(i), number(n)) {
        (Some(index), Some(of)) if index <= of => Ok(Share { index, of }),
        (Some(_), Some(_)) => Err(bad(
            "asks for a share past the last: i counts from 1 to n (2/2 is the last of two)",
        )),
        _ => Err(bad(
            "is not a share: i and n are whole numbers from 1, i at most n (1/2, 2/2)",
        )),
    }
}

impl Serialize for Share {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Share {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_share(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_take_every_nth_size_and_together_take_each_once() {
        let sizes: Vec<SizeClass> = [1u64 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20]
            .iter()
            .map(|&b| SizeClass::new(b).unwrap())
            .collect();
        let one = parse_share("1/2").unwrap();
        let two = parse_share(" 2/2").unwrap();
        assert_eq!(one.sizes_of(&sizes), [sizes[0], sizes[2], sizes[4]]);
        assert_eq!(two.sizes_of(&sizes), [sizes[1], sizes[3]]);
        assert_eq!(parse_share("1/1").unwrap().sizes_of(&sizes), sizes);
        assert!(parse_share("6/6").unwrap().sizes_of(&sizes).is_empty());
        assert_eq!(serde_json::to_string(&two).unwrap(), "\"2/2\"");
        assert_eq!(serde_json::from_str::<Share>("\"2/2\"").unwrap(), two);
        for bad in ["3/2", "0/2", "1/0", "2", "a/b", "-1/2", "1/2/3"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
        assert!(parse_share("3/2").unwrap_err().contains("past the last"));
    }
}
