//! The disk cap's presets: common cloud volumes' published rates, each with its source, so
//! `--disk-cap io2:16000` answers for that volume with no arithmetic from the user. A
//! preset sets the volume's own limits. What it cannot know is said in its source: the
//! VM's own limits (set by its type and size, often lower on a small VM), a provider's
//! burst credits, and reads and writes counted together (each direction gets the whole).

use crate::size::parse_bytes;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// IOPS and bytes a second, in each direction.
pub(super) type Rate = (u64, u64);

/// How a preset's rates come from the figures after its name.
enum Rates {
    /// AWS gp3: a baseline, or IOPS and MiB/s provisioned within AWS's bounds.
    Gp3,
    /// AWS io2: IOPS provisioned; throughput follows them.
    Io2,
    /// GCP Persistent Disk: a baseline plus so much per GiB of the volume's size, up to
    /// the most any VM gets.
    PersistentDisk {
        base_iops: u64,
        iops_per_gib: u64,
        base_mibps: u64,
        /// Hundredths of a MiB/s per GiB.
        centi_mibps_per_gib: u64,
        max_iops: u64,
        max_mibps: u64,
    },
    /// A volume of one size with one rate (Azure's premium SSD tiers).
    Fixed { iops: u64, bytes_per_s: u64 },
}

struct Preset {
    /// The name before any ':'.
    name: &'static str,
    /// How it is written, with what it sets, for `--help` and errors.
    form: &'static str,
    /// Where the figures come from, and what the preset does not model.
    source: &'static str,
    rates: Rates,
}

/// AWS EBS gp3: a baseline of 3,000 IOPS and 125 MiB/s whatever the volume's size,
/// provisionable up to 16,000 IOPS and 1,000 MiB/s, at most 0.25 MiB/s per IOPS.
const GP3: (u64, u64) = (3_000, 125);
const GP3_MAX: (u64, u64) = (16_000, 1_000);
/// AWS EBS io2 (Block Express): 100 to 256,000 IOPS; throughput 0.256 MiB/s per
/// provisioned IOPS, at most 4,000 MiB/s (reached at 16,000 IOPS with 256 KiB I/Os).
const IO2_IOPS: (u64, u64) = (100, 256_000);
const IO2_MAX_MIBPS: u64 = 4_000;
/// GCP Persistent Disk sizes: 10 GiB to 64 TiB.
const PD_GIB: (u64, u64) = (10, 65_536);

const AZURE_SOURCE: &str = "Azure premium SSD (v1) managed disks: the tier's provisioned IOPS and throughput per disk (learn.microsoft.com/azure/virtual-machines/disks-types#premium-ssd-size); MB/s as Microsoft's table gives them, taken as 10^6 bytes; credit bursting (P20 and smaller) and the VM's own limits are not modelled";

