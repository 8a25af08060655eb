//! Where a server URL leads: to the compose container blobrace manages, or to a
//! server it does not manage (a managed PostgreSQL, a server on another host, one
//! started by hand). Everything blobrace does to a server besides querying it acts on
//! the compose container found by its service name: setting its cap, restarting it
//! for a cold start, counting its disk reads, reading its page cache. Done to a
//! container the URL does not reach, each of those would be recorded as the measured
//! server's while it was another's. So each run first matches the URL against the
//! container (`Places::locate`), and a server it does not reach is measured as *remote*: no
//! cap set or claimed ("not controlled"), a cold start that is only a fresh connection
//! (its caches are not emptied, and the result says so), disk bytes per fetch
//! "unavailable", and the round trip measured beside every result (`round_trip`).
//!
//! The match is by address, the way a client reaches the server: a loopback URL
//! reaches a container through a port it publishes on the host; a URL naming the
//! container's service, name or address (the compose runner, a host on its network)
//! reaches a port the container listens on. Anything else is remote: a URL with
//! this machine's own non-loopback address is remote too (said in the reason).

use std::collections::BTreeMap;
use std::net::IpAddr;

use anyhow::Context;
use bollard::query_parameters::InspectContainerOptions;

use crate::cap::{CapMethod, CapReport, CapRequest, cap_notes};
use crate::kube::PodLimits;

use super::{Server, redact_url, url_address};

/// Why a remote server's disk bytes per fetch are unavailable.
pub const NO_DISK_COUNTER: &str = "a remote server's disk reads are not seen from here";

/// Where a run found a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The URL reaches this compose container: blobrace caps, restarts and watches it.
    Compose { name: String },
    /// A server blobrace does not manage; why it is taken as one (URL redacted).
    Remote { why: String },
}

/// Where a run found each of its servers, and the limits of the pod serving a remote
/// one: found once, when the run sees which servers answer (`Places::locate`), then
/// handed (in `Locations`) to what acts on a server outside its URL's reach: its
/// container's cap, restarts, reads and volume.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Places(BTreeMap<Server, Found>);

#[derive(Debug, Clone, PartialEq)]
struct Found {
    place: Place,
    /// Read through the Kubernetes API (`kube`) only where this process runs in a pod
    /// and the server is remote; the error says why they could not be read.
    pod: Option<Result<PodLimits, String>>,
}

impl Places {
    /// Find where `url` leads and keep it; for a remote server seen from inside a
    /// Kubernetes pod, the limits of the pod that serves it too.
    pub async fn locate(&mut self, server: Server, url: &str) -> Place {
        let place = find(server, url).await;
        let pod = match place {
            Place::Remote { .. } => pod_serving(url).await,
            Place::Compose { .. } => None,
        };
        self.0.insert(
            server,
            Found {
                place: place.clone(),
                pod,
            },
        );
        place
    }

    /// Why `server` is remote; None where it is the compose container or was not
    /// located (commands that only manage the compose servers).
    pub fn remote(&self, server: Server) -> Option<String> {
        match self.0.get(&server) {
            Some(Found {
                place: Place::Remote { why },
                ..
            }) => Some(why.clone()),
            _ => None,
        }
    }

    /// A remote server's pod limits: Some(Err) says why they could not be read; None
    /// where it is not remote or this process is not in a pod.
    pub fn pod_limits(&self, server: Server) -> Option<Result<PodLimits, String>> {
        self.remote(server)?;
        self.0.get(&server)?.pod.clone()
    }

    /// The cap a remote server runs under where its pod's limits were read: Kubernetes
    /// enforces them (blobrace set nothing), compared with the run's requested cap.
    pub fn remote_cap(&self, server: Server, requested: CapRequest) -> Option<CapReport> {
        let limits = self.pod_limits(server)?.ok()?;
        Some(pod_cap(&limits, requested))
    }
}

/// The pod behind `url` and its limits; None outside a pod.
async fn pod_serving(url: &str) -> Option<Result<PodLimits, String>> {
    let cluster = crate::kube::in_cluster()?;
    let read = async {
        let cluster = cluster?;
        let (host, port) = url_address(url)
            .as_deref()
            .and_then(split_host_port)
            .context("its host and port cannot be read from the URL")?;
        let resolved = resolve(&host, port).await;
        cluster.serving(&host, &resolved, port).await
    };
    Some(read.await.map_err(|e| format!("{e:#}")))
}

