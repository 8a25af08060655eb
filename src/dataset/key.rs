//! The primary key type of a dataset (`--key`): the sequential integer ids 1..N, or a
//! 16-byte key per row: UUIDv4 (random), UUIDv7 or ULID (time-ordered). Seeds 000 and
//! 001 measure what the key type costs: random keys land all over the index as rows
//! are inserted, time-ordered ones append at its right edge like integers.
//!
//! A row keeps its dataset id (1..N: the blob's content, its stamp, the loader's
//! order); a keyed dataset stores it under `key_of(seed, id)` instead. The keys are
//! regenerated from the dataset's seed, never stored beside it: the random bits of a
//! key come from (seed, id), and the time-ordered ones take their timestamp from a
//! fixed epoch plus one millisecond per id, so they are strictly increasing in id as a
//! monotonic generator (uuid's `ContextV7` counter, ulid's `Generator`) makes them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A keyed dataset's first timestamp: 2026-01-01T00:00:00Z in Unix milliseconds.
const EPOCH_MS: u64 = 1_767_225_600_000;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    /// 64-bit integer ids 1..N in insert order (SQLite's rowid alias).
    #[default]
    Int,
    /// Random UUIDs (version 4), inserted in generation order: random index positions.
    Uuidv4,
    /// Time-ordered UUIDs (version 7): increasing with the id.
    Uuidv7,
    /// ULIDs (48-bit milliseconds, 80 random bits): increasing with the id.
    Ulid,
}

/// Bytes of every non-integer key (stored as BLOB, BYTEA or BINARY(16)).
pub const KEY_BYTES: usize = 16;

impl KeyType {
    pub const ALL: [KeyType; 4] = [
        KeyType::Int,
        KeyType::Uuidv4,
        KeyType::Uuidv7,
        KeyType::Ulid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KeyType::Int => "int",
            KeyType::Uuidv4 => "uuidv4",
            KeyType::Uuidv7 => "uuidv7",
            KeyType::Ulid => "ulid",
        }
    }

    /// True for the 16-byte keys.
    pub fn is_binary(self) -> bool {
        self != KeyType::Int
    }

    /// True where keys grow with the id (so a range of ids is a range of keys).
    pub fn is_ordered(self) -> bool {
        self != KeyType::Uuidv4
    }

    /// The 16-byte key of row `id` in a dataset of `seed` (None for integer ids: the id
    /// is the key). Pure arithmetic on the stack: a few multiplications, no allocation,
    /// so the engines derive it inside a fetch as an application holds its key.
    #[inline]
    pub fn key_of(self, seed: u64, id: u64) -> Option<[u8; KEY_BYTES]> {
        let hi = mix(mix(seed ^ 0x6b65_795f_6869) ^ id);
        let lo = mix(hi ^ 0x6b65_795f_6c6f);
        let random = (u128::from(hi) << 64) | u128::from(lo);
        match self {
            KeyType::Int => None,
            KeyType::Uuidv4 => Some(
                *uuid::Builder::from_random_bytes(random.to_be_bytes())
                    .as_uuid()
                    .as_bytes(),
            ),
            KeyType::Uuidv7 => {
                let tail: [u8; 10] = random.to_be_bytes()[..10].try_into().expect("10 bytes");
                Some(
                    *uuid::Builder::from_unix_timestamp_millis(EPOCH_MS + id, &tail)
                        .as_uuid()
                        .as_bytes(),
                )
            }
            KeyType::Ulid => Some(ulid::Ulid::from_parts(EPOCH_MS + id, random).to_bytes()),
        }
    }

    /// A key at least every key of ids `first..=last` and at most every key of ids
    /// after it, for reading a range of rows in key order (the steady-state prefill):
    /// for ordered keys the keys of `first` and `last`; for random ones the same share
    /// of the key space (`first - 1` to `last` of `rows` ids), which holds about as
    /// many rows.
    pub fn key_bounds(
        self,
        seed: u64,
        rows: u64,
        first: u64,
        last: u64,
    ) -> Option<([u8; KEY_BYTES], [u8; KEY_BYTES])> {
        if !self.is_binary() {
            return None;
        }
        if self.is_ordered() {
            return Some((self.key_of(seed, first)?, self.key_of(seed, last)?));
        }
        let at = |n: u64| -> [u8; KEY_BYTES] {
            if n >= rows {
                return [0xff; KEY_BYTES];
            }
            // n/rows of 2^128, as the top 64 bits (plenty for a range of rows).
            let top = ((u128::from(n) << 64) / u128::from(rows)) as u64;
            let mut key = [0u8; KEY_BYTES];
            key[..8].copy_from_slice(&top.to_be_bytes());
            key
        };
        Some((at(first - 1), at(last)))
    }

    /// Every choice, for help and errors: `int, uuidv4, uuidv7, ulid`.
    pub fn choices() -> String {
        Self::ALL.map(KeyType::name).join(", ")
    }
}

