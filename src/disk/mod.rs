//! The disk under the data: the bytes a fetch read from it (`io`), how fast it answers
//! on its own (`probe`), and emptying the page cache of a dataset's files (`evict`).

pub mod evict;
pub mod io;
pub mod probe;
