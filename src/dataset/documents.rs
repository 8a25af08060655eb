//! What a dataset's blobs hold (`--content`): uniformly random bytes (the default, which
//! no store can compress), or documents like the ones teams store: prose-like text, JSON
//! records, HTML pages, or bytes built to compress R:1 under a general compressor (fio's
//! `buffer_compress_percentage` and db_bench's `--compression_ratio` idea, for a sweep).
//! Every blob is reproducible from its row's seed (`content::fill_blob_version`), so
//! verification and the per-fetch checks work on every content alike; the id stamp is
//! written over the first 8 bytes afterwards, whatever the content.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, CorpusRef};

/// The most `ratio:` takes: past it the bytes are one short run repeated, nothing a
/// store holds.
pub const MAX_RATIO: f64 = 100.0;

/// A dataset's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Content {
    #[default]
    Random,
    Text,
    Json,
    Html,
    /// Compresses about R:1 (1 < R <= `MAX_RATIO`), in hundredths (an exact name).
    Ratio(u32),
    /// The bytes of the user's own files (`dir:PATH`, `corpus.rs`).
    Dir(CorpusRef),
}

impl Content {
    /// By reference, for serde's `skip_serializing_if` too.
    pub fn is_random(&self) -> bool {
        *self == Content::Random
    }

    /// What a store would be told the bytes are (SeaweedFS gzips text, JSON and HTML).
    pub fn mime(self) -> &'static str {
        match self {
            Content::Text => "text/plain; charset=utf-8",
            Content::Json => "application/json",
            Content::Html => "text/html; charset=utf-8",
            Content::Random | Content::Ratio(_) => "application/octet-stream",
            Content::Dir(corpus) => corpus.get().mime,
        }
    }

    /// `-text`, `-json`, `-html`, `-r4`: its part of a dataset's name; empty for random.
    pub fn suffix(self) -> String {
        match self {
            Content::Random => String::new(),
            Content::Ratio(h) if h % 100 == 0 => format!("-r{}", h / 100),
            Content::Ratio(h) => format!("-r{}p{:02}", h / 100, h % 100),
            // The bytes it was cut from: a folder that changed is another dataset.
            Content::Dir(corpus) => format!("-dir{:08x}", corpus.get().digest >> 32),
            other => format!("-{other}"),
        }
    }

    /// Fill `buf` with this content from `rng`.
    pub fn fill(self, rng: &mut Xoshiro256PlusPlus, buf: &mut [u8]) {
        match self {
            Content::Random => rng.fill_bytes(buf),
            Content::Text => Writer::new(buf).text(rng),
            Content::Json => Writer::new(buf).json(rng),
            Content::Html => Writer::new(buf).html(rng),
            Content::Ratio(h) => fill_ratio(rng, buf, f64::from(h) / 100.0),
            Content::Dir(corpus) => corpus.get().fill(rng, buf),
        }
    }
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Content::Random => f.write_str("random"),
            Content::Text => f.write_str("text"),
            Content::Json => f.write_str("json"),
            Content::Html => f.write_str("html"),
            Content::Ratio(h) if h % 100 == 0 => write!(f, "ratio:{}", h / 100),
            Content::Ratio(h) => write!(f, "ratio:{}.{:02}", h / 100, h % 100),
            Content::Dir(corpus) => write!(f, "dir:{}", corpus.get().source),
        }
    }
}

/// As results hold it: a folder's content with the digest of the bytes it was cut from
/// (`dir:PATH@<16 hex>`), so it reads back without the folder.
impl From<Content> for String {
    fn from(c: Content) -> String {
        match c {
            Content::Dir(corpus) => format!("{c}@{:016x}", corpus.get().digest),
            _ => c.to_string(),
        }
    }
}

impl TryFrom<String> for Content {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if let Some(rest) = s.strip_prefix("dir:")
            && let Some((source, hex)) = rest.rsplit_once('@')
            && hex.len() == 16
            && let Ok(digest) = u64::from_str_radix(hex, 16)
        {
            return Ok(Content::Dir(super::corpus::intern(Corpus::described(
                source, digest,
            ))));
        }
        s.parse()
    }
}

