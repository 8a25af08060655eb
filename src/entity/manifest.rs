//! The one-row description of a dataset: what was loaded and whether it finished.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "manifest")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: i32,
    pub size_bytes: i64,
    pub rows: i64,
    pub seed: String,
    pub dataset_bytes: i64,
    pub complete: bool,
    pub format_version: i32,
    pub loaded_at: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
