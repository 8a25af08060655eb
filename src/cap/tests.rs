//! The path and delegation logic on fake cgroup trees: plain directories and files laid
//! out like cgroupfs. The kernel's own refusals (EBUSY, ENOENT) cannot be faked by plain
//! files, so the logic decides from what the files say before it writes.

use std::fs;
use std::path::{Path, PathBuf};

use super::cgroupfs::{self, Hierarchy, Roots};
use super::v2::{self, Placement};
use super::*;

struct Fake {
    _dir: tempfile::TempDir,
    roots: Roots,
}

const GIB: u64 = 1 << 30;

fn req(memory: Option<u64>, cpus: Option<f64>) -> CapRequest {
    CapRequest {
        memory_bytes: memory,
        cpus,
    }
}

impl Fake {
    /// A cgroup2 mount whose root is the real root (no `cgroup.type`).
    fn v2(root_controllers: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            cgroup: dir.path().join("cgroup"),
            proc: dir.path().join("proc"),
        };
        fs::create_dir_all(&roots.cgroup).unwrap();
        fs::create_dir_all(roots.proc.join("self")).unwrap();
        fs::create_dir_all(roots.proc.join(std::process::id().to_string())).unwrap();
        fs::write(roots.cgroup.join("cgroup.controllers"), root_controllers).unwrap();
        fs::write(roots.cgroup.join("cgroup.procs"), "1\n").unwrap();
        Self { _dir: dir, roots }
    }

    /// A non-root cgroup: what it may offer, what it offers, which pids it holds.
    fn cgroup(&self, rel: &str, controllers: &str, subtree: &str, procs: &[u32]) -> PathBuf {
        let dir = self.roots.cgroup.join(rel);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("cgroup.type"), "domain").unwrap();
        fs::write(dir.join("cgroup.controllers"), controllers).unwrap();
        fs::write(dir.join("cgroup.subtree_control"), subtree).unwrap();
        let pids: Vec<String> = procs.iter().map(u32::to_string).collect();
        fs::write(dir.join("cgroup.procs"), pids.join("\n")).unwrap();
        dir
    }

    fn own_cgroup_is(&self, line: &str) {
        fs::write(self.roots.proc.join("self/cgroup"), line).unwrap();
    }
}

fn me() -> u32 {
    std::process::id()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap().trim().to_string()
}

#[test]
fn a_parent_that_already_delegates_memory_gets_a_sibling_leaf_and_cpu_stays_uncapped() {
    // The job runner's layout: our cgroup holds processes, its parent offers only memory.
    let fake = Fake::v2("cpu memory");
    let parent = fake.cgroup("process_api", "memory", "memory", &[]);
    let own = fake.cgroup("process_api/abc", "memory", "", &[me(), 4242]);
    assert_eq!(
        v2::place(&own, &fake.roots.cgroup, "memory", me()),
        Ok(Placement::Sibling {
            parent: parent.clone()
        })
    );
    let mut guard = CapGuard::default();
    let (method, notes) = v2::create(
        &fake.roots,
        &own,
        &fake.roots.cgroup,
        &req(Some(GIB), Some(2.0)),
        &mut guard,
    )
    .unwrap();
    assert_eq!(method, CapMethod::V2Sibling);
    let leaf = parent.join(format!("blobrace-{}", me()));
    assert_eq!(read(&leaf.join("memory.max")), GIB.to_string());
    assert_eq!(read(&leaf.join("cgroup.procs")), me().to_string());
    assert!(!leaf.join("cpu.max").exists());
    assert!(
        notes
            .iter()
            .any(|n| n.contains("CPU left uncapped")
                && n.contains("cpu controller is not delegated")),
        "{notes:?}"
    );
    // Nothing was enabled: the parent already offered memory, and cpu it could not.
    assert!(guard.enabled.is_empty(), "{:?}", guard.enabled);
    assert_eq!(guard.created, vec![(leaf, own.clone())]);
    drop(guard);
    assert_eq!(
        read(&own.join("cgroup.procs")),
        me().to_string(),
        "moved back"
    );
}