impl FromStr for Content {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "random" => return Ok(Content::Random),
            "text" => return Ok(Content::Text),
            "json" => return Ok(Content::Json),
            "html" => return Ok(Content::Html),
            _ => {}
        }
        if let Some(dir) = t.strip_prefix("dir:") {
            if dir.is_empty() {
                return Err(
                    "dir: names no folder: write dir:PATH, the folder whose files the blobs should hold".into(),
                );
            }
            return Ok(Content::Dir(super::corpus::intern(Corpus::read(dir)?)));
        }
        let Some(r) = t.strip_prefix("ratio:") else {
            return Err(format!(
                "unknown content {t:?}: choose random (the default, incompressible), text, json, html, ratio:R (bytes that compress about R:1, 1 < R <= {MAX_RATIO}) or dir:PATH (your own files' bytes)"
            ));
        };
        let ratio: f64 = r.trim().parse().map_err(|_| {
            format!("ratio:{r} is not a number: write the compression ratio, e.g. ratio:4")
        })?;
        if !ratio.is_finite() || ratio <= 1.0 || ratio > MAX_RATIO {
            return Err(format!(
                "ratio:{r} is out of range: a ratio is above 1 (ratio:1 is --content random) and at most {MAX_RATIO}"
            ));
        }
        Ok(Content::Ratio((ratio * 100.0).round() as u32))
    }
}

/// Blocks of this many bytes each hold their own random run, repeated: far inside
/// deflate's 32 KiB window, so a compressor finds the repeats.
const RATIO_BLOCK: usize = 4096;

fn fill_ratio(rng: &mut Xoshiro256PlusPlus, buf: &mut [u8], ratio: f64) {
    let unique = ((RATIO_BLOCK as f64 / ratio).ceil() as usize).clamp(1, RATIO_BLOCK);
    for block in buf.chunks_mut(RATIO_BLOCK) {
        let n = unique.min(block.len());
        rng.fill_bytes(&mut block[..n]);
        for i in n..block.len() {
            block[i] = block[i % n];
        }
    }
}

/// The words of the text, JSON and HTML: made once from syllables (the same on every
/// machine and run), drawn by rank with a Zipf-like frequency (the r-th word about
/// 1/r as often as the first), as words are in prose.
struct Vocabulary {
    words: Vec<String>,
    /// The cumulative weights, scaled to u64, for drawing a rank.
    cumulative: Vec<u64>,
}

const SYLLABLES: [&str; 48] = [
    "a", "an", "ar", "ba", "be", "ca", "co", "da", "de", "di", "en", "er", "fa", "fo", "ga", "ha",
    "he", "in", "is", "ka", "la", "le", "li", "lo", "ma", "me", "mi", "mo", "na", "ne", "no", "on",
    "or", "pa", "pe", "ra", "re", "ri", "ro", "sa", "se", "st", "ta", "te", "ti", "to", "un", "ve",
];
const WORDS: usize = 4096;

fn vocabulary() -> &'static Vocabulary {
    static VOCABULARY: OnceLock<Vocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x0077_6f72_6473);
        let mut seen = std::collections::HashSet::new();
        let mut words = Vec::with_capacity(WORDS);
        while words.len() < WORDS {
            // Short words are the common ones: 1-2 syllables for the first ranks.
            let most = 1 + (words.len() * 4 / WORDS) + 1;
            let n = rng.random_range(1..=most);
            let word: String = (0..n)
                .map(|_| SYLLABLES[rng.random_range(0..SYLLABLES.len())])
                .collect();
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let weights: Vec<f64> = (1..=WORDS).map(|r| 1.0 / r as f64).collect();
        let total: f64 = weights.iter().sum();
        let mut sum = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                sum += w / total;
                (sum.min(1.0) * u64::MAX as f64) as u64
            })
            .collect();
        Vocabulary { words, cumulative }
    })
}

impl Vocabulary {
    fn word(&self, rng: &mut Xoshiro256PlusPlus) -> &str {
        let u = rng.next_u64();
        let at = self.cumulative.partition_point(|&c| c < u);
        &self.words[at.min(WORDS - 1)]
    }
}

/// Writes into a blob until it is full, the last piece cut where the blob ends.
struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
    words: &'static Vocabulary,
}

impl<'a> Writer<'a> {
    fn new(buf: &'a mut [u8]) -> Self {
        Writer {
            buf,
            at: 0,
            words: vocabulary(),
        }
    }

