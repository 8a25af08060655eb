//! Each database's own knobs (`--sqlite-page-size`, `--pg-storage`, ...), held for the
//! stores and engines without this layer naming any database. A database declares its
//! knobs in its folder (`db/<name>/knobs.rs`: the flags, their variables, defaults and
//! help, and how they are recorded); the registry collects them into the run's flags
//! (`registry::DatabaseKnobs`); a store or engine reads its own with `Knobs::get`.

use std::any::Any;
use std::sync::Arc;

/// One database's knobs, as its folder declares them.
pub trait KnobSet: Any + Send + Sync + std::fmt::Debug {
    /// How the report and `blobrace compare` name these settings:
    /// `SQLite page 4096 B, mmap_size 0`.
    fn label(&self) -> String;

    /// Why these settings cannot go together (one line naming the fix), before anything
    /// is made.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Every database's knobs of a run, each read by its own database.
#[derive(Debug, Clone, Default)]
pub struct Knobs(Vec<Arc<dyn KnobSet>>);

impl Knobs {
    /// These knobs with `set` among them, in place of an earlier set of its type.
    pub fn with<K: KnobSet>(mut self, set: K) -> Self {
        self.0.retain(|held| !(held.as_ref() as &dyn Any).is::<K>());
        self.0.push(Arc::new(set));
        self
    }

    /// A database's own knobs: as the run set them, or the database's defaults where
    /// nothing set them (a store opened for `blobrace env`, `drop` or a test).
    pub fn get<K: KnobSet + Default + Clone>(&self) -> K {
        self.0
            .iter()
            .find_map(|held| (held.as_ref() as &dyn Any).downcast_ref::<K>())
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq)]
    struct Pages(u32);
    impl KnobSet for Pages {
        fn label(&self) -> String {
            format!("page {}", self.0)
        }
    }

    #[derive(Debug, Clone, Default, PartialEq)]
    struct Storage(&'static str);
    impl KnobSet for Storage {
        fn label(&self) -> String {
            self.0.into()
        }
    }

    #[test]
    fn each_database_reads_its_own_knobs_or_its_defaults() {
        let knobs = Knobs::default().with(Pages(8192));
        assert_eq!(knobs.get::<Pages>(), Pages(8192));
        assert_eq!(knobs.get::<Storage>(), Storage(""), "unset: the default");
        let knobs = knobs.with(Storage("lo")).with(Pages(512));
        assert_eq!(knobs.get::<Pages>(), Pages(512), "set again: the later one");
        assert_eq!(knobs.get::<Storage>(), Storage("lo"));
        assert_eq!(knobs.0.len(), 2);
    }
}
