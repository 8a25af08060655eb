//! Will N clients' fetches in flight fit under the caps? Checked before a load runs,
//! because the answer otherwise is the kernel's: a 1 GiB PostgreSQL serving 16
//! clients 32 MiB blobs lost a backend mid-row (the client saw only "expected to
//! read 33554443 bytes, got 13852667 at EOF"), a 256 MiB MariaDB serving 16 clients
//! 4 MiB blobs was OOM-killed, and a 256 MiB-capped process reading 4 MiB blobs from
//! SQLite with 16 clients was killed with everything it had not yet written.
//!
//! Two memories count, each against its own cap:
//! - the measuring process (embedded engines, and every server engine's client side):
//!   what it holds now, plus per client `client_copies` blob-sized buffers;
//! - a server's container: its cache setting, its own memory, plus per fetch in
//!   flight `fetch_copies` blob-sized buffers.
//!
//! The copies are measured, not derived (peak RSS at 1 and 8–16 clients, 4 MiB and
//! 32 MiB blobs, this machine, 2026-11-24): see `EngineDef::client_copies` and
//! `ServerDb::fetch_copies`. A load that does not fit is skipped with the arithmetic
//! in its reason, recorded in results.json and shown in the report: not run, never a
//! made-up figure, never a dead server.

use serde::{Deserialize, Serialize};

use crate::load_gen::LoadPoint;
use crate::size::format_bytes;

/// What each client of a load costs beyond the process's memory now: its thread's
/// stack, its runtime and connection, besides the blob-sized buffers.
pub const CLIENT_FIXED_BYTES: u64 = 2 << 20;

/// One memory that a load's fetches in flight grow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Whose memory: "the measuring process", "container blobrace_postgres_1".
    pub what: &'static str,
    /// What it holds with no fetch in flight.
    pub base_bytes: u64,
    /// Blob-sized buffers each fetch in flight adds.
    pub copies: u64,
    /// Bytes each client adds besides them.
    pub per_client_bytes: u64,
    /// Its memory cap; None: uncapped, nothing to exceed.
    pub cap_bytes: Option<u64>,
}

impl Budget {
    /// Bytes it needs with `clients` fetches of `blob` bytes in flight.
    pub fn need(&self, clients: u32, blob: u64) -> u64 {
        self.base_bytes + u64::from(clients) * (self.copies * blob + self.per_client_bytes)
    }

    /// None when the load fits; else why not, with the arithmetic.
    pub fn misfit(&self, clients: u32, blob: u64) -> Option<String> {
        let cap = self.cap_bytes?;
        let need = self.need(clients, blob);
        (need > cap).then(|| {
            format!(
                "{} would need about {} ({} now + {clients} clients x ({} copies of the {} blob + {})), more than its {} cap",
                self.what,
                mib(need),
                mib(self.base_bytes),
                self.copies,
                format_bytes(blob),
                mib(self.per_client_bytes),
                format_bytes(cap)
            )
        })
    }
}

/// Whole MiB, rounded: the estimate is no finer.
fn mib(bytes: u64) -> String {
    format!("{}MiB", (bytes + (1 << 19)) >> 20)
}

/// A load not run because its fetches in flight would not fit under a cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedLoad {
    pub engine: crate::db::registry::EngineKind,
    pub size_bytes: u64,
    pub size: String,
    pub point: LoadPoint,
    pub why: String,
}

impl SkippedLoad {
    /// The reason with what to do about it.
    pub fn line(&self) -> String {
        format!(
            "{} {} {}: not run: {}; use fewer --clients or raise --cap",
            self.engine.name(),
            self.size,
            self.point.label(),
            self.why
        )
    }
}

