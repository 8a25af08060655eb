use super::*;

fn draws(mix: &SizeMix, n: u64) -> Vec<u64> {
    (1..=n).map(|id| mix.bytes_of(7, id)).collect()
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn weighted_buckets_draw_their_sizes_in_their_shares() {
    let mix = parse("4KiB:60,8KiB:30,1MiB:10").unwrap();
    assert_eq!((mix.smallest(), mix.largest()), (4096, 1 << 20));
    let sizes = draws(&mix, 100_000);
    let share = |s: u64| sizes.iter().filter(|&&x| x == s).count() as f64 / 1e5;
    assert!((share(4096) - 0.6).abs() < 0.01, "{}", share(4096));
    assert!((share(8192) - 0.3).abs() < 0.01, "{}", share(8192));
    assert!((share(1 << 20) - 0.1).abs() < 0.01, "{}", share(1 << 20));
    // fio's bssplit form is the same mix.
    let fio = parse("4k/60:8k/30:1m/10").unwrap();
    assert_eq!(draws(&fio, 1000), draws(&mix, 1000));
}

#[test]
fn a_lognormal_mix_has_its_median_and_stays_within_its_bounds() {
    let mix = parse("lognormal:8KiB,1.5,32MiB").unwrap();
    let mut sizes = draws(&mix, 200_001);
    assert!(sizes.iter().all(|&s| (8..=32 << 20).contains(&s)));
    sizes.sort_unstable();
    let median = sizes[100_000] as f64;
    assert!((median / 8192.0 - 1.0).abs() < 0.03, "median {median}");
    // One sigma above the median: exp(1.5) times it, at the 84.13th percentile.
    let p84 = sizes[168_270] as f64;
    assert!(
        (p84 / (8192.0 * 1.5f64.exp()) - 1.0).abs() < 0.05,
        "p84 {p84}"
    );
}

#[test]
fn uniform_covers_its_range_evenly() {
    let mix = parse("uniform:1KiB,2KiB").unwrap();
    let sizes = draws(&mix, 100_000);
    assert!(sizes.iter().all(|&s| (1024..=2048).contains(&s)));
    let low_half = sizes.iter().filter(|&&s| s < 1536).count() as f64 / 1e5;
    assert!((low_half - 0.5).abs() < 0.01, "{low_half}");
    assert!(sizes.contains(&1024) && sizes.contains(&2048));
}

#[test]
fn a_rows_size_depends_on_the_seed_and_its_id_only() {
    let mix = parse("lognormal:8KiB,1,1MiB").unwrap();
    // Another mix made from the same text gives every row the same size.
    let same = parse("lognormal:8KiB,1,1MiB").unwrap();
    assert!((1..=1000).all(|id| mix.bytes_of(3, id) == same.bytes_of(3, id)));
    let a: Vec<u64> = (1..=100).map(|id| mix.bytes_of(3, id)).collect();
    let b: Vec<u64> = (1..=100).map(|id| mix.bytes_of(4, id)).collect();
    assert_ne!(a, b);
    // The canonical text makes the same mix: a saved mix draws the same sizes.
    let again = parse(&mix.canonical()).unwrap();
    assert_eq!(again.canonical(), mix.canonical());
    assert_eq!(draws(&again, 1000), draws(&mix, 1000));
}

#[test]
fn a_mixes_dataset_is_the_fewest_rows_that_reach_its_bytes() {
    let mix = parse("uniform:1KiB,64KiB").unwrap();
    let (rows, bytes) = mix.rows_for(1, 64 << 20);
    let sum: u64 = (1..=rows).map(|id| mix.bytes_of(1, id)).sum();
    assert_eq!(sum, bytes);
    assert!(bytes >= 64 << 20);
    assert!(bytes - mix.bytes_of(1, rows) < 64 << 20);
    // About the dataset over the mean (32.5 KiB).
    assert!((rows as f64 / 2016.0 - 1.0).abs() < 0.1, "{rows}");
}

#[test]
fn interned_mixes_are_one_reference_each_and_serialise_as_their_text() {
    let a = intern(parse("4KiB:1,8KiB:1").unwrap());
    let b = intern(parse("buckets:4096:1,8192:1").unwrap());
    let c = intern(parse("4KiB:1,8KiB:2").unwrap());
    assert_eq!(a, b);
    assert_ne!(a, c);
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(json, "\"buckets:4096:1,8192:1\"");
    let back: MixRef = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
    assert_eq!(a.to_string(), "mix 4KiB:1 8KiB:1");
    assert!(
        a.get().stem().starts_with("mix-4KiB-1-8KiB-1-mix"),
        "{}",
        a.get().stem()
    );
    assert_eq!(a.get().stem().len(), "mix-4KiB-1-8KiB-1-mix".len() + 8);
}

#[test]
fn a_ycsb_histogram_file_gives_bucket_sizes_of_its_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hist.txt");
    std::fs::write(&file, "BlockSize\t1024\n0\t5\n1\t0\n3\t15\n").unwrap();
    let mix = parse(&format!("hist:{}", file.display())).unwrap();
    assert_eq!(mix.shape, Shape::Buckets(vec![(1024, 5.0), (4096, 15.0)]));
    std::fs::write(&file, "BlockSize\t1024\n0\t0\n").unwrap();
    let why = parse(&format!("hist:{}", file.display()))
        .unwrap_err()
        .to_string();
    assert!(why.contains("no bucket with a count above 0"), "{why}");
    std::fs::write(&file, "BlockSize\t1024\n0\t-3\n").unwrap();
    let why = parse(&format!("hist:{}", file.display()))
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("line 2") && why.contains("negative count"),
        "{why}"
    );
    std::fs::write(&file, "").unwrap();
    let why = parse(&format!("hist:{}", file.display()))
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("does not start with a BlockSize line"),
        "{why}"
    );
    let why = error("hist:/nonexistent/h.txt");
    assert!(why.contains("cannot read /nonexistent/h.txt"), "{why}");
}

