use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::{Blobs, Manifest};

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261122_000001_create_blob_tables"
    }
}

/// A column type that holds the largest blob (32 MiB by default) on every backend.
///
/// MySQL/MariaDB `BLOB` holds only 64 KiB and a bare `Vec<u8>` maps to
/// `varbinary(255)`, so MariaDB gets `LONGBLOB` (4 GiB). PostgreSQL's `bytea`
/// (1 GB) and SQLite's `blob` (SQLITE_MAX_LENGTH, 1e9 bytes) are large enough.
fn blob_column(backend: DbBackend) -> ColumnDef {
    let mut column = ColumnDef::new(Blobs::Data);
    match backend {
        DbBackend::MySql => column.custom(Alias::new("LONGBLOB")),
        _ => column.blob(),
    };
    column.not_null();
    column
}

/// The primary key column of `blobs`: a dataset chooses it (`--key`), so a keyed
/// dataset creates its table from this same definition before the migration runs
/// (which then leaves the existing table alone: `if_not_exists`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyColumn {
    /// BIGINT ids. In SQLite an INTEGER PRIMARY KEY is the rowid alias: the blob
    /// lives in the table b-tree itself, no second index lookup.
    Integer,
    /// 16 bytes: SQLite BLOB (a rowid table plus an index on the key, as SQLite
    /// makes for any other primary key), PostgreSQL BYTEA, MySQL-wire BINARY(16)
    /// (InnoDB clusters the rows by it).
    Binary16,
}

/// The blob column of `blobs`: the bytes themselves, or (PostgreSQL large objects) the
/// oid of a large object holding them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataColumn {
    Blob,
    Oid,
}

/// `blobs (id <key> PRIMARY KEY, data <blob or oid>)`.
pub fn blobs_table(backend: DbBackend, key: KeyColumn, data: DataColumn) -> TableCreateStatement {
    let mut id = ColumnDef::new(Blobs::Id);
    match key {
        KeyColumn::Integer => id.big_integer(),
        KeyColumn::Binary16 => match backend {
            DbBackend::Sqlite => id.blob(),
            _ => id.binary_len(16),
        },
    };
    id.not_null().primary_key();
    Table::create()
        .table(Blobs::Table)
        .if_not_exists()
        .col(id)
        .col(match data {
            DataColumn::Blob => blob_column(backend),
            DataColumn::Oid => {
                let mut column = ColumnDef::new(Blobs::Data);
                column.custom(Alias::new("oid")).not_null();
                column
            }
        })
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        manager
            .create_table(blobs_table(backend, KeyColumn::Integer, DataColumn::Blob))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Manifest::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(Manifest::Id)
                            .integer()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Manifest::SizeBytes).big_integer().not_null())
                    .col(ColumnDef::new(Manifest::Rows).big_integer().not_null())
                    // u64 seeds do not fit a signed BIGINT: stored as decimal text.
                    .col(ColumnDef::new(Manifest::Seed).string().not_null())
                    .col(
                        ColumnDef::new(Manifest::DatasetBytes)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Manifest::Complete).boolean().not_null())
                    .col(ColumnDef::new(Manifest::FormatVersion).integer().not_null())
                    .col(ColumnDef::new(Manifest::LoadedAt).string())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Manifest::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Blobs::Table).to_owned())
            .await
    }
}
