//! The machine a user deploys on, emulated around the run: what lies between the
//! application and its data besides the memory and CPU caps (`cap/`) and the disk's
//! rate and readahead (`cap/disk.rs`, `cap/readahead.rs`). Each part one file: a
//! network between the application and its database (`network.rs`).

pub mod network;
