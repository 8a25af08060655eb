//! A network between the application and its database (`--network-rtt`): every server
//! engine reached through Toxiproxy (Shopify's, the field's tool for a TCP link's
//! faults), whose latency toxic delays each chunk each way by a stated time. On this
//! machine every server answers over loopback; in production PostgreSQL or MariaDB sit
//! on another host, 0.1-1 ms away, while SQLite, LMDB or a file per blob sit in the
//! application's process. That difference is the seed's whole decision (embedded or
//! server), so a run can put it back in, and the embedded stores get none.
//!
//! Toxiproxy's latency is whole milliseconds per direction: a round trip of R ms is
//! R/2 each way (the odd millisecond downstream). `0` puts the proxy alone in the path,
//! its own cost (a loopback hop through a Go process). The round trip each result
//! records (`round_trip`: `SELECT 1` on its own connection) is measured through the
//! proxy, so what was asked and what the fetches paid are both on the record.
//!
//! The proxy is a child of the measuring process, in its cgroup (its CPU and memory
//! count against the cap, as a sidecar's would), killed when the process ends, however
//! it ends (`PR_SET_PDEATHSIG`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// The proxy's program, as `scripts/setup.sh` installs it.
pub const PROGRAM: &str = "toxiproxy-server";
/// How it is installed, for the line that says it is missing.
pub const INSTALL: &str = "scripts/setup.sh installs it (GOBIN=/usr/local/bin go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0, renamed toxiproxy-server)";

/// `--network-rtt`: the round trip added, and its jitter, in whole milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct NetworkRtt {
    pub rtt_ms: u64,
    pub jitter_ms: u64,
}

impl std::fmt::Display for NetworkRtt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.jitter_ms == 0 {
            write!(f, "{}ms", self.rtt_ms)
        } else {
            write!(f, "{}ms:{}ms", self.rtt_ms, self.jitter_ms)
        }
    }
}

impl From<NetworkRtt> for String {
    fn from(n: NetworkRtt) -> String {
        n.to_string()
    }
}

impl TryFrom<String> for NetworkRtt {
    type Error = InputError;
    fn try_from(text: String) -> Result<Self, InputError> {
        parse_network_rtt(&text)?.ok_or_else(|| InputError::Value {
            what: "network round trip",
            input: text,
            why: "a recorded round trip cannot be none".into(),
        })
    }
}

/// The forms `--network-rtt` takes.
pub const FORMS: &str = "\"none\" (loopback, no proxy); a round trip in whole milliseconds (\"1ms\", \"2ms\"; \"0\": the proxy alone, its own cost); or RTT:JITTER (\"2ms:1ms\": each direction's delay varies by up to the jitter), at most 1000ms";

/// `--network-rtt`: None for "none".
pub fn parse_network_rtt(text: &str) -> Result<Option<NetworkRtt>, InputError> {
    let bad = |why: String| InputError::Value {
        what: "network round trip",
        input: text.into(),
        why: format!("{why}; it takes {FORMS}"),
    };
    let t = text.trim();
    if t == "none" {
        return Ok(None);
    }
    let ms = |part: &str| -> Result<u64, InputError> {
        let part = part.trim();
        let number = part.strip_suffix("ms").unwrap_or(part);
        if part != "0" && !part.ends_with("ms") {
            return Err(bad(format!("'{part}' needs its unit, ms")));
        }
        number.parse::<u64>().map_err(|_| {
            bad(format!(
                "'{part}' is not a whole number of milliseconds (Toxiproxy's latency toxic takes whole ms; below 1 ms, 0 puts its own hop alone in the path)"
            ))
        })
    };
    let (rtt, jitter) = match t.split_once(':') {
        Some((rtt, jitter)) => (ms(rtt)?, ms(jitter)?),
        None => (ms(t)?, 0),
    };
    if rtt > 1000 || jitter > 1000 {
        return Err(bad("more than 1000ms".into()));
    }
    Ok(Some(NetworkRtt {
        rtt_ms: rtt,
        jitter_ms: jitter,
    }))
}

