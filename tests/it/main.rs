//! The integration tests, one binary: each module drives the real `blobrace` binary
//! (or the library) on its own temporary data. One binary instead of one per file:
//! each test binary links the whole crate, and twenty of them took about 11 s each to
//! link after every change to the library (243 s of a `cargo test --release`).
//!
//! Tests of one binary run beside each other (two at a time on a 2-core machine), so
//! every test that uses a compose server holds it alone for its whole run (its group:
//! the SQL servers, Dolt, SeaweedFS; `common::hold_server`, taken by `server_url_or_skip`
//! and `service_container`, or `common::hold_servers` for all of them): a cold start
//! restarts a server's container, which would cut any other test's connections. Two tests keep their own binaries: `tests/diskprobe.rs` (its O_DIRECT
//! reads would show in another test's /proc/self/io) and `tests/v2_vm.rs` (std only,
//! built on its own inside the VM it boots).

mod common;

mod architecture;
mod bad_input;
mod browser;
mod cap;
mod churn;
mod compare;
mod content;
mod content_stores;
mod damage;
mod disk_cap;
mod disk_plan;
mod docker;
mod dolt;
mod first_bytes;
mod full_disk;
mod kills;
mod knobs;
mod kv;
mod live;
mod load;
mod locks;
mod manifest;
mod merge;
mod metrics;
mod mix;
mod network;
mod pipeline;
mod precision;
mod readahead;
mod remote;
mod report;
mod resume;
mod seaweedfs;
mod secrets;
mod servers;
mod setup_kills;
mod site;
mod slow_disk;
mod steady;
mod variants_page;
