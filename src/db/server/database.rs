//! Every `SqlServer` is a `Database`: its store is a namespace in the server
//! (`store.rs`), its engines SeaORM and raw sqlx on it (`engines.rs`).

use super::{Server, ServerDb, SqlServer, engines, store};
use crate::dataset::DatasetSpec;
use crate::db::any_engine::AnyEngine;
use crate::db::database::{Database as Db, EngineDef, Open};
use crate::db::engine::Client;
use crate::db::locations::Locations;
use crate::db::store::{BoxedStore, boxed};

/// A server engine's client side: postgres-raw 22.6 MiB and mariadb-raw 20 MiB per
/// client of 4 MiB blobs (`EngineDef::client_copies`).
const SQLX_CLIENT_COPIES: u64 = 5;

/// Every server is a database: its store is a namespace in the server, its engines
/// SeaORM and raw sqlx on it.
impl<T: SqlServer> Db for T {
    fn name(&self) -> &'static str {
        ServerDb::name(self)
    }

    fn engines(&self) -> Vec<EngineDef> {
        let [orm_help, raw_help] = self.engine_help();
        vec![
            EngineDef {
                name: ServerDb::name(self),
                help: orm_help,
                client: Client::Orm,
                client_copies: SQLX_CLIENT_COPIES,
                open: Open::Server(|server, at, spec| {
                    Box::pin(async move {
                        Ok(AnyEngine::Orm(engines::open_orm(server, at, spec).await?))
                    })
                }),
            },
            EngineDef {
                // Once per process, for the life of the process.
                name: Box::leak(format!("{}-raw", ServerDb::name(self)).into_boxed_str()),
                help: raw_help,
                client: Client::Raw,
                client_copies: SQLX_CLIENT_COPIES,
                open: Open::Server(|server, at, spec| {
                    Box::pin(engines::open_raw(server, at, spec))
                }),
            },
        ]
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        let server = Server::named(Db::name(self)).expect("every server is registered");
        boxed(store::ServerStore::new(
            server,
            at.server_url(server),
            spec,
            at.knobs.clone(),
            at.places.clone(),
        ))
    }

    fn compression(&self, knobs: &crate::db::knobs::Knobs) -> String {
        crate::db::server::Recording::compression(self, knobs)
    }

    /// What makes a server's dataset another one is what names its namespace.
    fn layout(&self, at: &Locations) -> Vec<String> {
        SqlServer::layout_words(self, &at.knobs)
            .into_iter()
            .collect()
    }

    fn changes_rows(&self) -> bool {
        true
    }

    fn server(&self) -> Option<&dyn ServerDb> {
        Some(self)
    }

    fn load_cost(&self) -> crate::db::database::LoadCost {
        super::Loading::load_cost(self)
    }
}
