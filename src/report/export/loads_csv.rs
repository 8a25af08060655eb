//! `loads.csv`: the many-client loads, the loads not run and the saturation
//! searches of a run, one row each. Written beside results.json during the run and
//! again by the report; a run without any of them has no loads.csv.

use std::fmt::Write as _;

use anyhow::Result;

use super::Exporter;
use crate::records::results::RunResults;
use crate::records::summary::unavailable_or;

pub struct LoadsCsv;

impl Exporter for LoadsCsv {
    fn file_name(&self) -> &'static str {
        "loads.csv"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        if run.load_results.is_empty() && run.skipped_loads.is_empty() && run.saturations.is_empty()
        {
            return Ok(None);
        }
        Ok(Some(loads_csv(run).into_bytes()))
    }
}

/// `loads.csv`: one row per load (more clients or a rate) and per load not run, then
/// one per saturation search. Latencies in nanoseconds; `percentiles_of` says whether
/// p50/p99/p99.9 are service times (closed loop) or response times (open loop);
/// unknown values are "unavailable", what does not apply "n/a".
fn loads_csv(run: &RunResults) -> String {
    let mut out = String::from(
        "run_id,kind,engine,cache,repeat,size,size_bytes,clients,rate,arrivals,status,fetches_per_s,mb_per_s,percentiles_of,p50_ns,p99_ns,p999_ns,service_p99_ns,lag_p99_ns,cpu_share,disk_bytes_per_fetch,disk_reads_per_s_same_depth,sustainable_per_s,sustainable_mb_per_s,note\n",
    );
    let id = &run.run_id;
    let disk = |size: u64, clients: u32| {
        unavailable_or(
            run.disk_limit(size, clients)
                .and_then(|d| d.throughput.as_ref().ok())
                .map(|t| format!("{:.0}", t.reads_per_s)),
        )
    };
    let rate = |p: crate::load_gen::LoadPoint| p.rate.map_or("closed".into(), |r| r.to_string());
    let csv_text = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for l in &run.load_results {
        let (r, f) = (&l.result, &l.load);
        let head = f.headline(&r.measured.latency);
        let status = if r.measured.count == 0 {
            "nothing measured"
        } else if f.limit_reached {
            "limit reached"
        } else {
            "measured"
        };
        let note = if r.measured.count == 0 {
            f.no_fetch_why()
        } else if f.unserved > 0 {
            format!("{} arrivals never started", f.unserved)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{id},load,{},{},{},{},{},{},{},{},{status},{:.1},{:.2},{},{},{},{},{},{},{:.3},{},{},n/a,n/a,{}",
            r.engine,
            r.scenario.cache.name(),
            r.scenario.repeat,
            r.size,
            r.size_bytes,
            f.point.clients,
            rate(f.point),
            if f.point.rate.is_some() {
                f.point.arrivals.name()
            } else {
                "n/a"
            },
            f.fetches_per_s,
            f.mb_per_s,
            f.headline_word(),
            head.p50_ns,
            head.p99_ns,
            head.p999_ns,
            r.measured.latency.p99_ns,
            f.lag.map_or("n/a".into(), |l| l.p99_ns.to_string()),
            f.cpu.share(),
            unavailable_or(r.measured.disk_bytes_per_fetch.map(|d| format!("{d:.0}"))),
            disk(r.size_bytes, f.point.clients),
            csv_text(&note),
        );
    }
    for s in &run.skipped_loads {
        let _ = writeln!(
            out,
            "{id},load,{},n/a,n/a,{},{},{},{},n/a,not run,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,{}",
            s.engine,
            s.size,
            s.size_bytes,
            s.point.clients,
            rate(s.point),
            csv_text(&s.why),
        );
    }
    for s in &run.saturations {
        let _ = writeln!(
            out,
            "{id},saturation,{},{},{},{},{},{},n/a,{},searched,{:.1},n/a,response,n/a,n/a,n/a,n/a,n/a,n/a,n/a,{},{},{},{}",
            s.engine,
            s.scenario.cache.name(),
            s.scenario.repeat,
            s.size,
            s.size_bytes,
            s.clients,
            s.arrivals.name(),
            s.search.capacity,
            disk(s.size_bytes, s.clients),
            unavailable_or(s.search.sustainable.map(|r| format!("{r:.1}"))),
            unavailable_or(s.sustainable_mb_per_s.map(|r| format!("{r:.2}"))),
            csv_text(&format!(
                "fetches_per_s is the closed loop's; {} steps, p99 response <= {} ms",
                s.search.steps.len(),
                s.target_p99.as_millis()
            )),
        );
    }
    out
}
