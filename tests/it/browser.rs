//! The pages opened as a reader opens them: Debian's Chromium, headless, with the
//! page's own scripts (and the checks' scripts) writing what they measured into a
//! `data-*` attribute of the DOM it dumps; axe-core for accessibility; screenshots
//! kept under the target directory for a person to look at.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{stderr, stdout};

/// Debian's chromium (scripts/setup.sh installs it), or None after saying why;
/// under CI it must be there.
pub(crate) fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("BLOBRACE_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "CI: no chromium; scripts/setup.sh installs Debian's chromium"
        );
        eprintln!("skipped: no chromium (apt-get install chromium, or set BLOBRACE_CHROMIUM)");
    }
    found
}

pub(crate) fn headless(chromium: &Path, args: &[&str], page: &Path) -> Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--virtual-time-budget=10000",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

/// The value of the `data-<name>` attribute in a dumped DOM, unescaped, or None where
/// no script wrote it.
pub(crate) fn dom_attribute(dom: &Output, name: &str) -> Option<String> {
    let html = stdout(dom);
    let value = html
        .split(&format!("data-{name}=\""))
        .nth(1)?
        .split('"')
        .next()?;
    Some(
        value
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// `data-<name>` of `dom` read as JSON; said with Chromium's own words where missing.
pub(crate) fn dom_json(dom: &Output, name: &str, page: &Path) -> serde_json::Value {
    let text = dom_attribute(dom, name)
        .unwrap_or_else(|| panic!("no data-{name} on {}: {}", page.display(), stderr(dom)));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("data-{name}: {e}: {text}"))
}

/// `page` opened beside a copy of itself holding `script` (run after the page's own),
/// the copy removed after: what the script wrote into the body's data-* attributes.
fn with_script(chromium: &Path, page: &Path, script: &str, args: &[&str]) -> Output {
    let html = std::fs::read_to_string(page).unwrap();
    let copy = page.with_file_name("browser-check.html");
    std::fs::write(
        &copy,
        html.replacen("</body>", &format!("{script}</body>"), 1),
    )
    .unwrap();
    let dom = headless(
        chromium,
        &[args, &["--allow-file-access-from-files", "--dump-dom"]].concat(),
        &copy,
    );
    std::fs::remove_file(&copy).unwrap();
    dom
}

/// axe-core's script, as scripts/setup.sh installs it, or None after saying why; under
/// CI it must be there.
pub(crate) fn axe_script() -> Option<PathBuf> {
    let found = std::env::var_os("BLOBRACE_AXE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/blobrace/axe-core-4.10.3/axe.min.js"))
        })
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "CI: no axe-core; scripts/setup.sh installs it"
        );
        eprintln!(
            "skipped the accessibility check: no axe-core (scripts/setup.sh, or set BLOBRACE_AXE)"
        );
    }
    found
}

/// axe-core's violations of `page` (WCAG 2 A and AA), run in Chromium on a copy of the
/// page beside it (its charts resolve the same): (rule, impact, elements).
pub(crate) fn axe_violations(
    chromium: &Path,
    axe: &Path,
    page: &Path,
) -> Vec<(String, String, u64)> {
    let script = format!(
        "<script src=\"file://{}\"></script><script>axe.run(document,{{runOnly:{{type:'tag',values:['wcag2a','wcag2aa']}}}}).then(r=>{{document.body.dataset.axe=JSON.stringify(r.violations.map(v=>[v.id,v.impact||'',v.nodes.length]))}},e=>{{document.body.dataset.axe=JSON.stringify([['axe failed: '+e,'critical',0]])}});</script>",
        axe.display()
    );
    let dom = with_script(chromium, page, &script, &["--window-size=1280,800"]);
    serde_json::from_value(dom_json(&dom, "axe", page)).unwrap()
}

/// The serious and critical ones of `axe_violations`, said whole where any.
pub(crate) fn assert_accessible(chromium: &Path, page: &Path) {
    let Some(axe) = axe_script() else { return };
    let found = axe_violations(chromium, &axe, page);
    eprintln!("axe-core on {}: {found:?}", page.display());
    let bad: Vec<_> = found
        .iter()
        .filter(|(_, impact, _)| impact == "serious" || impact == "critical")
        .collect();
    assert!(bad.is_empty(), "{}: {bad:?}", page.display());
}

/// What a report page's own load script says of it (`data-<name>`), at a window of
/// `width` x `height`.
pub(crate) fn page_says(
    chromium: &Path,
    page: &Path,
    name: &str,
    width: u32,
    height: u32,
) -> serde_json::Value {
    let dom = headless(
        chromium,
        &[&format!("--window-size={width},{height}"), "--dump-dom"],
        page,
    );
    assert!(dom.status.success(), "{}", stderr(&dom));
    dom_json(&dom, name, page)
}

