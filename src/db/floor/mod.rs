//! The physical floor every engine is compared with: all blobs of a size class
//! packed in one file at `(id - 1) * size` (`store.rs`), read the way this disk
//! serves fastest at that size (`engine.rs`, `calibrate.rs`, `pattern.rs`). It reads
//! at the id's offset: no keys.

mod calibrate;
pub mod engine;
mod pattern;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;

pub struct Floor;

impl Database for Floor {
    /// 3 GiB of 1 KiB in 15 s: one file written in order.
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost {
            micros_per_row: 1.0,
            mb_per_s: 300.0,
        }
    }

    fn name(&self) -> &'static str {
        "floor"
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: "floor",
            client_copies: 2,
            help: "the row's bytes from a packed file, read the way this disk serves fastest at that size (one pread, 4KiB preads in order, WILLNEED + pread or 4 threads, timed on cold reads when the floor opens; BLOBRACE_FLOOR_READ=pread pins one): the physical floor",
            client: Client::Direct,
            open: Open::Embedded(|at, spec| {
                Box::pin(async move {
                    Ok(AnyEngine::Floor(engine::FloorEngine::open(
                        &at.data_dir,
                        spec,
                    )?))
                })
            }),
        }]
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::FloorStore::new(&at.data_dir, spec))
    }

    fn has_keys(&self) -> bool {
        false
    }

    fn is_floor(&self) -> bool {
        true
    }

    fn variables(&self) -> Vec<(String, &'static str)> {
        vec![(engine::PIN_VARIABLE.into(), "pins the floor's read pattern")]
    }

    fn check_variable(&self, name: &str, value: &str) -> Option<String> {
        (name == engine::PIN_VARIABLE)
            .then(|| engine::pin_of(Some(value)).err())
            .flatten()
    }
}