/// None when every budget fits `clients` fetches of `blob` bytes; else the reasons.
pub fn misfit(budgets: &[Budget], clients: u32, blob: u64) -> Option<String> {
    let why: Vec<String> = budgets
        .iter()
        .filter_map(|b| b.misfit(clients, blob))
        .collect();
    (!why.is_empty()).then(|| why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// The budgets of the runs that were measured, with the copies the registry
    /// gives; each case is (budget, clients, blob, what happened).
    fn process(rss_mib: u64, copies: u64, cap_mib: u64) -> Budget {
        Budget {
            what: "the measuring process",
            base_bytes: rss_mib * MIB,
            copies,
            per_client_bytes: CLIENT_FIXED_BYTES,
            cap_bytes: Some(cap_mib * MIB),
        }
    }

    fn server(cache_mib: u64, own_mib: u64, copies: u64, cap_mib: u64) -> Budget {
        Budget {
            what: "container",
            base_bytes: (cache_mib + own_mib) * MIB,
            copies,
            per_client_bytes: 0,
            cap_bytes: Some(cap_mib * MIB),
        }
    }

    #[test]
    fn the_model_agrees_with_what_the_caps_did() {
        use crate::db::registry::EngineKind;
        use crate::db::server::Server;
        let engine = |n: &str| n.parse::<EngineKind>().unwrap();
        let sqlite = engine("sqlite-raw").def().client_copies;
        let floor = engine("floor").def().client_copies;
        let pg = Server::named("postgres").unwrap();
        let maria = Server::named("mariadb").unwrap();
        let pg_at = |cap| {
            server(
                cap / 8,
                pg.memory().serving_memory_bytes() / MIB,
                pg.memory().fetch_copies(),
                cap,
            )
        };
        let maria_at = |cap, pool| {
            server(
                pool,
                maria.memory().serving_memory_bytes() / MIB,
                maria.memory().fetch_copies(),
                cap,
            )
        };
        let cases = [
            // Killed: 16 x 32 MiB, PostgreSQL at 1 GiB (CI, 2026-11-24).
            (pg_at(1024), 16, 32 * MIB, false),
            // Ran: 8 x 32 MiB at 1 GiB peaked at 529 MiB anonymous memory.
            (pg_at(1024), 8, 32 * MIB, true),
            // Ran: 16 x 4 MiB at 256 MiB peaked at 122 MiB.
            (pg_at(256), 16, 4 * MIB, true),
            // OOM-killed: MariaDB, 256 MiB, 96 MiB pool, 16 x 4 MiB.
            (maria_at(256, 96), 16, 4 * MIB, false),
            // Ran: MariaDB, 1 GiB, 640 MiB pool, 4 x 32 MiB (833 MiB).
            (maria_at(1024, 640), 4, 32 * MIB, true),
            // Killed: the process at 256 MiB, SQLite, 16 x 4 MiB (36 MiB before).
            (process(36, sqlite, 256), 16, 4 * MIB, false),
            // Ran: the floor at 256 MiB, 16 x 4 MiB, peaked at 167 MiB.
            (process(24, floor, 256), 16, 4 * MIB, true),
        ];
        for (i, (budget, clients, blob, ran)) in cases.into_iter().enumerate() {
            assert_eq!(
                budget.misfit(clients, blob).is_none(),
                ran,
                "case {i}: {budget:?} {clients} x {blob}"
            );
        }
    }

    #[test]
    fn the_reason_shows_its_arithmetic_and_uncapped_always_fits() {
        let budget = process(36, 5, 256);
        let why = budget.misfit(16, 4 * MIB).unwrap();
        assert!(
            why.starts_with("the measuring process would need about 388MiB"),
            "{why}"
        );
        assert!(
            why.contains("16 clients x (5 copies of the 4MiB blob"),
            "{why}"
        );
        assert!(why.ends_with("than its 256MiB cap"), "{why}");
        let uncapped = Budget {
            cap_bytes: None,
            ..budget
        };
        assert_eq!(uncapped.misfit(512, 32 * MIB), None);
        assert_eq!(
            misfit(&[budget, uncapped], 1, MIB),
            None,
            "one client of 1 MiB fits"
        );
        let both = misfit(&[budget, budget], 16, 4 * MIB).unwrap();
        assert_eq!(both.matches("would need").count(), 2, "{both}");
    }
}
