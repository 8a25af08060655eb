//! The loader: fills every dataset a run needs, streaming (generate a batch,
//! write it, repeat) so memory stays at about one batch. Complete datasets are
//! skipped, partial ones resumed, and nothing starts before the disk check.

pub mod drop;
pub mod inventory;
pub mod progress;
pub mod verify;

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::dataset::content::{fill_blob_version, fill_rows};
use crate::dataset::lock::{Access, release, take};
use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::locations::Locations;
use crate::db::registry::AnyStore;
use crate::db::registry::StoreKind;
use crate::disk_room::Rooms;
use crate::error::InputError;
use crate::load::progress::RowsProgress;
use crate::machine::peak_rss_bytes;
use crate::size::{disk_label, format_bytes};

/// What loading one dataset did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadReport {
    pub store: StoreKind,
    pub size_bytes: u64,
    pub rows: u64,
    pub location: String,
    pub outcome: LoadOutcome,
    pub resumed_from_row: u64,
    pub bytes_written: u64,
    pub seconds: f64,
    pub mb_per_s: Option<f64>,
    /// Peak resident set of the loading process so far (VmHWM).
    pub peak_rss_bytes: Option<u64>,
    /// Bytes the complete dataset takes on disk (tables, TOAST, indexes; files); None
    /// where the store cannot say.
    #[serde(default)]
    pub disk_bytes: Option<u64>,
    /// The churn applied after the load (`--churn`), for a churned dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub churn: Option<ChurnReport>,
}

/// What `--churn` did to a dataset after its load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChurnReport {
    pub churn: crate::dataset::churn::Churn,
    /// Rows the churn changes in all.
    pub rows: u64,
    /// Changes already in when this run started (a killed churn resumed there).
    pub applied_before: u64,
    /// Changes this run applied, and how long they took.
    pub applied_now: u64,
    pub seconds: f64,
    /// Bytes on disk before the first change, where this run made it (None otherwise,
    /// or where the store cannot say), and after the last.
    pub disk_bytes_before: Option<u64>,
    pub disk_bytes_after: Option<u64>,
    /// What `--maintenance` did (or why it could not), phrase by phrase.
    #[serde(default)]
    pub maintenance: Vec<String>,
    /// What the database says of its own cleanup after the churn (and the maintenance),
    /// read from it: dead rows, autovacuum runs, freelist pages, InnoDB's history.
    #[serde(default)]
    pub cleanup: Vec<(String, i64)>,
}

impl ChurnReport {
    /// Bytes on disk over the live data's bytes (blobs only).
    pub fn amplification(&self, live_bytes: u64) -> Option<f64> {
        self.disk_bytes_after
            .map(|d| d as f64 / live_bytes.max(1) as f64)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LoadOutcome {
    /// Complete before this run: nothing written.
    AlreadyLoaded,
    /// Loaded from empty.
    Loaded,
    /// A partial load finished.
    Resumed,
}

impl std::fmt::Display for LoadOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::serde_name(self))
    }
}

/// Make sure `dir` exists and is writable, without leaving anything behind but the directory.
pub fn check_data_dir(dir: &Path) -> Result<(), InputError> {
    crate::machine::check_writable_dir(dir).map_err(|why| InputError::DataDir {
        dir: dir.to_path_buf(),
        why,
    })
}

/// Open every store the engines need for every dataset, check what is there, and
/// refuse (before writing anything) when the disk cannot take what is missing.
/// `one_size_at_a_time`: size classes are loaded, measured and dropped in turn
/// (`--drop-after`), so the disk must hold the largest size class, not all of them.
pub async fn plan(
    at: &Locations,
    (stores, datasets, wanted): (&[StoreKind], &[DatasetSpec], Wanted<'_>),
    one_size_at_a_time: bool,
) -> Result<Vec<(AnyStore, Result<DatasetState>)>> {
    let (planned, rooms) = rooms_of(at, stores, datasets, wanted).await?;
    rooms.check(one_size_at_a_time)?;
    Ok(planned)
}

/// Which of the datasets of some stores at some size classes a step loads.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// Every store's at every size class (`blobrace load`, a run's first part).
    Every,
    /// Only these (store, size class) pairs: those a cell still to measure reads. A
    /// run continued for the 8 KiB cells of one engine loaded every store's 8 KiB
    /// dataset, SeaweedFS's 5 min 28 s among them, to measure SQLite's two cells.
    Only(&'a [(StoreKind, DatasetSpec)]),
}

impl Wanted<'_> {
    pub fn wants(&self, store: StoreKind, spec: DatasetSpec) -> bool {
        match self {
            Wanted::Every => true,
            Wanted::Only(pairs) => pairs.contains(&(store, spec)),
        }
    }

    /// Those of `stores` whose dataset of `spec` is wanted, in their order.
    pub fn stores_at(&self, stores: &[StoreKind], spec: DatasetSpec) -> Vec<StoreKind> {
        stores
            .iter()
            .copied()
            .filter(|&s| self.wants(s, spec))
            .collect()
    }
}

