//! The Kubernetes API as a pod sees it, for one question: which pod serves a server's
//! URL, and what limits its kubelet enforces on the container behind that port. In the
//! Helm chart (deploy/helm/blobrace) the runner reaches each server at its
//! StatefulSet pod's DNS name and has no Docker to ask, so without this every server
//! was "not controlled". The cap is read, never set: the chart set it.
//!
//! In-cluster only: the API server from `KUBERNETES_SERVICE_HOST`/`_PORT`, the pod's
//! service account token and the cluster's CA (the only root trusted), the namespace
//! from the same mount. Outside a pod, `in_cluster()` is None and nothing is asked.
//! The chart's Role grants `get` and `delete` on its server pods by name and nothing
//! else. A pod is restarted for a cold start only where it is restartable in the
//! chart's way (`PodLimits::restartable`): a StatefulSet's, which starts it again
//! under its name, with the init container that drops its data from the page cache.

mod quantity;

use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

pub use quantity::{cpus, memory_bytes};

/// Where a pod's service account is mounted (the kubelet's fixed path).
const ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The API server as this pod reaches it.
pub struct Cluster {
    base: String,
    namespace: String,
    token: String,
    client: reqwest::Client,
}

/// The limits of the container behind a server's port, as its pod declares them.
#[derive(Debug, Clone, PartialEq)]
pub struct PodLimits {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    /// `limits.memory` in bytes; None where the container has none.
    pub memory_bytes: Option<u64>,
    /// `limits.cpu` in CPUs; None where the container has none.
    pub cpus: Option<f64>,
    /// The pod's QoS class ("Guaranteed" where requests equal limits).
    pub qos: Option<String>,
    /// Whether a cold start may delete it (Ok), or why not: only a StatefulSet's pod
    /// comes back under its name, and only one with `DROP_CONTAINER` comes back with
    /// its data out of the page cache. Any other pod is never deleted.
    pub restartable: Result<(), String>,
}

/// The init container of the chart's server pods that drops their data volume's files
/// from the page cache before the server starts (deploy/helm/blobrace/_helpers.tpl),
/// and says `files=N bytes=B dir=D` as its termination message.
pub const DROP_CONTAINER: &str = "drop-page-cache";

/// The API server, where this process runs in a pod with a service account; None
/// elsewhere. Err where it is in a pod but the account cannot be read.
pub fn in_cluster() -> Option<Result<Cluster>> {
    let host = std::env::var("KUBERNETES_SERVICE_HOST").ok()?;
    if !Path::new(ACCOUNT).join("token").exists() {
        return Some(Err(anyhow::anyhow!(
            "no service account token at {ACCOUNT}/token (automountServiceAccountToken is off)"
        )));
    }
    Some(Cluster::new(&host))
}

impl Cluster {
    fn new(host: &str) -> Result<Cluster> {
        let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let read = |name: &str| {
            std::fs::read(Path::new(ACCOUNT).join(name))
                .with_context(|| format!("cannot read {ACCOUNT}/{name}"))
        };
        let ca = reqwest::Certificate::from_pem(&read("ca.crt")?)
            .context("the service account's ca.crt is not a PEM certificate")?;
        crate::tls::install();
        let client = reqwest::Client::builder()
            .tls_certs_only([ca])
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .context("cannot build an HTTPS client for the Kubernetes API")?;
        Ok(Cluster {
            base: format!("https://{host}:{port}"),
            namespace: String::from_utf8_lossy(&read("namespace")?)
                .trim()
                .to_string(),
            token: String::from_utf8_lossy(&read("token")?).trim().to_string(),
            client,
        })
    }

    /// One request on pod `name` of this pod's namespace (a JSON body where given):
    /// the API's status and body.
    async fn on_pod(
        &self,
        method: reqwest::Method,
        name: &str,
        body: Option<Value>,
    ) -> Result<(reqwest::StatusCode, String)> {
        let url = format!(
            "{}/api/v1/namespaces/{}/pods/{name}",
            self.base, self.namespace
        );
        let mut request = self
            .client
            .request(method.clone(), &url)
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {url}"))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .with_context(|| format!("{method} {url}"))?;
        Ok((status, text))
    }

