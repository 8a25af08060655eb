//! Commands run inside a service's container: exit status, output, an HTTP GET from
//! inside, the bytes under a directory.

use anyhow::{Context, Result};
use bollard::Docker;
use futures_util::StreamExt;

use super::*;

/// An exec of `cmd` as root in a running container, its output attached or not: its id.
pub(super) async fn create_exec(
    docker: &Docker,
    id: &str,
    cmd: Vec<String>,
    attach: bool,
) -> Result<String> {
    use bollard::exec::CreateExecOptions;
    let exec = docker
        .create_exec(
            id,
            CreateExecOptions {
                cmd: Some(cmd),
                user: Some("root".to_string()),
                attach_stdout: Some(attach),
                attach_stderr: Some(attach),
                ..Default::default()
            },
        )
        .await
        .with_context(|| format!("cannot exec in container {id}"))?;
    Ok(exec.id)
}

/// Run `cmd` inside a running container and wait for it: its exit code (None when
/// Docker reports none).
pub(super) async fn exec_status(
    docker: &Docker,
    id: &str,
    cmd: Vec<String>,
) -> Result<Option<i64>> {
    use bollard::exec::StartExecOptions;
    let exec = create_exec(docker, id, cmd, false).await?;
    docker
        .start_exec(
            &exec,
            Some(StartExecOptions {
                detach: true,
                ..Default::default()
            }),
        )
        .await?;
    loop {
        let info = docker.inspect_exec(&exec).await?;
        if info.running != Some(true) {
            return Ok(info.exit_code);
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Whether `sh -c script` exits 0 inside a running container.
pub async fn exec_succeeds(docker: &Docker, id: &str, script: &str) -> Result<bool> {
    let cmd = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    Ok(exec_status(docker, id, cmd).await? == Some(0))
}

/// Run `cmd` inside a running container: its exit code and its standard output,
/// byte for byte (standard error is dropped).
pub async fn exec_output(
    docker: &Docker,
    id: &str,
    cmd: Vec<String>,
) -> Result<(Option<i64>, Vec<u8>)> {
    use bollard::container::LogOutput;
    use bollard::exec::StartExecResults;
    let exec = create_exec(docker, id, cmd, true).await?;
    let mut out = Vec::new();
    if let StartExecResults::Attached { mut output, .. } = docker.start_exec(&exec, None).await? {
        while let Some(chunk) = output.next().await {
            if let LogOutput::StdOut { message } = chunk? {
                out.extend_from_slice(&message);
            }
        }
    }
    let info = docker.inspect_exec(&exec).await?;
    Ok((info.exit_code, out))
}

/// `GET path` from `127.0.0.1:port` inside a container (a server's debug endpoint that
/// listens on the container's loopback only), through bash's /dev/tcp: the raw
/// HTTP/1.0 response. Needs bash in the image (Dolt's has it).
pub async fn http_get_inside(docker: &Docker, id: &str, port: u16, path: &str) -> Result<Vec<u8>> {
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET {path} HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && cat <&3"
    );
    let cmd = vec!["bash".to_string(), "-c".to_string(), script];
    match exec_output(docker, id, cmd).await? {
        (Some(0), out) => Ok(out),
        (code, _) => anyhow::bail!(
            "nothing listens on 127.0.0.1:{port} in container {id} (bash exited with {code:?})"
        ),
    }
}

/// The bytes a directory holds inside a compose service's running container (`du -sb`),
/// or None where the service runs in no container here (a server it does not manage).
pub async fn dir_bytes_in_service(service: &str, dir: &str) -> Result<Option<u64>> {
    let docker = connect().await?;
    let Some((id, name, _)) = find_service(&docker, service).await? else {
        return Ok(None);
    };
    let cmd = vec!["du".to_string(), "-sb".to_string(), dir.to_string()];
    match exec_output(&docker, &id, cmd).await? {
        (Some(0), out) => {
            let text = String::from_utf8_lossy(&out);
            let bytes = text.split_whitespace().next().and_then(|n| n.parse().ok());
            bytes
                .map(Some)
                .with_context(|| format!("`du -sb {dir}` in {name} said {text:?}"))
        }
        (code, _) => anyhow::bail!("`du -sb {dir}` in {name} exited with {code:?}"),
    }
}

/// Run `sh -c script` inside a container and wait for it; error on a non-zero exit.
pub async fn exec_sh(docker: &Docker, id: &str, script: &str) -> Result<()> {
    let cmd = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    match exec_status(docker, id, cmd).await? {
        Some(0) => Ok(()),
        code => anyhow::bail!("`{script}` in container {id} exited with {code:?}"),
    }
}
