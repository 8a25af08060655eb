//! This process's part of the run (`run_parts`, `resume`): each cell as it starts
//! (which of how many, and the time left: `outlook`), each cell measured to its end
//! credited to this part and saved at once, what an interrupt would say kept up to
//! date, and the part's times when it ends.

use std::time::Duration;

use anyhow::Result;

use crate::config::RunConfig;
use crate::records::run_parts::{DoneCell, RunPart};

use super::outlook::{CellLeft, CellProgress, CellTime, Fetches};
use super::plan::{Cell, Estimate, Plan};
use super::{Finding, Progress, Run, interrupt};

impl Run {
    fn part_mut(&mut self) -> &mut RunPart {
        self.results
            .parts
            .last_mut()
            .expect("a run has this process's part")
    }

    /// Keep this part's times in results.json up to date: a part killed outright
    /// keeps those of its last step.
    fn update_part_times(&mut self) {
        let (load, measure, total) = (
            self.clock.load.as_secs_f64(),
            self.clock.measure.as_secs_f64(),
            self.clock.elapsed().as_secs_f64(),
        );
        let part = self.part_mut();
        part.load_seconds = load;
        part.measure_seconds = measure;
        part.total_seconds = total;
    }

    /// A load step took `took` (`loading`).
    pub(super) fn loading_took(&mut self, took: Duration) {
        self.clock.load += took;
        self.update_part_times();
    }

    /// Say which cell starts, of how many, and the time left.
    pub(super) fn cell_starts(&mut self, plan: &Plan, cell: &Cell, label: &str) {
        let config = self.config();
        // In the order the run measures them (those already on disk may go first).
        let in_order: Vec<&Cell> = self
            .load_plan
            .sizes_in_order(plan)
            .into_iter()
            .flat_map(|spec| self.cells_in_order(plan, spec))
            .collect();
        let n = in_order.iter().position(|c| *c == cell).unwrap_or(0) + 1;
        let (mut presets_left, mut cells_left, mut at) = (Estimate::default(), Vec::new(), false);
        for c in in_order {
            at |= c == cell;
            if at && !self.results.is_done(&c.key()) {
                let estimate = Plan::estimate(config, c);
                presets_left = presets_left + estimate;
                cells_left.push(CellLeft {
                    at: c.key(),
                    estimate,
                });
            }
        }
        let loads_left = self.loads_left(plan, cell);
        let progress = CellProgress {
            n,
            of: plan.cells().len(),
            label,
            size: cell.spec.size_label(),
            elapsed: self.clock.elapsed(),
            left: self.clock.left(
                &cells_left,
                loads_left,
                Plan::measuring(config),
                config.min_fetches,
            ),
            presets_left,
        };
        self.progress(Progress::Cell(&progress));
        self.say_where_it_stands(&format!(
            "it was measuring {label} {}",
            cell.spec.size_label()
        ));
    }

    /// Seconds of loading still to come after `cell`'s size, where sizes are loaded
    /// one at a time (`--drop-after`), from the loads recorded here: those of the other
    /// size classes with a cell left (loaded before theirs are measured, in any order).
    fn loads_left(&self, plan: &Plan, cell: &Cell) -> f64 {
        if !self.one_size_at_a_time() {
            return 0.0;
        }
        // The size classes after this one, in the order the run measures them.
        let after: Vec<_> = self
            .load_plan
            .sizes_in_order(plan)
            .into_iter()
            .skip_while(|s| s.size != cell.spec.size)
            .skip(1)
            .map(|s| s.size)
            .collect();
        self.load_plan
            .outlook
            .per_size
            .iter()
            .filter(|(size, _)| after.contains(size))
            .filter(|(size, _)| {
                plan.cells()
                    .iter()
                    .any(|c| c.spec.size == *size && !self.results.is_done(&c.key()))
            })
            .map(|(_, seconds)| seconds)
            .sum()
    }