const PRESETS: &[Preset] = &[
    Preset {
        name: "gp3",
        form: "\"gp3\" (AWS EBS gp3's baseline: 3,000 IOPS and 125 MiB/s); \"gp3:IOPS[:MiBps]\" (gp3 provisioned, up to 16000:1000)",
        source: "AWS EBS gp3: 3,000 IOPS and 125 MiB/s baseline, up to 16,000 IOPS and 1,000 MiB/s provisioned, at most 0.25 MiB/s per IOPS (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html); AWS counts reads and writes together, each direction gets the whole",
        rates: Rates::Gp3,
    },
    Preset {
        name: "io2",
        form: "\"io2:IOPS\" (AWS EBS io2 with 100-256000 IOPS provisioned; 0.256 MiB/s per IOPS, at most 4,000 MiB/s)",
        source: "AWS EBS io2 Block Express: 100-256,000 IOPS provisioned, throughput 0.256 MiB/s per provisioned IOPS up to 4,000 MiB/s (docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html); on an instance not built on Nitro at most 32,000 IOPS, not modelled",
        rates: Rates::Io2,
    },
    Preset {
        name: "pd-balanced",
        form: "\"pd-balanced:SIZE\" (GCP balanced persistent disk of that size, e.g. pd-balanced:100GiB: 3,000 IOPS + 6 a GiB, 140 MiB/s + 0.28 a GiB)",
        source: "GCP zonal balanced persistent disk: a baseline of 3,000 IOPS and 140 MiB/s plus 6 IOPS and 0.28 MiB/s per GiB, at most 80,000 IOPS and 1,200 MiB/s per VM (cloud.google.com/compute/docs/disks/performance); a VM with few vCPUs gets less, not modelled",
        rates: Rates::PersistentDisk {
            base_iops: 3_000,
            iops_per_gib: 6,
            base_mibps: 140,
            centi_mibps_per_gib: 28,
            max_iops: 80_000,
            max_mibps: 1_200,
        },
    },
    Preset {
        name: "pd-ssd",
        form: "\"pd-ssd:SIZE\" (GCP SSD persistent disk of that size: 6,000 IOPS + 30 a GiB, 240 MiB/s + 0.48 a GiB)",
        source: "GCP zonal SSD persistent disk: a baseline of 6,000 IOPS and 240 MiB/s plus 30 IOPS and 0.48 MiB/s per GiB, at most 100,000 IOPS and 1,200 MiB/s per VM (cloud.google.com/compute/docs/disks/performance); a VM with few vCPUs gets less, not modelled",
        rates: Rates::PersistentDisk {
            base_iops: 6_000,
            iops_per_gib: 30,
            base_mibps: 240,
            centi_mibps_per_gib: 48,
            max_iops: 100_000,
            max_mibps: 1_200,
        },
    },
    Preset {
        name: "azure-p10",
        form: "\"azure-p10\" (Azure premium SSD P10, 128 GiB: 500 IOPS, 100 MB/s)",
        source: AZURE_SOURCE,
        rates: Rates::Fixed {
            iops: 500,
            bytes_per_s: 100_000_000,
        },
    },
    Preset {
        name: "azure-p15",
        form: "\"azure-p15\" (P15, 256 GiB: 1,100 IOPS, 125 MB/s)",
        source: AZURE_SOURCE,
        rates: Rates::Fixed {
            iops: 1_100,
            bytes_per_s: 125_000_000,
        },
    },
    Preset {
        name: "azure-p20",
        form: "\"azure-p20\" (P20, 512 GiB: 2,300 IOPS, 150 MB/s)",
        source: AZURE_SOURCE,
        rates: Rates::Fixed {
            iops: 2_300,
            bytes_per_s: 150_000_000,
        },
    },
    Preset {
        name: "azure-p30",
        form: "\"azure-p30\" (P30, 1 TiB: 5,000 IOPS, 200 MB/s)",
        source: AZURE_SOURCE,
        rates: Rates::Fixed {
            iops: 5_000,
            bytes_per_s: 200_000_000,
        },
    },
];