#[test]
fn alone_in_its_cgroup_the_process_moves_into_a_child_leaf_before_enabling_controllers() {
    let fake = Fake::v2("cpu memory");
    fake.cgroup("user.slice", "cpu memory", "cpu memory", &[]);
    let own = fake.cgroup("user.slice/session", "cpu memory", "", &[me()]);
    let mut guard = CapGuard::default();
    let placement = v2::place(&own, &fake.roots.cgroup, "memory", me()).unwrap();
    // The parent offers memory, so a sibling is preferred: no change to our own cgroup.
    assert!(
        matches!(placement, Placement::Sibling { .. }),
        "{placement:?}"
    );

    // Without a delegating parent, the leaf goes under our own (now empty) cgroup.
    fake.cgroup("lonely", "cpu memory", "", &[77]);
    let own = fake.cgroup("lonely/me", "cpu memory", "", &[me()]);
    assert_eq!(
        v2::place(&own, &fake.roots.cgroup, "memory", me()),
        Ok(Placement::ChildLeaf { dir: own.clone() })
    );
    let (method, notes) = v2::create(
        &fake.roots,
        &own,
        &fake.roots.cgroup,
        &req(Some(GIB), Some(1.5)),
        &mut guard,
    )
    .unwrap();
    assert_eq!(method, CapMethod::V2ChildLeaf);
    assert!(notes.is_empty(), "{notes:?}");
    let leaf = own.join(format!("blobrace-{}", me()));
    assert_eq!(read(&leaf.join("cpu.max")), "150000 100000");
    assert_eq!(read(&leaf.join("memory.max")), GIB.to_string());
    assert_eq!(
        guard.enabled,
        vec![(own.clone(), "memory".into()), (own.clone(), "cpu".into())],
        "one controller at a time"
    );
    drop(guard);
    // Undone in reverse: cpu, then memory, then the process moves back.
    assert_eq!(read(&own.join("cgroup.subtree_control")), "-memory");
    assert_eq!(read(&own.join("cgroup.procs")), me().to_string());
}

#[test]
fn a_crowded_cgroup_under_a_parent_that_cannot_delegate_is_refused_with_the_reason() {
    let fake = Fake::v2("cpu memory");
    // The parent holds processes itself: it may not enable memory for children.
    fake.cgroup("busy", "memory", "", &[10, 11]);
    let own = fake.cgroup("busy/own", "memory", "", &[me(), 12]);
    let err = v2::place(&own, &fake.roots.cgroup, "memory", me()).unwrap_err();
    assert!(err.contains("no internal processes"), "{err}");
    assert!(err.contains("1 other process"), "{err}");

    // A parent with no processes that can offer memory: enable it there, sibling leaf.
    let parent = fake.cgroup("empty", "memory", "", &[]);
    let own = fake.cgroup("empty/own", "memory", "", &[me(), 12]);
    assert_eq!(
        v2::place(&own, &fake.roots.cgroup, "memory", me()),
        Ok(Placement::Sibling { parent })
    );
}

#[test]
fn a_cgroup_namespace_root_is_the_mount_and_nothing_above_it_is_used() {
    // In a container with its own cgroup namespace, /proc/self/cgroup says "0::/" and
    // the mount is the container's cgroup: not the real root (it has cgroup.type).
    let fake = Fake::v2("cpu memory");
    fs::write(fake.roots.cgroup.join("cgroup.type"), "domain").unwrap();
    fs::write(fake.roots.cgroup.join("cgroup.subtree_control"), "").unwrap();
    fake.own_cgroup_is("0::/\n");
    let Some(Hierarchy::V2 { dir, mount }) = cgroupfs::locate(&fake.roots) else {
        panic!("not located as v2");
    };
    assert_eq!(dir, mount);
    fs::write(dir.join("cgroup.procs"), format!("1\n{}\n", me())).unwrap();
    let err = v2::place(&dir, &mount, "memory", me()).unwrap_err();
    assert!(err.contains("root of this cgroup namespace"), "{err}");
    // Alone in the namespace root (no init besides us): a child leaf.
    fs::write(dir.join("cgroup.procs"), me().to_string()).unwrap();
    assert_eq!(
        v2::place(&dir, &mount, "memory", me()),
        Ok(Placement::ChildLeaf { dir: dir.clone() })
    );
    // A path outside the namespace ("/../x") also resolves to the mount.
    fake.own_cgroup_is("0::/../../elsewhere\n");
    assert!(matches!(
        cgroupfs::locate(&fake.roots),
        Some(Hierarchy::V2 { dir, .. }) if dir == mount
    ));
}

#[test]
fn limits_are_the_smallest_along_the_ancestry_and_max_means_none() {
    let fake = Fake::v2("cpu memory");
    let parent = fake.cgroup("a", "cpu memory", "cpu memory", &[]);
    let own = fake.cgroup("a/b", "cpu memory", "", &[me()]);
    fs::write(parent.join("memory.max"), (2 * GIB).to_string()).unwrap();
    fs::write(own.join("memory.max"), "max").unwrap();
    fs::write(parent.join("cpu.max"), "max 100000").unwrap();
    fs::write(own.join("cpu.max"), "50000 100000").unwrap();
    fake.own_cgroup_is("0::/a/b\n");
    let h = cgroupfs::locate(&fake.roots).unwrap();
    assert_eq!(h.limits(&fake.roots), (Some(2 * GIB), Some(0.5)));
    fs::write(parent.join("memory.max"), "max").unwrap();
    fs::write(own.join("cpu.max"), "max 100000").unwrap();
    assert_eq!(h.limits(&fake.roots), (None, None));
}