/// splitmix64's finaliser (as `content`'s): nearby ids give unrelated bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KeyType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!(
                    "unknown key type {s:?}: choose one of {}",
                    KeyType::choices()
                )
            })
    }
}

/// Hex digits of a key, for SQL literals (`X'…'`, `'\x…'::bytea`).
pub fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_reproducible_distinct_and_of_their_version() {
        for key in [KeyType::Uuidv4, KeyType::Uuidv7, KeyType::Ulid] {
            let a = key.key_of(7, 1).unwrap();
            assert_eq!(a, key.key_of(7, 1).unwrap(), "{key}: same seed and id");
            assert_ne!(a, key.key_of(8, 1).unwrap(), "{key}: another seed");
            let all: std::collections::HashSet<_> =
                (1..=10_000).map(|id| key.key_of(7, id).unwrap()).collect();
            assert_eq!(all.len(), 10_000, "{key}: distinct");
        }
        let v4 = uuid::Uuid::from_bytes(KeyType::Uuidv4.key_of(7, 5).unwrap());
        assert_eq!(v4.get_version_num(), 4);
        let v7 = uuid::Uuid::from_bytes(KeyType::Uuidv7.key_of(7, 5).unwrap());
        assert_eq!(v7.get_version_num(), 7);
        let (secs, _) = v7.get_timestamp().unwrap().to_unix();
        assert_eq!(secs, EPOCH_MS / 1000);
        let u = ulid::Ulid::from_bytes(KeyType::Ulid.key_of(7, 5).unwrap());
        assert_eq!(u.timestamp_ms(), EPOCH_MS + 5);
        assert_eq!(KeyType::Int.key_of(7, 5), None);
    }

    #[test]
    fn ordered_keys_grow_with_the_id_and_random_ones_do_not() {
        for key in [KeyType::Uuidv7, KeyType::Ulid] {
            let keys: Vec<_> = (1..=1000).map(|id| key.key_of(3, id).unwrap()).collect();
            assert!(
                keys.windows(2).all(|w| w[0] < w[1]),
                "{key} is not increasing"
            );
        }
        let v4: Vec<_> = (1..=1000)
            .map(|id| KeyType::Uuidv4.key_of(3, id).unwrap())
            .collect();
        let rises = v4.windows(2).filter(|w| w[0] < w[1]).count();
        assert!((400..600).contains(&rises), "v4 rises {rises} of 999 times");
    }

    #[test]
    fn bounds_cover_about_the_rows_asked_for() {
        let rows = 100_000;
        for key in [KeyType::Uuidv4, KeyType::Uuidv7, KeyType::Ulid] {
            let (lo, hi) = key.key_bounds(9, rows, 20_001, 30_000).unwrap();
            let inside = (1..=rows)
                .filter(|&id| {
                    let k = key.key_of(9, id).unwrap();
                    lo <= k && k <= hi
                })
                .count();
            assert!(
                (9_000..11_000).contains(&inside),
                "{key}: {inside} rows in a 10000-row range"
            );
        }
        let (_, top) = KeyType::Uuidv4.key_bounds(9, rows, 90_001, rows).unwrap();
        assert_eq!(top, [0xff; KEY_BYTES]);
    }

    #[test]
    fn parse_names_every_choice() {
        assert_eq!("ULID".parse::<KeyType>().unwrap(), KeyType::Ulid);
        let err = "uuidv1".parse::<KeyType>().unwrap_err();
        assert!(err.contains("int, uuidv4, uuidv7, ulid"), "{err}");
    }
}
