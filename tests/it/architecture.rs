//! ARCHITECTURE.md's layer table is the map of `src/`, held against the tree: every
//! entry of `src/` is in it, every entry in it exists, and no module imports one of a
//! higher layer. A map kept by hand drifts (the one before this named 6 modules of 47);
//! this one fails the tests instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The table's rows: `src/<entry>` → its layer number.
fn layer_table() -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("\n## Layers")
        .expect("ARCHITECTURE.md has a Layers section");
    let section = &text[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut table = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(layer), Some(entry)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(layer) = layer
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let entry = entry.trim_matches('`').to_string();
        assert!(
            table.insert(entry.clone(), layer).is_none(),
            "{entry} is in the table twice"
        );
    }
    table
}

fn src_entries() -> BTreeSet<String> {
    std::fs::read_dir(root().join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(format!("src/{name}/"))
            } else {
                name.ends_with(".rs").then(|| format!("src/{name}"))
            }
        })
        .collect()
}

fn rust_files(at: &Path, out: &mut Vec<PathBuf>) {
    if at.is_dir() {
        for entry in std::fs::read_dir(at).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if at.extension().is_some_and(|e| e == "rs") {
        out.push(at.to_path_buf());
    }
}

/// The crate's top-level modules a file names (`crate::x`, or `blobrace::x` in main.rs),
/// comments left out.
fn modules_named(text: &str, prefix: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|line| {
            line.match_indices(prefix)
                .map(|(at, _)| {
                    line[at + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
        })
        .filter(|m| !m.is_empty())
        .collect()
}

fn module_of(entry: &str) -> &str {
    entry
        .trim_start_matches("src/")
        .trim_end_matches('/')
        .trim_end_matches(".rs")
}

#[test]
fn the_layer_table_names_every_entry_of_src_and_nothing_else() {
    let table = layer_table();
    let tree = src_entries();
    let listed: BTreeSet<String> = table.keys().cloned().collect();
    let missing: Vec<_> = tree.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&tree).collect();
    assert!(
        missing.is_empty(),
        "entries of src/ not in ARCHITECTURE.md's layer table (add a row with their layer): {missing:?}"
    );
    assert!(
        gone.is_empty(),
        "rows of ARCHITECTURE.md's layer table naming nothing in src/: {gone:?}"
    );
}

#[test]
fn no_module_imports_one_of_a_higher_layer() {
    let table = layer_table();
    let layer_of: BTreeMap<&str, u32> = table.iter().map(|(e, &l)| (module_of(e), l)).collect();
    let mut upward = Vec::new();
    for (entry, &layer) in &table {
        let mut files = Vec::new();
        rust_files(&root().join(entry), &mut files);
        assert!(
            !files.is_empty() || !entry.ends_with('/'),
            "{entry} holds no Rust file"
        );
        let prefix = if entry == "src/main.rs" {
            "blobrace::"
        } else {
            "crate::"
        };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for module in modules_named(&text, prefix) {
                if let Some(&above) = layer_of.get(module.as_str())
                    && above > layer
                {
                    upward.push(format!(
                        "{} (layer {layer}) imports {module} (layer {above})",
                        file.strip_prefix(root()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that run up the layers of ARCHITECTURE.md:\n{}",
        upward.join("\n")
    );
    // The check sees imports at all: the loader imports the databases below it.
    assert!(layer_of["load"] > layer_of["db"]);
    let loader = std::fs::read_to_string(root().join("src/load/mod.rs")).unwrap();
    assert!(modules_named(&loader, "crate::").contains("db"));
}
