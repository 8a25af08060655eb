//! What the report and the terminal say of an engine that beat the floor
//! (`records::floor_check`), from the figures it found. A
//! short reason for the caveat's one line, the figures and the whole explanation for
//! its folded detail and for the run's last lines.

use crate::records::floor_check::{BeatFloor, EqualFill, OwnFiles, Why};
use crate::records::summary::interval_label;
use crate::stats::{disk_per_fetch_label, format_ns, hit_ratio_label};

/// The caveat's line: who, the two p50s, and the reason in a few words.
pub fn summary(beat: &BeatFloor) -> String {
    format!(
        "{} (p50 {} against the floor's {}): {}",
        beat.who,
        format_ns(beat.p50_ns),
        format_ns(beat.floor_p50_ns),
        reason(&beat.why)
    )
}

/// The reason in a few words, what the detail explains.
fn reason(why: &Why) -> &'static str {
    match why {
        Why::Compressed { .. } => "it keeps the blobs compressed: fewer bytes to read",
        Why::OtherPart { .. } => "measured in another part of the run than the floor",
        Why::MoreHits { .. } => "more of its fetches were cache hits",
        Why::DiskMoved { .. } => "the disk's speed moved during the round",
        Why::FullerCache(_) => "its longer cell filled its cache further",
        Why::OwnFilesFaster { .. } => "the floor's file read slower than its own files then",
        Why::PatternPinned { .. } => "the floor's way of reading was pinned, not timed",
        Why::FasterReads { .. } => "this disk served its reads faster than the floor's",
    }
}

/// The figures with their intervals and the whole explanation.
pub fn detail(beat: &BeatFloor) -> String {
    format!(
        "p50 {} ({}) against the floor's {} ({}); {}",
        format_ns(beat.p50_ns),
        interval_label(beat.interval),
        format_ns(beat.floor_p50_ns),
        interval_label(beat.floor_interval),
        explanation(&beat.why)
    )
}

/// The terminal's line at the end of a run.
pub fn line(beat: &BeatFloor) -> String {
    format!("{} beat the floor: {}", beat.who, detail(beat))
}

fn explanation(why: &Why) -> String {
    match why {
        Why::OtherPart {
            part,
            started,
            floor_part,
            floor_started,
            command,
        } => format!(
            "it was measured by part {} of this run (from {started}), the floor by part {} (from {floor_started}): not on the disk of the same hour, and this comparison says nothing until both are measured in one run (`{command}`)",
            part + 1,
            floor_part + 1,
        ),
        Why::Compressed { kept } => format!(
            "it keeps the blobs compressed in {:.0}% of the bytes the floor reads them from (which stores them as given), so a miss reads fewer bytes from the disk and its cache holds more of the data: what compression buys on this content, not a fault of the floor",
            kept * 100.0
        ),
        Why::MoreHits { hits, floor_hits } => format!(
            "{:.0}% of its fetches were page-cache hits against the floor's {:.0}%: it kept more of its dataset cached",
            hits * 100.0,
            floor_hits * 100.0
        ),
        Why::DiskMoved { change, who } => {
            format!("{change} of {who}: compare them again in a calmer minute")
        }
        Why::FullerCache(fill) => equal_fill(fill),
        Why::OwnFilesFaster { ratio, probe } => format!(
            "this disk served its dataset {ratio:.1}x faster than the floor's file ({probe}): the floor's file was slower to read then, not its way of reading; compare them again with the floor measured on a disk that reads its file as fast (another order, a calmer minute, or files read before)"
        ),
        Why::PatternPinned { pattern, measured } => format!(
            "the floor read with {pattern}, pinned and not timed ({measured}): run it again without the pin so the floor takes the fastest way this disk reads"
        ),
        Why::FasterReads {
            disk_per_fetch,
            pattern,
            measured,
            own_files,
        } => {
            let measured = measured
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            let own = match own_files {
                OwnFiles::Slower(probe) => {
                    format!(" Its own files read slower than the floor's ({probe}).")
                }
                OwnFiles::Alike(probe) => {
                    format!(" Its own files read like the floor's ({probe}).")
                }
                OwnFiles::Unknown(why) => format!(
                    " Whether this disk serves its files as fast as the floor's is unknown (its own files were not probed: {why})."
                ),
                OwnFiles::NotProbed => String::new(),
            };
            format!(
                "its reads ({} from disk per fetch) were served faster than the floor's {pattern}, the fastest of the patterns it timed{measured}: this disk rewards a way of reading the floor does not try.{own}",
                disk_per_fetch_label(*disk_per_fetch)
            )
        }
    }
}

fn equal_fill(f: &EqualFill) -> String {
    format!(
        "over its first {} fetches from its cold start against the floor's first {} (equal fill, the same ids) its p50 is {} against the floor's {}: on the same number of fetches it did not beat the floor. Its cell ran {} fetches against the floor's {} (hit ratio {} against {}): its figure is of a cache filled by more fetches",
        f.fetches,
        f.floor_fetches,
        format_ns(f.p50_ns),
        format_ns(f.floor_p50_ns),
        f.cell_fetches,
        f.floor_cell_fetches,
        hit_ratio_label(f.hit_ratio),
        hit_ratio_label(f.floor_hit_ratio),
    )
}
