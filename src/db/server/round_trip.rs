//! The round trip to a server: what every fetch pays besides reading its blob. On
//! loopback it is tens of microseconds; to a server on another host it can be most
//! of a small blob's fetch, so a remote result carries it beside its latency. A
//! trivial query (`SELECT 1`) on a connection of its own, held for the measure, timed one
//! by one after a few untimed ones (the connection's first queries pay for its setup).

use std::time::{Duration, Instant};

use anyhow::Result;
use sea_orm::DbBackend;
use serde::{Deserialize, Serialize};

use super::Server;

/// The query timed.
const QUERY: &str = "SELECT 1";
/// Untimed queries first.
const UNTIMED: usize = 10;
/// At most this many timed queries, or as many as fit in `BUDGET`.
const MOST: usize = 200;
const BUDGET: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    pub query: String,
    pub count: u64,
    /// The fastest: the round trip with no queueing behind other work on either end,
    /// which a fetch cannot beat. None in results written before it was recorded.
    #[serde(default)]
    pub min_ns: Option<u64>,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl RoundTrip {
    /// From the timed queries, in nanoseconds; None without any.
    pub fn of(query: &str, mut times_ns: Vec<u64>) -> Option<RoundTrip> {
        times_ns.sort_unstable();
        let at = |q: f64| {
            times_ns[((times_ns.len() as f64 * q).ceil() as usize).clamp(1, times_ns.len()) - 1]
        };
        (!times_ns.is_empty()).then(|| RoundTrip {
            query: query.to_string(),
            count: times_ns.len() as u64,
            min_ns: Some(times_ns[0]),
            p50_ns: at(0.50),
            p99_ns: at(0.99),
            max_ns: *times_ns.last().expect("not empty"),
        })
    }
}

/// `$conn`'s `SELECT 1`, UNTIMED untimed then timed one by one: the times in ns.
macro_rules! time_select_1 {
    ($conn:expr) => {{
        for _ in 0..UNTIMED {
            sea_orm::sqlx::raw_sql(QUERY).execute(&mut *$conn).await?;
        }
        let mut times = Vec::with_capacity(MOST);
        let started = Instant::now();
        while times.len() < MOST && started.elapsed() < BUDGET {
            let t = Instant::now();
            sea_orm::sqlx::raw_sql(QUERY).execute(&mut *$conn).await?;
            times.push(t.elapsed().as_nanos() as u64);
        }
        times
    }};
}

/// Time `SELECT 1` on a fresh connection to an SQL server; None for a server of
/// another protocol (the object store).
///
/// On one connection held for the whole measure, not through the pool query by query:
/// sqlx's pool pings every connection it gets back (`return_to_pool` in sqlx-core 0.9's
/// pool/connection.rs, unconditionally), so a query through the pool is two round trips
/// (the query, then the release's ping) before the connection can serve the next one.
/// That is what each fetch through a pool pays (the engines fetch so), and it was what
/// this measure recorded: 2.46 ms through a 1 ms round trip. A round trip is one.
pub async fn measure(server: Server, url: &str) -> Result<Option<RoundTrip>> {
    if server.sql().is_none() {
        return Ok(None);
    }
    let db = server.connect(url, None).await?;
    let times = match db.get_database_backend() {
        DbBackend::Postgres => {
            let mut conn = db.get_postgres_connection_pool().acquire().await?;
            time_select_1!(conn)
        }
        DbBackend::MySql => {
            let mut conn = db.get_mysql_connection_pool().acquire().await?;
            time_select_1!(conn)
        }
        other => anyhow::bail!("no round trip to time for a {other:?} server"),
    };
    db.close().await?;
    Ok(RoundTrip::of(QUERY, times))
}

#[cfg(test)]
mod tests {
    use super::RoundTrip;

    #[test]
    fn percentiles_are_read_from_the_sorted_times() {
        let times: Vec<u64> = (1..=200).rev().collect();
        let rt = RoundTrip::of("SELECT 1", times).unwrap();
        assert_eq!(
            (rt.count, rt.min_ns, rt.p50_ns, rt.p99_ns, rt.max_ns),
            (200, Some(1), 100, 198, 200)
        );
        let one = RoundTrip::of("SELECT 1", vec![7]).unwrap();
        assert_eq!((one.p50_ns, one.p99_ns), (7, 7));
        assert_eq!(RoundTrip::of("SELECT 1", Vec::new()), None);
    }
}
