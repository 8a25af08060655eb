//! `--disk-latency`: the time the emulated disk (`slow_disk`) adds to each read and
//! write, as the flag takes it and results.json records it.

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// `--disk-latency`: the time added to each read and write of the data's disk, in
/// microseconds (a cloud volume answers in 0.5-1 ms; nbdkit >= 1.40 sleeps in µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct DiskLatency {
    pub us: u64,
}

impl DiskLatency {
    /// Whole milliseconds, the only form nbdkit before 1.40 takes.
    pub(super) fn whole_ms(self) -> bool {
        self.us.is_multiple_of(1000)
    }

    /// nbdkit's delay form: "2ms" where whole, else "500us".
    pub(super) fn nbdkit_form(self) -> String {
        if self.whole_ms() {
            format!("{}ms", self.us / 1000)
        } else {
            format!("{}us", self.us)
        }
    }

    /// "2 ms", "0.5 ms".
    pub fn label(self) -> String {
        format!("{} ms", self.us as f64 / 1000.0)
    }
}

/// "2ms", "0.5ms", "0.25ms": what the flag takes, and how results.json records it
/// (a run recorded before microseconds says "2ms" too).
impl std::fmt::Display for DiskLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.us == 0 {
            return write!(f, "0");
        }
        write!(f, "{}ms", self.us as f64 / 1000.0)
    }
}

impl From<DiskLatency> for String {
    fn from(d: DiskLatency) -> String {
        d.to_string()
    }
}

impl TryFrom<String> for DiskLatency {
    type Error = InputError;
    fn try_from(text: String) -> Result<Self, InputError> {
        parse_disk_latency(&text)?.ok_or_else(|| InputError::Value {
            what: "disk latency",
            input: text,
            why: "a recorded latency cannot be none".into(),
        })
    }
}

pub const FORMS: &str = "\"none\" (the machine's own disk); or each read's and write's added time, in ms or us (\"1ms\", \"0.5ms\", \"250us\"; \"0\": the emulated disk's path alone, its own cost), from 10us to 1000ms";

/// `--disk-latency`: None for "none".
pub fn parse_disk_latency(text: &str) -> Result<Option<DiskLatency>, InputError> {
    let bad = |why: String| InputError::Value {
        what: "disk latency",
        input: text.into(),
        why: format!("{why}; it takes {FORMS}"),
    };
    let t = text.trim();
    if t == "none" {
        return Ok(None);
    }
    if t == "0" {
        return Ok(Some(DiskLatency { us: 0 }));
    }
    let (number, us_per) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1.0)
    } else {
        let unit = t.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
        let number = &t[..t.len() - unit.len()];
        return Err(bad(if unit.is_empty() {
            format!("'{t}' needs its unit, ms or us")
        } else if number.trim().parse::<f64>().is_ok() {
            format!("unknown unit '{unit}' in '{t}': ms or us")
        } else {
            format!("'{t}' is not a number and a unit")
        }));
    };
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| bad(format!("'{t}' is not a number of {}", &t[number.len()..])))?;
    if value < 0.0 {
        return Err(bad(format!(
            "'{t}' is negative: a disk cannot answer early"
        )));
    }
    let us = value * us_per;
    if us.fract() != 0.0 {
        return Err(bad(format!("'{t}' is not a whole number of microseconds")));
    }
    let us = us as u64;
    if us == 0 {
        return Ok(Some(DiskLatency { us: 0 }));
    }
    // Below 10 µs the sleep's own overshoot (60-170 µs measured here) is all there is.
    if us < 10 {
        return Err(bad(format!("'{t}' is under 10us")));
    }
    if us > 1_000_000 {
        return Err(bad("more than 1000ms".into()));
    }
    Ok(Some(DiskLatency { us }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_and_bad_ones_say_the_forms() {
        assert_eq!(parse_disk_latency("none").unwrap(), None);
        for (text, us) in [
            ("1ms", 1000),
            ("0", 0),
            ("0.5ms", 500),
            ("250us", 250),
            ("0.25ms", 250),
            ("1000ms", 1_000_000),
        ] {
            assert_eq!(
                parse_disk_latency(text).unwrap(),
                Some(DiskLatency { us }),
                "{text}"
            );
        }
        for bad in [
            "1", "1s", "slow", "5000ms", "0.5us", "5us", "-1ms", "NaNms", "ms",
        ] {
            let e = parse_disk_latency(bad).unwrap_err().to_string();
            assert!(e.contains("it takes \"none\""), "{bad}: {e}");
        }
        // Recorded as the flag is written, and read back (2ms as before microseconds).
        for us in [0, 250, 500, 2000] {
            let json = serde_json::to_string(&DiskLatency { us }).unwrap();
            assert_eq!(serde_json::from_str::<DiskLatency>(&json).unwrap().us, us);
        }
        assert_eq!(
            serde_json::to_string(&DiskLatency { us: 2000 }).unwrap(),
            "\"2ms\""
        );
        assert_eq!(DiskLatency { us: 500 }.nbdkit_form(), "500us");
        assert_eq!(DiskLatency { us: 2000 }.nbdkit_form(), "2ms");
    }
}
