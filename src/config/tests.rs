//! The flags, presets and resolution of a run, end to end through clap.

use clap::Parser;

use crate::cap::CapRequest;
use crate::dataset::key::KeyType;
use crate::db::server::Server;
use crate::size::SizeClass;
use crate::stats::precision::Targets;

use super::*;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
}

fn resolve(args: &[&str]) -> Result<RunConfig, String> {
    resolve_flags(args)
}

#[test]
fn a_keyed_run_without_engines_measures_the_engines_with_keys_and_the_floor() {
    let keyed = resolve(&["--key", "uuidv7"]).unwrap();
    assert_eq!(keyed.key, KeyType::Uuidv7);
    assert!(!keyed.engines.is_empty());
    let names: Vec<&str> = keyed.engines.iter().map(|e| e.name()).collect();
    assert!(names.contains(&"sqlite-blobio") && names.contains(&"postgres-raw"));
    // The floor stays as the round's reference; fs has no keys.
    assert!(
        names.contains(&"floor") && !names.contains(&"fs"),
        "{names:?}"
    );
    // Every dataset of the run carries the key type, so its stores name it.
    assert!(keyed.datasets().iter().all(|d| d.key == KeyType::Uuidv7));
    assert!(keyed.datasets()[0].stem().ends_with("-kuuidv7"));
    let plain = resolve(&[]).unwrap();
    assert!(plain.engines.iter().any(|e| e.name() == "floor"));
    assert!(
        plain.datasets()[0]
            .stem()
            .ends_with(&format!("x{}", plain.datasets()[0].rows))
    );
}

#[test]
fn profiles_set_defaults_and_flags_override() {
    let quick = resolve(&["--profile", "quick"]).unwrap();
    assert_eq!(quick.sizes.len(), 4);
    assert_eq!(quick.dataset_bytes, 768 << 20);
    assert_eq!(quick.cap.memory_bytes, Some(256 << 20));
    assert_eq!(quick.warmup, Duration::from_secs(1));
    let full = resolve(&["--sizes", "64KiB", "--cap", "none", "--cpus", "none"]).unwrap();
    assert_eq!(full.sizes, vec![SizeClass::new(65536).unwrap()]);
    assert_eq!(full.dataset_bytes, 3 << 30);
    assert_eq!(full.target_p99, DEFAULT_TARGET_P99);
    assert_eq!(
        full.cap,
        CapRequest {
            memory_bytes: None,
            cpus: None
        }
    );
    assert_eq!(resolve(&[]).unwrap().sizes, SizeClass::defaults());
}

#[test]
fn bad_values_name_the_problem() {
    assert!(resolve(&["--sizes", "12XB"]).unwrap_err().contains("12XB"));
    assert!(
        resolve(&["--sizes", "0"])
            .unwrap_err()
            .contains("at least 8 bytes")
    );
    assert!(
        resolve(&["--engines", "mongo"])
            .unwrap_err()
            .contains("unknown engine 'mongo'")
    );
    let small = resolve(&["--sizes", "4MiB", "--dataset-bytes", "1MiB"]).unwrap_err();
    assert!(small.contains("smaller than one 4MiB blob"), "{small}");
    assert!(resolve(&["--warmup", "3"]).unwrap_err().contains("unit"));
    // 0 turns the disk probes off (and only there is 0 a duration).
    assert_eq!(
        resolve(&["--disk-probe", "0s"]).unwrap().disk_probe,
        Duration::ZERO
    );
    assert_eq!(
        resolve(&["--disk-probe", "0ms"]).unwrap().disk_probe,
        Duration::ZERO
    );
    assert!(
        resolve(&["--warmup", "0s"])
            .unwrap_err()
            .contains("more than zero")
    );
    assert!(resolve(&["--disk-probe", "-1s"]).is_err());
    assert!(resolve(&["--cap", "1MiB"]).is_err());
    let tight = resolve(&["--cap", "64MiB", "--sizes", "32MiB"]).unwrap_err();
    assert!(tight.contains("at least 208MiB"), "{tight}");
    assert!(resolve(&["--cpus", "two"]).is_err());
    // A CPU cap above the machine's CPUs would never bind; one CPU fits every machine.
    let cpus = resolve(&["--cpus", "100000"]).unwrap_err();
    assert!(
        cpus.contains("above the") && cpus.contains("--cpus none"),
        "{cpus}"
    );
    assert!(resolve(&["--cpus", "1"]).is_ok());
    // A count past the largest number is too many clients, not a misspelling.
    let many = resolve(&["--clients", "99999999999999999999"]).unwrap_err();
    assert!(many.contains("at most"), "{many}");
    let word = resolve(&["--disk-probe", "often"]).unwrap_err();
    assert!(word.contains("like 250ms"), "{word}");
    assert_eq!(
        resolve(&["--disk-probe", "off"]).unwrap().disk_probe,
        Duration::ZERO
    );
    assert!(resolve(&["--samples", "3"]).is_err());
}