    /// One pod of this pod's namespace, as the API returns it.
    pub async fn pod(&self, name: &str) -> Result<Value> {
        let (status, body) = self.on_pod(reqwest::Method::GET, name, None).await?;
        if !status.is_success() {
            return Err(self.get_refused(name, status, &body));
        }
        self.got_pod(name, &body)
    }

    /// A successful GET's body: the pod.
    fn got_pod(&self, name: &str, body: &str) -> Result<Value> {
        serde_json::from_str(body)
            .with_context(|| format!("GET pod {}/{name}: not JSON", self.namespace))
    }

    /// A GET the API did not answer with the pod, said with its message.
    fn get_refused(&self, name: &str, status: reqwest::StatusCode, body: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "GET pod {}/{name}: {status}: {}",
            self.namespace,
            api_message(body)
        )
    }

    /// Delete pod `name` (its StatefulSet starts it again, same name, same volume)
    /// and wait until the new one is Ready and `host` resolves to it: a cold start of
    /// the server it runs. Only the pod read before (its uid a precondition of the
    /// delete), and only where `limits_serving` found it restartable. Returns the new
    /// pod, as the API gives it.
    pub async fn restart_pod(
        &self,
        name: &str,
        host: &str,
        port: u16,
        limit: Duration,
    ) -> Result<Value> {
        let before = self.pod(name).await?;
        let old_uid = before["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let precondition = serde_json::json!({
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "preconditions": {"uid": old_uid},
        });
        let (status, body) = self
            .on_pod(reqwest::Method::DELETE, name, Some(precondition))
            .await?;
        if !status.is_success() {
            bail!(
                "cannot restart pod {}/{name}: DELETE {status}: {} (the chart's Role grants delete on its server pods)",
                self.namespace,
                api_message(&body)
            );
        }
        let started = Instant::now();
        let mut last = String::from("deleted");
        while started.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(500)).await;
            // Not there yet (404) or the API busy: asked again. A refusal is not
            // waited out.
            let pod: Value = match self.on_pod(reqwest::Method::GET, name, None).await {
                Ok((status, body)) if status.is_success() => self.got_pod(name, &body)?,
                Ok((status, body))
                    if matches!(
                        status,
                        reqwest::StatusCode::UNAUTHORIZED | reqwest::StatusCode::FORBIDDEN
                    ) =>
                {
                    return Err(self.get_refused(name, status, &body));
                }
                Ok((status, body)) => {
                    last = format!("GET {status}: {}", api_message(&body));
                    continue;
                }
                Err(e) => {
                    last = format!("{e:#}");
                    continue;
                }
            };
            if pod["metadata"]["uid"].as_str() == Some(old_uid.as_str()) {
                last = "the old pod still terminating".into();
                continue;
            }
            if let Some(failed) = failed_init(&pod) {
                bail!("pod {}/{name} started again, but {failed}", self.namespace);
            }
            if !ready(&pod) {
                last = format!(
                    "new pod {}",
                    pod["status"]["phase"].as_str().unwrap_or("pending")
                );
                continue;
            }
            // The pod's DNS name follows its new address within the record's TTL.
            let resolved: Vec<IpAddr> = match tokio::net::lookup_host((host, port)).await {
                Ok(addresses) => addresses.map(|a| a.ip()).collect(),
                Err(_) => Vec::new(),
            };
            let ip = pod["status"]["podIP"]
                .as_str()
                .and_then(|ip| ip.parse().ok());
            if ip.is_some_and(|ip| resolved.contains(&ip)) {
                return Ok(pod);
            }
            last = format!("{host} resolves to {resolved:?}, not yet the new pod's {ip:?}");
        }
        bail!(
            "pod {}/{name} not ready again within {} s of its restart (last: {last})",
            self.namespace,
            limit.as_secs()
        )
    }

    /// The limits of the container that serves `host:port`, where `host` names a pod
    /// the way a StatefulSet's pods are reached (`<pod>.<service>[...]`) and the pod's
    /// address is one `host` resolves to: a pod that does not answer at the address the
    /// client connects to is not the server measured.
    pub async fn serving(&self, host: &str, resolved: &[IpAddr], port: u16) -> Result<PodLimits> {
        let name = host.split('.').next().unwrap_or(host);
        if name.parse::<IpAddr>().is_ok() || host.parse::<IpAddr>().is_ok() {
            bail!("{host} is an address, not a pod's name");
        }
        let pod = self.pod(name).await?;
        limits_serving(&self.namespace, &pod, resolved, port)
    }
}

