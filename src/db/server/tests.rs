//! The server registry: names, flags and variables, URLs from compose/.env, caches
//! that fit their cap.

use super::*;

#[test]
fn a_urls_address_has_its_port_or_the_schemes() {
    assert_eq!(
        url_address("postgres://u:p@h:15432/db?x=1").as_deref(),
        Some("h:15432")
    );
    assert_eq!(url_address("postgres://u@db/x").as_deref(), Some("db:5432"));
    assert_eq!(
        url_address("mysql://root:p@ss@127.0.0.1:13307").as_deref(),
        Some("127.0.0.1:13307")
    );
    assert_eq!(
        url_address("mysql://root@mariadb").as_deref(),
        Some("mariadb:3306")
    );
    assert_eq!(
        url_address("mysql://root@[::1]").as_deref(),
        Some("[::1]:3306")
    );
    assert_eq!(url_address("sqlite://x"), None);
    assert_eq!(url_address("no scheme"), None);
}

#[tokio::test]
async fn a_refused_port_is_known_at_once() {
    // A port just freed: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = Server::all().next().unwrap();
    let err = db
        .probe(&format!("postgres://u:p@127.0.0.1:{port}/x"))
        .await
        .unwrap_err()
        .to_string();
    // Said by the address check, not the driver after its 30 s of retries.
    assert!(
        err.contains(&format!(
            "cannot connect to postgres at postgres://u@127.0.0.1:{port}/x: nothing answers there"
        )),
        "{err}"
    );
}

#[test]
fn servers_have_distinct_names_flags_and_variables() {
    let names: Vec<&str> = Server::all().map(|s| s.name()).collect();
    assert_eq!(names, ["postgres", "mariadb", "mysql", "dolt", "seaweedfs"]);
    let mut flags: Vec<&str> = Server::all().map(|s| s.url_flag()).collect();
    flags.dedup();
    assert_eq!(flags.len(), Server::all().count());
    for s in Server::all() {
        assert_eq!(Server::named(s.name()), Some(s));
        assert!(s.url_env().starts_with("BLOBRACE_"), "{}", s.url_env());
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Server>(&json).unwrap(), s);
    }
}

#[test]
fn compose_urls_use_the_env_file_password_and_port() {
    let env: ComposeEnv = [
        ("POSTGRES_PASSWORD", "pw1"),
        ("MARIADB_ROOT_PASSWORD", "pw2"),
        ("BLOBRACE_MARIADB_PORT", "23306"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let url = |name| Server::named(name).unwrap().url_from_compose(&env);
    assert_eq!(
        url("postgres").as_deref(),
        Some("postgres://blobrace:pw1@127.0.0.1:15432/blobrace")
    );
    assert_eq!(
        url("mariadb").as_deref(),
        Some("mysql://root:pw2@127.0.0.1:23306")
    );
    assert_eq!(
        Server::named("postgres")
            .unwrap()
            .url_from_compose(&ComposeEnv::new()),
        None
    );
}

#[test]
fn caches_fit_their_cap_and_the_largest_blob() {
    const MIB: u64 = 1 << 20;
    let pg = Server::named("postgres").unwrap();
    let maria = Server::named("mariadb").unwrap();
    // 1 GiB: the usual settings, whatever the blob.
    for blob in [MIB / 1024, 4 * MIB, 32 * MIB] {
        assert_eq!(pg.memory().cache_bytes_for_cap(1024 * MIB, blob), 128 * MIB);
        assert_eq!(
            maria.memory().cache_bytes_for_cap(1024 * MIB, blob),
            640 * MIB
        );
    }
    // 256 MiB (quick): room for MariaDB's own memory first.
    assert_eq!(
        maria.memory().cache_bytes_for_cap(256 * MIB, 64 << 10),
        96 * MIB
    );
    assert_eq!(maria.memory().min_cap_bytes(4 * MIB), 256 * MIB);
    // 32 MiB blobs need ~4x each beyond that: a 256 MiB MariaDB was OOM-killed.
    assert_eq!(maria.memory().min_cap_bytes(32 * MIB), 368 * MIB);
    assert_eq!(
        maria.memory().cache_bytes_for_cap(368 * MIB, 32 * MIB),
        96 * MIB
    );
    for blob in [64 << 10, 4 * MIB, 32 * MIB] {
        let min = maria.memory().min_cap_bytes(blob);
        assert!(
            maria.memory().cache_bytes_for_cap(min, blob) >= 96 * MIB,
            "{blob}"
        );
    }
    // Measured loads: PostgreSQL's 2 backends and an eighth of the cap in shared
    // buffers; Dolt's ~24 copies of the blob it inserts. Every default profile
    // fits the servers loaded here: 1 GiB with 32 MiB blobs, 256 MiB with 4 MiB.
    assert_eq!(pg.memory().min_cap_bytes(32 * MIB), 266 * MIB);
    let dolt = Server::named("dolt").unwrap();
    assert_eq!(dolt.memory().min_cap_bytes(32 * MIB), 864 * MIB);
    assert_eq!(dolt.memory().min_cap_bytes(4 * MIB), 192 * MIB);
    for server in [pg, maria, dolt] {
        assert!(
            server.memory().min_cap_bytes(32 * MIB) <= 1024 * MIB,
            "{}",
            server.name()
        );
        assert!(
            server.memory().min_cap_bytes(4 * MIB) <= 256 * MIB,
            "{}",
            server.name()
        );
    }
    // Dolt was OOM-killed loading a 32 MiB row under 512 MiB: refused up front now.
    assert!(dolt.memory().min_cap_bytes(32 * MIB) > 512 * MIB);
}