#[test]
fn criterion_samples_hold_the_minimum_fetches_in_a_linear_plan() {
    let full = resolve(&["--profile", "full"]).unwrap();
    assert_eq!(full.min_fetches, 500);
    // 32 * 33 / 2 = 528 >= 500; 31 * 32 / 2 = 496 is not.
    assert_eq!(full.criterion_samples(), 32);
    let quick = resolve(&["--profile", "quick"]).unwrap();
    assert_eq!((quick.min_fetches, quick.criterion_samples()), (0, 10));
    let more = resolve(&[
        "--profile",
        "quick",
        "--samples",
        "50",
        "--min-fetches",
        "100",
    ]);
    assert_eq!(more.unwrap().criterion_samples(), 50);
}

#[test]
fn the_presets_measure_to_a_precision_and_a_time_given_alone_is_fixed() {
    let s = Duration::from_secs;
    let t = |p50, p99| Targets { p50, p99 };
    let full = resolve(&[]).unwrap();
    assert_eq!(
        (full.precision, full.measure, full.measure_limit),
        (Some(t(0.05, 0.2)), s(2), s(30))
    );
    let goal = full.precision_goal().unwrap();
    assert_eq!((goal.min, goal.limit, goal.min_fetches), (s(2), s(30), 500));
    let quick = resolve(&["--profile", "quick"]).unwrap();
    assert_eq!(
        (quick.precision, quick.measure, quick.measure_limit),
        (Some(t(0.1, 0.3)), s(1), s(9))
    );
    // A measuring time alone is the fixed time it always was.
    let fixed = resolve(&["--measure", "3s"]).unwrap();
    assert_eq!((fixed.precision, fixed.measure), (None, s(3)));
    assert_eq!(fixed.precision_goal(), None);
    let off = resolve(&["--precision", "off"]).unwrap();
    assert_eq!((off.precision, off.measure), (None, s(10)));
    // Both: the time is the least measured.
    let both = resolve(&[
        "--precision",
        "2.5%",
        "--measure",
        "500ms",
        "--measure-limit",
        "9s",
    ]);
    let both = both.unwrap();
    assert_eq!(both.precision, Some(t(0.025, 0.1)));
    let two = resolve(&["--precision", "3%,15%"]).unwrap();
    assert_eq!(two.precision, Some(t(0.03, 0.15)));
    let goal = both.precision_goal().unwrap();
    assert_eq!((goal.min, goal.limit), (Duration::from_millis(500), s(9)));
    for bad in ["0", "100%", "five", "5x", "5%,", "5%,0"] {
        let err = resolve(&["--precision", bad]).unwrap_err();
        assert!(err.contains("precision"), "{bad}: {err}");
    }
}

#[test]
fn every_server_has_a_url_flag() {
    let mut args = vec!["blobrace".to_string()];
    for server in Server::all() {
        args.push(format!("--{}", server.url_flag()));
        args.push(format!("x://{}", server.name()));
    }
    let cli = Cli::try_parse_from(args).unwrap();
    let config = cli.run.resolve().unwrap();
    for server in Server::all() {
        assert_eq!(
            config.locations().server_url(server),
            Some(format!("x://{}", server.name()).as_str())
        );
    }
}

#[test]
fn durations_parse() {
    assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
    assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
    assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
    assert!(parse_duration("0s").is_err());
    assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
    // Past a week: an error, not a panic converting it.
    for long in ["99999999999999999999s", "169h"] {
        let e = parse_duration(long).unwrap_err().to_string();
        assert!(
            e.contains("too long") || e.contains("not a number"),
            "{long}: {e}"
        );
    }
    assert_eq!(parse_percent("10%").unwrap(), 0.1);
    assert!(parse_percent("ten").is_err());
}

#[test]
fn a_deployment_sets_its_parts_and_a_flag_beside_it_overrides_one() {
    use crate::cap::readahead::Readahead;
    let plain = resolve(&[]).unwrap();
    assert_eq!(plain.readahead, Readahead::Kib(128));
    assert!(!plain.readahead_explicit && plain.deployment.is_none());
    assert!(plain.workload().is_empty(), "{:?}", plain.workload());

    let aws = resolve(&["--deployment", "aws-gp3-cross-az"]).unwrap();
    assert_eq!(aws.disk_cap.as_ref().unwrap().asked, "gp3");
    assert_eq!(aws.disk_latency.unwrap().us, 1000);
    assert_eq!(aws.network_rtt.unwrap().rtt_ms, 1);
    assert_eq!(aws.readahead, Readahead::Kib(128));
    assert_eq!(aws.deployment.as_ref().unwrap().name, "aws-gp3-cross-az");
    assert!(
        aws.deployment
            .as_ref()
            .unwrap()
            .source
            .contains("docs.aws.amazon.com")
    );
    assert_eq!(
        aws.workload(),
        [
            "disk cap gp3",
            "deployment aws-gp3-cross-az",
            "disk latency 1ms",
            "network rtt 1ms",
        ]
    );
    // Each part's own flag wins over the deployment's.
    let mine = resolve(&[
        "--deployment",
        "aws-gp3-cross-az",
        "--network-rtt",
        "none",
        "--disk-cap",
        "io2:6000",
    ])
    .unwrap();
    assert!(mine.network_rtt.is_none());
    assert_eq!(mine.disk_cap.unwrap().asked, "io2:6000");
    assert_eq!(mine.disk_latency.unwrap().us, 1000);
    // nvme-host is the defaults: the reference `variants` divides by.
    let nvme = resolve(&["--deployment", "nvme-host"]).unwrap();
    assert!(nvme.workload().is_empty(), "{:?}", nvme.workload());
    let dev = resolve(&["--deployment", "dev-box"]).unwrap();
    assert_eq!(dev.readahead, Readahead::Host);
    assert_eq!(dev.workload(), ["deployment dev-box", "readahead host"]);
    let e = resolve(&["--deployment", "aws"]).unwrap_err();
    assert!(e.contains("no such deployment"), "{e}");
}