/// The API's `message` in an error body, else the body.
fn api_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.to_string())
}

/// Whether the pod's Ready condition holds.
fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// An init container that failed and is not running again, said with its message:
/// ended in failure, or waiting to be restarted after one (CrashLoopBackOff). One that
/// failed once and then succeeded is not a failure.
fn failed_init(pod: &Value) -> Option<String> {
    pod["status"]["initContainerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| {
            let state = &c["state"];
            let t = if !state["terminated"].is_null() {
                &state["terminated"]
            } else if !state["waiting"].is_null() && !c["lastState"]["terminated"].is_null() {
                &c["lastState"]["terminated"]
            } else {
                return None;
            };
            let code = t["exitCode"].as_i64()?;
            (code != 0).then(|| {
                format!(
                    "its init container {} failed (exit {code}): {}",
                    c["name"].as_str().unwrap_or("?"),
                    t["message"].as_str().unwrap_or("").trim()
                )
            })
        })
}

/// What an init container said on success (its termination message), where it did.
pub fn init_message(pod: &Value, container: &str) -> Option<String> {
    pod["status"]["initContainerStatuses"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == container)
        .and_then(|c| c["state"]["terminated"]["message"].as_str())
        .map(|m| m.trim().to_string())
}

/// The container of `pod` (the API's JSON) that listens on `port`, with its limits,
/// once the pod's addresses are among `resolved`.
pub fn limits_serving(
    namespace: &str,
    pod: &Value,
    resolved: &[IpAddr],
    port: u16,
) -> Result<PodLimits> {
    let name = pod["metadata"]["name"].as_str().unwrap_or("?").to_string();
    let addresses: Vec<IpAddr> = pod["status"]["podIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|ip| ip["ip"].as_str())
        .chain(pod["status"]["podIP"].as_str())
        .filter_map(|ip| ip.parse().ok())
        .collect();
    if !resolved.iter().any(|ip| addresses.contains(ip)) {
        bail!(
            "pod {namespace}/{name} is at {addresses:?}, the server's name resolves to {resolved:?}: not the pod that serves it"
        );
    }
    let containers = pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let listens = |c: &&Value| {
        c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["containerPort"].as_u64() == Some(port as u64))
    };
    // A container that declares the port; else the pod's only one (ports are
    // informational in Kubernetes: a container may listen without declaring).
    let container = match containers.iter().find(listens) {
        Some(c) => c,
        None if containers.len() == 1 => &containers[0],
        None => bail!(
            "pod {namespace}/{name} has {} containers and none declares port {port}",
            containers.len()
        ),
    };
    let limits = &container["resources"]["limits"];
    let read = |key: &str, parse: fn(&str) -> Result<f64>| -> Result<Option<f64>> {
        limits[key]
            .as_str()
            .map(|q| parse(q).with_context(|| format!("pod {namespace}/{name}: limits.{key}")))
            .transpose()
    };
    let owned_by_statefulset = pod["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|o| o["kind"] == "StatefulSet" && o["controller"] == true);
    let drops = pod["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["name"] == DROP_CONTAINER);
    let restartable = match (owned_by_statefulset, drops) {
        (true, true) => Ok(()),
        (false, _) => Err(format!(
            "pod {namespace}/{name} is not a StatefulSet's: deleted, it would not come back under its name"
        )),
        (true, false) => Err(format!(
            "pod {namespace}/{name} has no {DROP_CONTAINER} init container: restarted, its data would still be in the node's page cache"
        )),
    };
    let memory_bytes = read("memory", |q| memory_bytes(q).map(|b| b as f64))?.map(|b| b as u64);
    let cpus = read("cpu", cpus)?;
    Ok(PodLimits {
        namespace: namespace.to_string(),
        pod: name,
        container: container["name"].as_str().unwrap_or("?").to_string(),
        memory_bytes,
        cpus,
        qos: pod["status"]["qosClass"].as_str().map(str::to_string),
        restartable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ip: &str, containers: Value) -> Value {
        serde_json::json!({
            "metadata": {"name": "bench-blobrace-postgres-0",
                         "ownerReferences": [{"kind": "StatefulSet", "controller": true}]},
            "spec": {"containers": containers, "initContainers": [{"name": DROP_CONTAINER}]},
            "status": {"podIP": ip, "podIPs": [{"ip": ip}], "qosClass": "Guaranteed"},
        })
    }

    #[test]
    fn the_container_behind_the_port_gives_its_limits() {
        let containers = serde_json::json!([
            {"name": "sidecar", "resources": {"limits": {"memory": "64Mi", "cpu": "100m"}}},
            {"name": "postgres", "ports": [{"containerPort": 5432}],
             "resources": {"limits": {"memory": "1Gi", "cpu": "1500m"}}},
        ]);
        let ip: IpAddr = "10.88.0.7".parse().unwrap();
        let limits = limits_serving("ns", &pod("10.88.0.7", containers), &[ip], 5432).unwrap();
        assert_eq!(limits.container, "postgres");
        assert_eq!(limits.memory_bytes, Some(1 << 30));
        assert_eq!(limits.cpus, Some(1.5));
        assert_eq!(limits.qos.as_deref(), Some("Guaranteed"));
        assert_eq!(limits.pod, "bench-blobrace-postgres-0");
        assert_eq!(limits.restartable, Ok(()));
    }

    #[test]
    fn only_a_statefulset_pod_that_drops_its_page_cache_may_be_restarted() {
        let ip: IpAddr = "10.88.0.7".parse().unwrap();
        let containers = serde_json::json!([{"name": "postgres"}]);
        let mut bare = pod("10.88.0.7", containers.clone());
        bare["metadata"]["ownerReferences"] =
            serde_json::json!([{"kind": "ReplicaSet", "controller": true}]);
        let why = limits_serving("ns", &bare, &[ip], 5432)
            .unwrap()
            .restartable
            .unwrap_err();
        assert!(why.contains("not a StatefulSet's"), "{why}");
        let mut no_drop = pod("10.88.0.7", containers);
        no_drop["spec"]["initContainers"] = serde_json::json!([]);
        let why = limits_serving("ns", &no_drop, &[ip], 5432)
            .unwrap()
            .restartable
            .unwrap_err();
        assert!(why.contains("no drop-page-cache"), "{why}");
    }

    #[test]
    fn an_init_container_that_failed_once_then_succeeded_is_no_failure() {
        let status = |state: Value, last: Value| {
            serde_json::json!({"status": {"initContainerStatuses": [
                {"name": DROP_CONTAINER, "state": state, "lastState": last}]}})
        };
        let ok =
            serde_json::json!({"terminated": {"exitCode": 0, "message": "files=1 bytes=2 dir=/d"}});
        let failed = serde_json::json!({"terminated": {"exitCode": 1, "message": "dd: error"}});
        assert_eq!(failed_init(&status(ok.clone(), failed.clone())), None);
        assert_eq!(
            init_message(&status(ok, failed.clone()), DROP_CONTAINER).as_deref(),
            Some("files=1 bytes=2 dir=/d")
        );
        let now_failed = failed_init(&status(failed.clone(), serde_json::json!({}))).unwrap();
        assert!(now_failed.contains("dd: error"), "{now_failed}");
        let backoff = serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}});
        assert!(
            failed_init(&status(backoff, failed))
                .unwrap()
                .contains("exit 1")
        );
        let running = serde_json::json!({"running": {}});
        assert_eq!(failed_init(&status(running, serde_json::json!({}))), None);
    }

    #[test]
    fn a_pod_at_another_address_is_not_the_server() {
        let containers = serde_json::json!([{"name": "postgres"}]);
        let elsewhere: IpAddr = "10.88.0.9".parse().unwrap();
        let err = limits_serving("ns", &pod("10.88.0.7", containers), &[elsewhere], 5432)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not the pod that serves it"), "{err}");
    }

    #[test]
    fn a_lone_container_without_ports_or_limits_is_read_as_uncapped() {
        let containers = serde_json::json!([{"name": "dolt"}]);
        let ip: IpAddr = "10.88.0.7".parse().unwrap();
        let limits = limits_serving("ns", &pod("10.88.0.7", containers), &[ip], 3306).unwrap();
        assert_eq!((limits.memory_bytes, limits.cpus), (None, None));
        let two = serde_json::json!([{"name": "a"}, {"name": "b"}]);
        assert!(limits_serving("ns", &pod("10.88.0.7", two), &[ip], 3306).is_err());
    }
}
