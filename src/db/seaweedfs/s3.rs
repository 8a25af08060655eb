//! Reaching an S3-compatible store: its URL (`s3://ACCESS_KEY:SECRET@host:port`, plain
//! HTTP as compose publishes it on 127.0.0.1; `s3+https://` for TLS), one client per
//! bucket, and the errors that say which store and what to fix.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::{ClientOptions, RetryConfig};

/// Where an S3 store is and the credentials of its one identity.
#[derive(Clone)]
pub struct S3Url {
    pub endpoint: String,
    pub access_key: String,
    pub secret_key: String,
}

impl S3Url {
    /// `s3://KEY:SECRET@host:port` (HTTP) or `s3+https://KEY:SECRET@host[:port]`.
    pub fn parse(url: &str) -> Result<S3Url> {
        let (scheme, rest) = url
            .split_once("://")
            .with_context(|| format!("{}: not a URL", super::super::server::redact_url(url)))?;
        let http = match scheme {
            "s3" => "http",
            "s3+https" => "https",
            other => bail!(
                "{}: scheme {other}:// is not an S3 store's (use s3://ACCESS_KEY:SECRET@host:port)",
                super::super::server::redact_url(url)
            ),
        };
        let (credentials, host) = rest.rsplit_once('@').with_context(|| {
            format!(
                "{}: no credentials (use s3://ACCESS_KEY:SECRET@host:port)",
                super::super::server::redact_url(url)
            )
        })?;
        let (access_key, secret_key) = credentials.split_once(':').with_context(|| {
            format!(
                "{}: no secret key (use s3://ACCESS_KEY:SECRET@host:port)",
                super::super::server::redact_url(url)
            )
        })?;
        let host = host.trim_end_matches('/');
        if host.is_empty() || host.contains('/') {
            bail!(
                "{}: the host must be host:port, nothing after it",
                super::super::server::redact_url(url)
            );
        }
        Ok(S3Url {
            endpoint: format!("{http}://{host}"),
            access_key: access_key.to_string(),
            secret_key: secret_key.to_string(),
        })
    }

    /// A client of one bucket. No retries: a fetch that fails is reported, never
    /// quietly timed again (object_store's default retries 10 times over 3 minutes,
    /// which would hide a store that went down); path-style requests (the bucket in
    /// the path, as SeaweedFS and any store on an IP address serve them).
    pub fn bucket(&self, bucket: &str) -> Result<AmazonS3> {
        // object_store builds its reqwest client in `build()`: the provider first.
        crate::tls::install();
        AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_virtual_hosted_style_request(false)
            .with_region("us-east-1")
            .with_bucket_name(bucket)
            .with_access_key_id(&self.access_key)
            .with_secret_access_key(&self.secret_key)
            .with_retry(RetryConfig {
                max_retries: 0,
                retry_timeout: Duration::from_secs(60),
                ..Default::default()
            })
            .with_client_options(
                ClientOptions::new()
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(120)),
            )
            // After the client options, which hold this setting too.
            .with_allow_http(self.endpoint.starts_with("http://"))
            .build()
            .with_context(|| format!("cannot set up an S3 client for {}", self.endpoint))
    }
}

/// What an S3 error means here, with the fix: wrong credentials, a store that does not
/// answer, or the error as it came.
pub fn explain(
    error: object_store::Error,
    store: &str,
    endpoint: &str,
    doing: &str,
) -> anyhow::Error {
    let text = format!("{error}");
    let why = if text.contains("InvalidAccessKeyId")
        || text.contains("SignatureDoesNotMatch")
        || text.contains("AccessDenied")
        || matches!(
            error,
            object_store::Error::Unauthenticated { .. }
                | object_store::Error::PermissionDenied { .. }
        ) {
        format!(
            "the store refused the credentials: check SEAWEEDFS_ACCESS_KEY and SEAWEEDFS_SECRET_KEY in compose/.env, or the key and secret in BLOBRACE_{}_URL",
            store.to_uppercase()
        )
    } else if text.contains("Connection refused")
        || text.contains("error sending request")
        || text.contains("connection closed")
        || text.contains("timed out")
    {
        // object_store's text repeats the request and its retries' wrappers five deep:
        // the innermost cause ("Connection refused (os error 111)") is the one to say.
        return anyhow::anyhow!(
            "{store} at {endpoint}: {doing}: nothing answers there ({}): is it running? start it with: {}",
            innermost(&error),
            super::super::server::COMPOSE_UP
        );
    } else {
        String::new()
    };
    let error = anyhow::Error::new(error);
    if why.is_empty() {
        error.context(format!("{store} at {endpoint}: {doing}"))
    } else {
        error.context(format!("{store} at {endpoint}: {doing}: {why}"))
    }
}

/// object_store's text repeats the request and its retries' wrappers five deep ("Generic
/// S3 error: Error performing GET … HTTP error: error sending request: …"): the
/// innermost cause ("Connection refused (os error 111)") is the one to say.
fn innermost(error: &object_store::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// A failed GET or body read while measuring, said by its innermost cause; the store's
/// name and the object come from the caller's context.
pub fn fetch_error(error: object_store::Error) -> anyhow::Error {
    anyhow::anyhow!("{}", innermost(&error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetch_error_is_said_by_its_innermost_cause() {
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "HTTP error: error sending request: {}", self.0)
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let error = object_store::Error::Generic {
            store: "S3",
            source: Box::new(Wrapper(refused)),
        };
        assert!(format!("{error}").contains("Generic S3 error"));
        assert_eq!(format!("{:#}", fetch_error(error)), "Connection refused");
        let error = object_store::Error::Generic {
            store: "S3",
            source: "no source below".into(),
        };
        let said = format!(
            "{:#}",
            explain(error, "seaweedfs", "http://h:1", "cannot list")
        );
        assert!(
            said.starts_with("seaweedfs at http://h:1: cannot list"),
            "{said}"
        );
    }

    #[test]
    fn an_s3_url_gives_its_endpoint_and_credentials_and_bad_ones_say_what_is_wrong() {
        let url = S3Url::parse("s3://key:sec:ret@127.0.0.1:18333").unwrap();
        assert_eq!(url.endpoint, "http://127.0.0.1:18333");
        assert_eq!(
            (url.access_key.as_str(), url.secret_key.as_str()),
            ("key", "sec:ret")
        );
        let tls = S3Url::parse("s3+https://k:s@store.example/").unwrap();
        assert_eq!(tls.endpoint, "https://store.example");
        for (bad, says) in [
            ("http://k:s@h:1", "scheme http://"),
            ("s3://h:1", "no credentials"),
            ("s3://k@h:1", "no secret key"),
            ("s3://k:s@h:1/bucket", "nothing after it"),
        ] {
            let error = format!("{:#}", S3Url::parse(bad).err().unwrap());
            assert!(error.contains(says), "{bad}: {error}");
            assert!(!error.contains(":s@"), "the secret is redacted: {error}");
        }
    }
}
