use rand::SeedableRng;

use super::*;
use crate::dataset::documents::Content;

fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn fill(corpus: &Corpus, seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut buf = vec![0u8; len];
    corpus.fill(&mut rng, &mut buf);
    buf
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_row_is_cut_from_a_file_of_about_its_size_and_the_same_from_the_same_seed() {
    let small = b"small file, thirty-two bytes...!".to_vec();
    let mid: Vec<u8> = (0..300u32)
        .flat_map(|i| format!("{i:04} ").into_bytes())
        .collect();
    let big: Vec<u8> = (0..4000u32)
        .flat_map(|i| format!("<p>{i}</p>").into_bytes())
        .collect();
    let dir = folder(&[
        ("a.txt", &small),
        ("deeper/b.txt", &mid),
        ("deeper/still/c.html", &big),
        ("empty.txt", b""),
    ]);
    let corpus = Corpus::read(dir.path().to_str().unwrap()).unwrap();
    assert_eq!(corpus.files, 3, "every level down, the empty file left out");
    assert_eq!(corpus.bytes as usize, small.len() + mid.len() + big.len());
    assert_eq!(
        corpus.mime, "text/plain; charset=utf-8",
        "two .txt to one .html"
    );
    for seed in 0..20 {
        // 1,000 bytes: only the 1,500-byte file is at least that and under twice it.
        let row = fill(&corpus, seed, 1000);
        assert_eq!(row, fill(&corpus, seed, 1000));
        assert!(
            contains(&mid, &row),
            "seed {seed}: cut from the file of its size"
        );
        // 20 bytes: from the 32-byte file.
        assert!(contains(&small, &fill(&corpus, seed, 20)));
    }
    // Larger than every file: files back to back, each whole.
    let huge = fill(&corpus, 3, big.len() * 3);
    assert!(contains(&huge, &big) && contains(&huge, &mid) && contains(&huge, &small));
    let rows: std::collections::HashSet<Vec<u8>> =
        (0..20).map(|s| fill(&corpus, s, 1000)).collect();
    assert!(
        rows.len() > 10,
        "offsets drawn from each row's seed: {} distinct",
        rows.len()
    );
}

#[test]
fn the_same_folder_is_the_same_dataset_and_a_changed_one_another() {
    let dir = folder(&[
        ("a.json", b"{\"a\": 1, \"b\": [1, 2, 3]}"),
        ("b.json", b"{\"c\": 2}"),
    ]);
    let path = dir.path().to_str().unwrap().to_string();
    let first: Content = format!("dir:{path}").parse().unwrap();
    let again: Content = format!("dir:{path}").parse().unwrap();
    assert_eq!(first, again);
    assert_eq!(first.to_string(), format!("dir:{path}"));
    assert_eq!(first.mime(), "application/json");
    let suffix = first.suffix();
    assert!(suffix.starts_with("-dir") && suffix.len() == 12, "{suffix}");
    // Results keep the digest and read back without reading the folder: the same content.
    let held = String::from(first);
    assert!(held.starts_with(&format!("dir:{path}@")), "{held}");
    let back = Content::try_from(held.clone()).unwrap();
    assert_eq!(back, first);
    let elsewhere = Content::try_from(held.replace(&path, "/nowhere/at/all")).unwrap();
    assert_eq!(
        elsewhere.to_string(),
        "dir:/nowhere/at/all",
        "described, not read"
    );
    std::fs::write(dir.path().join("b.json"), b"{\"c\": 3}").unwrap();
    let changed: Content = format!("dir:{path}").parse().unwrap();
    assert_ne!(changed, first, "one byte changed: another dataset");
    assert_ne!(changed.suffix(), suffix);
}

#[test]
fn a_folder_with_nothing_to_store_is_refused_in_one_line_naming_the_fix() {
    let empty = folder(&[]);
    let only_empty = folder(&[("a.txt", b""), ("b/c.txt", b"")]);
    let file = folder(&[("doc.txt", b"some words")]);
    let cases = [
        ("dir:".to_string(), "names no folder"),
        ("dir:/nonexistent/documents".into(), "cannot open it"),
        (format!("dir:{}", empty.path().display()), "holds no files"),
        (
            format!("dir:{}", only_empty.path().display()),
            "2 file(s) are all empty",
        ),
        (
            format!("dir:{}", file.path().join("doc.txt").display()),
            "is a file, not a folder",
        ),
        ("dir:/dev/null".into(), "is not a folder (a device"),
    ];
    for (input, why) in cases {
        let err = input.parse::<Content>().unwrap_err();
        assert!(err.contains(why), "{input}: {err}");
        assert!(!err.contains('\n'), "one line: {err}");
        assert!(
            err.contains("give") || err.contains("write"),
            "names the fix: {err}"
        );
    }
}
