//! A dataset that has changed (`--churn <percent>`): after its load, that share of its
//! rows is replaced with new content through the database's own write path, so what is
//! measured is a table with dead TOAST rows, freelist pages or purged undo behind it.
//!
//! Nothing per row is stored to know what a row holds now: the rows replaced are the
//! first `rows x percent` positions of a seeded permutation of the ids (a Feistel
//! network over the id space, cycle-walked into it), applied in that order, so a row's
//! version is 1 when its position is below the number of replacements applied and 0
//! otherwise. A store records only that number, in the same transaction as the rows it
//! counts (a file store: after the rows are synced), so a churn killed halfway resumes
//! where it stopped and every row's version is known exactly at any point.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a row is changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChurnKind {
    /// `UPDATE ... SET data = ...`: the row keeps its place, its value is rewritten.
    Replace,
    /// `DELETE` then `INSERT` of the same id: a new row (a new heap tuple, a new B-tree
    /// entry), the old one left to the database's cleanup.
    DeleteInsert,
}

impl ChurnKind {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "replace" => Ok(Self::Replace),
            "delete-insert" => Ok(Self::DeleteInsert),
            other => Err(format!(
                "--churn-kind {other:?} is not one of: replace, delete-insert"
            )),
        }
    }
}

impl fmt::Display for ChurnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Replace => "replace",
            Self::DeleteInsert => "delete-insert",
        })
    }
}

/// What cleans up after a churn (`--maintenance`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Maintenance {
    /// The database's own cleanup turned off for the dataset where it can be
    /// (PostgreSQL's autovacuum); where it cannot (InnoDB's purge) the result says so.
    None,
    /// Whatever the database does by itself.
    #[default]
    Default,
    /// Its compaction after the last change: VACUUM FULL, VACUUM, OPTIMIZE TABLE.
    Full,
}

impl Maintenance {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "none" => Ok(Self::None),
            "default" => Ok(Self::Default),
            "full" => Ok(Self::Full),
            other => Err(format!(
                "--maintenance {other:?} is not one of: none, default, full"
            )),
        }
    }
}

impl fmt::Display for Maintenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Default => "default",
            Self::Full => "full",
        })
    }
}

/// One round of churn over a dataset: `percent` of its rows changed `kind`'s way, then
/// `maintenance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Churn {
    pub percent: u8,
    pub kind: ChurnKind,
    #[serde(default)]
    pub maintenance: Maintenance,
}

/// Where a churn stands in a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChurnProgress {
    /// Changes applied, in the churn's order.
    pub applied: u64,
    /// `--maintenance full`'s compaction done after the last change.
    pub compacted: bool,
}

impl Churn {
    /// `--churn`: a share of the rows, 1-100 (`%` allowed); 0 or `none` for no churn.
    pub fn parse_percent(text: &str) -> Result<u8, String> {
        let t = text.trim();
        if t == "none" {
            return Ok(0);
        }
        t.trim_end_matches('%')
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= 100)
            .ok_or_else(|| {
                format!(
                    "--churn {text:?} is not a whole percentage of the rows from 0 to 100: 30 replaces 30% of them"
                )
            })
    }

    /// Rows changed in a dataset of `rows`.
    pub fn rows(&self, rows: u64) -> u64 {
        (rows * u64::from(self.percent)).div_ceil(100)
    }

    /// The part of a dataset's name that makes it its own dataset: `churn30`,
    /// `churn30di` for delete-insert.
    pub fn suffix(&self) -> String {
        let kind = match self.kind {
            ChurnKind::Replace => "",
            ChurnKind::DeleteInsert => "di",
        };
        let maintenance = match self.maintenance {
            Maintenance::Default => "",
            Maintenance::None => "-mnone",
            Maintenance::Full => "-mfull",
        };
        format!("churn{}{kind}{maintenance}", self.percent)
    }
}

impl fmt::Display for Churn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "churn {}% {}", self.percent, self.kind)?;
        match self.maintenance {
            Maintenance::Default => Ok(()),
            m => write!(f, ", maintenance {m}"),
        }
    }
}

/// A seeded permutation of ids 1..=rows: `id_at(position)` and its inverse.
#[derive(Debug, Clone, Copy)]
pub struct Order {
    rows: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Order {
    pub fn new(seed: u64, rows: u64) -> Self {
        let bits = 64 - rows.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0; 4];
        for (i, k) in keys.iter_mut().enumerate() {
            *k = crate::dataset::content::mix(seed ^ 0x6368_7572_6e00 ^ i as u64);
        }
        Self {
            rows,
            half_bits,
            keys,
        }
    }

    fn round(&self, half: u64, key: u64) -> u64 {
        crate::dataset::content::mix(half ^ key) & ((1 << self.half_bits) - 1)
    }

