//! blobrace's git commit and whether its tree had changes, compiled in so that every
//! run's results.json names the code that measured it (`records::provenance`). Outside
//! a git checkout (the runner image is built without .git) both are empty: "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // A commit moves HEAD or a ref; an edit moves a source file (and rebuilds anyway).
    for path in [
        ".git/HEAD",
        ".git/index",
        ".git/refs",
        ".git/packed-refs",
        "src",
        "benches",
        "migration",
        "templates",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    // Tracked files only: a data directory or results inside the checkout are not code.
    let dirty = if commit.is_empty() {
        String::new()
    } else {
        git(&["status", "--porcelain", "--untracked-files=no"])
            .map(|changes| (!changes.is_empty()).to_string())
            .unwrap_or_default()
    };
    println!("cargo:rustc-env=SOURCE_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=SOURCE_GIT_DIRTY={dirty}");
}
