//! What a server's own memory takes of its cap before the run loads anything. Dolt opens
//! every database in its data directory when it starts and keeps their chunk indexes in
//! memory: with the full profile's 1 KiB and 8 KiB datasets in its volume (21 GiB) it
//! used 212 MiB at rest, and under the quick profile's 256 MiB cap the kernel killed it
//! at its first load, each size's. So once the caps are set, each server's own memory
//! (its cgroup's usage less the page cache charged to it) is read and said, and where
//! that leaves less than half the cap the run says what holds it and what to do.

use anyhow::{Result, bail};

use crate::db::server::Server;
use crate::size::format_bytes;

/// A server's own memory, read once before loading, and the cap it runs under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Headroom {
    pub in_use_bytes: u64,
    pub cap_bytes: Option<u64>,
}

impl Headroom {
    /// Whether its own memory already takes more than half its cap.
    pub fn is_short(&self) -> bool {
        self.cap_bytes
            .is_some_and(|cap| self.in_use_bytes > cap / 2)
    }

    /// The note to say where it is short, naming what to do.
    pub fn warning(&self, name: &str) -> Option<String> {
        if !self.is_short() {
            return None;
        }
        let cap = format_bytes(self.cap_bytes?);
        Some(format!(
            "note: {name} uses {used} of its {cap} cap before anything is loaded: what it holds already (the datasets of other sizes and profiles in its volume) takes memory whether read or not, and a load may push it over its cap. `blobrace env --engines {name}` lists its datasets and `blobrace drop --engines {name} --sizes ...` frees them; or raise --cap",
            used = format_bytes(self.in_use_bytes),
        ))
    }
}

/// A server's own memory now (usage less page cache), and its container's cap.
pub async fn read(server: Server) -> Result<Headroom> {
    let super::Container {
        docker, id, memory, ..
    } = super::container_of(server).await?;
    let sample = crate::docker::container::sample(&docker, &id).await?;
    let Some(usage) = sample.memory_usage_bytes else {
        bail!("Docker reports no memory usage for {}", server.name());
    };
    Ok(Headroom {
        in_use_bytes: usage.saturating_sub(sample.page_cache_bytes.unwrap_or(0)),
        cap_bytes: memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_using_more_than_half_its_cap_at_rest_is_named_with_the_way_out() {
        let at = |used: u64, cap: Option<u64>| Headroom {
            in_use_bytes: used << 20,
            cap_bytes: cap.map(|c| c << 20),
        };
        assert!(at(212, Some(256)).is_short());
        assert!(!at(128, Some(256)).is_short());
        assert!(!at(212, Some(1024)).is_short());
        assert!(!at(4096, None).is_short(), "no cap, nothing to be short of");
        let said = at(212, Some(256)).warning("dolt").unwrap();
        assert!(
            said.contains("dolt uses 212MiB of its 256MiB cap"),
            "{said}"
        );
        assert!(said.contains("blobrace drop --engines dolt"), "{said}");
        assert_eq!(at(100, Some(256)).warning("dolt"), None);
    }
}
