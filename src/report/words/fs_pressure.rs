//! What is said of files whose kernel memory presses the cap
//! (`records::fs_pressure`): before the cell is measured, and in the report beside the
//! kernel-memory peaks its steps recorded.

use crate::records::fs_pressure::{KERNEL_BYTES_PER_FILE, Pressed, Pressure};
use crate::size::{format_bytes, format_bytes_approx};

/// The arithmetic and what it means for the cell.
pub fn why(p: &Pressure) -> String {
    let f = &p.footprint;
    let fits = if p.over_cap() {
        "more than the cap holds, so the kernel reclaims inodes and dentries while it measures: this cell measures files under metadata pressure"
    } else {
        "a share of the cap no other engine spends"
    };
    format!(
        "its {} files cost about {} of kernel memory once opened ({} bytes of inode and dentry each, measured on ext4) and {} of page cache ({} of blobs: a file's last page is cached whole), against the {} cap: {fits}; at most {:.0}% of its files can stay cached",
        f.files,
        format_bytes_approx(f.kernel_bytes),
        KERNEL_BYTES_PER_FILE,
        format_bytes_approx(f.cache_bytes),
        format_bytes_approx(f.files * p.blob_bytes),
        format_bytes(p.cap_bytes),
        p.share_cached() * 100.0
    )
}

/// The report's detail: the arithmetic, then the peaks its steps recorded.
pub fn pressed(p: &Pressed) -> String {
    let peaks: Vec<String> = p
        .peaks
        .iter()
        .map(|(cache, peak)| format!("{cache} {}", format_bytes_approx(*peak)))
        .collect();
    match peaks.is_empty() {
        true => why(&p.pressure),
        false => format!(
            "{}; the kernel memory its steps peaked at: {}",
            why(&p.pressure),
            peaks.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::registry::EngineKind;
    use crate::records::fs_pressure::pressure;

    #[test]
    fn the_pressure_is_said_with_its_arithmetic_and_the_peaks() {
        let fs = "fs".parse::<EngineKind>().unwrap();
        let quick_1kib = pressure(fs, 786_432, 1024, Some(256 << 20)).expect("pressed");
        let line = why(&quick_1kib);
        assert!(
            line.contains("786432 files")
                && line.contains("1020.00MiB of kernel memory")
                && line.contains("metadata pressure")
                && line.contains("256MiB cap"),
            "{line}"
        );
        let with_peaks = pressed(&Pressed {
            who: "fs 1KiB".into(),
            pressure: quick_1kib,
            peaks: vec![("cold", 200 << 20)],
        });
        assert!(with_peaks.starts_with(&line), "{with_peaks}");
        assert!(
            with_peaks.ends_with("peaked at: cold 200.00MiB"),
            "{with_peaks}"
        );
    }
}
