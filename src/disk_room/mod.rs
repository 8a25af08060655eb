//! Free disk across every file system a run's loads write to. The local stores write
//! into the data directory; each server writes into its container's data volume,
//! which Docker keeps under its own root, usually on the same disk as the data
//! directory. A load checked against the data directory alone filled that disk with
//! MariaDB's 3 GiB (44 GB of server volumes were already there) and took dockerd
//! down with it. So every store is placed on its file system, the bytes each load
//! will add are summed per file system, and a load that does not fit is refused
//! before anything is written, with the numbers.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::db::registry::StoreKind;
use crate::error::InputError;
use crate::machine::available_bytes;
use crate::size::format_bytes_approx;

mod dataset_walk;
mod keep_plan;

pub use dataset_walk::{DatasetWalk, WalkedRoom};
pub use keep_plan::{KeepPlan, PlannedRoom};

/// What a full disk costs beyond the data: filesystems misbehave when full, and
/// Docker's own health checks write there too.
pub fn slack_bytes(needed: u64) -> u64 {
    needed / 100 + (64 << 20)
}

/// One file system that loads write to.
#[derive(Debug, Clone)]
pub struct Room {
    /// What is on it: "the data directory /data", "postgres's volume blobrace_postgres-data".
    pub label: String,
    /// Free bytes; None where this process cannot see the file system (a remote
    /// server, a volume outside Docker's root seen from a container).
    pub available: Option<u64>,
    /// Bytes each store will add there: (store, bytes) per size class.
    needed: Table,
    /// Bytes the run's datasets already take there (loaded by an earlier run, whole
    /// or in part): (store, bytes) per size class. Freed when their size class is
    /// measured and dropped, so a run measures them first (`Rooms::order`).
    on_disk: Table,
    /// What a store's load holds here beside its rows while it runs, and what that is
    /// (`Store::load_scratch`): counted once, at the peak, as loads go one at a time.
    scratch: Vec<(StoreKind, u64, &'static str)>,
}

/// Bytes per store per size class: (store, bytes by size class index).
type Table = Vec<(StoreKind, Vec<u64>)>;

/// `table[store][size_index] += bytes`, growing the table as needed.
fn add_to(table: &mut Table, store: StoreKind, size_index: usize, bytes: u64) {
    let entry = match table.iter_mut().position(|(s, _)| *s == store) {
        Some(i) => &mut table[i].1,
        None => {
            table.push((store, Vec::new()));
            &mut table.last_mut().expect("just pushed").1
        }
    };
    if entry.len() <= size_index {
        entry.resize(size_index + 1, 0);
    }
    entry[size_index] += bytes;
}

fn size_total(table: &[(StoreKind, Vec<u64>)], size_index: usize) -> u64 {
    table
        .iter()
        .map(|(_, b)| b.get(size_index).copied().unwrap_or(0))
        .sum()
}

fn cell(table: &[(StoreKind, Vec<u64>)], store: StoreKind, size_index: usize) -> u64 {
    table
        .iter()
        .find(|(s, _)| *s == store)
        .and_then(|(_, b)| b.get(size_index).copied())
        .unwrap_or(0)
}

impl Room {
    fn new(label: String, available: Option<u64>) -> Self {
        Self {
            label,
            available,
            needed: Vec::new(),
            on_disk: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// What `store`'s load holds here beside its rows (0 where nothing).
    fn scratch_of(&self, store: StoreKind) -> u64 {
        self.scratch
            .iter()
            .find(|(s, ..)| *s == store)
            .map_or(0, |(_, bytes, _)| *bytes)
    }

    /// The most any load of size class `size_index` holds beside its rows (every load
    /// where `size_index` is None).
    fn scratch_at(&self, size_index: Option<usize>) -> u64 {
        self.scratch
            .iter()
            .filter(|(store, ..)| size_index.is_none_or(|i| cell(&self.needed, *store, i) > 0))
            .map(|(_, bytes, _)| *bytes)
            .max()
            .unwrap_or(0)
    }

    /// What the run's loads add here: every size class at once, or, one size class
    /// at a time in `order`, the most at any step: that size class's loads less what
    /// the ones measured before it freed (each dropped once measured).
    pub fn needed(&self, one_size_at_a_time: bool, order: &[usize]) -> u64 {
        let sizes = self.sizes();
        if !one_size_at_a_time {
            let all: u64 = (0..sizes).map(|i| size_total(&self.needed, i)).sum();
            return if all == 0 {
                0
            } else {
                all + self.scratch_at(None)
            };
        }
        let mut freed = 0u64;
        let mut most = 0u64;
        for &i in order {
            let adds = size_total(&self.needed, i);
            if adds > 0 {
                most = most.max((adds + self.scratch_at(Some(i))).saturating_sub(freed));
            }
            freed += size_total(&self.on_disk, i);
        }
        most
    }

    fn sizes(&self) -> usize {
        self.needed
            .iter()
            .chain(&self.on_disk)
            .map(|(_, b)| b.len())
            .max()
            .unwrap_or(0)
    }

    fn breakdown(&self, one_size_at_a_time: bool) -> String {
        let loading = |store: &StoreKind| {
            self.needed
                .iter()
                .any(|(s, b)| s == store && b.iter().any(|&b| b > 0))
        };
        self.needed
            .iter()
            .filter_map(|(store, bytes)| {
                let total = if one_size_at_a_time {
                    bytes.iter().copied().max().unwrap_or(0)
                } else {
                    bytes.iter().sum()
                };
                (total > 0).then(|| format!("{} {}", store.name(), format_bytes_approx(total)))
            })
            .chain(
                self.scratch
                    .iter()
                    .filter(|(store, ..)| loading(store))
                    .map(|(store, bytes, what)| {
                        format!("{}'s {what} {}", store.name(), format_bytes_approx(*bytes))
                    }),
            )
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The sort key that puts what is on disk whole first, then in part (most bytes
/// first), then the rest (a stable sort keeps each group in the run's order), from
/// the bytes still `to_add` and those already `there`.
fn on_disk_first(to_add: u64, there: u64) -> (bool, bool, std::cmp::Reverse<u64>) {
    (to_add > 0, there == 0, std::cmp::Reverse(there))
}

/// The file systems of a run's stores, each store placed on one.
#[derive(Debug, Default)]
pub struct Rooms {
    pub rooms: Vec<Room>,
    /// (store, index into `rooms`).
    of_store: Vec<(StoreKind, usize)>,
}

impl Rooms {
    /// Place every store: local ones in the data directory's file system; a server in
    /// its volume's, which is the data directory's where both have one device, or
    /// both are Docker volumes under one root (the compose runner's data directory is
    /// one); a file system of its own otherwise.
    pub async fn find(
        data_dir: &Path,
        stores: &[StoreKind],
        places: &crate::db::server::place::Places,
    ) -> Self {
        let local_dev = std::fs::metadata(data_dir).ok().map(|m| m.dev());
        let mut rooms = Self {
            rooms: vec![Room::new(
                format!("the disk of the data directory {}", data_dir.display()),
                available_bytes(data_dir).ok(),
            )],
            of_store: Vec::new(),
        };
        let own_source = if stores.iter().any(|s| s.is_server()) {
            crate::docker::own_mount_source(data_dir).await
        } else {
            None
        };
        for &store in stores {
            let at = match store.server() {
                None => 0,
                Some(server) => {
                    // A remote server's disk is not the compose volume's.
                    let source = match places.remote(server) {
                        Some(_) => None,
                        None => crate::docker::service_data_source(
                            server.name(),
                            server.container_data_dir(),
                        )
                        .await
                        .ok()
                        .flatten(),
                    };
                    match source {
                        Some((path, volume)) => {
                            let label = format!(
                                "{}'s volume {}",
                                server.name(),
                                volume.unwrap_or_else(|| path.display().to_string())
                            );
                            match place(&path, local_dev, own_source.as_deref()) {
                                Place::DataDir => {
                                    rooms.rooms[0].label.push_str(&format!(", with {label}"));
                                    0
                                }
                                Place::Own(available) => rooms.push(Room::new(label, available)),
                            }
                        }
                        // Not a compose container here (a server it does not manage):
                        // its disk is not ours to see.
                        None => rooms.push(Room::new(
                            format!("{}'s disk (not a container here)", server.name()),
                            None,
                        )),
                    }
                }
            };
            rooms.of_store.push((store, at));
        }
        rooms
    }

    /// Tests' rooms: `stores` on one disk named "disk" with `available` bytes free.
    #[cfg(test)]
    fn on_one_disk(available: u64, stores: &[StoreKind]) -> Self {
        Self {
            rooms: vec![Room::new("disk".into(), Some(available))],
            of_store: stores.iter().map(|&s| (s, 0)).collect(),
        }
    }

    fn push(&mut self, room: Room) -> usize {
        self.rooms.push(room);
        self.rooms.len() - 1
    }

    /// Count `bytes` that loading size class number `size_index` adds for `store`.
    pub fn add(&mut self, store: StoreKind, size_index: usize, bytes: u64) {
        if let Some(&(_, at)) = self.of_store.iter().find(|(s, _)| *s == store) {
            add_to(&mut self.rooms[at].needed, store, size_index, bytes);
        }
    }

    /// Count what `store`'s loads hold here beside their rows while they run
    /// (`Store::load_scratch`): the most of any of its loads.
    pub fn add_scratch(&mut self, store: StoreKind, bytes: u64, what: &'static str) {
        if let Some(&(_, at)) = self.of_store.iter().find(|(s, _)| *s == store) {
            let scratch = &mut self.rooms[at].scratch;
            match scratch.iter_mut().find(|(s, ..)| *s == store) {
                Some(entry) => entry.1 = entry.1.max(bytes),
                None => scratch.push((store, bytes, what)),
            }
        }
    }

    /// Count `bytes` that `store`'s dataset of size class number `size_index` already
    /// takes (loaded whole or in part).
    pub fn found(&mut self, store: StoreKind, size_index: usize, bytes: u64) {
        if let Some(&(_, at)) = self.of_store.iter().find(|(s, _)| *s == store) {
            add_to(&mut self.rooms[at].on_disk, store, size_index, bytes);
        }
    }

    /// A data directory in RAM (tmpfs, ramfs, named by `filesystem`): the pages a load
    /// writes there are charged to the writer's memory cap and cannot be evicted (there
    /// is no disk behind them), so loads larger than the cap leaves the process were a
    /// bare kill inside its own cap (exit 137, no word), of `measure` and of `load`
    /// alike. Refused before any load, with the ways out; no memory cap, or loads that
    /// fit beside `min_cap`, go on. `at`: the data directory, whether the loads go one
    /// size class at a time, and how many size classes there are.
    pub fn check_in_ram(
        &self,
        filesystem: &str,
        cap: Option<u64>,
        min_cap: u64,
        (data_dir, one_size_at_a_time, sizes): (&Path, bool, usize),
    ) -> Result<(), InputError> {
        let Some(cap) = cap else {
            return Ok(());
        };
        if !matches!(filesystem, "tmpfs" | "ramfs") {
            return Ok(());
        }
        let Some(room) = self.rooms.first() else {
            return Ok(());
        };
        let needed = room.needed(one_size_at_a_time, &self.order(sizes));
        let least = needed + min_cap;
        if least <= cap {
            return Ok(());
        }
        Err(InputError::Value {
            what: "data-dir",
            input: data_dir.display().to_string(),
            why: format!(
                "it is on {filesystem}, which is RAM: the {} loaded there would be charged to the {} memory cap and could not be evicted (no disk is behind them), so the kernel would kill the process inside its own cap. Put --data-dir (BLOBRACE_DATA_DIR) on a disk, raise --cap to {} or more, or load fewer or smaller datasets",
                format_bytes_approx(needed),
                crate::size::format_bytes(cap),
                format_bytes_approx(least),
            ),
        })
    }

    /// The order to measure `sizes` size classes in, one at a time: those already on
    /// disk whole first, then those in part (most bytes first), then the rest, each
    /// group in the run's order. Measured and dropped first, their bytes make room for
    /// the loads after them; measured last, they would sit on the disk beside every
    /// load (a re-run on a disk that holds one size class at a time found the last
    /// run's kept size class in the way of its first load, and refused).
    pub fn order(&self, sizes: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..sizes).collect();
        let total = |table: fn(&Room) -> &Table, i: usize| -> u64 {
            self.rooms.iter().map(|r| size_total(table(r), i)).sum()
        };
        order.sort_by_key(|&i| on_disk_first(total(|r| &r.needed, i), total(|r| &r.on_disk, i)));
        order
    }

    /// Refuse when any file system cannot take what is loaded onto it, with the numbers
    /// and what to drop. A file system whose free space cannot be seen is named in a note
    /// and not checked.
    pub fn check(&self, one_size_at_a_time: bool) -> Result<(), InputError> {
        let order = self.order(self.rooms.iter().map(Room::sizes).max().unwrap_or(0));
        for room in &self.rooms {
            let needed = room.needed(one_size_at_a_time, &order);
            if needed == 0 {
                continue;
            }
            let Some(available) = room.available else {
                say!(
                    "note: the free space of {} is unavailable: its loads ({}) are not checked against it",
                    room.label,
                    room.breakdown(one_size_at_a_time)
                );
                continue;
            };
            let slack = slack_bytes(needed);
            if needed + slack > available {
                return Err(InputError::NotEnoughDisk {
                    room: room.label.clone(),
                    needed: format_bytes_approx(needed),
                    breakdown: room.breakdown(one_size_at_a_time),
                    slack: format_bytes_approx(slack),
                    available: format_bytes_approx(available),
                    stepwise: one_size_at_a_time,
                });
            }
        }
        Ok(())
    }
}

enum Place {
    DataDir,
    /// A file system of its own, with its free bytes where this process can see it.
    Own(Option<u64>),
}

/// Where a server's volume (`source`, a path on Docker's host) lives relative to the
/// data directory (device `local_dev`; `own_source`: the data directory's own source
/// on Docker's host when this process runs in a container).
fn place(source: &Path, local_dev: Option<u64>, own_source: Option<&Path>) -> Place {
    if let Ok(meta) = std::fs::metadata(source) {
        if Some(meta.dev()) == local_dev {
            return Place::DataDir;
        }
        return Place::Own(available_bytes(source).ok());
    }
    match own_source {
        Some(own)
            if docker_volume_root(own).is_some_and(|r| Some(r) == docker_volume_root(source)) =>
        {
            Place::DataDir
        }
        _ => Place::Own(None),
    }
}

/// `<docker root>/volumes` for a local volume's mount point `<root>/volumes/<name>/_data`.
fn docker_volume_root(source: &Path) -> Option<PathBuf> {
    (source.file_name()? == "_data").then_some(())?;
    let volumes = source.parent()?.parent()?;
    (volumes.file_name()? == "volumes").then(|| volumes.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volumes_under_one_docker_root_share_it_and_others_do_not() {
        let root = |p: &str| docker_volume_root(Path::new(p));
        assert_eq!(
            root("/var/lib/docker/volumes/blobrace_postgres-data/_data"),
            Some(PathBuf::from("/var/lib/docker/volumes"))
        );
        assert_eq!(root("/srv/pg"), None);
        assert_eq!(root("/var/lib/docker/volumes/x/other"), None);
        // Paths on Docker's host, not seen from here (as from inside the runner).
        let runner = Path::new("/no-such-root/docker/volumes/blobrace_runner-data/_data");
        let pg = Path::new("/no-such-root/docker/volumes/blobrace_postgres-data/_data");
        assert!(matches!(place(pg, None, Some(runner)), Place::DataDir));
        let elsewhere = Path::new("/no-such-root/other-docker/volumes/pg/_data");
        assert!(matches!(
            place(elsewhere, None, Some(runner)),
            Place::Own(None)
        ));
    }

    #[test]
    fn drop_after_needs_the_largest_size_class_and_a_full_load_all_of_them() {
        let sqlite = StoreKind::named("sqlite").unwrap();
        let floor = StoreKind::named("floor").unwrap();
        let mut rooms = Rooms::on_one_disk(10 << 30, &[sqlite, floor]);
        rooms.add(sqlite, 0, 3 << 30);
        rooms.add(floor, 0, 3 << 30);
        rooms.add(sqlite, 1, 1 << 30);
        assert_eq!(rooms.rooms[0].needed(true, &[0, 1]), 6 << 30);
        assert_eq!(rooms.rooms[0].needed(false, &[0, 1]), 7 << 30);
        assert!(rooms.check(false).is_ok());
        rooms.add(floor, 1, 3 << 30);
        let refused = rooms.check(false).unwrap_err().to_string();
        assert!(
            refused.contains("10.00GiB is available")
                && refused.contains("sqlite 4.00GiB, floor 6.00GiB"),
            "{refused}"
        );
        assert!(rooms.check(true).is_ok(), "one size class at a time: 6 GiB");
    }

    #[test]
    fn a_loads_scratch_counts_once_at_its_peak_and_is_named() {
        let [sqlite, rocksdb] = ["sqlite", "rocksdb"].map(|n| StoreKind::named(n).unwrap());
        let mut rooms = Rooms::on_one_disk(1 << 30, &[sqlite, rocksdb]);
        rooms.add(sqlite, 0, 300 << 20);
        rooms.add(rocksdb, 0, 300 << 20);
        rooms.add(sqlite, 1, 400 << 20);
        rooms.add_scratch(rocksdb, 128 << 20, "write-ahead log while it loads");
        rooms.add_scratch(rocksdb, 64 << 20, "write-ahead log while it loads");
        // All at once: 1000 MiB of rows, 128 MiB of WAL once (the larger of its two).
        assert_eq!(rooms.rooms[0].needed(false, &[0, 1]), 1128 << 20);
        // Size class by size class: 600 + 128 at size 0; size 1 loads no RocksDB.
        assert_eq!(rooms.rooms[0].needed(true, &[0, 1]), 728 << 20);
        rooms.rooms[0].available = Some(780 << 20);
        let refused = rooms.check(true).unwrap_err().to_string();
        assert!(
            refused.contains("need about 728.00MiB")
                && refused.contains("rocksdb's write-ahead log while it loads 128.00MiB"),
            "{refused}"
        );
        // Without its WAL the same load fits: the scratch is what refused it.
        rooms.rooms[0].scratch.clear();
        assert!(rooms.check(true).is_ok());
        rooms.add_scratch(rocksdb, 128 << 20, "write-ahead log while it loads");
        // One dataset at a time: RocksDB's 300 MiB with its WAL is the peak.
        let walk = rooms.dataset_walk(2, |i| i.to_string()).unwrap();
        assert_eq!(walk.rooms[0].peak, 428 << 20);
        // Kept datasets are planned with it too: nothing fits beside size 0's peak.
        rooms.rooms[0].available = Some(900 << 20);
        let plan = rooms.keep_plan(2, |_, _| 1.0);
        assert_eq!(plan.rooms[0].peak, 728 << 20);
    }

    #[test]
    fn a_size_class_already_on_disk_is_measured_first_and_frees_room_for_the_others() {
        let [sqlite, floor] = ["sqlite", "floor"].map(|n| StoreKind::named(n).unwrap());
        // Three size classes of 2 GiB per store (4 GiB each); the last run kept size
        // 2 whole (4 GiB on disk) and 3 GiB is free.
        let mut rooms = Rooms::on_one_disk(3 << 30, &[sqlite, floor]);
        for store in [sqlite, floor] {
            rooms.add(store, 0, 1 << 30);
            rooms.add(store, 1, 1 << 30);
            rooms.found(store, 2, 2 << 30);
        }
        assert_eq!(rooms.order(3), [2, 0, 1]);
        // Measured in the run's order, loading size 0 beside size 2 needs 2 GiB of 3:
        // fits; make it not fit, then only the order that drops size 2 first fits.
        rooms.rooms[0].available = Some((2 << 30) + (40 << 20));
        assert!(rooms.rooms[0].needed(true, &[0, 1, 2]) == 2 << 30);
        assert_eq!(rooms.rooms[0].needed(true, &[2, 0, 1]), 0);
        assert!(rooms.check(true).is_ok());
        let plan = rooms.keep_plan(3, |_, _| 1.0);
        assert_eq!(plan.order, [2, 0, 1]);
        // Nothing of size 2 can stay beside size 0's 2 GiB load; size 1 is loaded last
        // and kept whole.
        assert!(plan.drop.contains(&(sqlite, 2)) && plan.drop.contains(&(floor, 2)));
        assert!(plan.keeps(sqlite, 1) && plan.keeps(floor, 1));
        let room = &plan.rooms[0];
        assert!(
            room.peak + slack_bytes(room.peak) <= room.available,
            "{room:?}"
        );
        // Partly loaded comes after whole, before absent.
        rooms.found(sqlite, 1, 1 << 20);
        assert_eq!(rooms.order(3), [2, 1, 0]);
    }
}