/// Every preset's form, for `--help` and errors.
pub(super) fn forms() -> String {
    PRESETS
        .iter()
        .map(|p| p.form)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The rates (IOPS and bytes a second, each direction) and source of the preset `asked`
/// names ("io2:16000"); None where its name (before any ':') is no preset's, Err where it
/// is one's but its figures are wrong.
pub(super) fn preset(asked: &str) -> Option<Result<(Rate, &'static str), String>> {
    let (name, figures) = match asked.split_once(':') {
        Some((name, rest)) => (name, rest.split(':').collect::<Vec<_>>()),
        None => (asked, Vec::new()),
    };
    let preset = PRESETS.iter().find(|p| p.name == name)?;
    Some(rates(preset, &figures).map(|rates| (rates, preset.source)))
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not a number of {what}"))
}

/// IOPS and bytes a second.
fn rates(preset: &Preset, figures: &[&str]) -> Result<(u64, u64), String> {
    let name = preset.name;
    let most = |n: usize| {
        if figures.len() > n {
            Err(match n {
                0 => format!("{name} takes no figures"),
                _ => format!("{name} takes at most {n} figure(s)"),
            })
        } else {
            Ok(())
        }
    };
    match preset.rates {
        Rates::Gp3 => {
            most(2)?;
            let iops = figures.first().map_or(Ok(GP3.0), |n| number(n, "IOPS"))?;
            let mibps = figures.get(1).map_or(Ok(GP3.1), |n| number(n, "MiB/s"))?;
            // AWS allows at most 0.25 MiB/s of throughput per provisioned IOPS.
            if mibps > GP3.1 && mibps * 4 > iops {
                return Err(format!(
                    "a gp3 volume gets at most 0.25 MiB/s per IOPS: {mibps} MiB/s needs at least {} IOPS",
                    mibps * 4
                ));
            }
            if !(GP3.0..=GP3_MAX.0).contains(&iops) || !(GP3.1..=GP3_MAX.1).contains(&mibps) {
                return Err(format!(
                    "a gp3 volume has {}-{} IOPS and {}-{} MiB/s",
                    GP3.0, GP3_MAX.0, GP3.1, GP3_MAX.1
                ));
            }
            Ok((iops, mibps * MIB))
        }
        Rates::Io2 => {
            most(1)?;
            let iops = number(
                figures
                    .first()
                    .ok_or("io2 needs its provisioned IOPS: io2:16000")?,
                "IOPS",
            )?;
            if !(IO2_IOPS.0..=IO2_IOPS.1).contains(&iops) {
                return Err(format!(
                    "an io2 volume has {}-{} IOPS",
                    IO2_IOPS.0, IO2_IOPS.1
                ));
            }
            Ok((iops, (iops * 256 * MIB / 1000).min(IO2_MAX_MIBPS * MIB)))
        }
        Rates::PersistentDisk {
            base_iops,
            iops_per_gib,
            base_mibps,
            centi_mibps_per_gib,
            max_iops,
            max_mibps,
        } => {
            most(1)?;
            let size = figures
                .first()
                .ok_or_else(|| format!("{name} needs the volume's size: {name}:100GiB"))?;
            let bytes =
                parse_bytes(size).map_err(|_| format!("'{size}' is not a size (\"100GiB\")"))?;
            let gib = bytes / GIB;
            if !(PD_GIB.0..=PD_GIB.1).contains(&gib) {
                return Err(format!(
                    "a persistent disk has {}GiB to {}TiB",
                    PD_GIB.0,
                    PD_GIB.1 / 1024
                ));
            }
            let iops = (base_iops + iops_per_gib * gib).min(max_iops);
            let bytes_per_s =
                (base_mibps * MIB + gib * centi_mibps_per_gib * MIB / 100).min(max_mibps * MIB);
            Ok((iops, bytes_per_s))
        }
        Rates::Fixed { iops, bytes_per_s } => {
            most(0)?;
            Ok((iops, bytes_per_s))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(asked: &str) -> (u64, u64) {
        preset(asked).unwrap().unwrap().0
    }

    #[test]
    fn each_preset_sets_its_published_rates() {
        assert_eq!(limits("gp3"), (3_000, 125 * MIB));
        assert_eq!(limits("gp3:6000:250"), (6_000, 250 * MIB));
        // io2: 0.256 MiB/s per IOPS, so 1,000 IOPS give 256 MiB/s and 16,000 reach the
        // 4,000 MiB/s ceiling.
        assert_eq!(limits("io2:1000"), (1_000, 256 * MIB));
        assert_eq!(limits("io2:16000"), (16_000, 4_000 * MIB));
        assert_eq!(limits("io2:256000"), (256_000, 4_000 * MIB));
        // pd-balanced of 100 GiB: 3,000 + 600 IOPS, 140 + 28 MiB/s.
        assert_eq!(limits("pd-balanced:100GiB"), (3_600, 168 * MIB));
        // Large enough to meet the per-VM ceiling.
        assert_eq!(limits("pd-balanced:64TiB"), (80_000, 1_200 * MIB));
        assert_eq!(limits("pd-ssd:500GiB"), (21_000, 480 * MIB));
        assert_eq!(limits("azure-p30"), (5_000, 200_000_000));
        let (_, source) = preset("pd-balanced:10GiB").unwrap().unwrap();
        assert!(source.contains("cloud.google.com"), "{source}");
        assert!(preset("riops=5").is_none() && preset("gp2").is_none());
    }

    #[test]
    fn a_preset_with_wrong_figures_says_what_it_takes() {
        for (asked, says) in [
            ("io2", "needs its provisioned IOPS"),
            ("io2:50", "100-256000 IOPS"),
            ("io2:1000:5", "at most 1 figure"),
            ("pd-balanced", "needs the volume's size"),
            ("pd-balanced:5GiB", "10GiB to 64TiB"),
            ("pd-ssd:big", "not a size"),
            ("azure-p10:5", "takes no figures"),
            ("gp3:100", "3000-16000 IOPS"),
            ("gp3:3000:1000", "0.25 MiB/s per IOPS"),
        ] {
            let err = preset(asked).unwrap().unwrap_err();
            assert!(err.contains(says), "{asked}: {err}");
        }
    }

    #[test]
    fn every_preset_has_a_form_a_source_and_a_line_in_the_docs() {
        let docs =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/measurement.md"))
                .unwrap();
        let section = docs
            .split("\n## ")
            .find(|s| s.starts_with("The disk cap"))
            .unwrap();
        for p in PRESETS {
            assert!(forms().contains(&format!("\"{}", p.name)), "{}", p.name);
            assert!(p.source.contains(".com/"), "{}: {}", p.name, p.source);
            // docs/measurement.md's table of presets names each one.
            assert!(
                section.contains(&format!("`{}", p.name)),
                "docs/measurement.md's disk cap lists no {}",
                p.name
            );
        }
    }
}
