//! The manifest of a run (what its figures depend on) is in results.json as
//! docs/manifest.schema.json documents it, field by field, for a data directory given
//! relative and absolute alike, and on the report's environment table.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{blobrace, only_run, stderr};

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/manifest.schema.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The subset of JSON Schema the manifest's schema uses: type, const, required,
/// properties, additionalProperties (false, or a schema). Every mismatch, by path.
fn check(value: &Value, schema: &Value, at: &str, wrong: &mut Vec<String>) {
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !allowed.contains(&type_of(value)) {
            wrong.push(format!(
                "{at}: {} where the schema says {allowed:?}",
                type_of(value)
            ));
            return;
        }
    }
    if let Some(c) = schema.get("const")
        && c != value
    {
        wrong.push(format!("{at}: {value} where the schema says {c}"));
    }
    let Value::Object(fields) = value else {
        return;
    };
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        if !fields.contains_key(name) {
            wrong.push(format!("{at}.{name}: missing"));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, field) in fields {
        match (
            properties.and_then(|p| p.get(name)),
            schema.get("additionalProperties"),
        ) {
            (Some(sub), _) => check(field, sub, &format!("{at}.{name}"), wrong),
            (None, Some(Value::Bool(false))) => {
                wrong.push(format!("{at}.{name}: not in the schema (document it)"))
            }
            (None, Some(sub @ Value::Object(_))) => {
                check(field, sub, &format!("{at}.{name}"), wrong)
            }
            (None, _) => {}
        }
    }
}

fn measure_at(cwd: &Path, data_dir: &str) -> Value {
    let out = blobrace()
        .current_dir(cwd)
        .env("BLOBRACE_SIZES", "4KiB")
        .env(
            "BLOBRACE_POSTGRES_URL",
            "postgres://blobrace:not-this-password@127.0.0.1:1/blobrace",
        )
        .args(["measure", "--engines", "floor", "--dataset-bytes", "1MiB"])
        .args(["--warmup", "50ms", "--measure", "200ms"])
        .args(["--data-dir", data_dir, "--results-dir", "results"])
        .args(["--cap", "none", "--cpus", "none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(cwd);
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for row in ["built from", "data disk", "BLOBRACE_SIZES=4KiB"] {
        assert!(page.contains(row), "the report's environment shows {row}");
    }
    assert!(!page.contains("not-this-password"));
    json
}

#[test]
fn a_runs_manifest_is_as_documented_for_relative_and_absolute_data_dirs() {
    let schema = schema();
    let relative = tempfile::tempdir().unwrap();
    let absolute = tempfile::tempdir().unwrap();
    let data = absolute.path().join("data");
    let runs = [
        measure_at(relative.path(), "data"),
        measure_at(absolute.path(), data.to_str().unwrap()),
    ];
    // This machine's own view of the disk under the temporary directories.
    let df = Command::new("df")
        .args(["--output=fstype", relative.path().to_str().unwrap()])
        .output()
        .unwrap();
    let fstype = String::from_utf8_lossy(&df.stdout)
        .lines()
        .nth(1)
        .unwrap_or("")
        .trim()
        .to_string();
    for run in &runs {
        let mut wrong = Vec::new();
        check(run, &schema, "results", &mut wrong);
        assert!(
            wrong.is_empty(),
            "results.json against docs/manifest.schema.json:\n{}",
            wrong.join("\n")
        );
        let machine = &run["machine"];
        assert_ne!(machine["data_filesystem"], "unknown", "{machine}");
        if !fstype.is_empty() {
            assert_eq!(machine["data_filesystem"], fstype.as_str(), "{machine}");
        }
        let provenance = &run["provenance"];
        assert_eq!(provenance["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(provenance["variables"]["BLOBRACE_SIZES"], "4KiB");
        let url = provenance["variables"]["BLOBRACE_POSTGRES_URL"]
            .as_str()
            .unwrap();
        assert!(!url.contains("not-this-password"), "{url}");
        // Built from this checkout: its commit, as git names it.
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        if head.status.success() {
            let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
            assert_eq!(provenance["commit"], head.as_str(), "{provenance}");
        }
    }
    assert_eq!(
        runs[0]["machine"]["data_device"],
        runs[1]["machine"]["data_device"]
    );
}

#[test]
fn the_schema_check_catches_what_the_schema_does_not_say() {
    let schema = schema();
    let mut run = serde_json::json!({
        "schema_version": 1, "run_id": "x", "started_at": "t", "command": "c",
        "machine": {"cpu_model": "m", "logical_cpus": 2, "ram_bytes": 1, "kernel": "k",
                    "hostname": "h", "data_filesystem": "ext4", "data_device": "/dev/vda",
                    "data_disk": {"name": "vda", "model": null, "scheduler": "none", "rotational": false}}
    });
    let mut wrong = Vec::new();
    check(&run, &schema, "results", &mut wrong);
    assert!(wrong.is_empty(), "{wrong:?}");
    run["machine"]["disk_serial"] = "S123".into();
    run["machine"]["logical_cpus"] = "two".into();
    run["schema_version"] = 2.into();
    check(&run, &schema, "results", &mut wrong);
    assert_eq!(wrong.len(), 3, "{wrong:?}");
}
