//! One fetch from an S3 store: a GET of the blob's object, its body streamed into the
//! reused buffer. The client (object_store's, over reqwest) keeps its connection
//! open between fetches; it allocates per request (the request, its headers and
//! signature, each body chunk), as every S3 client does, and that is part of what
//! an application pays.

use std::time::Instant;

use anyhow::Result;
use futures_util::StreamExt;
use object_store::ObjectStoreExt;
use object_store::aws::AmazonS3;
use object_store::path::Path as ObjectPath;

use super::s3::S3Url;
use super::store::{bucket_name, object_name_into};
use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings, Streaming};
use crate::db::locations::Locations;
use crate::db::server::Server;

pub struct S3Engine {
    client: AmazonS3,
    spec: DatasetSpec,
    name: String,
    settings: EngineSettings,
}

impl S3Engine {
    pub async fn open(server: Server, at: &Locations, spec: DatasetSpec) -> Result<S3Engine> {
        // Through the run's network, where it set one (`deploy::network`).
        let url = server.require_url(at.fetch_url(server))?;
        let parsed = S3Url::parse(&url)?;
        let bucket = bucket_name(server, &spec);
        // The manifest alone, over S3: no `weed shell` per client (see `version_once`).
        let mut store = super::store::S3Store::new(server, Some(&url), spec, at.places.clone());
        if !store.is_complete().await? {
            let path = crate::db::store::Store::location(&store).to_path_buf();
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow::anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path }
            ));
        }
        let version = super::admin::version_once(&at.places, server.name(), Some(&url)).await;
        let settings = EngineSettings::from([
            ("server_version".into(), version),
            ("bucket".into(), bucket.clone()),
            ("endpoint".into(), parsed.endpoint.clone()),
            (
                "access".into(),
                "GET /<bucket>/<id>, body streamed into the reused buffer (object_store 0.14.2, retries off)".into(),
            ),
        ]);
        Ok(S3Engine {
            client: parsed.bucket(&bucket)?,
            spec,
            name: String::with_capacity(40),
            settings,
        })
    }
}

impl S3Engine {
    /// GET the blob's object, its body streamed into `out`; with `MARK_FIRST`, when its
    /// first body chunk landed (otherwise no clock is read inside `fetch`).
    #[inline]
    async fn get_into<const MARK_FIRST: bool>(
        &mut self,
        id: u64,
        out: &mut Vec<u8>,
    ) -> Result<Option<Instant>> {
        object_name_into(&self.spec, id, &mut self.name);
        let got = self
            .client
            .get(&ObjectPath::from(self.name.as_str()))
            .await
            .map_err(super::s3::fetch_error)?;
        out.clear();
        let mut body = got.into_stream();
        let mut first = None;
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk.map_err(super::s3::fetch_error)?);
            if MARK_FIRST && first.is_none() {
                first = Some(Instant::now());
            }
        }
        Ok(first)
    }
}

impl Engine for S3Engine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        self.get_into::<false>(id, out).await?;
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    fn streaming(&self) -> Streaming {
        Streaming::Chunks(
            "one GET, its body read as the HTTP client yields it: first bytes = the first body chunk",
        )
    }

    /// The same GET: its body already arrives in pieces, and the first one is what a
    /// page serving the object could send on.
    async fn fetch_streamed(
        &mut self,
        id: u64,
        _chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<Instant> {
        self.get_into::<true>(id, out)
            .await?
            .ok_or_else(|| anyhow::anyhow!("object {} has an empty body", self.name))
    }
}
