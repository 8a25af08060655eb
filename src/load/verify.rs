//! `blobrace verify`: every row of every dataset read back through the store's rawest
//! reader and checked against its seed, byte for byte.
//!
//! A server's fetches are one round trip each (about 0.5 ms through Docker's published
//! port): one reader took 69 s for two 65 MiB datasets of 1 KiB rows, eight readers on
//! their own connections 19.6 s for one (3,500 rows a second: a quarter of an hour for
//! a full-scale dataset). So an SQL server's rows are read a range per round trip, in
//! id order (`Store::read_rows`), through the read expression its engines fetch with.
//! Where a store has no such read (a keyed dataset, which stores no ids; the object
//! store) its rawest engine fetches every id, a server's with several readers at once,
//! each on its own connection, interleaved over the ids. In-process stores (SQLite,
//! files, the floor) read synchronously, so one reader serves them as fast.

use anyhow::{Context, Result, bail};

use crate::config::RunConfig;
use crate::dataset::content::check_blob;
use crate::dataset::lock::Access;
use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::any_engine::AnyEngine;
use crate::db::engine::Engine;
use crate::db::registry::{EngineKind, StoreKind};
use crate::error::InputError;
use crate::load::progress::RowsProgress;
use crate::size::format_bytes;

/// Blob bytes in flight across a server's readers: each reader holds its blob (and
/// the driver a few copies of it), so fewer readers for larger blobs.
const READERS_BYTES: u64 = 16 << 20;
/// The most readers on one server dataset.
const MAX_READERS: u64 = 8;
/// Blob bytes one range read returns (`Store::read_rows`): the rows of a batch are
/// held at once, in the driver and here.
const READ_BATCH_BYTES: u64 = 16 << 20;

/// How many readers verify a dataset of `store` with blobs of `blob_bytes`.
pub fn readers_for(store: StoreKind, blob_bytes: u64) -> u64 {
    if store.is_server() {
        (READERS_BYTES / blob_bytes.max(1)).clamp(1, MAX_READERS)
    } else {
        1
    }
}

/// Verify every dataset of `config`'s engines, each said on its own line (ok, BAD, not
/// loaded, or why it could not be read), then one line for the whole: Err when any was
/// not right. One store that cannot be read (a full disk, a server gone) does not stop
/// the others from being checked.
pub async fn verify(config: &RunConfig) -> Result<()> {
    let (mut verified, mut bad, mut not_loaded, mut unreadable) = (0, 0, Vec::new(), 0);
    // How to name each wrong one alone: the same flags drop every dataset, good ones too.
    let mut wrong = Vec::new();
    for spec in config.datasets() {
        for kind in crate::db::registry::stores_for(&config.engines) {
            match verify_one(config, kind, spec).await {
                Ok(true) => verified += 1,
                Ok(false) => {
                    bad += 1;
                    wrong.push(format!("--engines {} {}", kind.name(), spec.size_flag()));
                }
                Err(e) => match e.downcast_ref::<InputError>() {
                    Some(InputError::NotLoaded { path }) => {
                        say!("--  {}: not loaded", path.display());
                        not_loaded.push(path.clone());
                    }
                    _ => {
                        let at = kind.open(&config.locations(), spec);
                        say!("??  {}: cannot verify: {e:#}", at.location().display());
                        unreadable += 1;
                    }
                },
            }
        }
    }
    let whole = format!(
        "{verified} dataset(s) verified, {bad} wrong, {} not loaded, {unreadable} could not be read",
        not_loaded.len()
    );
    if bad > 0 || unreadable > 0 {
        let redo = if wrong.is_empty() {
            String::new()
        } else {
            format!(
                "drop each wrong one alone and load it again (`blobrace drop` then `blobrace load`, with this command's other flags and {}); ",
                wrong.join(", then ")
            )
        };
        bail!("{whole}: {redo}fix what kept any from being read (above) and verify again");
    }
    if let [path, ..] = &not_loaded[..] {
        return Err(
            anyhow::Error::new(InputError::NotLoaded { path: path.clone() }).context(whole),
        );
    }
    say!("{whole}");
    Ok(())
}

/// One dataset: Ok(false) when it is wrong (said on stderr).
async fn verify_one(config: &RunConfig, kind: StoreKind, spec: DatasetSpec) -> Result<bool> {
    let mut store = kind.open(&config.locations(), spec);
    let where_ = store.location().display().to_string();
    // Not while another process loads, churns or drops it.
    let waiting = config.locations().lock_waiting;
    crate::dataset::lock::take(store.location(), Access::Read, "verifying", waiting)?;
    if store.state().await? != DatasetState::Complete {
        return Err(InputError::NotLoaded {
            path: store.location().to_path_buf(),
        }
        .into());
    }
    let range = store.id_range().await?;
    let ids = range
        .ids
        .map(|(lo, hi)| format!(" with ids {lo}..={hi}"))
        .unwrap_or_default();
    let expected_ids = range
        .ids
        .map(|_| format!(" with ids 1..={}", spec.rows))
        .unwrap_or_default();
    if range.count != spec.rows || range.ids.is_some_and(|ids| ids != (1, spec.rows)) {
        say!(
            "BAD {where_}: {} rows{ids}, expected {} rows{expected_ids}",
            range.count,
            spec.rows
        );
        return Ok(false);
    }
    // A churned dataset's rows are at the version its applied changes say, a churn
    // killed halfway included.
    let spec = *store.spec();
    let applied = if spec.changes() {
        store.churning()?.churn_applied().await?.applied
    } else {
        0
    };
    let progress = std::cell::RefCell::new(RowsProgress::new(
        "verify",
        where_.clone(),
        spec.mean_blob_bytes(),
        spec.bytes(),
        0,
    ));
    let mut bad = match read_in_batches(&mut store, spec, applied, &progress).await? {
        Some(bad) => bad,
        None => read_through_engines(config, kind, spec, applied, &where_, &progress).await?,
    };
    progress.borrow().finish();
    if !bad.is_empty() {
        bad.sort_by_key(|(id, _)| *id);
        for (id, what) in bad.iter().take(5) {
            say!("BAD {where_}: id {id}: {what}");
        }
        if bad.len() > 5 {
            say!("BAD {where_}: {} rows wrong in all", bad.len());
        }
        return Ok(false);
    }
    let keys = if spec.key.is_binary() {
        format!(" as {} keys", spec.key)
    } else {
        String::new()
    };
    let churn = match (spec.churn, spec.live) {
        (_, true) => format!(", every row at its version after {applied} changes"),
        (Some(c), false) => format!(
            ", {applied} of {} rows at their {c} version",
            spec.churn_rows()
        ),
        (None, false) => String::new(),
    };
    say!(
        "ok  {where_}: ids 1..={}{keys}, {} verified{churn}",
        spec.rows,
        format_bytes(spec.bytes())
    );
    Ok(true)
}

