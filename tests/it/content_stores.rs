//! Documents in each store as its users run it: a folder of the user's own files as a
//! dataset (`--content dir:PATH`), each store's compression knob really compressing
//! (its own functions or its bytes on disk say so), the bytes each store keeps recorded
//! with every result and set out in the report, and settings that cannot go together
//! refused before anything is made.

use crate::common::{only_run, run_s, server_url_or_skip, stderr};
use crate::content::{psql, small, with};

/// 16 MiB of 64 KiB blobs: enough that a store's fixed files (RocksDB's SST and
/// MANIFEST, PostgreSQL's index and free pages) do not hide what compression saved.
fn larger(content: &str, engines: &str) -> Vec<String> {
    let mut args = small(content, engines);
    args[3] = "64KiB".into();
    args[5] = "16MiB".into();
    args
}

/// A few documents of a user's: nested, of several sizes, one empty (left out).
fn documents(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut kept = Vec::new();
    for i in 0..12u32 {
        let body: String = (0..(200 + i * 150))
            .map(|w| format!("word{} ", (w * 7 + i) % 97))
            .collect();
        let doc = format!("{{\"id\": {i}, \"title\": \"note {i}\", \"body\": \"{body}\"}}");
        let path = dir.join(format!("team{}/note-{i}.json", i % 3));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &doc).unwrap();
        kept.push(doc.into_bytes());
    }
    std::fs::write(dir.join("empty.json"), b"").unwrap();
    kept
}

