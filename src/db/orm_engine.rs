//! The fetch every SeaORM engine does, whatever the database: what an
//! application writes to get one row by primary key.

use anyhow::{Context, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, QuerySelect, Select, Statement};

use super::engine::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::entity::{blob, blob_keyed};

pub struct OrmEngine {
    db: DatabaseConnection,
    spec: DatasetSpec,
    /// The bytes are not the `data` column itself but this expression of it
    /// (PostgreSQL's `lo_get(data)`): selected as `data`.
    data_expr: Option<&'static str>,
    settings: EngineSettings,
}

impl OrmEngine {
    pub fn new(db: DatabaseConnection, spec: DatasetSpec, mut settings: EngineSettings) -> Self {
        let access = if spec.key.is_binary() {
            "sea-orm blob_keyed::Entity::find_by_id(key.to_vec()).one(&db)"
        } else {
            "sea-orm blob::Entity::find_by_id(id).one(&db)"
        };
        settings.insert("access".into(), access.into());
        Self {
            db,
            spec,
            data_expr: None,
            settings,
        }
    }

    /// Read the bytes through `expr` of the column where it is not `data`.
    pub fn reading(mut self, expr: &'static str) -> Self {
        if expr != "data" {
            self.data_expr = Some(expr);
            let access = self.settings.get("access").cloned().unwrap_or_default();
            self.settings.insert(
                "access".into(),
                format!("{access}, selecting id and {expr} AS data"),
            );
        }
        self
    }
}

/// `find` as it is, or, where the bytes are an expression of the column (large
/// objects), selecting the id and that expression as `data`, as such an application
/// writes.
fn selecting_data<E: EntityTrait>(
    find: Select<E>,
    id: E::Column,
    data_expr: Option<&'static str>,
) -> Select<E> {
    match data_expr {
        Some(expr) => find
            .select_only()
            .column(id)
            .column_as(Expr::cust(expr), "data"),
        None => find,
    }
}

impl Engine for OrmEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        // SeaORM takes the key as an owned value, as an application's lookup does.
        let data = match self.spec.key_of(id) {
            Some(key) => selecting_data(
                blob_keyed::Entity::find_by_id(key.to_vec()),
                blob_keyed::Column::Id,
                self.data_expr,
            )
            .one(&self.db)
            .await?
            .map(|row| row.data),
            None => selecting_data(
                blob::Entity::find_by_id(id as i64),
                blob::Column::Id,
                self.data_expr,
            )
            .one(&self.db)
            .await?
            .map(|row| row.data),
        };
        *out = data.with_context(|| format!("row {id} not found"))?;
        Ok(())
    }

    fn before_fetch(&mut self, _id: u64, out: &mut Vec<u8>) {
        // The ORM allocates a new Vec per row; free the previous one outside the clock.
        drop(std::mem::take(out));
    }

    fn streaming(&self) -> crate::db::engine::Streaming {
        crate::db::engine::Streaming::No("whole value only: the ORM returns the row whole")
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    async fn close(self) -> Result<()> {
        Ok(self.db.close().await?)
    }
}

/// Run each query (one value each) and record its first column as text.
pub(super) async fn read_settings(
    db: &DatabaseConnection,
    queries: &[(&str, &str)],
) -> Result<EngineSettings> {
    let mut settings = EngineSettings::new();
    for (key, sql) in queries {
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), *sql))
            .await
            .with_context(|| format!("reading setting {key}"))?
            .with_context(|| format!("{sql} returned nothing"))?;
        let value = row
            .try_get_by_index::<String>(0)
            .or_else(|_| row.try_get_by_index::<i64>(0).map(|v| v.to_string()))?;
        settings.insert(key.to_string(), value);
    }
    Ok(settings)
}
