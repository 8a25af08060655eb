//! What a general compressor makes of a dataset's blobs, measured, not assumed: rows
//! spread over the dataset, each compressed on its own (a store compresses value by
//! value) by deflate at level 6 (gzip's default: SeaweedFS's gzip, MariaDB's zlib) and by
//! zstd at level 3 (RocksDB's ZSTD), their bytes over the compressed bytes. Random bytes
//! give 1.00; `--content text` about 2.4. Recorded with every run (`RunResults::
//! compressibility`) and said on the report's first line.

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::dataset::content::fill_blob;
use crate::dataset::documents::Content;

mod zstd;

/// Rows sampled at most, and their bytes at most (at least one row is).
const SAMPLE_ROWS: u64 = 64;
const SAMPLE_BYTES: u64 = 8 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compressibility {
    /// The dataset (`DatasetSpec::stem`).
    pub dataset: String,
    pub content: Content,
    /// Rows sampled, spread from id 1 to the last, and their bytes.
    pub rows: u64,
    pub bytes: u64,
    /// Their bytes over deflate's (level 6), each row on its own: 1.0 incompressible.
    pub deflate6: f64,
    /// The same under zstd (level 3); none where libzstd could not be loaded (results
    /// older than 2026-12-07 have none either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zstd3: Option<f64>,
}

impl Compressibility {
    pub fn of(spec: &DatasetSpec) -> Self {
        let n = SAMPLE_ROWS
            .min(spec.rows)
            .min((SAMPLE_BYTES / spec.largest_blob().max(1)).max(1));
        let (mut bytes, mut packed) = (0u64, 0u64);
        let mut zstd_packed = zstd::unavailable().is_none().then_some(0u64);
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        for k in 0..n {
            let id = 1 + k * spec.rows / n;
            buf.resize(spec.blob_bytes(id) as usize, 0);
            fill_blob(spec.seed, spec.size, spec.content, id, &mut buf);
            let mut e = flate2::write::DeflateEncoder::new(
                Vec::with_capacity(buf.len() / 2),
                flate2::Compression::new(6),
            );
            e.write_all(&buf).expect("writing to memory");
            packed += e.finish().expect("writing to memory").len() as u64;
            zstd_packed = zstd_packed.and_then(|total| {
                let n = zstd::compressed_len(&buf, &mut scratch).ok()?;
                Some(total + n as u64)
            });
            bytes += buf.len() as u64;
        }
        Compressibility {
            dataset: spec.stem(),
            content: spec.content,
            rows: n,
            bytes,
            deflate6: bytes as f64 / packed.max(1) as f64,
            zstd3: zstd_packed.map(|z| bytes as f64 / z.max(1) as f64),
        }
    }

    /// "2.41:1 under deflate, 2.52:1 under zstd".
    pub fn label(&self) -> String {
        let zstd = match self.zstd3 {
            Some(z) => format!("{z:.2}:1 under zstd"),
            // Where the run measured, libzstd was missing (or the run predates it).
            None => "zstd not measured".to_string(),
        };
        format!("{:.2}:1 under deflate, {zstd}", self.deflate6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::key::KeyType;
    use crate::size::SizeClass;

    fn spec(content: Content, size: u64) -> DatasetSpec {
        DatasetSpec {
            content,
            ..DatasetSpec::new(SizeClass::new(size).unwrap(), 64 << 20, 7, KeyType::Int).unwrap()
        }
    }

    #[test]
    fn random_is_measured_incompressible_and_documents_are_not() {
        let random = Compressibility::of(&spec(Content::Random, 64 << 10));
        assert_eq!((random.rows, random.bytes), (64, 64 * (64 << 10)));
        assert!(random.deflate6 < 1.01, "{random:?}");
        let text = Compressibility::of(&spec(Content::Text, 64 << 10));
        assert!((2.0..4.5).contains(&text.deflate6), "{text:?}");
        // zstd (level 3) on the same rows: this machine has libzstd (RocksDB needs it).
        let (random_z, text_z) = (random.zstd3.unwrap(), text.zstd3.unwrap());
        assert!(random_z < 1.01, "{random:?}");
        assert!(
            (text.deflate6 * 0.7..text.deflate6 * 1.5).contains(&text_z),
            "{text:?}"
        );
        assert!(text.label().contains(":1 under zstd"), "{}", text.label());
        assert!(text.dataset.ends_with("-text"), "{text:?}");
        // A 32 MiB blob alone is more than the sample's bytes: one row is still taken.
        let large = Compressibility::of(&spec(Content::Ratio(400), 32 << 20));
        assert_eq!(large.rows, 1);
        assert!((3.4..4.4).contains(&large.deflate6), "{large:?}");
    }
}
