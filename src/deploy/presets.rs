//! Deployments (`--deployment NAME`): named machines a user deploys on, each a
//! combination of the disk's rate (`--disk-cap`), its latency (`--disk-latency`), the
//! network to the servers (`--network-rtt`) and the readahead (`--readahead`), with the
//! published figures it takes them from. A flag given beside a deployment overrides
//! that part of it; the parts in force are recorded as each flag's would be, and the
//! name with them, so a run's identity (resume, merge, `variants`) includes it.

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// One deployment: each part in its flag's own form (None: not set by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deployment {
    pub name: &'static str,
    /// One line for `--help`.
    pub what: &'static str,
    pub disk_cap: Option<&'static str>,
    pub disk_latency: Option<&'static str>,
    pub network_rtt: Option<&'static str>,
    pub readahead: &'static str,
    /// Where its figures come from, recorded with the run.
    pub source: &'static str,
}

pub const DEPLOYMENTS: [Deployment; 5] = [
    Deployment {
        name: "dev-box",
        what: "this machine as it is: its own disk and readahead, the servers on loopback",
        disk_cap: None,
        disk_latency: None,
        network_rtt: None,
        readahead: "host",
        source: "nothing set: the machine the run is on",
    },
    Deployment {
        name: "nvme-host",
        what: "a host with a local NVMe disk and Linux's default readahead (128 KiB), the database in the same host",
        disk_cap: None,
        disk_latency: None,
        network_rtt: None,
        readahead: "128",
        source: "Linux's default readahead (VM_READAHEAD_PAGES, 128 KiB); the disk is this machine's own",
    },
    Deployment {
        name: "aws-gp3-same-az",
        what: "an EC2 instance on an EBS gp3 volume (3,000 IOPS, 125 MiB/s, +1 ms a request), the database server in the same zone (the proxy's own hop, ~0.2 ms a round trip)",
        disk_cap: Some("gp3"),
        disk_latency: Some("1ms"),
        network_rtt: Some("0"),
        readahead: "128",
        source: "AWS EBS gp3: 3,000 IOPS and 125 MiB/s baseline, 'single-digit millisecond latency' (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html): 1 ms added to each read and write, the emulated path's own ~0.1 ms on top; the same zone's round trip, about 0.1-0.3 ms, as the proxy's own hop (aws.amazon.com/about-aws/global-infrastructure/regions_az/)",
    },
    Deployment {
        name: "aws-gp3-cross-az",
        what: "the same gp3 volume, the database server in another zone of the region (+1 ms a round trip)",
        disk_cap: Some("gp3"),
        disk_latency: Some("1ms"),
        network_rtt: Some("1ms"),
        readahead: "128",
        source: "AWS EBS gp3 as aws-gp3-same-az (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html); between zones of one region 'single-digit millisecond latency' (aws.amazon.com/about-aws/global-infrastructure/regions_az/): 1 ms, the proxy's own hop on top",
    },
    Deployment {
        name: "gcp-pd-balanced",
        what: "a GCE VM on a 100 GiB balanced persistent disk (3,600 IOPS, 168 MiB/s, +1 ms a request), the database in the same zone",
        disk_cap: Some("pd-balanced:100GiB"),
        disk_latency: Some("1ms"),
        network_rtt: Some("0"),
        readahead: "128",
        source: "GCP balanced persistent disk: 3,000 IOPS and 140 MiB/s plus 6 IOPS and 0.28 MiB/s per GiB (cloud.google.com/compute/docs/disks/performance), a network device: 1 ms added to each request, the emulated path's own ~0.1 ms on top; the same zone's round trip as the proxy's own hop",
    },
];

/// The names `--deployment` takes, with what each is.
pub fn forms() -> String {
    DEPLOYMENTS
        .iter()
        .map(|d| format!("{} ({})", d.name, d.what))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The deployment a run named, recorded with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeploymentRef {
    pub name: String,
    pub source: String,
}

/// `--deployment`.
pub fn parse_deployment(text: &str) -> Result<Deployment, InputError> {
    let t = text.trim();
    DEPLOYMENTS
        .iter()
        .find(|d| d.name == t)
        .copied()
        .ok_or_else(|| InputError::Value {
            what: "deployment",
            input: text.into(),
            why: format!(
                "no such deployment; it takes one of: {}",
                DEPLOYMENTS.map(|d| d.name).join(", ")
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part of every deployment parses as its own flag would, and docs name each.
    #[test]
    fn every_deployment_parses_and_is_documented() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/deployments.md"),
        )
        .unwrap();
        for d in DEPLOYMENTS {
            assert_eq!(parse_deployment(d.name).unwrap(), d);
            if let Some(cap) = d.disk_cap {
                assert!(
                    crate::cap::disk::parse_disk_cap(cap).unwrap().is_some(),
                    "{cap}"
                );
            }
            if let Some(l) = d.disk_latency {
                assert!(
                    crate::deploy::slow_disk::parse_disk_latency(l)
                        .unwrap()
                        .is_some()
                );
            }
            if let Some(n) = d.network_rtt {
                assert!(
                    crate::deploy::network::parse_network_rtt(n)
                        .unwrap()
                        .is_some()
                );
            }
            crate::cap::readahead::parse_readahead(d.readahead).unwrap();
            assert!(
                docs.contains(&format!("`{}`", d.name)),
                "docs/deployments.md lacks {}",
                d.name
            );
        }
        let e = parse_deployment("aws-gp2").unwrap_err().to_string();
        assert!(e.contains("dev-box, nvme-host, aws-gp3-same-az"), "{e}");
    }
}
