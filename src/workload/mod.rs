//! Which rows the fetches read: the access pattern (`access`), the steady state the
//! cache is brought to first (`steady`), and a dataset that changes while it is read
//! (`live`).

pub mod access;
pub mod live;
pub mod steady;
pub mod stored;
