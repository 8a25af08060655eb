//! A bucket made, checked and dropped through the S3 API itself, for a store blobrace
//! does not manage (`Places::remote`: a SeaweedFS in a Kubernetes pod, on another host):
//! there is no container to run `weed shell` in (admin.rs). object_store has no bucket
//! calls, so these three requests are signed with its own SigV4 signer
//! (`AwsAuthorizer`) and sent with the reqwest it already builds.
//!
//! What the shell does and S3 does not: a SeaweedFS bucket made through S3 is still a
//! collection of its own (the filer puts `/buckets/<name>` in collection `<name>`, seen
//! with `collection.list`), and its DeleteBucket drops that collection, but only once
//! the bucket is empty: its objects are deleted first, a thousand at a time (slow for
//! millions of 1 KiB objects, where the shell drops the collection at once). The
//! filer's metadata log is not trimmed and a bucket's bytes on disk are unavailable:
//! both need the store's files.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use object_store::aws::{AwsAuthorizer, AwsCredential};
use object_store::client::{HttpRequest, HttpRequestBody};

use super::s3::S3Url;

/// One signed request on the bucket: its status and body.
async fn request(url: &S3Url, method: &str, bucket: &str) -> Result<(u16, String)> {
    let uri = format!("{}/{bucket}", url.endpoint.trim_end_matches('/'));
    let mut signed: HttpRequest = http::Request::builder()
        .method(method)
        .uri(&uri)
        .body(HttpRequestBody::empty())
        .with_context(|| format!("{method} {uri}: not a request"))?;
    let credential = AwsCredential {
        key_id: url.access_key.clone(),
        secret_key: url.secret_key.clone(),
        token: None,
    };
    // The region the object client signs with (s3.rs): SeaweedFS accepts any.
    AwsAuthorizer::new(&credential, "s3", "us-east-1")
        .try_authorize(&mut signed, None)
        .with_context(|| format!("{method} {uri}: cannot sign it"))?;
    crate::tls::install();
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(300))
        .build()
        .context("cannot build an HTTP client")?;
    let mut sent = client.request(
        reqwest::Method::from_bytes(method.as_bytes()).context("not an HTTP method")?,
        &uri,
    );
    for (name, value) in signed.headers() {
        sent = sent.header(name.as_str(), value.as_bytes());
    }
    let response = sent.send().await.with_context(|| {
        format!(
            "{method} {}/{bucket}: the store does not answer",
            url.endpoint
        )
    })?;
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    Ok((status, body))
}

/// The S3 error code of a response body (`<Code>NoSuchBucket</Code>`).
fn code(body: &str) -> &str {
    body.split_once("<Code>")
        .and_then(|(_, rest)| rest.split_once("</Code>"))
        .map(|(code, _)| code)
        .unwrap_or("")
}

fn refused(url: &S3Url, what: &str, bucket: &str, status: u16, body: &str) -> anyhow::Error {
    let fix = match status {
        403 => ": the URL's access key and secret are not the store's identity",
        _ => "",
    };
    anyhow::anyhow!(
        "{}: cannot {what} bucket {bucket}: {status} {}{fix}",
        url.endpoint,
        code(body)
    )
}

pub async fn bucket_exists(url: &S3Url, bucket: &str) -> Result<bool> {
    match request(url, "HEAD", bucket).await? {
        (200, ..) => Ok(true),
        (404, ..) => Ok(false),
        (status, body) => Err(refused(url, "look for", bucket, status, &body)),
    }
}

pub async fn create_bucket(url: &S3Url, bucket: &str) -> Result<()> {
    match request(url, "PUT", bucket).await? {
        (200, ..) => Ok(()),
        (409, body) if code(&body) == "BucketAlreadyOwnedByYou" => Ok(()),
        (status, body) => Err(refused(url, "create", bucket, status, &body)),
    }
}

/// Drop a bucket: S3 deletes only an empty one (SeaweedFS 4.53 answers BucketNotEmpty
/// otherwise), so its objects go first, a thousand per DeleteObjects request, then the
/// bucket, and with it the store's collection.
pub async fn delete_bucket(url: &S3Url, bucket: &str) -> Result<()> {
    if !bucket_exists(url, bucket).await? {
        return Ok(());
    }
    let emptied = empty_bucket(url, bucket).await?;
    match request(url, "DELETE", bucket).await? {
        (200 | 204 | 404, ..) => {}
        (status, body) => {
            return Err(refused(url, "delete", bucket, status, &body)
                .context(format!("after deleting its {emptied} objects")));
        }
    }
    if bucket_exists(url, bucket).await? {
        bail!(
            "{}: bucket {bucket} is still there after its DELETE",
            url.endpoint
        );
    }
    Ok(())
}

/// Delete every object of the bucket through the object client (`DeleteObjects`);
/// how many.
async fn empty_bucket(url: &S3Url, bucket: &str) -> Result<u64> {
    use futures_util::StreamExt;
    use object_store::ObjectStore;
    let client = url.bucket(bucket)?;
    let names = client
        .list(None)
        .map(|meta| meta.map(|m| m.location))
        .boxed();
    let mut deleted = client.delete_stream(names);
    let mut count = 0;
    while let Some(done) = deleted.next().await {
        done.with_context(|| format!("{}: cannot empty bucket {bucket}", url.endpoint))?;
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::code;

    #[test]
    fn an_s3_error_code_is_read_from_its_body() {
        let body =
            "<?xml version=\"1.0\"?><Error><Code>BucketNotEmpty</Code><Message>x</Message></Error>";
        assert_eq!(code(body), "BucketNotEmpty");
        assert_eq!(code(""), "");
    }
}