/// Every store the engines need for every dataset opened (those `wanted`), its state,
/// and what loading the missing ones adds to each file system (`Rooms`, size class by
/// size class).
pub async fn rooms_of(
    at: &Locations,
    stores: &[StoreKind],
    datasets: &[DatasetSpec],
    wanted: Wanted<'_>,
) -> Result<(Vec<(AnyStore, Result<DatasetState>)>, Rooms)> {
    let data_dir = at.data_dir.as_path();
    check_data_dir(data_dir)?;
    let mut rooms = Rooms::find(data_dir, stores, &at.places).await;
    let mut planned = Vec::new();
    for (size_index, spec) in datasets.iter().enumerate() {
        for kind in wanted.stores_at(stores, *spec) {
            let mut store = kind.open(at, *spec);
            // A store that cannot say where its dataset stands (its server failing)
            // fails that load alone; bad input (a foreign file) stops the run.
            let state = match state_at_a_glance(&mut store).await {
                Err(e) if e.downcast_ref::<InputError>().is_some() => return Err(e),
                state => state,
            };
            let done = match state {
                Ok(DatasetState::Absent) | Err(_) => 0,
                Ok(DatasetState::Partial { rows_done }) => rows_done,
                Ok(DatasetState::Complete) => spec.rows,
            };
            // A churn still to come writes new versions beside the old ones.
            let churn_rows = if done < spec.rows {
                store.spec().churn_rows()
            } else {
                0
            };
            // A complete dataset adds nothing (an estimate of 0 rows is not always 0:
            // SQLite's file header and schema).
            let to_write = spec.rows - done + churn_rows;
            if to_write > 0 {
                rooms.add(kind, size_index, store.estimated_disk_bytes(to_write));
                if let Some((bytes, what)) = store.load_scratch() {
                    rooms.add_scratch(kind, bytes, what);
                }
            }
            // What dropping it frees, at least: its blobs' own bytes (random, so stored
            // whole); not the estimate's fixed parts, such as a server's write-ahead log,
            // which a drop does not give back. A complete dataset frees what it takes
            // on disk, where its store can say (recorded, or one query): Dolt's 1 KiB
            // takes 12.21 GiB for 3 GiB of blobs, fs's 12.14 GiB, and counting their
            // blobs alone a full run on a 71 GiB disk was refused with 18 GiB free.
            if done > 0 {
                let blobs = spec.bytes_before(done + 1);
                let on_disk = if done == spec.rows {
                    store.disk_bytes().await.ok().flatten()
                } else {
                    None
                };
                let freed = on_disk.unwrap_or(0).max(blobs);
                rooms.found(kind, size_index, freed);
            }
            planned.push((store, state));
        }
    }
    Ok((planned, rooms))
}

/// Where `store`'s dataset stands, read under a shared lock; `Err(InUse)` where another
/// process is writing it (`ensure_loaded` then waits for it and reads it again).
pub async fn state_at_a_glance(store: &mut AnyStore) -> Result<DatasetState> {
    let _reading = crate::dataset::lock::glance(store.location())?;
    store.state().await
}

