//! `--size-mix` as users write it:
//!
//! - `4KiB:67,8KiB:10,1MiB:3` (or `buckets:…`): sizes and weights, as warp's weighted
//!   buckets; fio's `bssplit` form `4k/67:8k/10:1m/3` too;
//! - `uniform:1KiB,64KiB`: every size in the range as likely;
//! - `lognormal:8KiB,1.5,32MiB`: median, sigma (of the log), largest blob;
//! - `hist:FILE`: a YCSB histogram file (`BlockSize<TAB>n`, then `bucket<TAB>count`
//!   lines; bucket i holds blobs of (i+1) x n bytes);
//! - `dir:DIR`: the sizes of the files under a directory (sizes only: nothing is read);
//! - a table's column (`sqlite:FILE#TABLE.COLUMN`, `postgres://…#TABLE.COLUMN`,
//!   `mysql://…#TABLE.COLUMN`): sampled in `config::mix_source`, which connects;
//! - `file:FILE`: a mix saved as text (a run saves its mix's canonical form with its
//!   results, so a sampled one can be run again without its source).

use std::path::Path;

use crate::error::InputError;
use crate::size::parse_bytes;

use super::{Shape, SizeMix, bad};

/// At most this many sizes are looked at: a directory's first files, a table's sampled
/// rows (every one below it).
pub const SAMPLE_ROWS: usize = 200_000;
/// A sampled size is kept to this many steps per doubling (1.1% apart), so a mix from
/// millions of files is a few hundred buckets.
const STEPS_PER_DOUBLING: f64 = 64.0;

/// The forms a mix is written in, for the errors that name them.
const FORMS: &str = "write sizes with weights (4KiB:67,8KiB:10), uniform:LOW,HIGH, lognormal:MEDIAN,SIGMA,LARGEST, hist:FILE (YCSB's histogram), dir:DIR, a table's column (sqlite:FILE#TABLE.COLUMN, postgres://USER@HOST/DB#TABLE.COLUMN, mysql://USER@HOST/DB#TABLE.COLUMN) or file:FILE";

/// Parse one `--size-mix` (see the module docs); one line of error saying what is wrong.
pub fn parse(text: &str) -> Result<SizeMix, InputError> {
    let text = text.trim();
    let (kind, arg) = text.split_once(':').unwrap_or(("", text));
    let shape = match kind {
        "lognormal" => lognormal(text, arg)?,
        "uniform" => uniform(text, arg)?,
        "buckets" => Shape::Buckets(buckets(text, arg)?),
        "hist" => Shape::Buckets(histogram_file(text, Path::new(arg))?),
        "dir" => Shape::Buckets(directory(text, Path::new(arg))?),
        "file" => {
            let saved = std::fs::read_to_string(arg)
                .map_err(|e| bad(text, format!("cannot read {arg}: {e}")))?;
            if saved.trim_start().starts_with("file:") {
                return Err(bad(text, format!("{arg} names another file")));
            }
            // The file's own error in one line, naming the file, not its whole text.
            return match parse(saved.trim()) {
                Ok(mut mix) => {
                    mix.source = text.to_string();
                    Ok(mix)
                }
                Err(InputError::Value { why, .. }) => {
                    Err(bad(text, format!("{arg} holds no mix: {why}")))
                }
                Err(e) => Err(bad(text, format!("{arg} holds no mix: {e}"))),
            };
        }
        // A word before the ':' that is no size is a form misspelt ("lognormol:…"):
        // named as such, with the forms, rather than as a bad size.
        _ if !kind.is_empty()
            && !kind.contains('/')
            && parse_bytes(kind).is_err()
            && kind.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            return Err(bad(
                text,
                format!("'{kind}' is no form of size mix; {FORMS}"),
            ));
        }
        _ if text.contains(':') || text.contains('/') => Shape::Buckets(buckets(text, text)?),
        _ => {
            return Err(bad(text, FORMS));
        }
    };
    SizeMix::new(shape, text.to_string()).map_err(|why| bad(text, why))
}

fn size(input: &str, text: &str, what: &str) -> Result<u64, InputError> {
    parse_bytes(text).map_err(|e| bad(input, format!("{what}: {e}")))
}

fn number(input: &str, text: &str, what: &str) -> Result<f64, InputError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| bad(input, format!("{what} {text:?} is not a number")))
}

fn fields<'a>(input: &str, arg: &'a str, n: usize, form: &str) -> Result<Vec<&'a str>, InputError> {
    let parts: Vec<&str> = arg.split(',').map(str::trim).collect();
    if parts.len() != n || parts.iter().any(|p| p.is_empty()) {
        return Err(bad(input, format!("write it as {form}")));
    }
    Ok(parts)
}