#[test]
fn v1_reads_limits_per_hierarchy_and_a_huge_limit_is_no_limit() {
    let dir = tempfile::tempdir().unwrap();
    let roots = Roots {
        cgroup: dir.path().join("cgroup"),
        proc: dir.path().join("proc"),
    };
    let memory = roots.cgroup.join("memory/job");
    let cpu = roots.cgroup.join("cpu,cpuacct/job");
    fs::create_dir_all(&memory).unwrap();
    fs::create_dir_all(&cpu).unwrap();
    fs::create_dir_all(roots.proc.join("self")).unwrap();
    fs::write(
        roots.proc.join("self/cgroup"),
        "4:memory:/job\n3:cpu,cpuacct:/job\n1:name=systemd:/\n",
    )
    .unwrap();
    fs::write(memory.join("memory.limit_in_bytes"), "9223372036854771712").unwrap();
    fs::write(cpu.join("cpu.cfs_quota_us"), "-1").unwrap();
    fs::write(cpu.join("cpu.cfs_period_us"), "100000").unwrap();
    let h = cgroupfs::locate(&roots).unwrap();
    assert_eq!(
        h,
        Hierarchy::V1 {
            memory: memory.clone(),
            cpu: Some(cpu.clone())
        }
    );
    assert_eq!(h.limits(&roots), (None, None));
    fs::write(memory.join("memory.limit_in_bytes"), GIB.to_string()).unwrap();
    fs::write(cpu.join("cpu.cfs_quota_us"), "200000").unwrap();
    assert_eq!(h.limits(&roots), (Some(GIB), Some(2.0)));
}

#[test]
fn leaves_of_dead_processes_are_removed_and_live_or_foreign_ones_kept() {
    let fake = Fake::v2("memory");
    let parent = fake.cgroup("p", "memory", "memory", &[]);
    let dead = parent.join("blobrace-999999999");
    let alive = parent.join(format!("blobrace-{}", me()));
    let foreign = parent.join("blobrace-notapid");
    for d in [&dead, &alive, &foreign] {
        fs::create_dir(d).unwrap();
    }
    let removed = cgroupfs::remove_stale_leaves(&parent, &fake.roots);
    let paths: Vec<_> = removed.iter().map(|s| s.path.clone()).collect();
    assert_eq!(paths, vec![dead.clone()]);
    assert_eq!(removed[0].oom_kills, 0);
    assert!(removed[0].describe().contains("no longer runs"));
    assert!(!dead.exists() && alive.exists() && foreign.exists());
}

/// A process the kernel killed inside its own cap dies without a word (exit 137): the
/// next run finds its cgroup, and the kernel's count there says what happened.
#[test]
fn a_leaf_whose_process_the_kernel_killed_for_memory_says_so() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    )
    .unwrap();
    assert_eq!(cgroupfs::oom_kills(dir.path()), 2);
    let v2 = tempfile::tempdir().unwrap();
    fs::write(
        v2.path().join("memory.events"),
        "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n",
    )
    .unwrap();
    assert_eq!(cgroupfs::oom_kills(v2.path()), 1);
    let line = cgroupfs::StaleLeaf {
        path: dir.path().join("blobrace-123"),
        pid: "123".into(),
        oom_kills: 2,
        limit_bytes: Some(17 << 20),
    }
    .describe();
    assert!(
        line.contains("process 123 was killed by the kernel"),
        "{line}"
    );
    assert!(
        line.contains("cap of 17 MiB") && line.contains("Raise --cap"),
        "{line}"
    );
}

#[test]
fn an_inherited_cap_is_used_as_is_and_a_smaller_one_is_an_error_naming_it() {
    let fake = Fake::v2("cpu memory");
    let own = fake.cgroup("container", "cpu memory", "", &[me()]);
    fs::write(own.join("memory.max"), GIB.to_string()).unwrap();
    fs::write(own.join("cpu.max"), "200000 100000").unwrap();
    fake.own_cgroup_is("0::/container\n");
    let (report, guard) = apply_at(&fake.roots, req(Some(GIB), Some(2.0)), Reexec::NEVER).unwrap();
    assert_eq!(
        (
            report.origin,
            report.method,
            report.memory_limit_bytes,
            report.cpu_limit
        ),
        (
            CapOrigin::Inherited,
            CapMethod::Inherited,
            Some(GIB),
            Some(2.0)
        )
    );
    assert!(
        guard.created.is_empty() && report.notes.is_empty(),
        "{report:?}"
    );

    let err = apply_at(&fake.roots, req(Some(2 * GIB), Some(2.0)), Reexec::NEVER).unwrap_err();
    assert!(err.why.contains(&format!("--cap {GIB}")), "{}", err.why);
    assert!(err.to_string().contains("--cap none"), "{err}");
}

