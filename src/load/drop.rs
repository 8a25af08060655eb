//! `blobrace drop`: the datasets of a run's engines and sizes removed, each under its
//! write lock, a damaged one too.

use anyhow::{Result, bail};

use crate::config::RunConfig;
use crate::dataset::DatasetState;
use crate::dataset::lock::{Access, release, take};
use crate::db::registry::stores_for;
use crate::error::InputError;

/// Remove every dataset of `config`'s engines that is there, each said on its own line
/// (removed, not there, or why it could not be), then one line for the whole: Err when
/// any could not be removed. One store that fails does not keep the others.
pub async fn drop_datasets(config: &RunConfig) -> Result<()> {
    let (mut removed, mut absent, mut failed) = (0, 0, Vec::new());
    let at = config.locations();
    for spec in config.datasets() {
        for kind in stores_for(&config.engines) {
            let mut store = kind.open(&at, spec);
            let location = store.location().display().to_string();
            let dropped = async {
                take(store.location(), Access::Write, "dropping", at.lock_waiting)?;
                // A dataset of other settings, or one changed since, is still blobrace's
                // own at this place: what a drop with these flags is asked to remove.
                let there = match store.state().await {
                    Ok(state) => state != DatasetState::Absent,
                    Err(e)
                        if matches!(
                            e.downcast_ref::<InputError>(),
                            Some(
                                InputError::DatasetMismatch { .. }
                                    | InputError::DatasetDamaged { .. }
                            )
                        ) =>
                    {
                        true
                    }
                    // Files at the dataset's own place that its store cannot recognise
                    // (a header overwritten, or not blobrace's): named, and removed as
                    // asked, so a damaged dataset can always go.
                    Err(e) => match e.downcast_ref::<InputError>() {
                        Some(InputError::ForeignFile { path, why }) => {
                            say!(
                                "{}: {why}, damaged or not blobrace's; it is at this dataset's place, so it goes as drop was asked",
                                path.display()
                            );
                            true
                        }
                        _ => return Err(e),
                    },
                };
                if there {
                    store.remove().await?;
                }
                let aside = store.remove_leftovers().await?;
                release(store.location());
                anyhow::Ok((there, aside))
            }
            .await;
            match dropped {
                Ok((there, aside)) => {
                    if let Some(aside) = aside {
                        say!("removed {} (an earlier drop cut short)", aside.display());
                    }
                    if there {
                        say!("removed {location}");
                        removed += 1;
                    } else {
                        say!("not there: {location}");
                        absent += 1;
                    }
                }
                Err(e) => {
                    say!("cannot remove {location}: {e:#}");
                    failed.push(location);
                }
            }
        }
    }
    let whole = format!(
        "{removed} dataset(s) removed, {absent} not there, {} could not be removed",
        failed.len()
    );
    if !failed.is_empty() {
        bail!("{whole} (the reasons are above): {}", failed.join(", "));
    }
    say!("{whole}");
    Ok(())
}
