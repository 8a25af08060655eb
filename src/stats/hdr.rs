//! A result's exact histograms in HdrHistogram's own interchange form: V2 with
//! deflate, base64 (what an interval log line carries). They travel in results.json
//! so that `blobrace merge` can add the fetches of runs made apart, and are written
//! out as `histograms.hlog` for HdrHistogram's tools (`report::export::hlog`).

use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// The histograms of one phase: all fetches, and hits and misses where the disk
/// counter could tell them apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HdrSet {
    pub all: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<String>,
}

impl HdrSet {
    pub fn of(all: &Histogram<u64>, split: Option<(&Histogram<u64>, &Histogram<u64>)>) -> Self {
        Self {
            all: encode(all),
            hits: split.map(|(hits, _)| encode(hits)),
            misses: split.map(|(_, misses)| encode(misses)),
        }
    }

    /// The fetches of both: every histogram added; the split only where both have it.
    pub fn add(&self, other: &HdrSet) -> Result<HdrSet> {
        let sum = |a: &str, b: &str| -> Result<String> {
            let mut h = decode(a)?;
            h.add(decode(b)?)
                .map_err(|e| anyhow!("cannot add histograms: {e:?}"))?;
            Ok(encode(&h))
        };
        let both = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) => sum(a, b).map(Some),
            _ => Ok(None),
        };
        Ok(HdrSet {
            all: sum(&self.all, &other.all)?,
            hits: both(&self.hits, &other.hits)?,
            misses: both(&self.misses, &other.misses)?,
        })
    }
}

/// V2 + deflate, base64.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("a histogram serializes into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .context("a histogram that is not base64")?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow!("a histogram HdrHistogram cannot read: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn histograms_round_trip_and_add_up_to_the_histogram_of_every_value() {
        let (mut a, mut b, mut every) = (new_histogram(), new_histogram(), new_histogram());
        for i in 0..5000u64 {
            let v = 1_000 + i * i % 7_919_993;
            if i % 3 == 0 { a.record(v) } else { b.record(v) }.unwrap();
            every.record(v).unwrap();
        }
        b.record(59_000_000_000).unwrap();
        every.record(59_000_000_000).unwrap();
        assert_eq!(decode(&encode(&a)).unwrap(), a);
        let set = |h: &Histogram<u64>| HdrSet::of(h, Some((h, h)));
        let sum = set(&a).add(&set(&b)).unwrap();
        let added = decode(&sum.all).unwrap();
        assert_eq!(added, every);
        assert_eq!(added.value_at_quantile(0.99), every.value_at_quantile(0.99));
        assert_eq!(decode(sum.misses.as_ref().unwrap()).unwrap(), every);
        let no_split = HdrSet::of(&a, None).add(&set(&b)).unwrap();
        assert_eq!((no_split.hits, no_split.misses), (None, None));
        assert!(decode("not base64!").is_err());
        assert!(decode("AAAA").is_err());
    }
}
