//! The bytes of every blob: uniformly random (incompressible), reproducible from
//! (run seed, size class, id), with the id stamped in the first 8 bytes so a
//! fetch can be checked cheaply and any row regenerated to check it fully.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, SeedableRng};

use crate::size::SizeClass;

/// Bytes at the start of every blob that hold its id, little endian.
pub const STAMP_BYTES: usize = 8;

/// splitmix64's finaliser: spreads nearby inputs (ids 1, 2, 3...) over the whole space.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn row_seed(seed: u64, size: SizeClass, id: u64) -> u64 {
    mix(mix(mix(seed) ^ size.bytes()) ^ id)
}

/// Fill `buf` (exactly one blob long) with the content of row `id`.
pub fn fill_blob(seed: u64, size: SizeClass, id: u64, buf: &mut [u8]) {
    debug_assert_eq!(buf.len() as u64, size.bytes());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(row_seed(seed, size, id));
    rng.fill_bytes(buf);
    buf[..STAMP_BYTES].copy_from_slice(&id.to_le_bytes());
}

/// The id stamped at the start of a blob, if it is long enough to hold one.
pub fn stamp_of(blob: &[u8]) -> Option<u64> {
    blob.get(..STAMP_BYTES)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// Why a fetched blob is not row `id`, if it is not. `scratch` is reused to
/// regenerate the expected content when `full` is set.
pub fn check_blob(
    seed: u64,
    size: SizeClass,
    id: u64,
    blob: &[u8],
    full: bool,
    scratch: &mut Vec<u8>,
) -> Option<String> {
    if blob.len() as u64 != size.bytes() {
        return Some(format!("length {} instead of {}", blob.len(), size.bytes()));
    }
    match stamp_of(blob) {
        Some(stamp) if stamp == id => {}
        Some(stamp) => return Some(format!("id stamp {stamp}")),
        None => return Some("no id stamp".into()),
    }
    if full {
        scratch.resize(size.as_usize(), 0);
        fill_blob(seed, size, id, scratch);
        if let Some(pos) = blob.iter().zip(scratch.iter()).position(|(a, b)| a != b) {
            return Some(format!("content differs from byte {pos}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(seed: u64, size: u64, id: u64) -> Vec<u8> {
        let size = SizeClass::new(size).unwrap();
        let mut buf = vec![0; size.as_usize()];
        fill_blob(seed, size, id, &mut buf);
        buf
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
        assert_eq!(check_blob(3, size, 9, &good, true, &mut scratch), None);
        assert!(
            check_blob(3, size, 10, &good, false, &mut scratch)
                .unwrap()
                .contains("id stamp 9")
        );
        assert!(
            check_blob(3, size, 9, &good[..63], false, &mut scratch)
                .unwrap()
                .contains("length 63")
        );
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        assert_eq!(
            check_blob(3, size, 9, &flipped, false, &mut scratch),
            None,
            "stamp-only check"
        );
        assert!(
            check_blob(3, size, 9, &flipped, true, &mut scratch)
                .unwrap()
                .contains("byte 40")
        );
    }
}