#[test]
fn a_directorys_file_sizes_make_a_mix_that_draws_like_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    for i in 0..30 {
        std::fs::write(dir.path().join(format!("a{i}")), vec![0u8; 1000]).unwrap();
    }
    for i in 0..10 {
        std::fs::write(dir.path().join("sub").join(format!("b{i}")), vec![0u8; 3]).unwrap();
    }
    // 3 B files are no 8 B blobs (a blob holds its 8-byte id): refused, not raised.
    let why = error(&format!("dir:{}", dir.path().display()));
    assert!(
        why.contains("10 of the 40 files under") && why.contains("under 8 B"),
        "{why}"
    );
    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    let mix = parse(&format!("dir:{}", dir.path().display())).unwrap();
    let Shape::Buckets(buckets) = &mix.shape else {
        panic!("{:?}", mix.shape)
    };
    // 1000 B kept within 1.1%.
    assert_eq!(buckets.len(), 1, "{buckets:?}");
    assert!(
        (buckets[0].0 as f64 / 1000.0 - 1.0).abs() < 0.011,
        "{buckets:?}"
    );
    assert_eq!(buckets[0].1, 30.0);
    let why = from_sampled_sizes(&[1, 1000], "sqlite:x#t.c")
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("1 of the 2 values sampled are under 8 B"),
        "{why}"
    );
    let empty = tempfile::tempdir().unwrap();
    let why = error(&format!("dir:{}", empty.path().display()));
    assert!(why.contains("holds no files"), "{why}");
    // Empty files are no blobs: left out beside others, refused alone.
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("empty{i}")), b"").unwrap();
        std::fs::write(empty.path().join(format!("empty{i}")), b"").unwrap();
    }
    let with_empty = parse(&format!("dir:{}", dir.path().display())).unwrap();
    assert_eq!(with_empty.canonical(), mix.canonical());
    let why = error(&format!("dir:{}", empty.path().display()));
    assert!(
        why.contains("5 file(s)") && why.contains("all empty"),
        "{why}"
    );
    let why = from_sampled_sizes(&[0, 0], "sqlite:x#t.c")
        .unwrap_err()
        .to_string();
    assert!(why.contains("every value sampled is empty"), "{why}");
}

