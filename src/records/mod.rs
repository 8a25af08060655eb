//! What a run leaves behind and is read back from: results.json (`results`) and the
//! records beside it (each part of a continued run, the regime of its caches, the
//! floor's checks, the summary), and merging the shares of one matrix (`merge`).
//! Below `report/`, which draws them, and `run/`, which writes them.

pub mod cold_fill;
pub mod comparable;
pub mod floor_check;
pub mod fs_pressure;
pub mod merge;
pub mod merged_run;
pub mod provenance;
pub mod regime;
pub mod results;
pub mod run_id;
pub mod run_parts;
pub mod slim;
pub mod summary;
