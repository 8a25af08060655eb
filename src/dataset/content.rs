//! The bytes of every blob: uniformly random (incompressible), reproducible from
//! (run seed, size class, id, version), with the id stamped in the first 8 bytes so a
//! fetch can be checked cheaply and any row regenerated to check it fully. A row is at
//! version 0 when loaded; `--churn` writes version 1 over some (`churn.rs`).

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::dataset::DatasetSpec;
use crate::dataset::documents::Content;
use crate::size::SizeClass;

/// Bytes at the start of every blob that hold its id, little endian.
pub const STAMP_BYTES: usize = 8;

/// splitmix64's finaliser: spreads nearby inputs (ids 1, 2, 3...) over the whole space.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn row_seed(seed: u64, size: SizeClass, id: u64, version: u32) -> u64 {
    let loaded = mix(mix(mix(seed) ^ size.bytes()) ^ id);
    match version {
        0 => loaded,
        v => mix(loaded ^ mix(0x7665_7273_696f_6e00 ^ u64::from(v))),
    }
}

/// Fill `buf` (exactly one blob long: the size class's, or the row's own in a mix,
/// `DatasetSpec::blob_bytes`) with the content of row `id` as loaded. `size` is the
/// dataset's size class (a mix's largest blob): part of the row's seed.
pub fn fill_blob(seed: u64, size: SizeClass, content: Content, id: u64, buf: &mut [u8]) {
    fill_blob_version(seed, size, content, id, 0, buf);
}

/// Fill `buf` with the content of row `id` at `version`.
/// The stamp is written over the content's first 8 bytes: what a compressor sees
/// differs from the content's own by those bytes only.
pub fn fill_blob_version(
    seed: u64,
    size: SizeClass,
    content: Content,
    id: u64,
    version: u32,
    buf: &mut [u8],
) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(row_seed(seed, size, id, version));
    content.fill(&mut rng, buf);
    buf[..STAMP_BYTES].copy_from_slice(&id.to_le_bytes());
}

