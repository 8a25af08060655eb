//! What the report and the terminal say of what the records layer found: the
//! sentences in one place, from typed figures (`records::floor_check`,
//! `records::fs_pressure`), so the yellow box's one line, its folded detail and the
//! run's last lines never say one finding two ways.

pub mod floor;
pub mod fs_pressure;