/// Load one dataset to completion (resuming a partial one).
pub async fn load(store: &mut AnyStore, state: DatasetState) -> Result<LoadReport> {
    let spec = *store.spec();
    let location = store.location().display().to_string();
    let kind_name = store.kind();
    let mut report = LoadReport {
        store: kind_name,
        size_bytes: spec.size.bytes(),
        rows: spec.rows,
        location,
        outcome: LoadOutcome::AlreadyLoaded,
        resumed_from_row: 0,
        bytes_written: 0,
        seconds: 0.0,
        mb_per_s: None,
        peak_rss_bytes: None,
        disk_bytes: None,
        churn: None,
    };
    if spec.changes() && store.churner().is_none() {
        anyhow::bail!(
            "the {} store cannot change rows yet, so it has no churned or written dataset (--churn, --write-rate): SQLite, PostgreSQL (bytea), MariaDB, Dolt and MySQL can; leave {} out with --engines",
            kind_name.name(),
            kind_name.name()
        );
    }
    if state == DatasetState::Complete {
        if let Some(done) = store.finish_interrupted().await? {
            say!("dataset {}: {done}", report.location);
        }
        report.churn = churn(store).await?;
        report.disk_bytes = disk_bytes_or_unavailable(store).await;
        return Ok(report);
    }
    let started = Instant::now();
    let done = store.begin().await?;
    let label = format!("{} {}", kind_name.name(), spec.size_label());
    let resumed_at = spec.bytes_before(done + 1);
    let mut progress = RowsProgress::new(
        "load",
        label,
        spec.mean_blob_bytes(),
        spec.bytes(),
        resumed_at,
    );
    let per_batch = store.rows_per_batch() as u64;
    let batch_budget = per_batch * spec.mean_blob_bytes();
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(per_batch as usize);
    let mut next = done + 1;
    while next <= spec.rows {
        let most = per_batch.min(spec.rows - next + 1) as usize;
        // A mix's rows differ in size: each buffer is cut or grown to its row, and the
        // batch ends once it holds what `per_batch` rows of its mean blob would.
        let (mut n, mut batch_bytes) = (0, 0);
        while n < most && batch_bytes < batch_budget {
            let id = next + n as u64;
            let len = spec.blob_bytes(id);
            if n == batch.len() {
                batch.push(Vec::new());
            }
            // A buffer kept from a larger row would keep its size: over a load, each of a
            // batch's buffers grows to the largest row it ever held (a lognormal mix's
            // 2,600 buffers of a floor batch reached 380 MB). A much larger one is let go.
            if batch[n].capacity() > 2 * len as usize + 4096 {
                batch[n] = Vec::new();
            }
            batch[n].resize(len as usize, 0);
            batch_bytes += len;
            n += 1;
        }
        batch.truncate(n);
        fill_rows(&spec, next, &mut batch);
        store
            .append(next, &mut batch)
            .await
            .with_context(|| format!("loading {} into {}", spec, store.location().display()))?;
        next += n as u64;
        progress.advance(batch_bytes, resumed_at);
    }
    store.finish().await?;
    progress.finish();
    let seconds = started.elapsed().as_secs_f64();
    report.outcome = if done > 0 {
        LoadOutcome::Resumed
    } else {
        LoadOutcome::Loaded
    };
    report.resumed_from_row = done;
    report.bytes_written = spec.bytes() - resumed_at;
    report.seconds = seconds;
    report.mb_per_s = (seconds > 0.0).then(|| report.bytes_written as f64 / seconds / 1e6);
    report.peak_rss_bytes = peak_rss_bytes();
    report.churn = churn(store).await?;
    report.disk_bytes = disk_bytes_or_unavailable(store).await;
    Ok(report)
}