#[test]
fn a_wide_lognormal_is_accepted_while_most_of_it_stays_between_its_ends() {
    for ok in ["lognormal:8KiB,3,32MiB", "lognormal:64KiB,4,256MiB"] {
        assert!(parse(ok).is_ok(), "{ok}");
    }
    assert!((parse::normal_cdf(0.0) - 0.5).abs() < 1e-7);
    assert!((parse::normal_cdf(1.96) - 0.975).abs() < 1e-4);
    assert!((parse::normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
}

#[test]
fn a_saved_mix_is_read_back_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mix.txt");
    let mix = parse("lognormal:4KiB,0.8,1MiB").unwrap();
    std::fs::write(&file, mix.canonical()).unwrap();
    let back = parse(&format!("file:{}", file.display())).unwrap();
    assert_eq!(back.canonical(), mix.canonical());
}

#[test]
fn bad_mixes_say_what_is_wrong_in_one_line() {
    for (text, says) in [
        ("", "write sizes with weights"),
        (
            "lognormal:8KiB,1.5",
            "write it as lognormal:MEDIAN,SIGMA,LARGEST",
        ),
        ("lognormal:8KiB,0,32MiB", "sigma must be above 0"),
        (
            "lognormal:64MiB,1,32MiB",
            "the median is above the largest blob",
        ),
        ("lognormal:8KiB,x,32MiB", "sigma \"x\" is not a number"),
        ("uniform:64KiB,1KiB", "the low end is above the high end"),
        ("uniform:4B,1KiB", "sizes start at 8 B"),
        ("4KiB:1,8KiB:-1", "the weight of 8KiB is negative"),
        ("4KiB:0,8KiB:0", "no size with a weight above 0"),
        ("4KiB,8KiB:1", "\"4KiB\" has no weight"),
        ("4KiB:1,1GiB:1", "more than the 256MiB a blob can be"),
        ("4XB:1", "unknown unit"),
        ("dir:/nonexistent/blobs", "is not a directory"),
        (
            "lognormol:8KiB,1.5,32MiB",
            "'lognormol' is no form of size mix",
        ),
        ("unifrom:1KiB,4KiB", "uniform:LOW,HIGH"),
        ("lognormal:8KiB,50,32MiB", "two-point mix"),
        ("lognormal:8KiB,12,32MiB", "at the two ends"),
    ] {
        let why = error(text);
        assert!(why.contains(says), "{text}: {why}");
        assert!(!why.contains('\n'), "{text}: {why}");
        assert!(why.starts_with("invalid size mix"), "{text}: {why}");
    }
}

#[test]
fn bands_are_the_doublings_a_mix_reaches() {
    assert_eq!(
        band_of(8192),
        Band {
            low: 8192,
            high: 16384
        }
    );
    assert_eq!(
        band_of(16383),
        Band {
            low: 8192,
            high: 16384
        }
    );
    assert_eq!(band_of(8192).label(), "8KiB-16KiB");
    let mix = parse("uniform:3KiB,9KiB").unwrap();
    let bands: Vec<String> = bands_of(&mix).iter().map(Band::label).collect();
    assert_eq!(bands, ["2KiB-4KiB", "4KiB-8KiB", "8KiB-16KiB"]);
    // A few sizes written by hand are bands of their own (a size's blobs are all of it),
    // in order whatever order they were written in.
    let mix = parse("1MiB:1,4KiB:1,5KiB:1").unwrap();
    let bands: Vec<String> = bands_of(&mix).iter().map(Band::label).collect();
    assert_eq!(bands, ["4KiB", "5KiB", "1MiB"]);
    let grid = mix.band_grid();
    assert_eq!(grid.band_of(5 << 10).label(), "5KiB");
    assert_eq!(grid.band_of(4 << 10), grid.band(0));
    assert_eq!(grid.slot_of(1 << 20), 2);
    // Sizes no unit holds whole are named in bytes: two sizes never share a name.
    let sampled = parse("4187:1,4233:1").unwrap().band_grid();
    let names: Vec<String> = [4187, 4233].map(|b| sampled.band_of(b).label()).into();
    assert_eq!(names, ["4187B", "4233B"]);
    // More than a hand's worth (a histogram file, a sampled mix) are summarised by doublings.
    let many: Vec<String> = (1..=MOST_SIZE_BANDS as u64 + 1)
        .map(|k| format!("{}:1", k * 1000))
        .collect();
    let mix = parse(&many.join(",")).unwrap();
    assert_eq!(mix.band_grid(), BandGrid::Doublings);
    let bands: Vec<String> = bands_of(&mix).iter().map(Band::label).collect();
    assert_eq!(
        bands,
        [
            "512B-1KiB",
            "1KiB-2KiB",
            "2KiB-4KiB",
            "4KiB-8KiB",
            "8KiB-16KiB",
            "16KiB-32KiB"
        ]
    );
}

#[test]
fn a_mix_datasets_sizes_offsets_and_sums_agree() {
    let mix = intern(parse("uniform:100B,10KiB").unwrap());
    let spec = crate::dataset::DatasetSpec::of_mix(mix, 1 << 20, 5, Default::default());
    let sizes: Vec<u64> = (1..=spec.rows).map(|id| spec.blob_bytes(id)).collect();
    assert_eq!(spec.bytes(), sizes.iter().sum::<u64>());
    assert!(spec.bytes() >= 1 << 20 && spec.bytes() - sizes[sizes.len() - 1] < 1 << 20);
    assert_eq!(spec.largest_blob(), 10 << 10);
    let before_10: u64 = sizes[..9].iter().sum();
    assert_eq!(spec.bytes_before(10), before_10);
    // A packed file's whole rows: a row cut short does not count.
    assert_eq!(spec.rows_within(before_10), 9);
    assert_eq!(spec.rows_within(before_10 + sizes[9] - 1), 9);
    assert_eq!(spec.rows_within(before_10 + sizes[9]), 10);
    assert_eq!(spec.rows_within(spec.bytes() + 5), spec.rows);
    assert_eq!(
        spec.sum_over_rows(3, |s| s + 1),
        sizes[..3].iter().sum::<u64>() + 3
    );
    assert_eq!(spec.mean_blob_bytes(), spec.bytes() / spec.rows);
}

#[test]
fn a_datasets_shares_are_counted_per_band() {
    let shares = shares(&BandGrid::Doublings, [5000, 4096, 1 << 20, 6000, 16]);
    let seen: Vec<(String, u64, u64)> = shares
        .iter()
        .map(|s| (s.band.label(), s.blobs, s.bytes))
        .collect();
    assert_eq!(
        seen,
        [
            ("16B-32B".to_string(), 1, 16),
            ("4KiB-8KiB".to_string(), 3, 15_096),
            ("1MiB-2MiB".to_string(), 1, 1 << 20),
        ]
    );
}
