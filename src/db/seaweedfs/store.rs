//! A dataset as one bucket of an S3 store, one object per blob: the object's name is
//! its id (or its 16-byte key in hex, for `--key`), and `manifest.json` beside them
//! is the dataset's manifest (the resume point while loading, complete once done).
//! The store's process does the writing, so what it caches is charged to its own
//! capped container.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use object_store::aws::AmazonS3;
use object_store::path::Path as ObjectPath;
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStore, ObjectStoreExt, PutOptions, PutPayload,
};
use tokio::task::JoinSet;

use super::admin;
use super::s3::{S3Url, explain};
use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::server::place::Places;
use crate::db::server::{Server, redact_url};
use crate::db::store::{IdRange, Store, rows_for_batch};
use crate::disk::evict::EvictionReport;
use crate::error::InputError;

/// About this many bytes of blobs per batch, PUT concurrently.
const BATCH_BYTES: u64 = 16 << 20;
/// PUTs (GETs) in flight at once while loading (prefilling): enough to keep the store's CPUs busy with
/// small objects (one PUT at a time leaves them waiting on round trips)...
const REQUESTS_IN_FLIGHT: usize = 16;
/// ... and more for small objects, whose PUT is four hops inside SeaweedFS (S3 handler,
/// the filer's volume assignment from the master, the volume server's write, the
/// filer's entry): 262,144 objects of 1 KiB under 1 GiB went in 149.1 s with 16 in
/// flight and 127.1 s with 48 (1,758 and 2,063 a second, its process at 142% and 143%
/// of a core either way, 2026-11-28); 48 of 64 KiB hold 3 MiB...
const SMALL_REQUESTS_IN_FLIGHT: usize = 48;
const SMALL_OBJECT_BYTES: u64 = 64 << 10;
/// ... and at most this many bytes of larger objects: the store holds about 4 copies of each
/// object in flight (`MemoryModel::fetch_copies`), so 16 PUTs of 32 MiB would need 2 GiB.
const BYTES_IN_FLIGHT: u64 = 64 << 20;

/// Requests in flight for objects of `blob_bytes`: 48 up to 64 KiB, 16 up to 4 MiB, 2 at
/// 32 MiB.
pub fn requests_in_flight(blob_bytes: u64) -> usize {
    if blob_bytes <= SMALL_OBJECT_BYTES {
        return SMALL_REQUESTS_IN_FLIGHT;
    }
    (BYTES_IN_FLIGHT / blob_bytes.max(1)).clamp(1, REQUESTS_IN_FLIGHT as u64) as usize
}
const MANIFEST: &str = "manifest.json";

/// The bucket of a dataset: S3 bucket names are lowercase letters, digits and hyphens.
pub fn bucket_name(server: Server, spec: &DatasetSpec) -> String {
    server
        .namespace(spec, &Default::default())
        .replace('_', "-")
}

/// An object's name for a row: its id, or its key in hex. Written into `out`, so a
/// fetch formats it without allocating.
pub fn object_name_into(spec: &DatasetSpec, id: u64, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    match spec.key_of(id) {
        None => {
            let _ = write!(out, "{id}");
        }
        Some(key) => {
            for byte in key {
                let _ = write!(out, "{byte:02x}");
            }
        }
    }
}

pub struct S3Store {
    server: Server,
    spec: DatasetSpec,
    url: Option<String>,
    /// Where the run found the store (`place`): its compose container, or remote.
    places: Places,
    bucket: String,
    location: PathBuf,
    client: Option<Arc<AmazonS3>>,
    endpoint: String,
    manifest: Option<Manifest>,
}

impl S3Store {
    pub fn new(server: Server, url: Option<&str>, spec: DatasetSpec, places: Places) -> Self {
        let bucket = bucket_name(server, &spec);
        let location = PathBuf::from(format!(
            "{}/{bucket}",
            url.map(redact_url)
                .unwrap_or_else(|| format!("{}://(no URL)", server.name()))
        ));
        Self {
            server,
            spec,
            url: url.map(str::to_string),
            places,
            bucket,
            location,
            client: None,
            endpoint: String::new(),
            manifest: None,
        }
    }

    fn client(&mut self) -> Result<Arc<AmazonS3>> {
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        let url = self.server.require_url(self.url.as_deref())?;
        let parsed = S3Url::parse(&url)?;
        self.endpoint = parsed.endpoint.clone();
        let client = Arc::new(parsed.bucket(&self.bucket)?);
        self.client = Some(client.clone());
        Ok(client)
    }

    fn explain(&self, error: object_store::Error, doing: &str) -> anyhow::Error {
        explain(error, self.server.name(), &self.endpoint, doing)
    }

    /// A failed write explained, and where the store answered 500, why it refuses
    /// writes if its own tools tell (admin::why_writes_fail): its answer names no cause.
    async fn explain_write(&self, error: object_store::Error, doing: &str) -> anyhow::Error {
        let refused = format!("{error}").contains(" 500 ");
        let error = self.explain(error, doing);
        if !refused {
            return error;
        }
        match admin::why_writes_fail(
            &self.places,
            self.server.name(),
            self.server.container_data_dir(),
        )
        .await
        {
            Some(why) => error.context(format!("{} refuses writes: {why}", self.server.name())),
            None => error,
        }
    }

