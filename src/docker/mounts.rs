//! Which image and host directories this process and the services run from.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::InspectContainerOptions;

use super::*;

/// When this process runs in a Docker container (the compose runner): "image, image id".
/// Docker names a container's host after its short id.
pub async fn own_container_image() -> Option<String> {
    match docker_container_image().await {
        Some(image) => Some(image),
        None => image_named_by_pod(
            std::env::var("KUBERNETES_SERVICE_HOST").ok().as_deref(),
            std::env::var(RUNNER_IMAGE_VARIABLE).ok().as_deref(),
        ),
    }
}

/// The runner's image as its deployment names it (`scripts/compose-run.sh`, the Helm chart).
pub const RUNNER_IMAGE_VARIABLE: &str = "BLOBRACE_RUNNER_IMAGE";

/// Inside a Kubernetes pod (which has no Docker to ask) the image the chart names for
/// it, said as such: the pod's spec names it, its digest is not read. Outside a pod the
/// variable is a script's setting, not this process's image.
fn image_named_by_pod(kubernetes_host: Option<&str>, image: Option<&str>) -> Option<String> {
    kubernetes_host.filter(|host| !host.is_empty())?;
    let image = image.map(str::trim).filter(|image| !image.is_empty())?;
    Some(format!(
        "{image} (as its Kubernetes pod names it: no Docker in the pod to read its digest)"
    ))
}

async fn docker_container_image() -> Option<String> {
    std::fs::metadata("/.dockerenv").ok()?;
    let hostname = std::fs::read_to_string("/etc/hostname").ok()?;
    let docker = connect().await.ok()?;
    let info = docker
        .inspect_container(hostname.trim(), None::<InspectContainerOptions>)
        .await
        .ok()?;
    Some(image_identity(&docker, &info).await)
}

/// Where a container's mount at `destination` comes from on Docker's host (a volume's
/// mount point, a bind's source), and the volume's name for a volume.
pub(super) async fn mount_source(
    docker: &Docker,
    container: &str,
    destination: &str,
) -> Result<Option<(PathBuf, Option<String>)>> {
    let info = docker
        .inspect_container(container, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {container}"))?;
    let destination = Path::new(destination);
    let mounts = info.mounts.unwrap_or_default();
    // A data directory named by a variable of the container (PostgreSQL's "$PGDATA")
    // matches no destination: a container with one mount keeps its data there.
    let only = (mounts.len() == 1).then(|| mounts[0].clone());
    let found = mounts
        .into_iter()
        .find(|m| m.destination.as_deref().map(Path::new) == Some(destination))
        .or(only);
    Ok(found.map(|m| (PathBuf::from(m.source.unwrap_or_default()), m.name)))
}

/// Where a compose service keeps its data on Docker's host: the source of its mount
/// at `data_dir` (a volume's mount point under Docker's root), and the volume's name.
pub async fn service_data_source(
    service: &str,
    data_dir: &str,
) -> Result<Option<(PathBuf, Option<String>)>> {
    let docker = connect().await?;
    // A stopped container's volume still holds its datasets, and the disk they take.
    let Some((id, _, _)) = super::find_service_any(&docker, service).await? else {
        return Ok(None);
    };
    mount_source(&docker, &id, data_dir).await
}

/// Inside a container (the compose runner): where its own mount at `dir` comes from on
/// Docker's host. None outside a container, or where `dir` is not a mount.
pub async fn own_mount_source(dir: &Path) -> Option<PathBuf> {
    std::fs::metadata("/.dockerenv").ok()?;
    let hostname = std::fs::read_to_string("/etc/hostname").ok()?;
    let docker = connect().await.ok()?;
    let (source, _) = mount_source(&docker, hostname.trim(), &dir.to_string_lossy())
        .await
        .ok()??;
    Some(source)
}

/// "tag, image id" and, for a pulled image, its registry digest ("repo@sha256:…"): the id
/// pins what ran here whatever the tag points at later; the digest is what another
/// machine pulls to get the same image. Images built locally have no digest.
pub(super) async fn image_identity(
    docker: &Docker,
    info: &bollard::models::ContainerInspectResponse,
) -> String {
    let tag = info
        .config
        .as_ref()
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let id = info.image.clone().unwrap_or_default();
    let digests = match docker.inspect_image(&id).await {
        Ok(image) => image.repo_digests.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    match digests.first() {
        Some(digest) => format!("{tag}, {id}, {digest}"),
        None => format!("{tag}, {id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::image_named_by_pod;

    #[test]
    fn a_pods_image_is_the_one_its_chart_names_and_only_inside_a_pod() {
        let said = image_named_by_pod(Some("10.0.0.1"), Some("r/runner:1")).unwrap();
        assert!(
            said.starts_with("r/runner:1 (as its Kubernetes pod names it"),
            "{said}"
        );
        assert_eq!(image_named_by_pod(None, Some("r/runner:1")), None);
        assert_eq!(image_named_by_pod(Some("10.0.0.1"), None), None);
        assert_eq!(image_named_by_pod(Some("10.0.0.1"), Some(" ")), None);
    }
}