/// A pod's limits as the cap its server runs under.
fn pod_cap(limits: &PodLimits, requested: CapRequest) -> CapReport {
    let mut notes = cap_notes(&requested, limits.memory_bytes, limits.cpus);
    notes.push(format!(
        "read from the Kubernetes API: the limits of pod {}/{}'s container {}, which its kubelet enforces (blobrace did not set them){}",
        limits.namespace,
        limits.pod,
        limits.container,
        limits
            .qos
            .as_deref()
            .map(|q| format!("; QoS class {q}"))
            .unwrap_or_default()
    ));
    let method = if limits.memory_bytes.is_some() {
        CapMethod::KubernetesPod
    } else {
        CapMethod::None
    };
    CapReport {
        requested,
        memory_limit_bytes: limits.memory_bytes,
        cpu_limit: limits.cpus,
        origin: method.origin(),
        method,
        cgroup_version: "kubernetes".into(),
        cgroup: format!(
            "pod {}/{} container {}",
            limits.namespace, limits.pod, limits.container
        ),
        notes,
        housekeeping: Vec::new(),
        disk: None,
    }
}

async fn find(server: Server, url: &str) -> Place {
    let shown = redact_url(url);
    let remote = |why: String| Place::Remote {
        why: format!("{shown}: {why}"),
    };
    let Some((host, port)) = url_address(url).as_deref().and_then(split_host_port) else {
        return remote("its host and port cannot be read from the URL".into());
    };
    let docker = match crate::docker::connect().await {
        Ok(docker) => docker,
        // The chart's runner: a pod has no Docker, and its servers are other pods.
        Err(_) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            return remote(
                "this process runs in a Kubernetes pod, with no Docker holding compose containers"
                    .into(),
            );
        }
        Err(e) => {
            return remote(format!(
                "Docker cannot be reached from here ({e:#}), so no compose container can be matched"
            ));
        }
    };
    let (id, name) = match crate::docker::find_service(&docker, server.name()).await {
        Ok(Some((id, name, _))) => (id, name),
        Ok(None) => {
            return remote(format!(
                "no compose container of {} runs here",
                server.name()
            ));
        }
        Err(e) => return remote(format!("{e:#}")),
    };
    let reach = match docker
        .inspect_container(&id, None::<InspectContainerOptions>)
        .await
    {
        Ok(inspect) => Reach::of(server.name(), &name, &inspect),
        Err(e) => {
            return remote(format!(
                "its compose container {name} cannot be inspected ({e})"
            ));
        }
    };
    let resolved = resolve(&host, port).await;
    if reach.reached_by(&host, &resolved, port) {
        Place::Compose { name }
    } else {
        remote(format!(
            "{host}:{port} is not the compose container {name} ({})",
            reach.describe()
        ))
    }
}

/// `host:port` → (host without brackets, port).
pub(super) fn split_host_port(address: &str) -> Option<(String, u16)> {
    let (host, port) = address.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_string(), port.parse().ok()?))
}

async fn resolve(host: &str, port: u16) -> Vec<IpAddr> {
    match tokio::net::lookup_host((host, port)).await {
        Ok(addresses) => addresses.map(|a| a.ip()).collect(),
        Err(_) => Vec::new(),
    }
}

/// How a client can reach a container.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Reach {
    /// Ports published on the host: (the host address bound, None for all; the port).
    pub published: Vec<(Option<IpAddr>, u16)>,
    /// Ports it listens on inside (`5432/tcp`).
    pub ports: Vec<u16>,
    /// Its addresses on its networks.
    pub addresses: Vec<IpAddr>,
    /// Names that resolve to it on its networks (service, container name, aliases).
    pub names: Vec<String>,
}

impl Reach {
    fn of(service: &str, name: &str, inspect: &bollard::models::ContainerInspectResponse) -> Reach {
        let mut reach = Reach {
            names: vec![service.to_string(), name.to_string()],
            ..Reach::default()
        };
        let Some(settings) = &inspect.network_settings else {
            return reach;
        };
        for (key, bindings) in settings.ports.iter().flatten() {
            let Some(port) = key.strip_suffix("/tcp").and_then(|p| p.parse().ok()) else {
                continue;
            };
            reach.ports.push(port);
            for binding in bindings.iter().flatten() {
                let Some(host_port) = binding.host_port.as_deref().and_then(|p| p.parse().ok())
                else {
                    continue;
                };
                let ip = binding
                    .host_ip
                    .as_deref()
                    .and_then(|ip| ip.parse::<IpAddr>().ok())
                    .filter(|ip| !ip.is_unspecified());
                reach.published.push((ip, host_port));
            }
        }
        for endpoint in settings.networks.iter().flat_map(|n| n.values()) {
            reach.addresses.extend(
                [&endpoint.ip_address, &endpoint.global_ipv6_address]
                    .into_iter()
                    .flatten()
                    .filter_map(|ip| ip.parse::<IpAddr>().ok()),
            );
            reach
                .names
                .extend(endpoint.aliases.iter().flatten().cloned());
            reach
                .names
                .extend(endpoint.dns_names.iter().flatten().cloned());
        }
        reach
    }