fn lognormal(input: &str, arg: &str) -> Result<Shape, InputError> {
    let form = "lognormal:MEDIAN,SIGMA,LARGEST (lognormal:8KiB,1.5,32MiB)";
    let parts = fields(input, arg, 3, form)?;
    let median = size(input, parts[0], "the median")?;
    let sigma = number(input, parts[1], "sigma")?;
    let largest = size(input, parts[2], "the largest blob")?;
    if sigma <= 0.0 {
        return Err(bad(
            input,
            "sigma must be above 0 (0 is one size: use --sizes)",
        ));
    }
    if median > largest {
        return Err(bad(input, "the median is above the largest blob"));
    }
    if median < 8 {
        return Err(bad(input, "the median is below 8 B"));
    }
    // Sizes are cut to [8 B, largest]: so wide a sigma that most of them land on the two
    // ends is a two-point mix, not the curve asked for.
    let (ln_median, cut) = ((median as f64).ln(), |bytes: f64| bytes.ln());
    let at_ends = normal_cdf((cut(8.0) - ln_median) / sigma)
        + (1.0 - normal_cdf((cut(largest as f64) - ln_median) / sigma));
    if at_ends > 0.5 {
        return Err(bad(
            input,
            format!(
                "sigma {sigma} puts {:.0}% of the blobs at the two ends (8 B and the largest blob), which makes it a two-point mix: lower sigma (1 to 3 spreads sizes over a few orders of magnitude), or write the sizes with weights (4KiB:67,32MiB:33)",
                at_ends * 100.0
            ),
        ));
    }
    Ok(Shape::Lognormal {
        median,
        sigma,
        largest,
    })
}

/// The standard normal's cumulative distribution (Abramowitz and Stegun 7.1.26, within
/// 1.5e-7): enough to say what share of a lognormal mix is cut at its ends.
pub(super) fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

fn uniform(input: &str, arg: &str) -> Result<Shape, InputError> {
    let parts = fields(input, arg, 2, "uniform:LOW,HIGH (uniform:1KiB,64KiB)")?;
    let low = size(input, parts[0], "the low end")?;
    let high = size(input, parts[1], "the high end")?;
    if low > high {
        return Err(bad(input, "the low end is above the high end"));
    }
    Ok(Shape::Uniform { low, high })
}

/// `SIZE:WEIGHT,…` or fio's `SIZE/WEIGHT:…`; the same size twice adds its weights.
fn buckets(input: &str, arg: &str) -> Result<Vec<(u64, f64)>, InputError> {
    let (list, pair) = if arg.contains('/') {
        (':', '/')
    } else {
        (',', ':')
    };
    let mut out: Vec<(u64, f64)> = Vec::new();
    for item in arg.split(list).map(str::trim).filter(|s| !s.is_empty()) {
        let Some((s, w)) = item.split_once(pair) else {
            return Err(bad(
                input,
                format!("{item:?} has no weight (write SIZE{pair}WEIGHT)"),
            ));
        };
        let bytes = size(input, s, "a size")?;
        let weight = number(input, w, "the weight")?;
        if weight < 0.0 {
            return Err(bad(input, format!("the weight of {s} is negative")));
        }
        match out.iter_mut().find(|(b, _)| *b == bytes) {
            Some((_, sum)) => *sum += weight,
            None => out.push((bytes, weight)),
        }
    }
    out.retain(|&(_, w)| w > 0.0);
    out.sort_by_key(|&(s, _)| s);
    if out.is_empty() {
        return Err(bad(input, "it has no size with a weight above 0"));
    }
    Ok(out)
}

/// YCSB's histogram file: `BlockSize<TAB>n`, then `bucket<TAB>count` lines.
fn histogram_file(input: &str, path: &Path) -> Result<Vec<(u64, f64)>, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(input, format!("cannot read {}: {e}", path.display())))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let block = match lines
        .next()
        .map(|(_, l)| l.split_whitespace().collect::<Vec<_>>())
    {
        Some(f) if f.len() == 2 && f[0] == "BlockSize" => {
            f[1].parse::<u64>().ok().filter(|&b| b > 0).ok_or_else(|| {
                bad(
                    input,
                    format!("BlockSize {:?} is not a positive whole number", f[1]),
                )
            })?
        }
        _ => {
            return Err(bad(
                input,
                format!(
                    "{} does not start with a BlockSize line (YCSB's histogram: `BlockSize<TAB>n`, then `bucket<TAB>count` lines)",
                    path.display()
                ),
            ));
        }
    };
    let mut out: Vec<(u64, f64)> = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        let parsed = match f.as_slice() {
            [bucket, count] => bucket.parse::<u64>().ok().zip(count.parse::<i64>().ok()),
            _ => None,
        };
        let Some((bucket, count)) = parsed else {
            return Err(bad(
                input,
                format!(
                    "line {} of {} is not `bucket<TAB>count`: {line:?}",
                    n + 1,
                    path.display()
                ),
            ));
        };
        if count < 0 {
            return Err(bad(
                input,
                format!("line {} of {} has a negative count", n + 1, path.display()),
            ));
        }
        let Some(bytes) = bucket.checked_add(1).and_then(|b| b.checked_mul(block)) else {
            return Err(bad(
                input,
                format!(
                    "line {} of {}: bucket {bucket} of {block} bytes is too large",
                    n + 1,
                    path.display()
                ),
            ));
        };
        if count > 0 {
            out.push((bytes, count as f64));
        }
    }
    if out.is_empty() {
        return Err(bad(
            input,
            format!("{} has no bucket with a count above 0", path.display()),
        ));
    }
    out.sort_by_key(|&(s, _)| s);
    Ok(out)
}

