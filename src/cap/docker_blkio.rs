//! The disk cap as Docker keeps it on a container it created: compose's `blkio_config`
//! (`--device-read-iops` and the like for `docker run`). The compose runner cannot write
//! the servers' cgroups (they are the host's, not its to see), and Docker cannot change
//! a running container's throttle, so `scripts/compose-run.sh` creates every container
//! of a capped run with the limits (`blobrace env --compose-blkio DEVICE` writes them),
//! and Docker writes them into each new cgroup at every start: restarts keep them.

use super::disk::{DiskLimits, LimitSlot};

/// Docker's four throttle lists, each as compose names it in `blkio_config` and where
/// its figure goes in `DiskLimits` (as `disk.rs`'s v1 files do for the kernel's).
pub const LISTS: [(&str, LimitSlot); 4] = [
    ("device_read_iops", |l| &mut l.read_iops),
    ("device_read_bps", |l| &mut l.read_bytes_per_s),
    ("device_write_iops", |l| &mut l.write_iops),
    ("device_write_bps", |l| &mut l.write_bytes_per_s),
];

/// `blkio_config:` for a compose service, indented under its name: every limit set on
/// `device` (a path on Docker's host, the whole disk: `/dev/vda`).
pub fn compose_blkio(limits: &DiskLimits, device: &str) -> String {
    let mut limits = *limits;
    let mut yaml = String::from("    blkio_config:\n");
    for (key, slot) in LISTS {
        if let Some(rate) = *slot(&mut limits) {
            yaml.push_str(&format!(
                "      {key}:\n        - path: {device}\n          rate: {rate}\n"
            ));
        }
    }
    yaml
}

/// The limits in Docker's lists (`(slot, device path, rate)`, a slot of `LISTS`), and
/// the one device they are on; None where there are none. Limits on several devices are
/// an error: blobrace sets one, on the disk of the data.
pub fn held(lists: &[(LimitSlot, String, i64)]) -> Result<Option<(String, DiskLimits)>, String> {
    let mut limits = DiskLimits::default();
    let mut device: Option<&str> = None;
    for (slot, path, rate) in lists {
        match device {
            Some(d) if d != path => {
                return Err(format!(
                    "its container has disk limits on two devices ({d} and {path})"
                ));
            }
            _ => device = Some(path),
        }
        // Docker takes 0 as no limit.
        if *rate > 0 {
            *slot(&mut limits) = Some(*rate as u64);
        }
    }
    Ok(device
        .filter(|_| !limits.is_empty())
        .map(|d| (d.to_string(), limits)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compose_block_names_each_limit_set_and_reads_back_through_dockers_lists() {
        let limits = DiskLimits {
            read_iops: Some(3000),
            read_bytes_per_s: Some(125 << 20),
            write_iops: None,
            write_bytes_per_s: Some(64 << 20),
        };
        let yaml = compose_blkio(&limits, "/dev/vda");
        assert_eq!(
            yaml,
            "    blkio_config:\n      device_read_iops:\n        - path: /dev/vda\n          rate: 3000\n      device_read_bps:\n        - path: /dev/vda\n          rate: 131072000\n      device_write_bps:\n        - path: /dev/vda\n          rate: 67108864\n"
        );
        // What Docker lists for a container created with that block is the cap again.
        let [read_iops, read_bps, _, write_bps] = LISTS.map(|(_, slot)| slot);
        let lists = [
            (read_iops, "/dev/vda".to_string(), 3000),
            (read_bps, "/dev/vda".to_string(), 125 << 20),
            (write_bps, "/dev/vda".to_string(), 64 << 20),
        ];
        assert_eq!(held(&lists).unwrap(), Some(("/dev/vda".into(), limits)));
        assert_eq!(held(&[]).unwrap(), None);
        assert_eq!(held(&[(read_iops, "/dev/vda".into(), 0)]).unwrap(), None);
        let two = [
            (read_iops, "/dev/vda".to_string(), 3000),
            (read_bps, "/dev/vdb".to_string(), 1),
        ];
        assert!(held(&two).unwrap_err().contains("two devices"));
    }
}
