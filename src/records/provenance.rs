//! What made a run, beside what it ran on (`machine`) and under (`cap`): blobrace's
//! version, the commit it was built from and whether that tree had changes, and the
//! `BLOBRACE_*` variables set when it started (they change a run as its flags do; the
//! command line is `RunResults::command`). Passwords in URLs are never written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// blobrace's version (Cargo.toml).
    pub version: String,
    /// The git commit it was built from; None where it was built outside a checkout
    /// (the runner image).
    pub commit: Option<String>,
    /// Whether tracked files differed from that commit when it was built; None where
    /// the commit is unknown.
    pub dirty: Option<bool>,
    /// Every `BLOBRACE_*` variable set when the run started, a URL's password and any
    /// secret's value replaced by "<redacted>".
    pub variables: BTreeMap<String, String>,
}

impl Provenance {
    /// This build's, and this process's variables.
    pub fn of_this_process() -> Self {
        let commit = option_env!("SOURCE_GIT_COMMIT").filter(|c| !c.is_empty());
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: commit.map(str::to_string),
            dirty: commit.and(match option_env!("SOURCE_GIT_DIRTY") {
                Some("true") => Some(true),
                Some("false") => Some(false),
                _ => None,
            }),
            variables: std::env::vars()
                .filter(|(name, _)| name.starts_with("BLOBRACE_"))
                .map(|(name, value)| {
                    let value = crate::secret::redact_variable(&name, &value);
                    (name, value)
                })
                .collect(),
        }
    }

    /// "0.1.0, commit 1a2b3c4d5e6f (tree changed)", or what is unknown.
    pub fn label(&self) -> String {
        let commit = match (&self.commit, self.dirty) {
            (Some(c), Some(true)) => format!("commit {} with changes not committed", short(c)),
            (Some(c), _) => format!("commit {}", short(c)),
            (None, _) => "commit unknown (built outside a git checkout)".into(),
        };
        format!("blobrace {}, {commit}", self.version)
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_names_its_version_and_commit_or_says_it_is_unknown() {
        let p = Provenance::of_this_process();
        assert_eq!(p.version, env!("CARGO_PKG_VERSION"));
        match &p.commit {
            Some(c) => {
                assert_eq!(c.len(), 40, "{c}");
                assert!(p.dirty.is_some());
                assert!(p.label().contains(&c[..12]), "{}", p.label());
            }
            None => assert!(p.label().contains("unknown"), "{}", p.label()),
        }
    }
}
