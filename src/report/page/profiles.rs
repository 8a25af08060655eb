//! `--profile-fetches`: where one client's time went, per engine and size, with its
//! flame graph; and the servers' own profiles.

use std::fmt::Write as _;

use crate::results::RunResults;

use super::PageContext;
use super::markup::esc;

/// `--profile-fetches`: per engine and size, where one client's time went, and its
/// flame graph.
pub(super) fn profiles_section(run: &RunResults, context: &PageContext) -> String {
    if run.profiles.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h2 id=profiles>Where the time goes</h2>\n<p>After its 1-client measurement each engine fetched on under a sampling CPU profiler (<code>--profile-fetches</code>; no clock, counter or content check around the fetches). <b>On CPU</b>: this process's CPU time ÷ wall time; the rest it waited, for the server's answer or the disk (a CPU profiler does not see waiting). <b>Kernel</b>: system time's share of that CPU time (reads, socket I/O). The samples are split by the innermost frame of a known part: SeaORM (ORM), sqlx (driver), SQLite's C code; <b>other</b> is the rest (tokio, allocation, copies, blobrace). A system call counts for the part that made it: the kernel column overlaps them. Each flame graph opens full size.</p>\n<table><tr><th class=l>engine</th><th>size</th><th class=l>cache</th><th>fetches</th><th>on CPU</th><th>kernel</th><th>samples</th><th>ORM</th><th>driver</th><th>SQLite</th><th>other</th><th class=l>flame graph</th></tr>\n",
    );
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    for f in &run.profiles {
        let _ = writeln!(
            s,
            "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l><a href=\"{}{}\">{}</a></td></tr>",
            esc(&f.engine),
            esc(&f.size),
            esc(&f.cache),
            f.fetches,
            pct(f.cpu_per_wall),
            pct(f.kernel_share_of_cpu),
            f.samples,
            pct(f.orm_share),
            pct(f.driver_share),
            pct(f.sqlite_share),
            pct(f.other_share),
            context.to_run_dir,
            esc(&f.flamegraph),
            esc(&f.flamegraph)
        );
    }
    s.push_str("</table>\n");
    s.push_str(&server_profiles(run, context));
    s
}

/// The servers' own CPU profiles (a Go server's pprof endpoint, over the same seconds
/// as the client's), or why one was not taken.
pub(super) fn server_profiles(run: &RunResults, context: &PageContext) -> String {
    let rows: Vec<_> = run
        .profiles
        .iter()
        .filter(|f| f.server.is_some() || f.server_unavailable.is_some())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<p>The server's own CPU profile over the same seconds (Go's pprof endpoint in its container). <b>On CPU</b>: the CPU time its samples stand for ÷ those seconds, in CPUs (up to its cap). Its time is split by the innermost frame of a known part: a system call counts as one whoever made it, an allocation as the allocator's.</p>\n<table><tr><th class=l>engine</th><th>size</th><th class=l>cache</th><th>server on CPU</th><th>samples</th><th class=l>where its CPU time went</th><th class=l>flame graph</th></tr>\n",
    );
    for f in rows {
        let _ = match (&f.server, &f.server_unavailable) {
            (Some(p), _) => writeln!(
                s,
                "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>{:.0}%</td><td>{}</td><td class=l>{}</td><td class=l><a href=\"{}{}\">{}</a></td></tr>",
                esc(&f.engine),
                esc(&f.size),
                esc(&f.cache),
                p.cpu_per_wall * 100.0,
                p.samples,
                esc(&p
                    .parts
                    .iter()
                    .map(|part| format!("{} {:.0}%", part.part, part.share * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")),
                context.to_run_dir,
                esc(&p.flamegraph),
                esc(&p.flamegraph)
            ),
            (None, why) => writeln!(
                s,
                "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>unavailable</td><td></td><td class=l colspan=2>{}</td></tr>",
                esc(&f.engine),
                esc(&f.size),
                esc(&f.cache),
                esc(why.as_deref().unwrap_or(""))
            ),
        };
    }
    s.push_str("</table>\n");
    s
}
