//! A run's id: the time it started and which process made it.

/// `20261122-103105-0004242`: sortable, unique per process. A process in a container
/// (every pod of a Kubernetes Job, `deploy/helm`; the compose runner) is told apart by
/// its host name too: pids start again in each container, so shares started in the same
/// second had one id (pid 1 each, or pid 7 each behind the chart's `sh -c`), and `merge`
/// refused them as one run given twice.
pub fn new_run_id() -> String {
    let time = chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string();
    let pid = std::process::id();
    let in_container = pid == 1
        || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        || std::path::Path::new("/.dockerenv").exists();
    let host = in_container
        .then(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .flatten();
    run_id(&time, pid, host.as_deref())
}

fn run_id(time: &str, pid: u32, host: Option<&str>) -> String {
    let host: Option<String> = host.map(|host| {
        host.trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    });
    match (host, pid) {
        (Some(host), 1) => format!("{time}-{host}"),
        // Zero-padded: ids of one second sort by pid across 9999 -> 10000 (they sorted
        // "-10001" before "-9988", and the newest run was taken for an older one).
        (Some(host), pid) => format!("{time}-{host}-{pid:07}"),
        (None, pid) => format!("{time}-{pid:07}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn processes_of_different_containers_started_in_one_second_have_different_ids() {
        let t = "20261205-175826";
        assert_ne!(
            super::run_id(t, 7, Some("bench-runner-0\n")),
            super::run_id(t, 7, Some("bench-runner-1\n"))
        );
        assert_eq!(
            super::run_id(t, 1, Some("pod-a\n")),
            "20261205-175826-pod-a"
        );
        assert_eq!(
            super::run_id(t, 7, Some("pod.a")),
            "20261205-175826-pod-a-0000007"
        );
        assert_eq!(super::run_id(t, 4242, None), "20261205-175826-0004242");
    }
}