/// The id stamped at the start of a blob, if it is long enough to hold one.
pub fn stamp_of(blob: &[u8]) -> Option<u64> {
    blob.get(..STAMP_BYTES)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// Why a fetched blob is not row `id` (`len` bytes long), if it is not. `full`: the
/// row's version, to regenerate its whole content into `scratch` and compare; None
/// checks the length and the id stamp only.
pub fn check_blob(
    seed: u64,
    size: SizeClass,
    content: Content,
    (id, len): (u64, u64),
    blob: &[u8],
    full: Option<u32>,
    scratch: &mut Vec<u8>,
) -> Option<String> {
    if blob.len() as u64 != len {
        return Some(format!("length {} instead of {len}", blob.len()));
    }
    match stamp_of(blob) {
        Some(stamp) if stamp == id => {}
        Some(stamp) => return Some(format!("id stamp {stamp}")),
        None => return Some("no id stamp".into()),
    }
    if let Some(version) = full {
        scratch.resize(len as usize, 0);
        fill_blob_version(seed, size, content, id, version, scratch);
        if let Some(pos) = blob.iter().zip(scratch.iter()).position(|(a, b)| a != b) {
            let other = if version == 0 { 1 } else { 0 };
            fill_blob_version(seed, size, content, id, other, scratch);
            let which = if blob == &scratch[..] {
                format!("holds version {other} of the row instead of version {version}")
            } else {
                format!("content differs from byte {pos} (version {version})")
            };
            return Some(which);
        }
    }
    None
}

/// Each row's bytes from its seed, rows `first`.. of a batch. Documents are made word
/// by word, about 150 MB/s a core (a text load of the floor ran at 150 MB/s against
/// 1.9 GB/s for random bytes, 2026-12-07): their rows are filled on every core the
/// process may use (up to 4), so a load measures the store, not the generator. Random
/// bytes are quicker to make than any store is to write: one thread.
pub fn fill_rows(spec: &DatasetSpec, first: u64, batch: &mut [Vec<u8>]) {
    let fill = |offset: usize, rows: &mut [Vec<u8>]| {
        for (i, row) in rows.iter_mut().enumerate() {
            let id = first + (offset + i) as u64;
            fill_blob(spec.seed, spec.size, spec.content, id, row);
        }
    };
    let threads = match spec.content.is_random() {
        true => 1,
        false => std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
    };
    if threads <= 1 || batch.len() < 2 {
        fill(0, batch);
        return;
    }
    let per = batch.len().div_ceil(threads);
    let fill = &fill;
    std::thread::scope(|scope| {
        for (k, rows) in batch.chunks_mut(per).enumerate() {
            scope.spawn(move || fill(k * per, rows));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(seed: u64, size: u64, id: u64) -> Vec<u8> {
        let size = SizeClass::new(size).unwrap();
        let mut buf = vec![0; size.as_usize()];
        fill_blob(seed, size, Content::Random, id, &mut buf);
        buf
    }

    /// A batch filled on several threads holds each row's own bytes, as one thread
    /// makes them row by row: the loader's split changes nothing a check sees.
    #[test]
    fn a_batch_filled_on_every_core_holds_each_rows_own_bytes() {
        for content in [Content::Random, Content::Text, Content::Json] {
            let spec = DatasetSpec {
                content,
                ..DatasetSpec::new(
                    SizeClass::new(4096).unwrap(),
                    1 << 20,
                    9,
                    crate::dataset::key::KeyType::Int,
                )
                .unwrap()
            };
            let mut batch = vec![vec![0u8; 4096]; 37];
            fill_rows(&spec, 100, &mut batch);
            for (i, row) in batch.iter().enumerate() {
                let mut one = vec![0u8; 4096];
                fill_blob(9, spec.size, content, 100 + i as u64, &mut one);
                assert_eq!(row, &one, "{content} row {}", 100 + i);
            }
        }
    }

    #[test]
    fn same_inputs_same_bytes_and_stamp() {
        let a = blob(7, 4096, 42);
        assert_eq!(a, blob(7, 4096, 42));
        assert_eq!(stamp_of(&a), Some(42));
    }

    #[test]
    fn seed_size_and_id_all_change_the_bytes() {
        let base = blob(7, 4096, 42);
        assert_ne!(base[8..], blob(8, 4096, 42)[8..]);
        assert_ne!(base[8..], blob(7, 4096, 43)[8..]);
        assert_ne!(base[8..4096], blob(7, 8192, 42)[8..4096]);
    }

    #[test]
    fn content_looks_uniform_random() {
        // 1 MiB of one blob: every byte value near 4096 occurrences, so
        // nothing compresses it (a chi-square bound loose enough never to flake).
        let data = blob(1, 1 << 20, 1);
        let mut counts = [0u64; 256];
        for &b in &data[8..] {
            counts[b as usize] += 1;
        }
        let expected = (data.len() - 8) as f64 / 256.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 400.0, "chi2 {chi2}");
    }

    #[test]
    fn check_blob_names_what_is_wrong() {
        let size = SizeClass::new(64).unwrap();
        let mut scratch = Vec::new();
        let good = blob(3, 64, 9);
        assert_eq!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &good,
                Some(0),
                &mut scratch
            ),
            None
        );
        assert!(
            check_blob(
                3,
                size,
                Content::Random,
                (10, 64),
                &good,
                None,
                &mut scratch
            )
            .unwrap()
            .contains("id stamp 9")
        );
        assert!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &good[..63],
                None,
                &mut scratch
            )
            .unwrap()
            .contains("length 63")
        );
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        assert_eq!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &flipped,
                None,
                &mut scratch
            ),
            None,
            "stamp-only check"
        );
        assert!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &flipped,
                Some(0),
                &mut scratch
            )
            .unwrap()
            .contains("byte 40")
        );
        // A row at the other version is named as such: an update lost or not yet applied.
        let mut changed = vec![0; 64];
        fill_blob_version(3, size, Content::Random, 9, 1, &mut changed);
        assert_eq!(changed[..STAMP_BYTES], good[..STAMP_BYTES]);
        assert_ne!(changed, good);
        assert_eq!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &changed,
                Some(1),
                &mut scratch
            ),
            None
        );
        assert!(
            check_blob(
                3,
                size,
                Content::Random,
                (9, 64),
                &changed,
                Some(0),
                &mut scratch
            )
            .unwrap()
            .contains("holds version 1 of the row instead of version 0")
        );
    }

    #[test]
    fn a_document_row_is_stamped_and_checked_whole_like_a_random_one() {
        let size = SizeClass::new(4096).unwrap();
        let mut text = vec![0; 4096];
        fill_blob(3, size, Content::Text, 9, &mut text);
        assert_eq!(stamp_of(&text), Some(9));
        assert!(
            text[8..].iter().all(|b| b.is_ascii()),
            "text after the stamp"
        );
        let mut scratch = Vec::new();
        assert_eq!(
            check_blob(
                3,
                size,
                Content::Text,
                (9, 4096),
                &text,
                Some(0),
                &mut scratch
            ),
            None
        );
        // The same row of another content is not this dataset's.
        assert!(
            check_blob(
                3,
                size,
                Content::Json,
                (9, 4096),
                &text,
                Some(0),
                &mut scratch
            )
            .unwrap()
            .contains("content differs")
        );
    }
}