/// How wide `page` lays out in a phone's 390 px (headless Chromium's window is 500 px
/// at least, so the page is opened in a 390 px frame beside it): (its width, the
/// frame's). The wider, the more the page itself scrolls sideways.
pub(crate) fn phone_width(chromium: &Path, page: &Path) -> (i64, i64) {
    let name = page.file_name().unwrap().to_string_lossy().into_owned();
    let frame = page.with_file_name("phone-check.html");
    std::fs::write(
        &frame,
        format!(
            "<!doctype html><body><iframe id=f src=\"{name}\" style=\"width:390px;height:844px;border:0\"></iframe><script>f.onload=()=>{{const d=f.contentDocument.documentElement;document.body.dataset.phone=JSON.stringify([d.scrollWidth,d.clientWidth])}}</script></body>"
        ),
    )
    .unwrap();
    let dom = headless(
        chromium,
        &[
            "--window-size=500,900",
            "--allow-file-access-from-files",
            "--dump-dom",
        ],
        &frame,
    );
    std::fs::remove_file(&frame).unwrap();
    let [width, viewport]: [i64; 2] =
        serde_json::from_value(dom_json(&dom, "phone", page)).unwrap();
    (width, viewport)
}

/// A screenshot of `page` at `width` x `height`, kept as `<name>.png` under the target
/// directory's `report-shots/` for a person to look at; its path.
pub(crate) fn screenshot(
    chromium: &Path,
    page: &Path,
    name: &str,
    width: u32,
    height: u32,
) -> PathBuf {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-shots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{name}.png"));
    let out = headless(
        chromium,
        &[
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", shot.display()),
        ],
        page,
    );
    assert!(
        shot.is_file(),
        "no screenshot of {}: {}",
        page.display(),
        stderr(&out)
    );
    eprintln!("{} at {width}x{height}: {}", page.display(), shot.display());
    shot
}

/// Every text of the SVG picture `svg` as Chromium lays it out, and those that overlap
/// another or fall outside the picture: {texts, overlaps: [[a, b]...], outside}.
pub(crate) fn svg_texts(chromium: &Path, svg: &Path) -> serde_json::Value {
    let page = svg.with_file_name("labels-check.html");
    let script = "const box=document.querySelector('svg').getBoundingClientRect();\
        const t=[...document.querySelectorAll('svg text')].map(e=>[e.textContent.trim(),e.getBoundingClientRect()]).filter(([s,r])=>s&&r.width>0);\
        const over=[],out=[];\
        for(let i=0;i<t.length;i++){const [s,a]=t[i];\
          if(a.left<box.left-1||a.right>box.right+1||a.top<box.top-1||a.bottom>box.bottom+1)out.push(s);\
          for(let j=i+1;j<t.length;j++){const [u,b]=t[j];\
            if(a.left<b.right-1&&b.left<a.right-1&&a.top<b.bottom-1&&b.top<a.bottom-1)over.push([s,u]);}}\
        document.body.dataset.labels=JSON.stringify({texts:t.map(x=>x[0]),overlaps:over,outside:out});";
    std::fs::write(
        &page,
        format!(
            "<!doctype html><body style=margin:0>{}<script>{script}</script></body>",
            std::fs::read_to_string(svg).unwrap()
        ),
    )
    .unwrap();
    let dom = headless(chromium, &["--window-size=1280,900", "--dump-dom"], &page);
    std::fs::remove_file(&page).unwrap();
    dom_json(&dom, "labels", svg)
}

/// Everything on `page` a reader can follow or open, tried in Chromium: every image
/// loaded (its natural width), every link's target there (a file beside the page,
/// read; an anchor, an element of that id), every `<details>` opened showing more
/// than its summary. Said whole where any fails; the counts, for the test's output.
pub(crate) fn assert_everything_opens(chromium: &Path, page: &Path) -> serde_json::Value {
    let script = "<script>window.addEventListener('load',async()=>{const bad=[];\
        const imgs=[...document.images];for(const i of imgs)if(!i.complete||i.naturalWidth===0)bad.push('image '+i.getAttribute('src'));\
        const links=[...document.querySelectorAll('a[href]')];\
        for(const a of links){const h=a.getAttribute('href');\
          if(/^(https?|mailto):/.test(h))continue;\
          if(h.startsWith('#')){if(h.length>1&&!document.getElementById(decodeURIComponent(h.slice(1))))bad.push('anchor '+h);continue;}\
          const ok=await new Promise(res=>{const x=new XMLHttpRequest();x.open('GET',a.href);x.onload=()=>res(x.status===0||x.status===200);x.onerror=()=>res(false);x.send();});if(!ok)bad.push('link '+h);}\
        const ds=[...document.querySelectorAll('details')];\
        for(const d of ds){d.open=true;const s=d.querySelector('summary');\
          if(d.getBoundingClientRect().height<=(s?s.getBoundingClientRect().height:0)+1)bad.push('details '+(s?s.textContent.slice(0,60):'?'));}\
        document.body.dataset.opens=JSON.stringify({images:imgs.length,links:links.length,details:ds.length,bad});});</script>";
    let dom = with_script(chromium, page, script, &["--window-size=1280,800"]);
    let found = dom_json(&dom, "opens", page);
    assert_eq!(
        found["bad"],
        serde_json::json!([]),
        "{}: what does not open: {found}",
        page.display()
    );
    eprintln!("{}: {found}", page.display());
    found
}