    /// One pass of the Feistel network over 0..4^half_bits: a bijection there.
    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            (l, r) = (r, l ^ self.round(r, key));
        }
        (l << self.half_bits) | r
    }

    fn decrypt(&self, y: u64) -> u64 {
        let mask = (1 << self.half_bits) - 1;
        let (mut l, mut r) = (y >> self.half_bits, y & mask);
        for key in self.keys.iter().rev() {
            (l, r) = (r ^ self.round(l, *key), l);
        }
        (l << self.half_bits) | r
    }

    /// The id changed at `position` (0-based, below `rows`). Cycle-walking: the
    /// network's domain is at most 4x the rows, so a few passes on average.
    pub fn id_at(&self, position: u64) -> u64 {
        debug_assert!(position < self.rows);
        let mut x = self.encrypt(position);
        while x >= self.rows {
            x = self.encrypt(x);
        }
        x + 1
    }

    /// Where id `id` (1..=rows) comes in the order.
    pub fn position_of(&self, id: u64) -> u64 {
        debug_assert!((1..=self.rows).contains(&id));
        let mut x = self.decrypt(id - 1);
        while x >= self.rows {
            x = self.decrypt(x);
        }
        x
    }

    /// Row `id`'s content version once `applied` changes are in. The order repeats
    /// past its end (a writer that goes on, `--write-rate`): each full round adds one
    /// to every row, so after a churn of 30% a row is at version 1 or 0, and after
    /// `rows + 5` changes the first five of the order are at 2, the rest at 1.
    pub fn version_of(&self, id: u64, applied: u64) -> u32 {
        let rounds = applied / self.rows;
        (rounds + u64::from(self.position_of(id) < applied % self.rows)) as u32
    }

    /// The id the `applied`th change (0-based, any round) rewrites, and the version it
    /// writes there.
    pub fn change_at(&self, applied: u64) -> (u64, u32) {
        let id = self.id_at(applied % self.rows);
        (id, (applied / self.rows + 1) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_a_permutation_of_the_ids_and_its_inverse_undoes_it() {
        for rows in [1, 2, 3, 7, 100, 1000, 4097, 12288] {
            let order = Order::new(42, rows);
            let mut seen = vec![false; rows as usize];
            for position in 0..rows {
                let id = order.id_at(position);
                assert!((1..=rows).contains(&id), "rows {rows}: id {id}");
                assert!(!seen[id as usize - 1], "rows {rows}: id {id} twice");
                seen[id as usize - 1] = true;
                assert_eq!(order.position_of(id), position, "rows {rows}");
            }
        }
    }

    #[test]
    fn the_order_is_seeded_and_spread_over_the_ids() {
        let (a, b) = (Order::new(1, 10_000), Order::new(2, 10_000));
        let first_a: Vec<u64> = (0..100).map(|p| a.id_at(p)).collect();
        let first_b: Vec<u64> = (0..100).map(|p| b.id_at(p)).collect();
        assert_ne!(first_a, first_b);
        // The first 30% changed touch every tenth of the file, not its start.
        let changed: Vec<u64> = (0..3000).map(|p| a.id_at(p)).collect();
        for tenth in 0..10 {
            let here = changed
                .iter()
                .filter(|id| (*id - 1) / 1000 == tenth)
                .count();
            assert!((200..400).contains(&here), "tenth {tenth}: {here} of 3000");
        }
    }

    #[test]
    fn versions_follow_the_changes_applied() {
        let churn = Churn {
            percent: 30,
            kind: ChurnKind::Replace,
            maintenance: Maintenance::Default,
        };
        let rows = 12288;
        assert_eq!(churn.rows(rows), 3687);
        let order = Order::new(7, rows);
        let changed = |applied| {
            (1..=rows)
                .filter(|&id| order.version_of(id, applied) == 1)
                .count()
        };
        assert_eq!(changed(0), 0);
        assert_eq!(changed(1000), 1000);
        assert_eq!(changed(churn.rows(rows)), 3687);
        assert_eq!(order.version_of(order.id_at(999), 1000), 1);
        assert_eq!(order.version_of(order.id_at(1000), 1000), 0);
    }

    #[test]
    fn a_writer_that_goes_past_the_end_starts_a_new_round() {
        let rows = 100;
        let order = Order::new(3, rows);
        let versions =
            |applied| -> Vec<u32> { (1..=rows).map(|id| order.version_of(id, applied)).collect() };
        assert!(versions(rows).iter().all(|&v| v == 1));
        let past = versions(rows + 5);
        assert_eq!(past.iter().filter(|&&v| v == 2).count(), 5);
        assert_eq!(past.iter().filter(|&&v| v == 1).count(), 95);
        // Each change writes the version its row then holds.
        for applied in [0, 37, 99, 100, 250] {
            let (id, version) = order.change_at(applied);
            assert_eq!(
                order.version_of(id, applied + 1),
                version,
                "change {applied}"
            );
            assert_eq!(
                order.version_of(id, applied),
                version - 1,
                "change {applied}"
            );
        }
    }

    #[test]
    fn shares_outside_0_to_100_are_refused() {
        assert_eq!(Churn::parse_percent("30"), Ok(30));
        assert_eq!(Churn::parse_percent("30%"), Ok(30));
        assert_eq!(Churn::parse_percent("none"), Ok(0));
        for bad in ["150", "-1", "abc", "30.5"] {
            let why = Churn::parse_percent(bad).unwrap_err();
            assert!(
                why.contains("whole percentage of the rows from 0 to 100"),
                "{why}"
            );
        }
        assert!(
            ChurnKind::parse("update")
                .unwrap_err()
                .contains("replace, delete-insert")
        );
    }
}
