//! The process's one TLS crypto provider: rustls over ring, installed before any HTTPS
//! client is built (the S3 store's, a remote store's bucket calls, the Kubernetes API's).
//!
//! Why ring and not rustls' default aws-lc-rs: aws-lc-sys compiles AWS-LC's C with a
//! 36 s build script, the longest single dependency step of a fresh `cargo test
//! --release` on a 2-core machine (2026-12-05, docs/running.md), for TLS that only the
//! Kubernetes API and an `https://` S3 endpoint use. ring builds in a few seconds and serves the same TLS
//! 1.2/1.3 suites. reqwest is built without a provider of its own (`rustls-no-provider`)
//! and panics when a client is built with none installed, hence `install` at each
//! builder rather than once in `main` (tests and benches build clients too).

/// Install ring as the process's provider, once; a provider already installed (by an
/// earlier call, or by whoever embeds blobrace) is kept.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is already installed: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_https_client_builds_with_the_provider_installed() {
        super::install();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        // reqwest panics here when no provider is installed (`rustls-no-provider`).
        reqwest::Client::builder()
            .https_only(true)
            .build()
            .expect("a client with TLS");
    }
}