#[test]
fn a_folder_of_your_own_files_is_loaded_verified_measured_and_its_bytes_kept_are_said() {
    let root = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let docs = documents(folder.path());
    let content = format!("dir:{}", folder.path().display());
    let args = small(&content, "floor,sqlite-raw,fs,rocksdb");
    let out = run_s(root.path(), &with("measure", &args, &[]));
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    let recorded = json["config"]["content"].as_str().unwrap();
    assert!(
        recorded.starts_with(&format!("{content}@")),
        "the folder and the digest of its bytes: {recorded}"
    );
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        assert!(
            r["measured"]["count"].as_u64().unwrap() > 0,
            "{}",
            r["engine"]
        );
        let stored = r["dataset"]["stored_bytes"].as_u64();
        assert!(stored.is_some_and(|b| b > 0), "{}: {stored:?}", r["engine"]);
    }
    // A blob holds a piece of one of the files after its 8-byte id.
    let data = root.path().join("data");
    let fs_dir = std::fs::read_dir(data.join("fs"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().contains("-dir"))
        .expect("fs's dataset named for the folder's bytes")
        .path();
    let blob = first_file(&fs_dir);
    let piece = &blob[8..64];
    assert!(
        docs.iter()
            .any(|d| d.windows(piece.len()).any(|w| w == piece)),
        "cut from a document: {:?}",
        String::from_utf8_lossy(piece)
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains("What each store keeps"), "the report's table");
    assert!(
        page.contains(&format!("{content} content")),
        "the Measured line"
    );

    let out = run_s(
        root.path(),
        &with("verify", &small(&content, "sqlite-raw,fs"), &[]),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // The folder changed: another dataset, loaded beside the first.
    std::fs::write(
        folder.path().join("team0/note-0.json"),
        b"{\"id\": 0, \"changed\": true}",
    )
    .unwrap();
    let out = run_s(
        root.path(),
        &with("load", &small(&content, "sqlite-raw"), &[]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sqlite = std::fs::read_dir(data.join("sqlite"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sqlite"))
        .count();
    assert_eq!(sqlite, 2, "a changed folder is another dataset");
}

fn first_file(dir: &std::path::Path) -> Vec<u8> {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().ends_with(".json") {
                files.push(p);
            }
        }
    }
    files.sort();
    std::fs::read(&files[0]).unwrap()
}

#[test]
fn a_folder_with_nothing_to_store_and_settings_that_clash_are_refused_before_anything_is_made() {
    let empty = tempfile::tempdir().unwrap();
    let only_empty = tempfile::tempdir().unwrap();
    std::fs::write(only_empty.path().join("a.txt"), b"").unwrap();
    let file = only_empty.path().join("a.txt");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--content".into(),
                format!("dir:{}", empty.path().display()),
            ],
            "holds no files",
        ),
        (
            vec![
                "--content".into(),
                format!("dir:{}", only_empty.path().display()),
            ],
            "are all empty",
        ),
        (
            vec!["--content".into(), format!("dir:{}", file.display())],
            "is a file, not a folder",
        ),
        (
            vec!["--content".into(), "dir:/dev/null".into()],
            "is not a folder",
        ),
        (vec!["--content".into(), "dir:".into()], "names no folder"),
        (
            ["--pg-storage", "external", "--pg-compression", "lz4"]
                .map(String::from)
                .to_vec(),
            "never compresses",
        ),
    ];
    for (flags, says) in cases {
        let root = tempfile::tempdir().unwrap();
        let args = with("measure", &["--engines".into(), "floor".into()], &[])
            .into_iter()
            .chain(flags.clone())
            .collect::<Vec<_>>();
        let out = run_s(root.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert_eq!(
            err.trim()
                .lines()
                .filter(|l| l.to_lowercase().contains("error"))
                .count(),
            1,
            "{err}"
        );
        assert!(
            !root.path().join("data").exists(),
            "{flags:?}: a data dir was made"
        );
    }
}

/// RocksDB's blob files compressed with ZSTD keep text in well under its bytes; without
/// compression, about its bytes. Each is its own dataset directory.
#[test]
fn rocksdb_compresses_text_when_asked_and_keeps_it_as_given_otherwise() {
    let root = tempfile::tempdir().unwrap();
    let mut kept = Vec::new();
    for compression in ["none", "zstd"] {
        let args = larger("text", "rocksdb");
        let out = run_s(
            root.path(),
            &with("measure", &args, &["--rocksdb-compression", compression]),
        );
        assert!(out.status.success(), "{compression}: {}", stderr(&out));
        let (dir, json) = only_run(root.path());
        let r = &json["results"][0];
        let share = r["dataset"]["stored_bytes"].as_f64().unwrap()
            / r["dataset"]["bytes"].as_f64().unwrap();
        kept.push(share);
        let said = r["settings"]["compression"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        std::fs::remove_dir_all(dir).unwrap();
        if compression == "zstd" {
            assert!(said.starts_with("ZSTD"), "{said}");
        }
    }
    assert!(kept[0] > 1.0, "uncompressed, its files around: {kept:?}");
    // Its fixed files (SST, MANIFEST, OPTIONS) are a few MiB either way: ZSTD on text
    // (2:1 or better under deflate) keeps well under what none keeps.
    assert!(kept[1] < kept[0] * 0.7, "ZSTD on text: {kept:?}");
    let dirs: Vec<String> = std::fs::read_dir(root.path().join("data/rocksdb"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(dirs.iter().any(|d| d.ends_with("-text-zstd")), "{dirs:?}");
}

/// PostgreSQL with lz4 asked: the column's values say lz4 in PostgreSQL's own words.
#[test]
fn postgres_compresses_text_with_lz4_when_asked() {
    let Some(url) = server_url_or_skip("postgres", "PostgreSQL compressing with lz4") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let args = with(
        "measure",
        &larger("text", "postgres-raw"),
        &["--pg-compression", "lz4", "--postgres-url", &url],
    );
    let out = run_s(root.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, json) = only_run(root.path());
    let settings = &json["results"][0]["settings"];
    assert_eq!(settings["data_compression"], "lz4", "{settings}");
    let share = json["results"][0]["dataset"]["stored_bytes"]
        .as_f64()
        .unwrap()
        / json["results"][0]["dataset"]["bytes"].as_f64().unwrap();
    assert!(share < 0.8, "text under lz4 kept in {share} of its bytes");
    let sql = "select distinct pg_column_compression(data) from blobs_64kib_x256_text_lz4.blobs";
    let said = psql(sql);
    assert_eq!(said, "lz4");
}

/// MariaDB with its column declared COMPRESSED: the column says so, and a run reads the
/// documents back whole (the per-fetch checks).
#[test]
fn mariadb_stores_text_in_a_compressed_column_when_asked() {
    let Some(url) = server_url_or_skip("mariadb", "MariaDB's compressed column") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let args = with(
        "measure",
        &small("text", "mariadb-raw"),
        &["--mariadb-compression", "zlib", "--mariadb-url", &url],
    );
    let out = run_s(root.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, json) = only_run(root.path());
    let r = &json["results"][0];
    let column = r["settings"]["data_column"].as_str().unwrap_or_default();
    assert!(column.contains("COMPRESSED"), "{}", r["settings"]);
    assert!(
        r["settings"]["database"]
            .as_str()
            .unwrap()
            .ends_with("_text_zlib")
    );
    assert!(r["measured"]["count"].as_u64().unwrap() > 0);
}

/// `scripts/contents.sh` as docs/content.md gives it: one run per content, then the
/// variants page, where each content's row is divided by the same layout's random one
/// (RocksDB's "content text, LZ4 compression" by "LZ4 compression") and says the bytes
/// kept per blob byte; fs and the floor are there too (content is their choice as well).
#[test]
fn the_contents_script_sets_each_content_beside_random_bytes_on_one_page() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let out = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/contents.sh"))
        .args([
            "--engines",
            "floor,fs,rocksdb",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "16MiB",
            "--warmup",
            "50ms",
            "--measure",
            "200ms",
            "--precision",
            "off",
            "--cache",
            "cold",
            "--rocksdb-compression",
            "lz4",
            "--cap",
            "none",
            "--cpus",
            "none",
            "--data-dir",
        ])
        .arg(root.path().join("data"))
        .env("BLOBRACE_BIN", env!("CARGO_BIN_EXE_blobrace"))
        .env("BLOBRACE_RESULTS_DIR", &results)
        .env("BLOBRACE_CONTENTS", "random text")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = crate::common::newest_variants(root.path()).join("index.html");
    let html = std::fs::read_to_string(page).unwrap();
    for engine in ["floor", "fs", "rocksdb"] {
        assert!(
            html.contains(&format!("<h2>{engine}</h2>")),
            "{engine} on the page"
        );
    }
    let row = html
        .lines()
        .find(|l| l.contains("content text, LZ4 compression"))
        .expect("RocksDB's text row");
    assert!(
        row.contains("x</td>"),
        "a ratio to LZ4 on random bytes: {row}"
    );
    assert!(
        html.contains("per blob byte"),
        "the bytes kept per blob byte"
    );
    assert!(!html.contains("NaN"), "a figure left unsaid");
}
