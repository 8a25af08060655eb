//! The report's "what each store keeps" table (`templates/report/stored.html`): per
//! store and dataset, the bytes it kept on disk for its blobs' bytes, measured when
//! each result was recorded, and what compresses them there. On random bytes a ratio
//! above 1 is a store's pages and indexes around the blobs; on documents a ratio under
//! 1 is its compression, and the share of the data its cache can hold grows with it.

use std::collections::BTreeMap;

use askama::Template;

use crate::records::results::RunResults;
use crate::size::format_bytes;

pub(super) struct Kept {
    store: &'static str,
    size: String,
    blob_bytes: String,
    stored: String,
    per_blob_byte: String,
    compression: String,
}

#[derive(Template)]
#[template(path = "report/stored.html")]
pub(super) struct Stored {
    content: String,
    rows: Vec<Kept>,
}

impl Stored {
    /// One row per store and dataset (the last result's figure); None where no result
    /// measured its store's bytes (older results).
    pub fn of(run: &RunResults) -> Option<Self> {
        let knobs = run.config.database_knobs.knobs();
        let mut seen = BTreeMap::new();
        for r in &run.results {
            let store = r.engine.store();
            let Some(stored) = r.dataset.stored_bytes else {
                continue;
            };
            seen.insert(
                (store.name(), r.size_bytes, r.size.clone()),
                (r.dataset.bytes, stored, store.db().compression(&knobs)),
            );
        }
        let rows: Vec<Kept> = seen
            .into_iter()
            .map(|((store, _, size), (blobs, stored, compression))| Kept {
                store,
                size,
                blob_bytes: format_bytes(blobs),
                stored: format_bytes(stored),
                per_blob_byte: format!("{:.2}", stored as f64 / blobs.max(1) as f64),
                compression,
            })
            .collect();
        (!rows.is_empty()).then(|| Stored {
            content: match run.config.content {
                crate::dataset::documents::Content::Random => {
                    "random bytes, which nothing compresses".into()
                }
                content => format!("{content} content"),
            },
            rows,
        })
    }
}
