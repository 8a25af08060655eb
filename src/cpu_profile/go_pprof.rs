//! A Go server's own CPU profile (Dolt's `--pprof-server` endpoint), taken over the
//! same seconds as the client's: decoded from Go's pprof format (gzip-compressed
//! protocol buffers, `profile.proto` of github.com/google/pprof), drawn as a flame
//! graph and split into the server's parts by the innermost frame of a known part.
//!
//! Only the messages and fields read here are declared; protobuf skips the rest.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// What the server's profile found (results.json `profiles[].server`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerProfile {
    /// The seconds the server profiled (Go's endpoint takes whole seconds).
    pub seconds: u64,
    /// CPU time the samples stand for ÷ `seconds`: how many CPUs the server kept busy.
    pub cpu_per_wall: f64,
    pub samples: u64,
    /// Shares of the CPU time, by the innermost frame of a known part, in the order
    /// the server lists its parts; "other" last.
    pub parts: Vec<PartShare>,
    /// The flame graph, relative to the run directory.
    pub flamegraph: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartShare {
    pub part: String,
    pub share: f64,
}

impl ServerProfile {
    /// "server on CPU 85% (of one CPU); storage 40%, SQL engine 20%, …"
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| format!("{} {:.0}%", p.part, p.share * 100.0))
            .collect();
        format!(
            "server on CPU {:.0}% of {} s (of one CPU), {} samples: {} ({})",
            self.cpu_per_wall * 100.0,
            self.seconds,
            self.samples,
            parts.join(", "),
            self.flamegraph
        )
    }
}

/// A server's parts: a name and the prefixes of the function names that belong to it.
pub type Parts = &'static [(&'static str, &'static [&'static str])];

/// The response of Go's `/debug/pprof/profile` as it came over the socket (HTTP/1.0
/// headers, then the gzip-compressed profile): the profile's bytes, or the server's
/// answer when it is not a 200.
pub fn http_body(response: &[u8]) -> Result<&[u8]> {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        bail!(
            "no HTTP response from the pprof endpoint ({} bytes: {:?})",
            response.len(),
            String::from_utf8_lossy(&response[..response.len().min(200)])
        );
    };
    let head = String::from_utf8_lossy(&response[..end]);
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        bail!(
            "the pprof endpoint answered `{status}`: {}",
            String::from_utf8_lossy(&response[end + 4..]).trim()
        );
    }
    Ok(&response[end + 4..])
}

/// Decode a Go CPU profile, write its flame graph to `dir/file_name`, and split its
/// CPU time into `parts`.
pub fn analyse(
    profile_gz: &[u8],
    seconds: u64,
    parts: Parts,
    title: &str,
    dir: &Path,
    file_name: &str,
) -> Result<ServerProfile> {
    let profile = decode(profile_gz)?;
    let stacks = profile.stacks()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(file_name);
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    // Folded stacks, root first, weighted by CPU nanoseconds (sampling at 100 Hz).
    let mut folded: HashMap<String, i64> = HashMap::new();
    for (leaf_first, _, nanos) in &stacks {
        let line = leaf_first
            .iter()
            .rev()
            .map(|f| f.replace(';', ":"))
            .collect::<Vec<_>>()
            .join(";");
        *folded.entry(line).or_default() += nanos;
    }
    let mut lines: Vec<String> = folded
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(stack, n)| format!("{stack} {n}"))
        .collect();
    lines.sort();
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "CPU ns".to_string();
    if lines.is_empty() {
        // inferno refuses an empty graph: the server took no sample (idle, or a
        // profile shorter than its 10 ms period).
        lines.push("(no samples) 1".to_string());
    }
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), file)
        .with_context(|| format!("cannot write {}", path.display()))?;

    let mut by_part = vec![0i64; parts.len() + 1];
    let mut samples = 0u64;
    let mut total = 0i64;
    for (leaf_first, count, nanos) in &stacks {
        by_part[part_of(leaf_first, parts)] += nanos;
        samples += *count as u64;
        total += nanos;
    }
    let share = |n: i64| {
        if total > 0 {
            n as f64 / total as f64
        } else {
            0.0
        }
    };
    let mut shares: Vec<PartShare> = parts
        .iter()
        .enumerate()
        .map(|(i, (name, _))| PartShare {
            part: name.to_string(),
            share: share(by_part[i]),
        })
        .collect();
    shares.push(PartShare {
        part: "other".to_string(),
        share: share(by_part[parts.len()]),
    });
    Ok(ServerProfile {
        seconds,
        cpu_per_wall: total as f64 / 1e9 / seconds.max(1) as f64,
        samples,
        parts: shares,
        flamegraph: format!(
            "{}/{file_name}",
            dir.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("profiles")
        ),
    })
}

/// The index in `parts` of the innermost frame that belongs to one (`parts.len()`:
/// other).
pub fn part_of(frames_leaf_first: &[String], parts: Parts) -> usize {
    for frame in frames_leaf_first {
        for (i, (_, prefixes)) in parts.iter().enumerate() {
            if prefixes.iter().any(|p| frame.starts_with(p)) {
                return i;
            }
        }
    }
    parts.len()
}

fn decode(profile_gz: &[u8]) -> Result<Profile> {
    let mut raw = Vec::new();
    // Go writes the profile gzip-compressed; accept it plain too.
    if profile_gz.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(profile_gz)
            .read_to_end(&mut raw)
            .context("the server's profile is not valid gzip")?;
    } else {
        raw.extend_from_slice(profile_gz);
    }
    <Profile as prost::Message>::decode(raw.as_slice())
        .context("the server's profile is not a pprof profile")
}