impl NetworkRtt {
    /// The latency toxic's milliseconds each way: (upstream, downstream).
    pub fn each_way(self) -> (u64, u64) {
        (self.rtt_ms / 2, self.rtt_ms - self.rtt_ms / 2)
    }
}

/// One server's link through the proxy, recorded with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxiedServer {
    pub server: String,
    /// Where the proxy forwards to: the server's host:port.
    pub upstream: String,
    /// Where its engines connect instead.
    pub listen: String,
    /// "upstream 0 ms, downstream 1 ms, jitter 0 ms": the toxics set.
    pub toxics: String,
}

/// The network a run put between it and its servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkReport {
    pub asked: NetworkRtt,
    /// "toxiproxy-server 2.5.0".
    pub proxy: String,
    pub servers: Vec<ProxiedServer>,
}

impl NetworkReport {
    /// "servers through toxiproxy-server 2.5.0, round trip +1 ms (0 + 1 each way); the
    /// embedded stores in the process, with none".
    pub fn label(&self) -> String {
        let (up, down) = self.asked.each_way();
        let jitter = if self.asked.jitter_ms > 0 {
            format!(", jitter ±{} ms each way", self.asked.jitter_ms)
        } else {
            String::new()
        };
        format!(
            "network: servers reached through {} adding a round trip of {} ms ({up} ms upstream + {down} ms downstream{jitter}; each result's round trip is measured through it); the embedded stores are in the process, with none: that is the difference",
            self.proxy, self.asked.rtt_ms
        )
    }
}

/// A running Toxiproxy, killed when dropped (or when this process dies).
pub struct LatencyProxy {
    child: Child,
    api: SocketAddr,
    pub version: String,
}

