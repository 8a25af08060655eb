//! The machine a user deploys on, emulated around the run: what lies between the
//! application and its data besides the memory and CPU caps (`cap/`) and the disk's
//! rate and readahead (`cap/disk.rs`, `cap/readahead/`). Each part one file: a
//! network between the application and its database (`network.rs`), a disk that answers in
//! milliseconds (`slow_disk.rs`, its latency as the flag takes it in `disk_latency.rs`); named combinations of them and the disk's rate and
//! readahead, with their sources (`presets.rs`).

pub mod child;
pub mod disk_latency;
pub mod network;
pub mod presets;
pub mod slow_disk;
