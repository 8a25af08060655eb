//! `histograms.hlog`: every result's exact histograms as one HdrHistogram interval
//! log (V2, deflate), readable by HdrHistogram's own tools (`HistogramLogProcessor
//! -tag <tag>`, hdrh in Python). One interval per histogram, tagged
//! `<engine>.<cache>.r<repeat>/<size>/c<clients>[@<rate>]/<part>`, part `all`, `hits`,
//! `misses` (where the disk counter split them) or `response` (open loop); a size
//! mix's bands each again, as `.../c<clients>/<band>/<part>` (`band-8KiB-16KiB`). An
//! interval spans its step (warm-up and measurement): results keep their times to
//! the second, not the timed phase's own bounds. Values are nanoseconds.

use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use super::Exporter;
use crate::load_gen::LoadPoint;
use crate::records::results::{EngineResult, RunResults};
use crate::stats::hdr;

pub struct Hlog;

impl Exporter for Hlog {
    fn file_name(&self) -> &'static str {
        "histograms.hlog"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        let mut intervals = Vec::new();
        for r in &run.results {
            intervals.extend(intervals_of(r, &LoadPoint::closed(1), None));
        }
        for l in &run.load_results {
            let response = l.load.response_hdr.as_deref();
            intervals.extend(intervals_of(&l.result, &l.load.point, response));
        }
        if intervals.is_empty() {
            return Ok(None);
        }
        let heading = format!(
            "blobrace run {} on {}: fetch latencies in ns, one interval per histogram",
            run.run_id, run.machine.hostname
        );
        log_of(&heading, &run.started_at, &intervals).map(Some)
    }
}

/// A tagged histogram and the times of its step (RFC 3339).
type Interval<'a> = (String, &'a str, (&'a str, &'a str));

/// The interval log of `intervals`, timed from `started_at`.
fn log_of(heading: &str, started_at: &str, intervals: &[Interval]) -> Result<Vec<u8>> {
    let start = system_time(started_at)?;
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(heading)
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut out, &mut serializer)?;
    for (tag, encoded, (from, to)) in intervals {
        let h = hdr::decode(encoded)?;
        let (from, to) = (system_time(from)?, system_time(to)?);
        let offset = from.duration_since(start).unwrap_or_default();
        let length = to.duration_since(from).unwrap_or_default();
        let tag = Tag::new(tag).ok_or_else(|| anyhow!("{tag:?} is not a log tag"))?;
        log.write_histogram(&h, offset, length.max(Duration::from_millis(1)), Some(tag))
            .map_err(|e| anyhow!("cannot write the histogram log: {e}"))?;
    }
    drop(log);
    Ok(out)
}

/// The tagged histograms of one result's measured phase, with the step's times.
fn intervals_of<'a>(
    r: &'a EngineResult,
    point: &LoadPoint,
    response: Option<&'a str>,
) -> Vec<Interval<'a>> {
    let Some(set) = &r.measured.hdr else {
        return Vec::new();
    };
    // `c16`, or `c16@500` (fetches a second offered, open loop): `/` splits the tag.
    let load = match point.rate {
        None => format!("c{}", point.clients),
        Some(rate) => format!("c{}@{}", point.clients, crate::stats::rate_label(rate)),
    };
    let cell = format!(
        "{}.{}.r{}/{}/{load}",
        r.engine.name(),
        r.scenario.cache.name(),
        r.scenario.repeat,
        // A mix's name has spaces, which a tag cannot hold.
        r.size
            .replace(|c: char| c.is_whitespace() || c == ',' || c == '/', "_")
    );
    let times = (r.started_at.as_str(), r.finished_at.as_str());
    let parts = |prefix: &str, set: &'a hdr::HdrSet, response: Option<&'a str>| {
        [
            ("all", Some(set.all.as_str())),
            ("hits", set.hits.as_deref()),
            ("misses", set.misses.as_deref()),
            ("response", response),
        ]
        .into_iter()
        .filter_map(|(part, h)| h.map(|h| (format!("{prefix}/{part}"), h, times)))
        .collect::<Vec<_>>()
    };
    let mut intervals = parts(&cell, set, response);
    // A band written before bands kept their histograms has none to give.
    for band in &r.measured.bands {
        if let Some(band_set) = &band.hdr {
            intervals.extend(parts(&format!("{cell}/band-{}", band.band), band_set, None));
        }
    }
    intervals
}

fn system_time(rfc3339: &str) -> Result<SystemTime> {
    let t = chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map_err(|e| anyhow!("{rfc3339:?} is not a time: {e}"))?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_millis(t.timestamp_millis().max(0) as u64))
}

#[cfg(test)]
mod tests {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    /// Each tagged interval decodes to the histogram it was given, at its offset
    /// from the run's start and over its step.
    #[test]
    fn each_interval_is_its_histogram_under_its_tag_at_its_time() {
        let mut h = crate::stats::new_histogram();
        for v in [1_200u64, 5_000, 5_100, 900_000] {
            h.record(v).unwrap();
        }
        let encoded = crate::stats::hdr::encode(&h);
        let intervals = [
            (
                "floor.cold.r1/64KiB/c1/all".to_string(),
                encoded.as_str(),
                ("2026-11-27T03:00:05Z", "2026-11-27T03:00:08Z"),
            ),
            (
                "floor.cold.r1/64KiB/c1/hits".to_string(),
                encoded.as_str(),
                ("2026-11-27T03:00:05Z", "2026-11-27T03:00:08Z"),
            ),
        ];
        let bytes = super::log_of("a run", "2026-11-27T03:00:00Z", &intervals).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with("#a run\n#[StartTime: 1795748400.000"),
            "{text}"
        );
        let mut seen = Vec::new();
        for entry in IntervalLogIterator::new(&bytes) {
            if let LogEntry::Interval(i) = entry.unwrap() {
                assert_eq!(crate::stats::hdr::decode(i.encoded_histogram()).unwrap(), h);
                assert_eq!(i.start_timestamp(), std::time::Duration::from_secs(5));
                assert_eq!(i.duration(), std::time::Duration::from_secs(3));
                seen.push(i.tag().unwrap().as_str().to_string());
            }
        }
        assert_eq!(
            seen,
            ["floor.cold.r1/64KiB/c1/all", "floor.cold.r1/64KiB/c1/hits"]
        );
        let bad = [("a tag".to_string(), encoded.as_str(), intervals[0].2)];
        assert!(super::log_of("x", "2026-11-27T03:00:00Z", &bad).is_err());
    }
}