/// Apply a churned dataset's changes that are not in yet (`churn.rs`), in the churn's
/// order, in batches the store commits with their count.
async fn churn(store: &mut AnyStore) -> Result<Option<ChurnReport>> {
    let spec = *store.spec();
    let Some(churn) = spec.churn else {
        return Ok(None);
    };
    let total = spec.churn_rows();
    let before = store.churning()?.churn_applied().await?.applied;
    let mut report = ChurnReport {
        churn,
        rows: total,
        applied_before: before.min(total),
        applied_now: 0,
        seconds: 0.0,
        disk_bytes_before: None,
        disk_bytes_after: None,
        maintenance: Vec::new(),
        cleanup: Vec::new(),
    };
    if before >= total {
        // A compaction a killed run did not finish is done now.
        report
            .maintenance
            .extend(store.churning()?.churn_maintenance(true).await?);
        store.churning()?.churn_finish().await?;
        report.cleanup = cleanup_or_none(store).await;
        return Ok(Some(report));
    }
    if before == 0 {
        report.disk_bytes_before = disk_bytes_or_unavailable(store).await;
    }
    report
        .maintenance
        .extend(store.churning()?.churn_maintenance(false).await?);
    let started = Instant::now();
    let label = format!("{} {} {churn}", store.kind().name(), spec.size);
    let mut progress = RowsProgress::new(
        "load",
        label.clone(),
        spec.size.bytes(),
        total * spec.size.bytes(),
        before * spec.size.bytes(),
    );
    let order = spec.churn_order();
    let per_batch = store.rows_per_batch() as u64;
    let mut ids = Vec::with_capacity(per_batch as usize);
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(per_batch as usize);
    let mut at = before;
    while at < total {
        let n = per_batch.min(total - at) as usize;
        ids.clear();
        ids.extend((at..at + n as u64).map(|p| order.id_at(p)));
        batch.truncate(n);
        for (i, &id) in ids.iter().enumerate() {
            if i == batch.len() {
                batch.push(vec![0; spec.size.as_usize()]);
            }
            fill_blob_version(spec.seed, spec.size, spec.content, id, 1, &mut batch[i]);
        }
        store
            .churning()?
            .churn(&ids, &mut batch, at + n as u64)
            .await
            .with_context(|| format!("{label}: changing rows in {}", store.location().display()))?;
        at += n as u64;
        progress.advance(n as u64 * spec.size.bytes(), before * spec.size.bytes());
    }
    progress.finish();
    report.applied_now = total - before;
    report.seconds = started.elapsed().as_secs_f64();
    report
        .maintenance
        .extend(store.churning()?.churn_maintenance(true).await?);
    store.churning()?.churn_finish().await?;
    report.cleanup = cleanup_or_none(store).await;
    report.disk_bytes_after = disk_bytes_or_unavailable(store).await;
    let resumed = if before > 0 {
        format!(" (resumed at {before})")
    } else {
        String::new()
    };
    let amplification = report
        .amplification(spec.bytes())
        .map(|a| format!(", {a:.2}x the {} live", format_bytes(spec.bytes())))
        .unwrap_or_default();
    say!(
        "{label}: {} of {} rows changed{resumed} in {:.1} s ({:.0} rows/s); disk {} -> {}{amplification}",
        report.applied_now,
        spec.rows,
        report.seconds,
        report.applied_now as f64 / report.seconds.max(1e-9),
        disk_label(report.disk_bytes_before),
        disk_label(report.disk_bytes_after),
    );
    for done in &report.maintenance {
        say!("{label}: maintenance: {done}");
    }
    if !report.cleanup.is_empty() {
        say!(
            "{label}: the database says: {}",
            cleanup_label(&report.cleanup)
        );
    }
    Ok(Some(report))
}

