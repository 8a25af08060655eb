//! `--profile-fetches`: where one client's time went, per engine and size, with its
//! flame graph; and the servers' own profiles (`templates/report/profiles.html`).

use askama::Template;

use crate::records::results::RunResults;

use super::PageContext;

pub(super) struct ClientProfile {
    engine: String,
    size: String,
    cache: String,
    fetches: u64,
    on_cpu: String,
    kernel: String,
    samples: u64,
    orm: String,
    driver: String,
    sqlite: String,
    other: String,
    flamegraph: String,
}

pub(super) struct ServerProfile {
    on_cpu: String,
    samples: u64,
    /// Where its CPU time went: "syscall 40%, gc 12%".
    parts: String,
    flamegraph: String,
}

pub(super) struct ServerRow {
    engine: String,
    size: String,
    cache: String,
    /// Its profile, or why none was taken.
    profile: Result<ServerProfile, String>,
}

/// `--profile-fetches`: per engine and size, where one client's time went, and its
/// flame graph; then the servers' own CPU profiles (a Go server's pprof endpoint,
/// over the same seconds as the client's), or why one was not taken.
#[derive(Template)]
#[template(path = "report/profiles.html")]
pub(super) struct Profiles {
    rows: Vec<ClientProfile>,
    servers: Vec<ServerRow>,
    to_run_dir: String,
}

impl Profiles {
    pub fn of(run: &RunResults, context: &PageContext) -> Option<Self> {
        if run.profiles.is_empty() {
            return None;
        }
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        let rows = run
            .profiles
            .iter()
            .map(|f| ClientProfile {
                engine: f.engine.clone(),
                size: f.size.clone(),
                cache: f.cache.clone(),
                fetches: f.fetches,
                on_cpu: pct(f.cpu_per_wall),
                kernel: pct(f.kernel_share_of_cpu),
                samples: f.samples,
                orm: pct(f.orm_share),
                driver: pct(f.driver_share),
                sqlite: pct(f.sqlite_share),
                other: pct(f.other_share),
                flamegraph: f.flamegraph.clone(),
            })
            .collect();
        let servers = run
            .profiles
            .iter()
            .filter(|f| f.server.is_some() || f.server_unavailable.is_some())
            .map(|f| ServerRow {
                engine: f.engine.clone(),
                size: f.size.clone(),
                cache: f.cache.clone(),
                profile: match &f.server {
                    Some(p) => Ok(ServerProfile {
                        on_cpu: format!("{:.0}%", p.cpu_per_wall * 100.0),
                        samples: p.samples,
                        parts: p
                            .parts
                            .iter()
                            .map(|part| format!("{} {:.0}%", part.part, part.share * 100.0))
                            .collect::<Vec<_>>()
                            .join(", "),
                        flamegraph: p.flamegraph.clone(),
                    }),
                    None => Err(f.server_unavailable.clone().unwrap_or_default()),
                },
            })
            .collect();
        Some(Profiles {
            rows,
            servers,
            to_run_dir: context.to_run_dir.to_string(),
        })
    }
}
