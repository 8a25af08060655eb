//! SeaORM entities for the schema the `migration` crate creates.
pub mod blob;
pub mod blob_keyed;
pub mod manifest;
