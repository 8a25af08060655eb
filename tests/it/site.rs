//! `blobrace site`: one static page from many runs, each figure beside its own run's
//! floor and linked to its run's report, failures kept visible, filters by machine,
//! deployment and date; and opened in a real browser, every link resolving.

use std::path::Path;

use crate::common::{blobrace, run, stderr};

fn measure(root: &Path, size: &str, extra: &[&str]) {
    let args = [
        &["measure", "--engines", "floor,sqlite", "--sizes", size][..],
        &[
            "--dataset-bytes",
            "8MiB",
            "--warmup",
            "50ms",
            "--measure",
            "300ms",
        ],
        extra,
    ]
    .concat();
    let out = run(root, &args);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn many_runs_make_one_page_linked_to_each_runs_report() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    measure(root, "4KiB", &[]);
    measure(root, "4KiB,16KiB", &[]);
    measure(root, "4KiB", &["--disk-cap", "riops=2000"]);
    // A failure recorded in one run stays visible on the page.
    let mut runs: Vec<_> = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("results.json").is_file())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 3);
    let file = runs[1].join("results.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    json["failures"] = serde_json::json!([{
        "stage": "measure", "who": "sqlite", "size": 16384,
        "why": "a failure kept for the page", "at": "2026-12-05T00:00:00Z"
    }]);
    std::fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();

    let out = blobrace()
        .current_dir(root)
        .args(["site", "results", "--out", "site"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("site: site/index.html (3 runs"),
        "{}",
        stderr(&out)
    );
    let page = std::fs::read_to_string(root.join("site/index.html")).unwrap();
    for dir in &runs {
        let id = dir.file_name().unwrap().to_str().unwrap();
        let href = format!("../results/{id}/index.html");
        assert!(page.contains(&href), "{id} is linked");
        assert!(root.join("site").join(&href).is_file(), "{href} resolves");
    }
    assert!(
        page.contains("a failure kept for the page"),
        "failures shown"
    );
    assert!(
        page.contains("disk cap riops=2000"),
        "a deployment to filter by"
    );
    assert!(page.contains("<select data-key=machine>"), "filters");
    // The floor's own ratio to itself is 1; SQLite's is above it, scored.
    assert!(page.contains("<td>1.00</td>"), "the floor beside itself");
    assert!(page.contains("<h2 id=scores>"), "scores");
    // As bars, the best first (one cache state here), the longest bar the worst.
    let scores = page.split("id=scores-table>").nth(1).unwrap();
    let scores = scores.split("</table>").next().unwrap();
    let values: Vec<(f64, u32)> = scores
        .lines()
        .filter(|l| l.starts_with("<tr data-"))
        .map(|l| {
            let bar = l.split("style=\"width:").nth(1).unwrap();
            let width = bar.split('%').next().unwrap().parse().unwrap();
            let score = bar.split("</span></span>").nth(1).unwrap();
            (score.split('<').next().unwrap().parse().unwrap(), width)
        })
        .collect();
    assert_eq!(values.len(), 3, "{scores}");
    assert!(
        values
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{values:?}"
    );
    assert_eq!(values.last().unwrap().1, 100, "{values:?}");
    // Read in a real browser: axe-core finds nothing serious (bars, colours, links).
    if let Some(chromium) = crate::browser::chromium() {
        let site = root.join("site/index.html").canonicalize().unwrap();
        crate::browser::assert_accessible(&chromium, &site);
        crate::browser::screenshot(&chromium, &site, "site-1280x800", 1280, 800);
        crate::browser::assert_everything_opens(&chromium, &site);
        let (width, viewport) = crate::browser::phone_width(&chromium, &site);
        assert!(
            width <= viewport,
            "the site page: {width} px wide in {viewport} px"
        );
    }
    // The run whose sqlite failed marks its score so.
    assert!(
        scores.contains("<td class=l>sqlite <span class=bad>failed</span></td>"),
        "{scores}"
    );

    // Nothing to read: one line, not an empty page.
    let empty = tempfile::tempdir().unwrap();
    let none = blobrace()
        .args(["site"])
        .arg(empty.path())
        .arg("--out")
        .arg(empty.path().join("site"))
        .output()
        .unwrap();
    assert!(!none.status.success());
    assert!(stderr(&none).contains("no run found"), "{}", stderr(&none));
    assert!(!empty.path().join("site/index.html").exists());
}

/// The site is written over nothing another command wrote (a run's report, a results
/// directory's index), and a run given twice, or by two names, is one run on it.
#[test]
fn the_site_writes_over_no_report_and_counts_a_run_given_twice_once() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    measure(root, "4KiB", &[]);
    let run_dir = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("results.json").is_file())
        .unwrap();
    let report = std::fs::read(run_dir.join("index.html")).unwrap();
    std::os::unix::fs::symlink(root.join("results"), root.join("link")).unwrap();
    let site = |out: &Path, dirs: &[&Path]| {
        blobrace()
            .current_dir(root)
            .arg("site")
            .args(dirs)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    for out in [run_dir.as_path(), &root.join("results")] {
        let refused = site(out, &[&root.join("results")]);
        let said = stderr(&refused);
        assert_eq!(refused.status.code(), Some(2), "{said}");
        assert_eq!(said.lines().count(), 1, "one line: {said}");
        assert!(said.contains("choose a directory of its own"), "{said}");
    }
    assert_eq!(std::fs::read(run_dir.join("index.html")).unwrap(), report);
    // The run, its results directory and a link to it: one run.
    let out = site(
        &root.join("site"),
        &[&run_dir, &root.join("results"), &root.join("link")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("(1 runs"), "{}", stderr(&out));
    // Its own page it writes again.
    let again = site(&root.join("site"), &[&root.join("results")]);
    assert!(again.status.success(), "{}", stderr(&again));
}
