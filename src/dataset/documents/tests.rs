use std::io::Write;

use super::*;

fn blob(content: Content, seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut buf = vec![0u8; len];
    content.fill(&mut rng, &mut buf);
    buf
}

/// Deflate at level 6 (gzip's default): the input's size over the output's.
fn deflate_ratio(bytes: &[u8]) -> f64 {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(bytes).unwrap();
    bytes.len() as f64 / e.finish().unwrap().len() as f64
}

#[test]
fn every_content_fills_its_blob_exactly_and_the_same_from_the_same_seed() {
    for content in [
        Content::Random,
        Content::Text,
        Content::Json,
        Content::Html,
        Content::Ratio(400),
    ] {
        for len in [1, 7, 8, 100, 4096, 4097, 65536] {
            let a = blob(content, 11, len);
            assert_eq!(a.len(), len);
            assert_eq!(a, blob(content, 11, len), "{content} at {len}");
            if len >= 64 {
                assert_ne!(a, blob(content, 12, len), "{content}: another seed");
            }
        }
    }
}

#[test]
fn documents_compress_as_documents_do_and_ratio_as_asked() {
    let of = |c: Content| deflate_ratio(&blob(c, 3, 1 << 20));
    let random = of(Content::Random);
    assert!(random < 1.01, "random: {random}");
    // English prose deflates about 2.5-3.5:1; JSON and HTML with their repeated keys
    // and tags further.
    let text = of(Content::Text);
    assert!((2.0..4.5).contains(&text), "text: {text}");
    for c in [Content::Json, Content::Html] {
        let r = of(c);
        assert!(r > text && r < 8.0, "{c}: {r} against text's {text}");
    }
    for (asked, lo, hi) in [(2.0, 1.8, 2.2), (4.0, 3.5, 4.4), (8.0, 6.5, 8.8)] {
        let c: Content = format!("ratio:{asked}").parse().unwrap();
        let got = of(c);
        assert!((lo..hi).contains(&got), "{c}: {got}");
    }
}

#[test]
fn text_json_and_html_are_utf8_and_json_parses() {
    for c in [Content::Text, Content::Json, Content::Html] {
        let b = blob(c, 5, 1 << 16);
        assert!(std::str::from_utf8(&b).is_ok(), "{c}");
    }
    // A whole JSON document where the blob is long enough to close its records: cut
    // at the last record and closed, it parses as an array of objects.
    let b = String::from_utf8(blob(Content::Json, 5, 1 << 16)).unwrap();
    let whole = &b[..b.rfind(",\n{\"id\"").unwrap()];
    let parsed: serde_json::Value = serde_json::from_str(&format!("{whole}]")).unwrap();
    let records = parsed.as_array().unwrap();
    assert!(records.len() > 20, "{}", records.len());
    assert!(
        records
            .iter()
            .all(|r| r["id"].is_u64() && r["tags"].is_array())
    );
}

#[test]
fn content_is_named_one_way_and_bad_forms_are_refused_with_the_fix() {
    for (text, content, suffix) in [
        ("random", Content::Random, ""),
        ("TEXT", Content::Text, "-text"),
        ("json", Content::Json, "-json"),
        ("html", Content::Html, "-html"),
        ("ratio:4", Content::Ratio(400), "-r4"),
        ("ratio:2.5", Content::Ratio(250), "-r2p50"),
    ] {
        let parsed: Content = text.parse().unwrap();
        assert_eq!(parsed, content);
        assert_eq!(parsed.suffix(), suffix);
        assert_eq!(parsed.to_string().parse::<Content>().unwrap(), parsed);
    }
    for (bad, says) in [
        ("xml", "unknown content"),
        ("ratio:0", "out of range"),
        ("ratio:-1", "out of range"),
        ("ratio:1", "ratio:1 is --content random"),
        ("ratio:1e9", "out of range"),
        ("ratio:inf", "out of range"),
        ("ratio:NaN", "out of range"),
        ("ratio:", "not a number"),
        ("ratio:four", "not a number"),
    ] {
        let err = bad.parse::<Content>().unwrap_err();
        assert!(err.contains(says), "{bad}: {err}");
    }
}