/// The sizes of the regular files under `dir` (the first `SAMPLE_ROWS` found), each kept
/// to `STEPS_PER_DOUBLING` steps per doubling; empty files left out, others under 8 B
/// refused (`refuse_under_min`).
fn directory(input: &str, dir: &Path) -> Result<Vec<(u64, f64)>, InputError> {
    if !dir.is_dir() {
        return Err(bad(input, format!("{} is not a directory", dir.display())));
    }
    let mut sizes: Vec<u64> = Vec::new();
    let mut empty = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let entries = std::fs::read_dir(&at)
            .map_err(|e| bad(input, format!("cannot read {}: {e}", at.display())))?;
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
            {
                // An empty file is no blob: counted as 8 B it turned a directory of
                // placeholders into a million-row mix of 8 B blobs.
                match meta.len() {
                    0 => empty += 1,
                    bytes => sizes.push(bytes),
                }
            }
            if sizes.len() >= SAMPLE_ROWS {
                break;
            }
        }
        if sizes.len() >= SAMPLE_ROWS {
            break;
        }
    }
    if sizes.is_empty() && empty > 0 {
        return Err(bad(
            input,
            format!(
                "the {empty} file(s) under {} are all empty: there is no blob size to mix; point dir: at the files the blobs come from",
                dir.display()
            ),
        ));
    }
    if sizes.is_empty() {
        return Err(bad(input, format!("{} holds no files", dir.display())));
    }
    refuse_under_min(input, &sizes, &format!("files under {}", dir.display()))?;
    Ok(grid(&sizes))
}

/// Sizes under the smallest blob (8 B: each blob's id is stamped in its first 8 bytes)
/// refused, not raised to it: a directory of 1-byte files became 8-byte blobs without a
/// word (8 MiB asked, 1,048,576 rows).
fn refuse_under_min(input: &str, sizes: &[u64], what: &str) -> Result<(), InputError> {
    let min = crate::size::SizeClass::MIN_BYTES;
    let under = sizes.iter().filter(|&&s| s < min).count();
    if under == 0 {
        return Ok(());
    }
    Err(bad(
        input,
        format!(
            "{under} of the {} {what} sampled are under {min} B, the smallest blob blobrace stores (its id is in its first {min} bytes); they would be measured as {min}-byte blobs, which they are not: leave them out of the source, or give the sizes as a mix (\"buckets:...\")",
            sizes.len()
        ),
    ))
}

/// The mix of sizes sampled elsewhere (a table's column, `config::mix_source`), named
/// `source` in lines and results.
pub fn from_sampled_sizes(sizes: &[u64], source: &str) -> Result<SizeMix, InputError> {
    // Empty values are no blobs, as a directory's empty files are not.
    let sizes: Vec<u64> = sizes.iter().copied().filter(|&s| s > 0).collect();
    if sizes.is_empty() {
        return Err(bad(
            source,
            "every value sampled is empty: there is no blob size to mix; name a column that holds the blobs",
        ));
    }
    let sizes = &sizes[..];
    refuse_under_min(source, sizes, "values")?;
    SizeMix::new(Shape::Buckets(grid(sizes)), source.to_string()).map_err(|why| bad(source, why))
}

/// Sizes kept to `STEPS_PER_DOUBLING` steps per doubling, counted: a mix from many samples.
pub(super) fn grid(sizes: &[u64]) -> Vec<(u64, f64)> {
    let mut counts: std::collections::BTreeMap<u64, f64> = std::collections::BTreeMap::new();
    for &s in sizes {
        let s = s.max(crate::size::SizeClass::MIN_BYTES);
        let step = ((s as f64).log2() * STEPS_PER_DOUBLING).round() / STEPS_PER_DOUBLING;
        let kept = if s < 128 {
            s
        } else {
            2f64.powf(step).round() as u64
        };
        *counts.entry(kept).or_default() += 1.0;
    }
    counts.into_iter().collect()
}