impl LatencyProxy {
    /// Start it on a free loopback port and wait for its API; `Err` says why not and
    /// what to do.
    pub fn start() -> Result<Self, String> {
        let version = Command::new(PROGRAM)
            .arg("-version")
            .output()
            .map_err(|e| format!("{PROGRAM} cannot run ({e}): {INSTALL}"))?;
        let version = String::from_utf8_lossy(&version.stdout)
            .split_whitespace()
            .last()
            .unwrap_or("unknown")
            .to_string();
        let api = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port for {PROGRAM}'s API: {e}"))?;
        let child = super::child::dies_with_this_thread(&mut Command::new(PROGRAM))
            .args(["-host", "127.0.0.1", "-port", &api.port().to_string()])
            .spawn()
            .map_err(|e| format!("{PROGRAM} cannot start ({e}): {INSTALL}"))?;
        let mut proxy = LatencyProxy {
            child,
            api,
            version: format!("{PROGRAM} {version}"),
        };
        let started = Instant::now();
        while proxy.request("GET", "/version", "").is_err() {
            if let Ok(Some(status)) = proxy.child.try_wait() {
                return Err(format!("{PROGRAM} exited at its start ({status})"));
            }
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("{PROGRAM}'s API at {api} did not answer in 10 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(proxy)
    }

    /// A proxy named `name` to `upstream` (host:port) with the round trip's toxics: the
    /// address its clients connect to instead.
    pub fn add(
        &self,
        name: &str,
        upstream: &str,
        rtt: NetworkRtt,
    ) -> Result<ProxiedServer, String> {
        let created = self.request(
            "POST",
            "/proxies",
            &serde_json::json!({"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true})
                .to_string(),
        )?;
        let listen = serde_json::from_str::<serde_json::Value>(&created)
            .ok()
            .and_then(|v| v["listen"].as_str().map(str::to_string))
            .ok_or_else(|| format!("{PROGRAM} answered no listen address: {created}"))?;
        let (up, down) = rtt.each_way();
        for (stream, ms) in [("upstream", up), ("downstream", down)] {
            if ms == 0 && rtt.jitter_ms == 0 {
                continue;
            }
            self.request(
                "POST",
                &format!("/proxies/{name}/toxics"),
                &serde_json::json!({"name": format!("latency_{stream}"), "type": "latency", "stream": stream,
                    "attributes": {"latency": ms, "jitter": rtt.jitter_ms}})
                .to_string(),
            )?;
        }
        Ok(ProxiedServer {
            server: name.into(),
            upstream: upstream.into(),
            listen,
            toxics: format!(
                "latency upstream {up} ms, downstream {down} ms, jitter {} ms",
                rtt.jitter_ms
            ),
        })
    }

    /// One HTTP/1.1 request to the API; the body of a 2xx answer.
    fn request(&self, method: &str, path: &str, body: &str) -> Result<String, String> {
        let mut stream = TcpStream::connect_timeout(&self.api, Duration::from_secs(2))
            .map_err(|e| format!("{PROGRAM}'s API: {e}"))?;
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.api,
            body.len()
        )
        .map_err(|e| format!("{PROGRAM}'s API: {e}"))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| format!("{PROGRAM}'s API: {e}"))?;
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head.split_whitespace().nth(1).unwrap_or("");
        if !status.starts_with('2') {
            return Err(format!("{PROGRAM} refused {method} {path}: {head} {body}"));
        }
        Ok(body.to_string())
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `url` with its host:port replaced by `host_port` (user, password, path kept):
/// `postgres://u:p@127.0.0.1:5432/db` → `postgres://u:p@127.0.0.1:41234/db`. None where
/// it has no authority.
pub fn through(url: &str, host_port: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let userinfo = authority
        .rfind('@')
        .map(|at| &authority[..=at])
        .unwrap_or("");
    Some(format!("{scheme}://{userinfo}{host_port}{tail}"))
}

/// The host:port a URL reaches, with its scheme's default port where it has none.
pub fn host_port(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let default_port = match scheme {
        "postgres" | "postgresql" => 5432,
        "mysql" | "mariadb" => 3306,
        "https" => 443,
        _ => 80,
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() {
        return None;
    }
    Some(
        if host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            host.to_string()
        } else {
            format!("{host}:{default_port}")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_and_bad_ones_say_the_forms() {
        assert_eq!(parse_network_rtt("none").unwrap(), None);
        let one = parse_network_rtt("1ms").unwrap().unwrap();
        assert_eq!((one.rtt_ms, one.jitter_ms, one.each_way()), (1, 0, (0, 1)));
        let two = parse_network_rtt("2ms:1ms").unwrap().unwrap();
        assert_eq!((two.rtt_ms, two.jitter_ms, two.each_way()), (2, 1, (1, 1)));
        assert_eq!(parse_network_rtt("0").unwrap().unwrap().rtt_ms, 0);
        assert_eq!(two.to_string(), "2ms:1ms");
        for bad in ["0.5ms", "1", "1s", "fast", "2000ms", "1ms:x"] {
            let e = parse_network_rtt(bad).unwrap_err().to_string();
            assert!(e.contains("it takes \"none\""), "{bad}: {e}");
        }
        assert!(
            parse_network_rtt("0.25ms")
                .unwrap_err()
                .to_string()
                .contains("whole ms"),
            "sub-millisecond round trips say why not"
        );
    }

    #[test]
    fn urls_are_sent_through_the_proxy_with_their_credentials() {
        assert_eq!(
            through("postgres://u:p@127.0.0.1:5432/db", "127.0.0.1:41234").unwrap(),
            "postgres://u:p@127.0.0.1:41234/db"
        );
        assert_eq!(
            through("mysql://root:pw@mariadb:3306", "127.0.0.1:1").unwrap(),
            "mysql://root:pw@127.0.0.1:1"
        );
        assert_eq!(
            through("s3://k:s@h:8333?region=x", "127.0.0.1:2").unwrap(),
            "s3://k:s@127.0.0.1:2?region=x"
        );
        assert_eq!(host_port("postgres://u:p@db/x").unwrap(), "db:5432");
        assert_eq!(
            host_port("mysql://r:p@127.0.0.1:3307").unwrap(),
            "127.0.0.1:3307"
        );
        assert_eq!(through("not a url", "x"), None);
    }
}