    /// The cells earlier parts measured, taught to this part's clock: a continued run
    /// said "22 min 03 s – 12 h 54 min left from the presets" until it had measured
    /// cells of its own, though part 1 had said "about 3 h 11 min" from its own. Each
    /// cell's time is the time since the cell before it ended in the same part (its
    /// cold start and prefill included); a part's first, its result's own span.
    pub(super) fn learn_earlier_parts_pace(&mut self) {
        let this_part = self.results.parts.len().saturating_sub(1) as u32;
        let plan = Plan::of(self.config());
        let time = |at: &str| chrono::DateTime::parse_from_rfc3339(at).ok();
        let mut learned = Vec::new();
        let mut previous: Option<&DoneCell> = None;
        for done in self
            .results
            .done_cells
            .iter()
            .filter(|d| d.part < this_part)
        {
            let after = previous.filter(|p| p.part == done.part);
            previous = Some(done);
            let Some(cell) = plan.cells().iter().find(|c| c.key() == done.cell) else {
                continue;
            };
            let result = self.results.results.iter().rfind(|r| {
                r.engine == cell.engine
                    && r.scenario == cell.scenario
                    && r.size_bytes == cell.spec.size.bytes()
            });
            let began = match after {
                Some(p) => time(&p.finished_at),
                None => result.and_then(|r| time(&r.started_at)),
            };
            let took = began
                .zip(time(&done.finished_at))
                .and_then(|(a, b)| (b - a).to_std().ok());
            let Some(took) = took else {
                continue;
            };
            learned.push(CellTime {
                at: cell.key(),
                preset: Plan::estimate(self.config(), cell).middle(),
                took,
                fetches: result.map(fetches_of),
            });
        }
        for cell in learned {
            self.clock.learned(cell);
        }
    }

    /// A cell ended after `took`; `whole`: every load of it was measured (or skipped
    /// for the cap), so it is done and a later part will not measure it again.
    pub(super) fn cell_ended(
        &mut self,
        config: &RunConfig,
        cell: &Cell,
        took: Duration,
        whole: bool,
    ) -> Result<()> {
        // Its one client's fetches: the result this cell recorded last.
        let fetches = self
            .results
            .results
            .iter()
            .rfind(|r| {
                r.engine == cell.engine
                    && r.scenario == cell.scenario
                    && r.size_bytes == cell.spec.size.bytes()
            })
            .map(fetches_of);
        self.clock.cell_took(CellTime {
            at: cell.key(),
            preset: Plan::estimate(config, cell).middle(),
            took,
            fetches,
        });
        if whole {
            let part = self.results.parts.len() as u32 - 1;
            self.results.done_cells.push(DoneCell {
                cell: cell.key(),
                part,
                finished_at: crate::now_rfc3339(),
            });
            self.part_mut().cells_measured += 1;
        }
        self.update_part_times();
        self.say_where_it_stands("between cells");
        self.found(|_| Finding::CellEnded)
    }

    /// What an interrupt says now (`interrupt`).
    pub(super) fn say_where_it_stands(&self, doing: &str) {
        let cells = Plan::of(self.config()).cells().len();
        let done = self.results.done_cells.len();
        let servers = if self.results.server_fits.is_empty() {
            ""
        } else {
            "; the servers stay at this run's cap until the next run or `scripts/servers.sh up` puts them back"
        };
        let results_json = self.results.dir().join("results.json");
        let saved = format!(
            "{done} of {cells} cell(s) measured to their end and saved in {} ({doing}). The same command continues this run from there, keeping them; --fresh (BLOBRACE_FRESH=1) starts over{servers}",
            results_json.display()
        );
        // Before results.json is first written (a first load stopped) nothing of the
        // run is saved: its loads are, and the next run loads only what is missing.
        let unsaved = format!(
            "nothing of this run was saved yet ({doing}): no cell was measured; the datasets it loaded are kept (one stopped half-way is continued), and the same command loads the rest and measures every cell{servers}"
        );
        interrupt::set_status(results_json, saved, unsaved);
    }

    /// This part ends on an error of its own (not a signal): its times and the error,
    /// saved, so that the next part does not take it for a kill.
    pub(super) fn part_ended_by(&mut self, e: &anyhow::Error) {
        self.update_part_times();
        let part = self.part_mut();
        part.finished_at = Some(crate::now_rfc3339());
        part.ended = Some(format!("ended by an error: {e:#}"));
        let _ = super::sinks::ResultFiles::write(&self.results);
    }

    /// This part ends (`finish`): its times, and how.
    pub(super) fn end_part(&mut self) {
        self.update_part_times();
        let failed = !self.results.failures.is_empty();
        let part = self.part_mut();
        part.finished_at = Some(crate::now_rfc3339());
        part.ended = Some(
            if failed {
                "complete, with failures (the same command measures them again)"
            } else {
                "complete"
            }
            .into(),
        );
    }
}

/// A result's one client's fetches, for the clock.
fn fetches_of(r: &crate::records::results::EngineResult) -> Fetches {
    let mean = r.measured.latency.mean_ns / 1e9;
    Fetches {
        count: r.measured.count,
        mean,
        seconds: r
            .precision
            .as_ref()
            .map_or(r.measured.count as f64 * mean, |p| p.seconds),
    }
}