    /// The manifest, asked again for up to 60 s while the store answers 5xx: right
    /// after a restart its S3 port is healthy before its filer serves (a re-run after
    /// the servers restarted got "500 InternalError" for 16 s).
    async fn read_manifest(&mut self) -> Result<Option<Manifest>> {
        let started = std::time::Instant::now();
        loop {
            match self.read_manifest_once().await {
                Err(e)
                    if started.elapsed() < std::time::Duration::from_secs(60)
                        && [" 500 ", " 502 ", " 503 "]
                            .iter()
                            .any(|code| format!("{e:#}").contains(code)) =>
                {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                read => return read,
            }
        }
    }

    async fn read_manifest_once(&mut self) -> Result<Option<Manifest>> {
        let client = self.client()?;
        match client.get(&ObjectPath::from(MANIFEST)).await {
            Ok(got) => {
                let bytes = got
                    .bytes()
                    .await
                    .map_err(|e| self.explain(e, "cannot read the manifest"))?;
                serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                    InputError::ForeignFile {
                        path: self.location.clone(),
                        why: format!("its {MANIFEST} is not readable JSON ({e})"),
                    }
                    .into()
                })
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.explain(e, "cannot read the manifest")),
        }
    }

    /// Whether the bucket holds this dataset, complete: its manifest says so (a
    /// missing bucket or manifest: not complete).
    pub async fn is_complete(&mut self) -> Result<bool> {
        match self.read_manifest().await? {
            Some(manifest) => {
                manifest.check_matches(&self.spec, &self.location)?;
                Ok(manifest.complete)
            }
            None => Ok(false),
        }
    }

    async fn write_manifest(&mut self, manifest: &Manifest) -> Result<()> {
        let client = self.client()?;
        let json = serde_json::to_vec(manifest)?;
        match client
            .put(&ObjectPath::from(MANIFEST), PutPayload::from(json))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(self.explain_write(e, "cannot write the manifest").await),
        }
    }

    /// Whether the bucket holds any object.
    async fn has_objects(&mut self) -> Result<bool> {
        let client = self.client()?;
        let first = client.list(None).next().await;
        match first {
            None => Ok(false),
            Some(Ok(_)) => Ok(true),
            Some(Err(e)) => Err(self.explain(e, "cannot list the bucket")),
        }
    }
}