    fn full(&self) -> bool {
        self.at >= self.buf.len()
    }

    fn put(&mut self, s: &str) {
        let n = s.len().min(self.buf.len() - self.at);
        self.buf[self.at..self.at + n].copy_from_slice(&s.as_bytes()[..n]);
        self.at += n;
    }

    fn number(&mut self, n: u64) {
        self.put(itoa(n, &mut [0; 20]));
    }

    /// `count` words, the first capitalised where asked.
    fn words(&mut self, rng: &mut Xoshiro256PlusPlus, count: usize, capital: bool) {
        for i in 0..count {
            let w = self.words.word(rng);
            if i > 0 {
                self.put(" ");
            }
            if i == 0 && capital {
                let (first, rest) = w.split_at(1);
                self.put(&first.to_ascii_uppercase());
                self.put(rest);
            } else {
                self.put(w);
            }
        }
    }

    fn sentence(&mut self, rng: &mut Xoshiro256PlusPlus) {
        let n = rng.random_range(5..=18);
        let comma = rng.random_range(3..n.max(4));
        self.words(rng, comma, true);
        self.put(", ");
        self.words(rng, n - comma, false);
        self.put(if rng.random_range(0..8) == 0 {
            "? "
        } else {
            ". "
        });
    }

    fn paragraph(&mut self, rng: &mut Xoshiro256PlusPlus) {
        for _ in 0..rng.random_range(3..=7) {
            self.sentence(rng);
        }
    }

    fn text(&mut self, rng: &mut Xoshiro256PlusPlus) {
        while !self.full() {
            self.paragraph(rng);
            self.put("\n\n");
        }
    }

    fn json(&mut self, rng: &mut Xoshiro256PlusPlus) {
        self.put("[");
        let mut first = true;
        while !self.full() {
            if !first {
                self.put(",\n");
            }
            first = false;
            self.put("{\"id\":");
            self.number(rng.random_range(1..10_000_000));
            self.put(",\"title\":\"");
            let n = rng.random_range(2..=6);
            self.words(rng, n, true);
            self.put("\",\"author\":{\"name\":\"");
            self.words(rng, 2, true);
            self.put("\",\"email\":\"");
            self.words(rng, 1, false);
            self.put("@");
            self.words(rng, 1, false);
            self.put(".example\"},\"tags\":[");
            for t in 0..rng.random_range(1..=4) {
                if t > 0 {
                    self.put(",");
                }
                self.put("\"");
                self.words(rng, 1, false);
                self.put("\"");
            }
            self.put("],\"score\":");
            self.number(rng.random_range(0..100));
            self.put(".");
            self.number(rng.random_range(10..100));
            self.put(",\"published\":");
            self.put(if rng.random_range(0..4) == 0 {
                "false"
            } else {
                "true"
            });
            self.put(",\"body\":\"");
            for _ in 0..rng.random_range(1..=4) {
                self.sentence(rng);
            }
            self.put("\"}");
        }
    }

    fn html(&mut self, rng: &mut Xoshiro256PlusPlus) {
        self.put("<!doctype html><html><head><meta charset=\"utf-8\"><title>");
        self.words(rng, 4, true);
        self.put("</title></head><body>\n");
        while !self.full() {
            self.put("<article class=\"post\"><h2>");
            let n = rng.random_range(3..=8);
            self.words(rng, n, true);
            self.put("</h2><p class=\"meta\">By <a href=\"/author/");
            self.words(rng, 1, false);
            self.put("\">");
            self.words(rng, 2, true);
            self.put("</a> on 2026-");
            self.number(rng.random_range(10..13));
            self.put("-");
            self.number(rng.random_range(10..29));
            self.put("</p>\n");
            for _ in 0..rng.random_range(1..=4) {
                self.put("<p>");
                self.paragraph(rng);
                self.put("</p>\n");
            }
            self.put("<ul>");
            for _ in 0..rng.random_range(2..=5) {
                self.put("<li><a href=\"/tag/");
                self.words(rng, 1, false);
                self.put("\">");
                let n = rng.random_range(1..=3);
                self.words(rng, n, false);
                self.put("</a></li>");
            }
            self.put("</ul></article>\n");
        }
    }
}

/// `n` in decimal, without allocating.
fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).expect("digits")
}

#[cfg(test)]
mod tests;
