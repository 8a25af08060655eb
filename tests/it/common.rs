//! Helpers for tests that drive the real `blobrace` binary.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// `blobrace` with no BLOBRACE_* settings inherited from the environment.
pub fn blobrace() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_blobrace"));
    for (key, _) in std::env::vars() {
        // Which compose project holds the servers is where, not how, to measure:
        // CI runs its own project beside a developer's.
        if key.starts_with("BLOBRACE_") && key != "BLOBRACE_COMPOSE_PROJECT" {
            cmd.env_remove(key);
        }
    }
    // Server URLs only when a test passes them: never from a developer's compose/.env.
    cmd.env("BLOBRACE_COMPOSE_ENV", "/nonexistent/compose.env");
    // Short disk probes: a test measures for a fraction of a second, not 1 s per probe.
    cmd.env("BLOBRACE_DISK_PROBE", "30ms");
    // Cold only unless a test asks (`--cache`): the steady state is tested on its own.
    cmd.env("BLOBRACE_CACHE", "cold");
    cmd
}

/// Run `blobrace <args>` with a data and results dir under `root`, uncapped unless asked.
pub fn run(root: &Path, args: &[&str]) -> Output {
    let mut cmd = blobrace();
    cmd.args(args)
        .arg("--data-dir")
        .arg(root.join("data"))
        .arg("--results-dir")
        .arg(root.join("results"));
    if !args.contains(&"--cap") {
        cmd.args(["--cap", "none", "--cpus", "none"]);
    }
    cmd.output().expect("blobrace runs")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file below `dir` (recursively), for "nothing was written" checks.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path.display().to_string());
        }
    }
    found
}

/// CI sets BLOBRACE_REQUIRE_DOCKER=1: a test that needs Docker fails there instead of skipping.
pub fn docker_required() -> bool {
    std::env::var("BLOBRACE_REQUIRE_DOCKER").as_deref() == Ok("1")
}

/// Whether something listens at `port` on 127.0.0.1. Where the servers are required it
/// waits up to a minute: a test before this one may have just restarted a container for
/// a cold start, and its port is closed until the server is back (CI once failed on
/// exactly that). Where they are not, one try: a machine without them skips at once.
pub fn port_answers(port: &str) -> bool {
    let address = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now()
        + if docker_required() {
            std::time::Duration::from_secs(60)
        } else {
            std::time::Duration::ZERO
        };
    loop {
        if std::net::TcpStream::connect(&address).is_ok() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// The compose servers as tests hold them: PostgreSQL, MariaDB (with MySQL, which its
/// tests reach beside it), Dolt and SeaweedFS, each alone. A test holds the servers it
/// reaches and no others, so tests of different servers run side by side (a kill at many
/// moments on one, a load on another) instead of one after the other. In this order: a
/// test that takes a second server takes one later in it, so two tests never wait on
/// each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ServerGroup {
    Postgres,
    Mariadb,
    Dolt,
    Seaweedfs,
}

const SERVER_GROUPS: [ServerGroup; 4] = [
    ServerGroup::Postgres,
    ServerGroup::Mariadb,
    ServerGroup::Dolt,
    ServerGroup::Seaweedfs,
];

fn server_group(server: &str) -> ServerGroup {
    match server {
        "postgres" => ServerGroup::Postgres,
        "dolt" => ServerGroup::Dolt,
        "seaweedfs" => ServerGroup::Seaweedfs,
        _ => ServerGroup::Mariadb,
    }
}

/// Holds every compose server for the calling test alone, until the test ends (its
/// thread exits): for tests that reach all of them or Docker as a whole.
pub fn hold_servers() {
    hold_groups(&SERVER_GROUPS);
}

/// Holds `server` (see `ServerGroup`) for the calling test alone, until the test ends. One integration-test binary runs its tests side by side, and a test measuring
/// cold restarts a server's container: every test that reaches a server or its container
/// takes this first, through `server_url_or_skip` and `service_container` or directly.
pub fn hold_server(server: &str) {
    hold_groups(&[server_group(server)]);
}

fn hold_groups(groups: &[ServerGroup]) {
    use std::cell::RefCell;
    use std::sync::{Mutex, MutexGuard};
    static LOCKS: [Mutex<()>; 4] = [const { Mutex::new(()) }; 4];
    thread_local! {
        // Dropped when the test's thread exits, passed or failed: libtest runs each
        // test on a thread of its own.
        static HELD: RefCell<Vec<(ServerGroup, MutexGuard<'static, ()>)>> = const { RefCell::new(Vec::new()) };
    }
    let mut groups = groups.to_vec();
    groups.sort();
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        for group in groups {
            if held.iter().any(|(g, _)| *g == group) {
                continue;
            }
            if let Some((last, _)) = held.iter().max_by_key(|(g, _)| *g) {
                assert!(
                    *last < group,
                    "a test takes the servers in the order {SERVER_GROUPS:?}: this one holds {last:?} and asks for {group:?} (take both at its start)"
                );
            }
            // A test that failed while holding one poisoned nothing the next one reads.
            let guard = LOCKS[group as usize].lock().unwrap_or_else(|e| e.into_inner());
            held.push((group, guard));
        }
    });
}