#[derive(Clone, PartialEq, prost::Message)]
struct Profile {
    #[prost(message, repeated, tag = "1")]
    sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    sample: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    string_table: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ValueType {
    #[prost(int64, tag = "1")]
    r#type: i64,
    #[prost(int64, tag = "2")]
    unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    value: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Location {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(message, repeated, tag = "4")]
    line: Vec<Line>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Line {
    #[prost(uint64, tag = "1")]
    function_id: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Function {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "2")]
    name: i64,
}

impl Profile {
    /// Every sample as (function names leaf first, sample count, CPU nanoseconds).
    /// A location lists its inlined functions innermost first, so frames run leaf
    /// first across locations and within each.
    fn stacks(&self) -> Result<Vec<(Vec<String>, i64, i64)>> {
        let string = |i: i64| self.string_table.get(i as usize).map(String::as_str);
        let index_of = |kind: &str| {
            self.sample_type
                .iter()
                .position(|t| string(t.r#type) == Some(kind))
        };
        let (Some(count_at), Some(cpu_at)) = (index_of("samples"), index_of("cpu")) else {
            bail!(
                "not a CPU profile: its sample types are {:?}",
                self.sample_type
                    .iter()
                    .map(|t| string(t.r#type).unwrap_or("?"))
                    .collect::<Vec<_>>()
            );
        };
        let functions: HashMap<u64, &str> = self
            .function
            .iter()
            .map(|f| (f.id, string(f.name).unwrap_or("?")))
            .collect();
        let locations: HashMap<u64, &Location> = self.location.iter().map(|l| (l.id, l)).collect();
        Ok(self
            .sample
            .iter()
            .map(|s| {
                let frames = s
                    .location_id
                    .iter()
                    .flat_map(|id| {
                        locations
                            .get(id)
                            .map(|l| l.line.as_slice())
                            .unwrap_or_default()
                    })
                    .map(|line| functions.get(&line.function_id).unwrap_or(&"?").to_string())
                    .collect();
                let value = |i: usize| s.value.get(i).copied().unwrap_or(0);
                (frames, value(count_at), value(cpu_at))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    const PARTS: Parts = &[
        ("storage", &["github.com/dolthub/dolt/go/store/"]),
        ("system calls", &["syscall."]),
    ];

    /// A profile as Go writes one: two stacks, one of them sampled twice.
    fn go_profile() -> Vec<u8> {
        let strings = [
            "",
            "samples",
            "count",
            "cpu",
            "nanoseconds",
            "main.main",
            "github.com/dolthub/dolt/go/store/prolly.Get",
            "runtime.memmove",
            "syscall.Syscall",
        ];
        let function = (5..=8)
            .map(|i| Function {
                id: i as u64,
                name: i,
            })
            .collect();
        let location = (5..=8)
            .map(|i| Location {
                id: i as u64 * 10,
                line: vec![Line {
                    function_id: i as u64,
                }],
            })
            .collect();
        let profile = Profile {
            sample_type: vec![
                ValueType { r#type: 1, unit: 2 },
                ValueType { r#type: 3, unit: 4 },
            ],
            sample: vec![
                // memmove called by prolly.Get called by main: storage's time.
                Sample {
                    location_id: vec![70, 60, 50],
                    value: vec![2, 20_000_000],
                },
                Sample {
                    location_id: vec![80, 50],
                    value: vec![1, 10_000_000],
                },
            ],
            location,
            function,
            string_table: strings.iter().map(|s| s.to_string()).collect(),
        };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &profile.encode_to_vec()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_go_cpu_profile_is_split_by_the_innermost_known_frame() {
        let dir = tempfile::tempdir().unwrap();
        let found = analyse(&go_profile(), 1, PARTS, "t", dir.path(), "server.svg").unwrap();
        assert_eq!(found.samples, 3);
        assert!((found.cpu_per_wall - 0.03).abs() < 1e-9, "{found:?}");
        let shares: Vec<(&str, f64)> = found
            .parts
            .iter()
            .map(|p| (p.part.as_str(), p.share))
            .collect();
        let expect = [
            ("storage", 2.0 / 3.0),
            ("system calls", 1.0 / 3.0),
            ("other", 0.0),
        ];
        for ((name, share), (want_name, want)) in shares.iter().zip(expect) {
            assert_eq!(*name, want_name);
            assert!((share - want).abs() < 1e-9, "{shares:?}");
        }
        let svg = std::fs::read_to_string(dir.path().join("server.svg")).unwrap();
        assert!(svg.contains("<svg"), "{svg:.200}");
        assert!(svg.contains("prolly.Get"), "the graph names the frames");
    }

    #[test]
    fn a_profile_that_is_not_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = analyse(b"not a profile", 1, PARTS, "t", dir.path(), "x.svg").unwrap_err();
        assert!(format!("{err:#}").contains("pprof"), "{err:#}");
    }

    #[test]
    fn the_http_answer_must_be_a_200() {
        assert_eq!(
            http_body(b"HTTP/1.0 200 OK\r\nContent-Type: x\r\n\r\nBODY").unwrap(),
            b"BODY"
        );
        let err = http_body(b"HTTP/1.0 500 Internal\r\n\r\nprofiling already in use").unwrap_err();
        assert!(format!("{err}").contains("already in use"), "{err}");
        assert!(http_body(b"").is_err());
    }
}