/// `table dead rows 0, TOAST dead rows 11061, …`.
pub fn cleanup_label(facts: &[(String, i64)]) -> String {
    facts
        .iter()
        .map(|(name, value)| format!("{name} {value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the database says of its cleanup, or nothing with a note where it cannot be
/// read: a figure for the report, never a reason to stop a run.
async fn cleanup_or_none(store: &mut AnyStore) -> Vec<(String, i64)> {
    let facts = match store.churning() {
        Ok(churn) => churn.cleanup_facts().await,
        Err(e) => Err(e),
    };
    facts.unwrap_or_else(|e| {
        say!(
            "note: {}: what the database says of its cleanup is unavailable: {e:#}",
            store.location().display()
        );
        Vec::new()
    })
}

/// What the dataset takes on disk, or None ("unavailable") with a note where the store
/// cannot say: a figure for the report, never a reason to stop a run.
async fn disk_bytes_or_unavailable(store: &mut AnyStore) -> Option<u64> {
    match store.disk_bytes().await {
        Ok(bytes) => bytes,
        Err(e) => {
            say!(
                "note: {}: its bytes on disk are unavailable: {e:#}",
                store.location().display()
            );
            None
        }
    }
}

/// A load that filled its disk cannot finish: remove what it wrote, so the machine
/// (Docker, every other program writing there) stays usable, and say so.
async fn free_the_disk(store: &mut AnyStore, e: anyhow::Error) -> anyhow::Error {
    let removed = match store.remove().await {
        Ok(()) => "its partial dataset was removed to give the space back".to_string(),
        Err(why) => {
            format!("removing its partial dataset failed too ({why:#}): `blobrace drop` it")
        }
    };
    e.context(format!(
        "the disk holding {} filled up while loading; {removed}. Make room there (`blobrace env` lists what is loaded; another program may have filled it) and run the same command again",
        store.location().display()
    ))
}

/// A dataset whose load failed: the run goes on without it (see `ensure_loaded`).
pub struct FailedLoad {
    pub store: StoreKind,
    pub spec: DatasetSpec,
    pub error: anyhow::Error,
}

/// Plan, then load everything missing; one line per dataset on stderr. A load that
/// fails (a server killed by its cap, a lost connection, a full disk) is returned in
/// the second list, with Docker's reason where a server's container went down, and
/// the other datasets are loaded anyway; with `fail_fast` it is the error instead.
/// `each` is handed every dataset's report as soon as it is loaded (or found loaded),
/// so a caller can save it before the next load starts; its error stops the loads.
pub async fn ensure_loaded(
    at: &Locations,
    (stores, datasets, wanted): (&[StoreKind], &[DatasetSpec], Wanted<'_>),
    fail_fast: bool,
    mut each: impl FnMut(&LoadReport) -> Result<()>,
) -> Result<(Vec<LoadReport>, Vec<FailedLoad>)> {
    let mut reports = Vec::new();
    let mut failed = Vec::new();
    for (mut store, state) in plan(at, (stores, datasets, wanted), false).await? {
        let loaded = async {
            // A complete dataset is only read (beside other readers, a run measuring
            // it); any other is loaded by one process at a time.
            let complete = matches!(state, Ok(DatasetState::Complete));
            let (access, doing) = if complete {
                (Access::Read, "reading")
            } else {
                (Access::Write, "loading")
            };
            take(store.location(), access, doing, at.lock_waiting)?;
            // Read again under the lock: the plan's glance may be minutes old, and
            // another process may have loaded it since (a second load, which waited on
            // an earlier dataset, loaded the floor again from its stale "absent").
            let mut state = store.state().await;
            if complete && !matches!(state, Ok(DatasetState::Complete)) {
                // Dropped while this process waited to read it: load it after all.
                take(store.location(), Access::Write, "loading", at.lock_waiting)?;
                state = store.state().await;
            }
            let report = match state {
                Ok(state) => load(&mut store, state).await,
                Err(e) => Err(e.context(format!(
                    "cannot tell whether {} is loaded",
                    store.location().display()
                ))),
            };
            // Loaded, it is read from here on: others may read it too, none change it.
            match &report {
                Ok(_) => take(store.location(), Access::Read, "reading", at.lock_waiting)?,
                Err(_) => {
                    release(store.location());
                    false
                }
            };
            report
        }
        .await;
        let report = match loaded {
            Ok(report) => report,
            Err(e) => {
                // A server killed by its cap shows up here only as a dropped connection.
                let e = match store.kind().server() {
                    Some(server) => crate::docker::explain_service_failure(server.name(), e).await,
                    None => e,
                };
                // A server keeps its files in its container's volume, out of sight here.
                let folder = (!store.kind().is_server()).then(|| store.location());
                let e = if crate::atomic_file::is_disk_full_at(&e, folder) {
                    free_the_disk(&mut store, e).await
                } else {
                    e
                };
                // Bad input (a blob over a server's packet limit, a foreign file) is
                // the user's to fix, not one engine's bad luck: it stops the run.
                if fail_fast || e.downcast_ref::<InputError>().is_some() {
                    return Err(e);
                }
                say!(
                    "error: {}: the load failed, going on without it: {e:#}",
                    store.location().display()
                );
                failed.push(FailedLoad {
                    store: store.kind(),
                    spec: *store.spec(),
                    error: e,
                });
                continue;
            }
        };
        // Saved before it is said: a run stopped on its line has it.
        each(&report)?;
        match report.outcome {
            LoadOutcome::AlreadyLoaded => say!(
                "dataset {}: already loaded, {} on disk",
                report.location,
                disk_label(report.disk_bytes)
            ),
            _ => say!(
                "dataset {}: {} {} in {:.1}s ({} MB/s, peak RSS {}, {} on disk)",
                report.location,
                report.outcome,
                format_bytes(report.bytes_written),
                report.seconds,
                report
                    .mb_per_s
                    .map(|r| format!("{r:.0}"))
                    .unwrap_or_else(|| "unavailable".into()),
                report
                    .peak_rss_bytes
                    .map(format_bytes)
                    .unwrap_or_else(|| "unavailable".into()),
                disk_label(report.disk_bytes),
            ),
        }
        reports.push(report);
    }
    Ok((reports, failed))
}