/// The compose servers a test reaches, each passed with its own `--<server>-url` on every
/// command line: from BLOBRACE_*_URL, else from compose/.env, as `blobrace` builds them
/// (the servers' own descriptors). Every server test's drop / load / verify / measure
/// goes through one of these.
pub struct Servers {
    /// (server name, URL), in the order the test asked for them.
    urls: Vec<(String, String)>,
}

impl Servers {
    /// `names`, held for the calling test alone (see `hold_server`), where something
    /// listens at each one's port; else None, the skip said (a failure under
    /// BLOBRACE_REQUIRE_DOCKER=1). `what`: the test, for the message.
    pub fn reach(names: &[&str], what: &str) -> Option<Servers> {
        use blobrace::db::server::{Server, compose_env};
        // The locks first: the test holding one may be restarting its container right now.
        for name in names {
            hold_server(name);
        }
        let env = compose_env();
        let found: Vec<(&str, Option<String>)> = names
            .iter()
            .map(|&name| {
                let url = Server::named(name).and_then(|server| {
                    std::env::var(server.url_env())
                        .ok()
                        .or_else(|| server.url_from_compose(&env))
                });
                (name, url.filter(|url| url_answers(url)))
            })
            .collect();
        let missing: Vec<&str> = found
            .iter()
            .filter(|(_, url)| url.is_none())
            .map(|(name, _)| *name)
            .collect();
        let urls: Option<Vec<(String, String)>> = found
            .into_iter()
            .map(|(name, url)| Some((name.to_string(), url?)))
            .collect();
        if urls.is_none() {
            let names = missing.join(" and ");
            assert!(
                !docker_required(),
                "BLOBRACE_REQUIRE_DOCKER=1 but the compose {names} server is not reachable for {what}"
            );
            eprintln!("skipped {what}: {names} not reachable (scripts/servers.sh up)");
        }
        urls.map(|urls| Servers { urls })
    }

    /// One server at a URL the test gives (a wrong password, a port nothing listens on).
    pub fn at(name: &str, url: &str) -> Servers {
        Servers {
            urls: vec![(name.to_string(), url.to_string())],
        }
    }

    pub fn url(&self, name: &str) -> &str {
        let found = self.urls.iter().find(|(n, _)| n == name);
        &found.unwrap_or_else(|| panic!("{name} was not reached")).1
    }

    /// `args` and every server's URL flag.
    pub fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        for (name, url) in &self.urls {
            let server = blobrace::db::server::Server::named(name).unwrap();
            all.extend([format!("--{}", server.url_flag()), url.clone()]);
        }
        all
    }

    /// `blobrace` with `args` and the servers' URLs, in `root`.
    pub fn run(&self, root: &Path, args: &[&str]) -> Output {
        run_s(root, &self.args(args))
    }

    /// The same, which must succeed: what it said (its standard error).
    pub fn ok(&self, root: &Path, args: &[&str]) -> String {
        let out = self.run(root, args);
        let said = stderr(&out);
        assert!(out.status.success(), "blobrace {args:?}: {said}");
        said
    }
}

/// `run` with owned arguments (those `Servers::args` built).
pub fn run_s(root: &Path, args: &[String]) -> Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(root, &refs)
}

/// A compose server's URL, reached as `Servers::reach` does (held, the skip said).
pub fn server_url_or_skip(name: &str, what: &str) -> Option<String> {
    Servers::reach(&[name], what).map(|s| s.url(name).to_string())
}

/// Whether something listens at a server URL's port on this machine (waiting for it
/// where the servers are required, as `port_answers` does).
pub fn url_answers(url: &str) -> bool {
    blobrace::db::server::url_address(url)
        .and_then(|address| address.rsplit_once(':').map(|(_, port)| port.to_string()))
        .is_some_and(|port| port_answers(&port))
}

/// The JSON document `blobrace env` prints (it is followed by the dataset table).
pub fn env_json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    let text = stdout(out);
    serde_json::from_str(&text[..text.rfind('}').unwrap() + 1]).unwrap()
}

