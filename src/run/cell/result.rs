//! What a measured step leaves: its result, its CPU profile and its time to the
//! first bytes where asked, as values the cell hands back.

use anyhow::{Context, Result};

use crate::cap;
use crate::db::engine::Engine;
use crate::disk::probe::DiskProbes;
use crate::records::results::{DatasetFacts, EngineResult, Regime};
use crate::stats::precision::PrecisionReport;

use super::{CellRun, Found, Prepared};

impl CellRun<'_> {
    /// The result of one client's measurement on `prepared`.
    pub(super) async fn one_client_result(
        &self,
        prepared: &Prepared,
        criterion_samples: Option<u64>,
    ) -> EngineResult {
        let fetch_loop = &prepared.fetch_loop;
        self.result_of(
            prepared,
            fetch_loop.disk_source().to_string(),
            fetch_loop.warm_up.summary(),
            fetch_loop.measured.summary_with_intervals(),
            criterion_samples,
        )
        .await
    }

    /// What every result records around its fetches: the dataset, settings, cap,
    /// regime, eviction, disk probes (probed again now) and the server's container.
    pub(super) async fn result_of(
        &self,
        prepared: &Prepared,
        disk_counter: String,
        warm_up: crate::stats::Summary,
        measured: crate::stats::Summary,
        criterion_samples: Option<u64>,
    ) -> EngineResult {
        let (engine, spec) = (self.engine, self.spec);
        let mut store = engine.store().open(&self.config().locations(), spec);
        let location = store.location().display().to_string();
        let stored_bytes = crate::workload::stored::measured_stored_bytes(&mut store).await;
        drop(store);
        let disk_probes = prepared.disk_before.clone().map(|before| DiskProbes {
            before,
            after: self.probe_disk().expect("probing is on: it probed before"),
            own_after: self.probe_own_files(),
        });
        let cap = self.cap_of().await;
        let remote = engine
            .store()
            .server()
            .and_then(|server| self.config().places.remote(server));
        let container = match &prepared.container {
            Some(watch) => watch.finish_or_note().await,
            None => None,
        };
        // The server process's environment that shapes reads (GOMEMLIMIT) beside
        // the settings the server reports itself.
        let mut settings = prepared.fetch_loop.engine().settings();
        if let Some(watch) = &prepared.container {
            settings.extend(watch.process_env.clone());
        }
        EngineResult {
            engine,
            scenario: prepared.scenario,
            steady: prepared.steady.clone(),
            size_bytes: spec.size.bytes(),
            size: spec.size_label(),
            dataset: DatasetFacts {
                rows: spec.rows,
                bytes: spec.bytes(),
                seed: spec.seed,
                location,
                content: spec.content,
                stored_bytes,
            },
            settings,
            // A remote server's memory is unknown unless its pod's memory limit was
            // read: never judged against this machine's RAM.
            regime: match (&remote, cap.as_ref().and_then(|c| c.memory_limit_bytes)) {
                (Some(_), None) => Regime::not_controlled(spec.bytes()),
                _ => Regime::of(
                    spec.bytes(),
                    stored_bytes,
                    cap.as_ref(),
                    self.run.machine.ram_bytes,
                ),
            },
            remote,
            round_trip: prepared.round_trip.clone(),
            cap,
            eviction: prepared.eviction.clone(),
            disk_counter,
            disk_probes,
            container,
            warm_up,
            precision: match (self.config().precision, prepared.fetch_loop.stopped) {
                (Some(asked), Some((stopped, took))) => Some(PrecisionReport {
                    past_plan_fetches: prepared.fetch_loop.past_plan_fetches,
                    ..PrecisionReport::of(
                        asked,
                        &measured,
                        stopped,
                        self.config().measure.as_secs_f64(),
                        self.config().measure_limit.as_secs_f64(),
                        took.as_secs_f64(),
                    )
                }),
                _ => None,
            },
            measured,
            criterion_samples,
            process_peak_rss_bytes: crate::machine::peak_rss_bytes(),
            step_memory: Some(cap::read_step(&self.run.cap, prepared.memory_since.clone())),
            writer: prepared.writer.clone(),
            started_at: prepared.started_at.clone(),
            finished_at: crate::now_rfc3339(),
            runs: Vec::new(),
        }
    }

    /// `--profile-fetches`: fetch on with the prepared engine under a CPU profiler,
    /// after its 1-client measurement is recorded; the flame graph goes to
    /// `profiles/<engine>-<size>-<cache>.svg` in the run directory. Off: nothing.
    pub(super) fn profile_fetches(
        &mut self,
        rt: &tokio::runtime::Runtime,
        prepared: &mut Prepared,
    ) -> Result<()> {
        let (engine, spec) = (self.engine, self.spec);
        let Some(budget) = self.config().profile_fetches else {
            return Ok(());
        };
        let dir = self.run.dir().join("profiles");
        let cache = prepared.scenario.cache.name();
        let file = format!("{}-{}-{cache}.svg", engine.name(), spec.size);
        // A server with a Go pprof endpoint (Dolt) profiles itself over the same
        // seconds: the request runs on the runtime while the client fetches.
        let server_job = match (engine.store().server(), &prepared.container) {
            (Some(server), Some(watch)) => server.pprof().map(|pprof| {
                let seconds = budget.as_secs_f64().ceil().max(1.0) as u64;
                let (id, port) = (watch.id.clone(), pprof.port);
                let request = rt.spawn(async move {
                    let docker = crate::docker::connect().await?;
                    let path = format!("/debug/pprof/profile?seconds={seconds}");
                    crate::docker::http_get_inside(&docker, &id, port, &path).await
                });
                (pprof, seconds, request)
            }),
            _ => None,
        };
        let fetch_loop = &mut prepared.fetch_loop;
        let mut profile = crate::cpu_profile::profile(
            (engine.name(), &spec.size.to_string(), cache),
            &dir,
            &file,
            || rt.block_on(fetch_loop.fetch_for(budget)),
        )
        .with_context(|| self.failed("CPU profile"))?;
        if let Some((pprof, seconds, request)) = server_job {
            use crate::cpu_profile::go_pprof;
            let server_file = format!("{}-{}-{cache}-server.svg", engine.name(), spec.size);
            let title = format!("{} server, {} {cache}: CPU", engine.name(), spec.size);
            let analysed = rt
                .block_on(request)
                .map_err(anyhow::Error::from)
                .and_then(|response| {
                    let response = response?;
                    let body = go_pprof::http_body(&response)?;
                    go_pprof::analyse(body, seconds, pprof.parts, &title, &dir, &server_file)
                });
            match analysed {
                Ok(server) => profile.server = Some(server),
                Err(e) => {
                    profile.server_unavailable = Some(format!(
                        "{e:#}; to profile the server, {}",
                        pprof.how_to_enable
                    ))
                }
            }
        }
        self.found.push(Found::Profile(profile));
        Ok(())
    }

    /// The time to the first bytes (`--first-bytes`, blobs >= 1 MiB): streamed fetches
    /// on the same engine and cache state after its measurement; an engine that reads
    /// whole values only is recorded saying so.
    pub(super) fn time_first_bytes(
        &mut self,
        rt: &tokio::runtime::Runtime,
        prepared: &mut Prepared,
    ) -> Result<()> {
        let (engine, spec) = (self.engine, self.spec);
        use crate::measure::first_bytes::{self, FirstBytes};
        let budget = self.config().first_bytes;
        // A mix's first bytes would mix blobs of every size: measured on size classes.
        if budget.is_zero() || spec.mix.is_some() || spec.size.bytes() < first_bytes::FROM_BYTES {
            return Ok(());
        }
        let fetch_loop = &mut prepared.fetch_loop;
        let how = first_bytes::how(crate::db::engine::Engine::streaming(fetch_loop.engine()));
        let measured = rt
            .block_on(fetch_loop.first_bytes_for(budget))
            .with_context(|| self.failed("streamed fetches"))?
            .ok();
        self.found.push(Found::FirstBytes(FirstBytes {
            engine,
            size: spec.size.to_string(),
            size_bytes: spec.size.bytes(),
            cache: prepared.scenario.cache.name().to_string(),
            chunk_bytes: first_bytes::CHUNK_BYTES as u64,
            how,
            measured,
        }));
        Ok(())
    }
}