#[async_trait::async_trait(?Send)]
impl Store for S3Store {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.location
    }

    async fn state(&mut self) -> Result<DatasetState> {
        // The manifest first, over S3: wrong credentials or a store that does not
        // answer are said here, before anything is made in it.
        let Some(manifest) = self.read_manifest().await? else {
            if !admin::bucket_exists(
                &self.places,
                self.server.name(),
                self.url.as_deref(),
                &self.bucket,
            )
            .await?
            {
                return Ok(DatasetState::Absent);
            }
            if self.has_objects().await? {
                return Err(InputError::ForeignFile {
                    path: self.location.clone(),
                    why: format!("the bucket has objects but no {MANIFEST}"),
                }
                .into());
            }
            return Ok(DatasetState::Partial { rows_done: 0 });
        };
        Ok(manifest.state_of(&self.spec, &self.location)?)
    }

    async fn begin(&mut self) -> Result<u64> {
        if let DatasetState::Absent = self.state().await? {
            admin::create_bucket(
                &self.places,
                self.server.name(),
                self.url.as_deref(),
                &self.bucket,
            )
            .await?;
        }
        let manifest = match self.read_manifest().await? {
            Some(m) => m,
            None => {
                let mut m = Manifest::started(&self.spec);
                m.rows_done = Some(0);
                self.write_manifest(&m).await?;
                m
            }
        };
        let done = manifest.rows_done.unwrap_or(0);
        self.manifest = Some(manifest);
        Ok(done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, 4096)
    }

    /// PUT the batch's objects, `requests_in_flight` at a time, then move the manifest's
    /// resume point past them: a load killed mid-batch PUTs that batch again (an
    /// object PUT twice holds the same bytes). Every blob is one PUT: S3 takes up to
    /// 5 GiB in one, and the largest blob here is 32 MiB.
    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let client = self.client()?;
        let Some(last) = (first_id + blobs.len() as u64).checked_sub(1) else {
            return Ok(());
        };
        let mut in_flight = JoinSet::new();
        let mut name = String::new();
        for (i, data) in std::mem::take(blobs).into_iter().enumerate() {
            let id = first_id + i as u64;
            object_name_into(&self.spec, id, &mut name);
            let path = ObjectPath::from(name.as_str());
            let client = client.clone();
            // The content type a user uploading such documents sends: SeaweedFS gzips
            // text, JSON and HTML where that saves 10% or more, and stores octet-streams
            // as sent (random bytes keep the request they always made).
            let options = match self.spec.content.is_random() {
                true => PutOptions::default(),
                false => PutOptions::from(Attributes::from_iter([(
                    Attribute::ContentType,
                    AttributeValue::from(self.spec.content.mime()),
                )])),
            };
            in_flight.spawn(async move {
                client
                    .put_opts(&path, PutPayload::from(data), options)
                    .await
                    .map(|_| id)
            });
            if in_flight.len() >= requests_in_flight(self.spec.size.bytes())
                && let Some(done) = in_flight.join_next().await
                && let Err(e) = done.context("a PUT task failed")?
            {
                return Err(self.explain_write(e, "cannot PUT a blob").await);
            }
        }
        while let Some(done) = in_flight.join_next().await {
            if let Err(e) = done.context("a PUT task failed")? {
                return Err(self.explain_write(e, "cannot PUT a blob").await);
            }
        }
        let mut manifest = self.manifest.take().context("append before begin")?;
        manifest.rows_done = Some(last);
        let written = self.write_manifest(&manifest).await;
        self.manifest = Some(manifest);
        written
    }

    async fn finish(&mut self) -> Result<()> {
        let mut manifest = self.manifest.take().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        let written = self.write_manifest(&manifest).await;
        self.manifest = Some(manifest);
        written
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // A needle: the blob, a header, checksum and timestamp, padded to 8 bytes;
        // 16 bytes in the volume's index; the filer's entry in its LevelDB; its line in
        // the filer's metadata log (about 1.3 KB, until a drop trims it: admin.rs).
        let per_object = |size: u64| size.div_ceil(8) * 8 + 64 + 16 + 512 + 1400;
        self.spec.sum_over_rows(rows, per_object)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        if self.state().await? != DatasetState::Complete {
            bail!("{} is not loaded", self.location.display());
        }
        // Connections to a restarted store are dead: open new ones after it.
        self.client = None;
        let mut report =
            crate::db::server::cold::restart_cold(self.server, self.url.as_deref(), &self.places)
                .await?;
        // Healthy is its S3 port answering; its master and filer may take a few more
        // seconds: wait (up to 60 s) until the dataset reads as complete again.
        let started = std::time::Instant::now();
        loop {
            match self.state().await {
                Ok(DatasetState::Complete) => {
                    report.seconds += started.elapsed().as_secs_f64();
                    return Ok(report);
                }
                Ok(other) => bail!(
                    "{} reads as {other:?} after a restart",
                    self.location.display()
                ),
                Err(e) if started.elapsed() > std::time::Duration::from_secs(60) => {
                    return Err(
                        e.context("the store did not serve again within 60 s of its restart")
                    );
                }
                Err(e) => {
                    // Killed or stopped meanwhile: say so now, not after 60 s of waiting.
                    if let Some(why) = crate::docker::service_why_down(self.server.name()).await {
                        return Err(e.context(why));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await
                }
            }
        }
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let client = self.client()?;
        let mut listing = client.list(None);
        let (mut count, mut min, mut max) = (0, u64::MAX, 0);
        let keyed = self.spec.key.is_binary();
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|e| self.explain(e, "cannot list the bucket"))?;
            let name = meta.location.as_ref();
            if name == MANIFEST {
                continue;
            }
            count += 1;
            if !keyed {
                let id: u64 = name.parse().with_context(|| {
                    format!("unexpected object {name:?} in {}", self.location.display())
                })?;
                min = min.min(id);
                max = max.max(id);
            }
        }
        Ok(IdRange {
            count,
            ids: (!keyed).then_some((if count == 0 { 0 } else { min }, max)),
        })
    }

    async fn remove(&mut self) -> Result<()> {
        self.client = None;
        admin::delete_bucket(
            &self.places,
            self.server.name(),
            self.url.as_deref(),
            &self.bucket,
        )
        .await
    }

    /// Whole objects of consecutive ids, read through the store as a GET reads them
    /// (into its container's page cache), `requests_in_flight` at a time: S3 has no read
    /// of a range of objects, and one GET after another would take minutes at 1 KiB.
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        let client = self.client()?;
        let mut in_flight = JoinSet::new();
        let mut name = String::new();
        let mut read = 0;
        for id in crate::db::store::chunk_ids(&self.spec, at, bytes) {
            object_name_into(&self.spec, id, &mut name);
            let path = ObjectPath::from(name.as_str());
            let client = client.clone();
            in_flight.spawn(async move {
                let got = client.get(&path).await?;
                got.bytes().await.map(|b| b.len() as u64)
            });
            if in_flight.len() >= requests_in_flight(self.spec.size.bytes())
                && let Some(done) = in_flight.join_next().await
            {
                read += done
                    .context("a GET task failed")?
                    .map_err(|e| self.explain(e, "cannot GET a blob"))?;
            }
        }
        while let Some(done) = in_flight.join_next().await {
            read += done
                .context("a GET task failed")?
                .map_err(|e| self.explain(e, "cannot GET a blob"))?;
        }
        Ok(read)
    }

    /// The bucket's volume files in the store's container (the filer's shared
    /// metadata is not counted).
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        admin::bucket_disk_bytes(
            &self.places,
            self.server.name(),
            self.url.as_deref(),
            self.server.container_data_dir(),
            &self.bucket,
        )
        .await
    }
}
