//! One row of a keyed size class (`--key uuidv4|uuidv7|ulid`): the same `blobs` table
//! with a 16-byte primary key, fetched with `find_by_id` as an application keyed by
//! UUIDs or ULIDs would.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "blobs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Blob")]
    pub id: Vec<u8>,
    #[sea_orm(column_type = "Blob")]
    pub data: Vec<u8>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