#[test]
fn a_disk_cap_that_cannot_move_one_largest_blob_a_second_is_refused() {
    // A bare number is bytes a second: 1 B/s would hang the run in the kernel.
    for (asked, sizes, key) in [
        ("rbps=1", "4KiB", "rbps"),
        ("rbps=1MiB", "4MiB", "rbps"),
        ("riops=100", "32MiB", "riops"),
        ("wbps=64KiB", "1KiB", "wbps"),
        ("io2:100", "32MiB", "rbps"),
        // Enough for one small blob, not for the IOs a run queues at once.
        ("riops=1", "4KiB", "riops"),
        ("wiops=49", "1KiB", "wiops"),
    ] {
        let e = resolve(&["--disk-cap", asked, "--sizes", sizes]).unwrap_err();
        assert!(e.contains(&format!("{key} = ")), "{asked}: {e}");
        assert!(e.contains("in a second"), "{e}");
        // Under the IOPS floor whatever the blobs: leaving sizes out is no way out.
        let floor_only = matches!(asked, "riops=1" | "wiops=49");
        let fix = if floor_only {
            "not the cause"
        } else {
            "--sizes"
        };
        assert!(e.contains(fix), "{asked}: {e}");
    }
    let mix = resolve(&["--disk-cap", "rbps=1MiB", "--size-mix", "uniform:1KiB,4MiB"]);
    assert!(mix.unwrap_err().contains("--size-mix"));
    // Enough for the largest blob: accepted, whatever else the run holds.
    for (asked, sizes) in [
        ("riops=100", "64KiB"),
        ("rbps=128KiB", "1KiB,64KiB"),
        ("riops=256,rbps=32MiB", "32MiB"),
        ("gp3", "1KiB,32MiB"),
    ] {
        let ok = resolve(&["--disk-cap", asked, "--sizes", sizes]);
        assert!(ok.is_ok(), "{asked} {sizes}: {:?}", ok.err());
    }
}

#[test]
fn bad_durations_and_seeds_are_named_for_what_is_wrong() {
    use super::parse::{parse_duration, parse_seed};
    for (text, says) in [
        ("-1s", "more than zero"),
        ("0s", "more than zero"),
        ("1e30s", "too long"),
        ("1ns", "unknown unit 'ns'"),
        ("2", "add a unit"),
        ("fast", "give a number and a unit"),
    ] {
        let why = parse_duration(text).unwrap_err().to_string();
        assert!(why.contains(says), "{text}: {why}");
    }
    assert_eq!(parse_duration("1.5s").unwrap().as_millis(), 1500);
    assert_eq!(parse_duration("2min").unwrap().as_secs(), 120);
    assert_eq!(parse_duration("250ms").unwrap().as_millis(), 250);
    let why = parse_seed("-1").unwrap_err().to_string();
    assert!(why.contains("a whole number from 0"), "{why}");
    assert_eq!(parse_seed("42").unwrap(), 42);
}

#[test]
fn uncapped_in_process_caps_the_servers_alone_and_refuses_where_nothing_is_capped() {
    let post = resolve(&["--uncapped-in-process", "--cap", "1GiB", "--cpus", "2"]).unwrap();
    assert!(post.uncapped_in_process);
    assert_eq!(
        post.cap,
        CapRequest {
            memory_bytes: Some(1 << 30),
            cpus: Some(2.0)
        },
        "the servers' cap"
    );
    assert_eq!(
        post.process_cap(),
        CapRequest {
            memory_bytes: None,
            cpus: None
        }
    );
    assert_eq!(
        post.locations().memory_cap_bytes,
        None,
        "redb's cache sizing"
    );
    let fair = resolve(&["--cap", "1GiB"]).unwrap();
    assert_eq!(fair.process_cap(), fair.cap);
    assert_eq!(fair.locations().memory_cap_bytes, Some(1 << 30));
    let nothing = resolve(&["--uncapped-in-process", "--cap", "none", "--cpus", "none"]);
    let err = nothing.unwrap_err();
    assert!(
        err.contains("uncapped-in-process") && err.contains("caps nothing"),
        "{err}"
    );
}