/// The directory and results.json of the only run under `<root>/results`.
pub fn only_run(root: &Path) -> (std::path::PathBuf, serde_json::Value) {
    // Run directories only: the results dir also holds index.html and latest.html.
    let runs: Vec<_> = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert_eq!(runs.len(), 1);
    let dir = runs[0].path();
    let json = serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    (dir, json)
}

/// The newest run directory under `<root>/results` (run ids sort by time).
pub fn newest_run(root: &Path) -> std::path::PathBuf {
    let mut runs: Vec<_> = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    runs.pop().expect("a run")
}

/// The newest page `blobrace variants` wrote under `root`'s results (`variants-<id>/`).
pub fn newest_variants(root: &Path) -> std::path::PathBuf {
    let mut pages: Vec<_> = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("variants-"))
        })
        .collect();
    pages.sort();
    pages.pop().expect("a variants page")
}

/// `cmd`, then a test's shared flags, then this call's own.
pub fn with_flags<'a>(cmd: &'a str, shared: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![cmd];
    all.extend_from_slice(shared);
    all.extend_from_slice(extra);
    all
}

/// `blobrace <args>` started uncapped on `root`'s data, its stderr dropped.
fn spawn_uncapped(root: &Path, args: &[&str]) -> std::process::Child {
    blobrace()
        .args(args)
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.join("data"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Start `blobrace <args>` uncapped on `root`'s data and send it `signal` after
/// `delay_ms` unless it has finished; whether it was stopped mid-way.
pub fn signal_after(root: &std::path::Path, args: &[&str], signal: i32, delay_ms: u64) -> bool {
    let mut child = spawn_uncapped(root, args);
    std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    let stopped = child.try_wait().unwrap().is_none();
    if stopped {
        // SAFETY: a plain kill(2) of our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    }
    child.wait().unwrap();
    stopped
}

/// The disk space the files under `dir` hold (allocated blocks, so a store's file made
/// large up front but written a little counts only what was written).
pub fn bytes_under(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => bytes_under(&entry.path()),
            Ok(meta) => meta.blocks() * 512,
            Err(_) => 0, // removed while walked
        })
        .sum()
}

/// Start `blobrace <args>` uncapped on `root`'s data and send it `signal` once the data
/// directory holds `bytes`, unless it has finished first; whether it was stopped mid-way.
/// A moment by progress, not by time: a load timed once beside other tests ran 2-3
/// times faster afterwards, and most moments spread over its time fell after its end.
pub fn signal_at_bytes(root: &Path, args: &[&str], signal: i32, bytes: u64) -> bool {
    let mut child = spawn_uncapped(root, args);
    let stopped = loop {
        if child.try_wait().unwrap().is_some() {
            break false;
        }
        if bytes_under(&root.join("data")) >= bytes {
            // SAFETY: a plain kill(2) of our own child, which has not been reaped yet.
            assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
            break true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    child.wait().unwrap();
    stopped
}

/// Start `blobrace <args>` uncapped on `root`'s data and send it `signal` once `server`
/// at `url` holds `rows` rows in the `blobs` table of the dataset's `namespace` (read
/// through blobrace's own connection to that server, as its loader sees it: Dolt 0.40
/// answers no other client's setup), unless it has finished first; whether it was
/// stopped mid-way. A moment by progress, not by time: moments
/// spread over one load timed beside other tests all fell before the first commit on a
/// loaded 2-core machine (20 stops of a 396 ms MariaDB load, none left rows to resume).
pub fn signal_at_rows(
    root: &Path,
    args: &[&str],
    signal: i32,
    (server, url): (&str, &str),
    namespace: &str,
    rows: i64,
) -> bool {
    use sea_orm::{ConnectionTrait, Statement};
    let server = blobrace::db::server::Server::named(server).expect("a server's name");
    let mut child = spawn_uncapped(root, args);
    let count = "SELECT COUNT(*) AS n FROM blobs";
    let stopped = block_on(async {
        let mut db: Option<sea_orm::DatabaseConnection> = None;
        loop {
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            if db.is_none() {
                // The dataset's namespace may not be made yet: tried again.
                db = server.connect(url, Some(namespace)).await.ok();
            }
            // No table yet (or no server answer yet): no rows.
            let n = match &db {
                Some(db) => db
                    .query_one_raw(Statement::from_string(db.get_database_backend(), count))
                    .await
                    .ok()
                    .flatten()
                    .and_then(|row| row.try_get::<i64>("", "n").ok())
                    .unwrap_or(0),
                None => 0,
            };
            if n >= rows {
                // SAFETY: a plain kill(2) of our own child, which has not been reaped yet.
                assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    });
    child.wait().unwrap();
    stopped
}

/// `docker <args>`, its stdout trimmed; panics with its stderr when it fails.
pub fn docker(args: &[&str]) -> String {
    let out = std::process::Command::new("docker")
        .args(args)
        .output()
        .expect("docker runs");
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The container id of a compose service of the project the tests use.
pub fn service_container(service: &str) -> String {
    hold_server(service);
    let filters = service_filters(service);
    let mut args = vec!["ps", "-aq"];
    args.extend(filters.iter().map(String::as_str));
    docker(&args)
}

/// `docker ps` filters naming a compose service of the project the tests use.
fn service_filters(service: &str) -> [String; 4] {
    let project = std::env::var("BLOBRACE_COMPOSE_PROJECT").unwrap_or_else(|_| "blobrace".into());
    [
        "-f".into(),
        format!("label=com.docker.compose.project={project}"),
        "-f".into(),
        format!("label=com.docker.compose.service={service}"),
    ]
}

/// The running container of a compose service of the project the tests use, or None
/// where there is none or no Docker to ask (a server reached by its URL alone).
pub fn running_container(service: &str) -> Option<String> {
    hold_server(service);
    let out = Command::new("docker")
        .args(["ps", "-q"])
        .args(service_filters(service))
        .output()
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()?
        .trim()
        .to_string();
    (out.status.success() && !id.is_empty()).then_some(id)
}

/// Start a service's container if it is down and wait until Docker calls it healthy.
pub fn bring_back(service: &str) {
    let id = service_container(service);
    if docker(&["inspect", "-f", "{{.State.Running}}", &id]) != "true" {
        docker(&["start", &id]);
    }
    for _ in 0..240 {
        if docker(&["inspect", "-f", "{{.State.Health.Status}}", &id]) == "healthy" {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    panic!("{service} is not healthy 120 s after starting it again");
}

/// Brings a compose service back when a test that kills or stops it ends, however it ends.
pub struct BringBack(pub &'static str);

impl Drop for BringBack {
    fn drop(&mut self) {
        bring_back(self.0);
    }
}

/// Run `fut` to its end on a runtime of its own: the tests' own connections to a
/// database (as another program would open them) are async, the tests are not.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fut)
}

/// Run `statements` in order on the database at `url` (`sqlite://<file>?mode=rwc`,
/// `postgres://...`, `mysql://...`) on the test's own connection.
pub fn sql_exec(url: &str, statements: &[&str]) {
    use sea_orm::ConnectionTrait;
    block_on(async {
        let db = sea_orm::Database::connect(url).await.unwrap();
        for statement in statements {
            db.execute_unprepared(statement).await.unwrap();
        }
        db.close().await.unwrap();
    });
}

/// The `sqlite://` URL of `file`, created if missing.
pub fn sqlite_url(file: &Path) -> String {
    format!("sqlite://{}?mode=rwc", file.display())
}

/// A file system of `mib` MiB mounted at `dir` (tmpfs) for as long as it lives.
pub struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// None, having said why, where this process may not mount (not root).
    pub fn mount(dir: &std::path::Path, mib: u64) -> Option<SmallDisk> {
        let out = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m"),
                "blobrace-small",
            ])
            .arg(dir)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "skipping: cannot mount a small file system here: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        Some(SmallDisk(dir.to_path_buf()))
    }

    pub fn free_bytes(&self) -> u64 {
        let path = std::ffi::CString::new(self.0.to_str().unwrap()).unwrap();
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(path.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Start `cmd` (a run), wait up to 60 s for `ready` to find what it set up (given the
/// run's pid), then SIGKILL the run: nothing of its own code runs after. `never`: what
/// the failure says if it never gets ready.
pub fn kill_once_ready<T>(
    mut cmd: Command,
    never: &str,
    mut ready: impl FnMut(u32) -> Option<T>,
) -> T {
    let mut child = cmd.spawn().unwrap();
    let started = std::time::Instant::now();
    let found = loop {
        if let Some(found) = ready(child.id()) {
            break found;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{never}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    found
}

/// A server engine measured briefly and alone: one client, no saturation search, and
/// steady only (a cold start restarts the container, which the next test holding the
/// server would find still starting).
pub const ONE_STEADY_CLIENT: [&str; 10] = [
    "--precision",
    "off",
    "--clients",
    "1",
    "--saturate-sizes",
    "none",
    "--cache",
    "steady",
    "--steady-limit",
    "2s",
];