/// Every row read in batches of about `READ_BATCH_BYTES`, one round trip each, where the
/// store can (`Store::read_rows`): the wrong ones and why; None where it cannot.
async fn read_in_batches(
    store: &mut crate::db::registry::AnyStore,
    spec: DatasetSpec,
    applied: u64,
    progress: &std::cell::RefCell<RowsProgress>,
) -> Result<Option<Vec<(u64, String)>>> {
    let per_batch = (READ_BATCH_BYTES / spec.mean_blob_bytes()).max(1);
    let (mut bad, mut scratch) = (Vec::new(), Vec::new());
    let mut first = 1;
    while first <= spec.rows {
        let last = (first + per_batch - 1).min(spec.rows);
        let mut expected = first;
        let mut each = |id: u64, blob: &[u8]| {
            // In order and inside the range asked (`Store::read_rows`); a store that
            // broke that would have rows checked twice or none: said, not skipped.
            if id < expected || id > last {
                bad.push((
                    id,
                    format!("read out of order or outside ids {first}..={last}"),
                ));
                return;
            }
            // Ids are unique and id_range counted 1..=rows, so a gap cannot happen
            // unless the table changed since: say so rather than skip a row.
            while expected < id.min(last + 1) {
                bad.push((expected, "missing from the read of its range".to_string()));
                expected += 1;
            }
            let version = spec.version_of(id, applied);
            if let Some(what) = check_blob(
                spec.seed,
                spec.size,
                spec.content,
                (id, spec.blob_bytes(id)),
                blob,
                Some(version),
                &mut scratch,
            ) {
                bad.push((id, what));
            }
            expected = id + 1;
            progress.borrow_mut().advance(spec.blob_bytes(id), 0);
        };
        if !store.read_rows(first, last, &mut each).await? {
            return Ok(None);
        }
        while expected <= last {
            bad.push((expected, "missing from the read of its range".to_string()));
            expected += 1;
        }
        first = last + 1;
    }
    Ok(Some(bad))
}

/// Every row fetched through the store's rawest engine, a server's by several readers
/// at once, each on its own connection, interleaved over the ids.
async fn read_through_engines(
    config: &RunConfig,
    kind: StoreKind,
    spec: DatasetSpec,
    applied: u64,
    where_: &str,
    progress: &std::cell::RefCell<RowsProgress>,
) -> Result<Vec<(u64, String)>> {
    let readers = readers_for(kind, spec.size.bytes()).min(spec.rows.max(1));
    let mut engines = Vec::new();
    for _ in 0..readers {
        engines.push(
            EngineKind::reader_of(kind)
                .open(&config.locations(), spec)
                .await?,
        );
    }
    let checked =
        futures_util::future::join_all(engines.into_iter().enumerate().map(|(reader, engine)| {
            read_every(
                engine,
                spec,
                applied,
                (reader as u64 + 1, readers),
                where_,
                progress,
            )
        }))
        .await;
    let mut bad = Vec::new();
    for reader in checked {
        bad.extend(reader?);
    }
    Ok(bad)
}

/// One reader's share, the ids `first, first + step, ...`: the wrong ones and why.
async fn read_every(
    mut engine: AnyEngine,
    spec: DatasetSpec,
    applied: u64,
    (first, step): (u64, u64),
    where_: &str,
    progress: &std::cell::RefCell<RowsProgress>,
) -> Result<Vec<(u64, String)>> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut bad = Vec::new();
    for id in (first..=spec.rows).step_by(step as usize) {
        engine.before_fetch(id, &mut out);
        engine
            .fetch(id, &mut out)
            .await
            .with_context(|| format!("reading id {id} from {where_}"))?;
        let version = spec.version_of(id, applied);
        let len = spec.blob_bytes(id);
        if let Some(what) = check_blob(
            spec.seed,
            spec.size,
            spec.content,
            (id, len),
            &out,
            Some(version),
            &mut scratch,
        ) {
            bad.push((id, what));
        }
        progress.borrow_mut().advance(len, 0);
    }
    engine.close().await?;
    Ok(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_get_fewer_readers_for_larger_blobs_and_local_stores_one() {
        let pg = StoreKind::named("postgres").unwrap();
        assert_eq!(readers_for(pg, 1 << 10), MAX_READERS);
        assert_eq!(readers_for(pg, 4 << 20), 4);
        assert_eq!(readers_for(pg, 32 << 20), 1);
        assert_eq!(readers_for(StoreKind::named("sqlite").unwrap(), 1 << 10), 1);
    }
}