#[test]
fn no_hierarchy_is_an_error_when_a_cap_is_asked_and_uncapped_when_not() {
    let fake = Fake::v2("memory");
    fs::remove_file(fake.roots.proc.join("self/cgroup")).ok();
    let err = apply_at(&fake.roots, req(Some(GIB), None), Reexec::NEVER).unwrap_err();
    assert!(err.why.contains("no cgroup hierarchy"), "{}", err.why);
    let (report, _) = apply_at(&fake.roots, req(None, None), Reexec::NEVER).unwrap();
    assert_eq!(
        (report.origin, report.method, report.cgroup_version.as_str()),
        (CapOrigin::Uncapped, CapMethod::None, "none")
    );
}

#[test]
fn a_failed_attempt_leaves_no_leaf_behind_and_says_why() {
    let fake = Fake::v2("cpu memory");
    fake.cgroup("busy", "memory", "", &[10]);
    let own = fake.cgroup("busy/own", "memory", "", &[me(), 12]);
    fake.own_cgroup_is("0::/busy/own\n");
    let err = apply_at(&fake.roots, req(Some(GIB), None), Reexec::NEVER).unwrap_err();
    assert!(err.why.contains("no internal processes"), "{}", err.why);
    assert_eq!(err.report.origin, CapOrigin::Uncapped);
    assert!(!own.join(format!("blobrace-{}", me())).exists());
}

#[test]
fn the_systemd_scope_carries_the_cap_as_properties() {
    assert_eq!(
        systemd::scope_args(&req(Some(GIB), Some(2.0)), systemd::Manager::User, None).join(" "),
        "--user --scope --quiet --collect -p MemoryMax=1024M -p MemorySwapMax=0 -p CPUQuota=200%"
    );
    assert_eq!(
        systemd::scope_args(&req(Some(1000), None), systemd::Manager::User, None).join(" "),
        "--user --scope --quiet --collect -p MemoryMax=1000 -p MemorySwapMax=0"
    );
    // Root asks the system manager: no --user.
    assert_eq!(
        systemd::scope_args(&req(Some(GIB), Some(1.0)), systemd::Manager::System, None).join(" "),
        "--scope --quiet --collect -p MemoryMax=1024M -p MemorySwapMax=0 -p CPUQuota=100%"
    );
    // The disk cap as the scope's IO*Max on the disk's node: systemd keeps it.
    let disk = super::disk::ScopeDisk {
        node: PathBuf::from("/dev/vda"),
        limits: super::disk::DiskLimits {
            read_iops: Some(3000),
            read_bytes_per_s: Some(125 << 20),
            write_iops: None,
            write_bytes_per_s: Some(1 << 20),
        },
    };
    let args = systemd::scope_args(&req(Some(GIB), None), systemd::Manager::System, Some(&disk));
    assert_eq!(
        args[args.len() - 6..],
        [
            "-p",
            "IOReadIOPSMax=/dev/vda 3000",
            "-p",
            "IOReadBandwidthMax=/dev/vda 131072000",
            "-p",
            "IOWriteBandwidthMax=/dev/vda 1048576"
        ]
    );
}

#[test]
fn a_memory_cap_that_is_not_whole_pages_is_the_rounded_limit_the_kernel_keeps() {
    // The kernel kept `--cap 100000000` as 99999744 (whole 4 KiB pages): read back,
    // that is the cap asked for, not "already capped below the request" by another.
    let fake = Fake::v2("cpu memory");
    let own = fake.cgroup("process_api/abc", "memory", "", &[me()]);
    fs::write(own.join("memory.max"), "99999744").unwrap();
    fake.own_cgroup_is("0::/process_api/abc\n");
    let (report, _guard) =
        apply_at(&fake.roots, req(Some(100_000_000), None), Reexec::NEVER).unwrap();
    assert_eq!(report.memory_limit_bytes, Some(99_999_744));
    assert!(
        report.notes.iter().any(|n| n.contains("was requested")),
        "{:?}",
        report.notes
    );
    // One page less is another's cap.
    fs::write(own.join("memory.max"), "99995648").unwrap();
    let err = apply_at(&fake.roots, req(Some(100_000_000), None), Reexec::NEVER).unwrap_err();
    assert!(err.why.contains("already capped"), "{}", err.why);
}