    /// Whether a client connecting to `host` (resolved to `resolved`) at `port` lands
    /// in this container.
    pub fn reached_by(&self, host: &str, resolved: &[IpAddr], port: u16) -> bool {
        let published = resolved.iter().any(|ip| {
            ip.is_loopback()
                && self
                    .published
                    .iter()
                    .any(|(bound, p)| *p == port && bound.is_none_or(|b| b.is_loopback()))
        });
        let inside = self.ports.contains(&port)
            && (self.names.iter().any(|n| n == host)
                || resolved.iter().any(|ip| self.addresses.contains(ip)));
        published || inside
    }

    /// `published on 127.0.0.1:15432; 172.18.0.2:5432 on its network`.
    fn describe(&self) -> String {
        let published: Vec<String> = self
            .published
            .iter()
            .map(|(ip, port)| match ip {
                Some(ip) => format!("{ip}:{port}"),
                None => format!("*:{port}"),
            })
            .collect();
        let inside: Vec<String> = self
            .addresses
            .iter()
            .flat_map(|ip| self.ports.iter().map(move |p| format!("{ip}:{p}")))
            .collect();
        let mut parts = Vec::new();
        if !published.is_empty() {
            parts.push(format!("published on {}", published.join(", ")));
        }
        if !inside.is_empty() {
            parts.push(format!("{} on its network", inside.join(", ")));
        }
        if parts.is_empty() {
            "it publishes no port".into()
        } else {
            parts.join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compose_postgres() -> Reach {
        Reach {
            published: vec![(Some("127.0.0.1".parse().unwrap()), 15432)],
            ports: vec![5432],
            addresses: vec!["172.18.0.2".parse().unwrap()],
            names: vec!["postgres".into(), "blobrace-postgres-1".into()],
        }
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|ip| ip.parse().unwrap()).collect()
    }

    #[test]
    fn a_loopback_url_reaches_the_container_only_at_the_port_it_publishes() {
        let reach = compose_postgres();
        assert!(reach.reached_by("127.0.0.1", &ips(&["127.0.0.1"]), 15432));
        assert!(reach.reached_by("localhost", &ips(&["::1", "127.0.0.1"]), 15432));
        // Another server on this machine (started by hand, a system PostgreSQL).
        assert!(!reach.reached_by("127.0.0.1", &ips(&["127.0.0.1"]), 5432));
        assert!(!reach.reached_by("127.0.0.1", &ips(&["127.0.0.1"]), 55432));
    }

    #[test]
    fn a_name_or_address_on_its_network_reaches_the_port_it_listens_on() {
        let reach = compose_postgres();
        // The compose runner: the service name, resolved by Docker's DNS.
        assert!(reach.reached_by("postgres", &ips(&["172.18.0.2"]), 5432));
        assert!(reach.reached_by("172.18.0.2", &ips(&["172.18.0.2"]), 5432));
        assert!(!reach.reached_by("172.18.0.2", &ips(&["172.18.0.2"]), 15432));
        // Another container on another network, another host.
        assert!(!reach.reached_by("172.17.0.5", &ips(&["172.17.0.5"]), 5432));
        assert!(!reach.reached_by("db.example.com", &ips(&["203.0.113.7"]), 5432));
    }

    #[test]
    fn a_port_published_on_all_addresses_is_reached_through_loopback_but_one_bound_elsewhere_is_not()
     {
        let mut reach = compose_postgres();
        reach.published = vec![(None, 15432)];
        assert!(reach.reached_by("127.0.0.1", &ips(&["127.0.0.1"]), 15432));
        reach.published = vec![(Some("10.0.0.4".parse().unwrap()), 15432)];
        assert!(!reach.reached_by("127.0.0.1", &ips(&["127.0.0.1"]), 15432));
    }

    #[test]
    fn a_url_is_split_into_host_and_port_with_brackets_removed() {
        assert_eq!(
            split_host_port("127.0.0.1:15432"),
            Some(("127.0.0.1".into(), 15432))
        );
        assert_eq!(split_host_port("[::1]:5432"), Some(("::1".into(), 5432)));
        assert_eq!(split_host_port("host:x"), None);
        assert_eq!(
            compose_postgres().describe(),
            "published on 127.0.0.1:15432; 172.18.0.2:5432 on its network"
        );
    }
}
