//! Schema for one size class's dataset on any backend: a `blobs` table and a
//! one-row `manifest` table.
//!
//! Every size class lives in its own namespace (an SQLite file, a PostgreSQL
//! schema, a MariaDB database), so "one table per size class" holds while the
//! SeaORM entity keeps a static table name and any size class can be created.

pub use sea_orm_migration::prelude::*;

mod m20261122_000001_create_blob_tables;

pub use m20261122_000001_create_blob_tables::{DataColumn, KeyColumn, blobs_table};

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![Box::new(m20261122_000001_create_blob_tables::Migration)]
    }
}

/// Table and column names shared with the entities in the main crate.
#[derive(DeriveIden)]
pub enum Blobs {
    Table,
    Id,
    Data,
}

#[derive(DeriveIden)]
pub enum Manifest {
    Table,
    Id,
    SizeBytes,
    Rows,
    Seed,
    DatasetBytes,
    Complete,
    FormatVersion,
    LoadedAt,
}
