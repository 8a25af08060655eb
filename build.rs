//! blobrace's git commit and whether its tree had changes, compiled in so that every
//! run's results.json names the code that measured it (`records::provenance`). Outside
//! a git checkout (the runner image is built without .git) both are empty: "unknown".
//!
//! It runs again only when the commit or a tracked file changes: never on `.git/index`,
//! which git rewrites whenever it refreshes its stat cache (a `git status` does, this
//! script's own included), so that a fresh clone's `cargo test --release` after `cargo
//! test --release --no-run` compiled the whole crate a second time (about 4 minutes on 2
//! cores). Its own `git status` runs with GIT_OPTIONAL_LOCKS=0: it writes nothing.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn rerun_if_changed(path: &str) {
    println!("cargo:rerun-if-changed={path}");
}

fn main() {
    rerun_if_changed("build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    if commit.is_empty() {
        // No checkout: the sources alone (the runner image's build).
        for path in [
            "src",
            "benches",
            "migration",
            "templates",
            "Cargo.toml",
            "Cargo.lock",
        ] {
            rerun_if_changed(path);
        }
    } else {
        // A commit moves HEAD or the branch it names: where they live, for a linked
        // worktree too. Only this branch's ref, not all of `refs` (a commit on another
        // branch or worktree, or a fetch, compiled the crate again, about 4 minutes).
        // Only those that exist: cargo reruns a script every time for a path that is
        // missing (a checkout without packed-refs), and compiles the crate again with
        // it. A ref packed later is gone from its file, which reruns this once, and
        // lives in packed-refs from then on.
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for name in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
            if let Some(path) = git(&["rev-parse", "--git-path", name])
                && std::path::Path::new(&path).exists()
            {
                rerun_if_changed(&path);
            }
        }
        // Whether the tree differs from the commit: each tracked file, by name, where
        // it exists (one deleted before a commit would rerun this on every build).
        for path in git(&["ls-files", "-z"]).unwrap_or_default().split('\0') {
            if !path.is_empty() && std::path::Path::new(path).exists() {
                rerun_if_changed(path);
            }
        }
    }
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
