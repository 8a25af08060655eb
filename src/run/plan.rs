//! A run as a plan of cells, built before anything runs: one cell per size ×
//! repeat × engine × cache state, each with the loads it measures. `measure_all`
//! walks it; `--dry-run` prints it with the time the presets give each cell, so a
//! user sees what a run will do, and about how long it takes, before it starts.

use std::fmt::Write as _;
use std::time::Duration;

use crate::config::{Mode, RunConfig};
use crate::dataset::DatasetSpec;
use crate::db::registry::EngineKind;
use crate::load_gen::LoadPoint;
use crate::records::results::Scenario;
use crate::workload::steady::CacheState;

/// What one cell measures.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// Latency mode: each load in order (1 client through the driver, more clients
    /// or a rate through the load generator). `search`: `--saturate-sizes` names this
    /// size, so the sustainable-rate search follows the most clients whose fetches in
    /// flight fit under the caps (which count that is is known only when the run
    /// gets there).
    Latency { loads: Vec<LoadPoint>, search: bool },
    /// Saturate mode: a closed loop and a sustainable-rate search per client count.
    Saturate { clients: Vec<u32> },
}

/// One engine at one size, in one cache state and repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub spec: DatasetSpec,
    pub scenario: Scenario,
    pub engine: EngineKind,
    pub work: Work,
}

impl Cell {
    /// Which cell this is, as results.json's `done_cells` names it.
    pub fn key(&self) -> crate::records::run_parts::CellKey {
        crate::records::run_parts::CellKey {
            engine: self.engine,
            size: self.spec.size,
            cache: self.scenario.cache,
            repeat: self.scenario.repeat,
        }
    }
}

/// Every cell of a run, in the order the run measures them.
#[derive(Debug, Clone)]
pub struct Plan {
    sizes: Vec<DatasetSpec>,
    cells: Vec<Cell>,
}

/// A cell's time from the presets: at least, and at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Estimate {
    pub least: Duration,
    pub most: Duration,
}

impl std::ops::Add for Estimate {
    type Output = Estimate;
    fn add(self, other: Estimate) -> Estimate {
        Estimate {
            least: self.least + other.least,
            most: self.most + other.most,
        }
    }
}

impl Estimate {
    pub fn between(least: Duration, most: Duration) -> Estimate {
        Estimate { least, most }
    }

    fn exactly(time: Duration) -> Estimate {
        Estimate::between(time, time)
    }

    /// Halfway between the least and the most.
    pub fn middle(self) -> Duration {
        (self.least + self.most) / 2
    }

    fn times(self, n: u32) -> Estimate {
        Estimate::between(self.least * n, self.most * n)
    }

    pub fn label(self) -> String {
        if self.least == self.most {
            format_duration(self.least)
        } else {
            format!(
                "{} – {}",
                format_duration(self.least),
                format_duration(self.most)
            )
        }
    }
}

impl Plan {
    /// The cells of `config`: for each size, each repeat (the engine list rotated one
    /// further each time), each engine, each cache state.
    pub fn of(config: &RunConfig) -> Plan {
        let sizes = config.datasets();
        let mut cells = Vec::new();
        for &spec in &sizes {
            for repeat in 1..=config.repeat {
                for engine in rotated(&config.engines, repeat) {
                    for &cache in &config.cache {
                        let work = match config.mode {
                            Mode::Latency => Work::Latency {
                                loads: config.load_points(),
                                // A mix's size is its largest blob, not a size class.
                                search: spec.mix.is_none()
                                    && config.saturate_sizes.contains(&spec.size),
                            },
                            Mode::Saturate => Work::Saturate {
                                clients: config.clients.clone(),
                            },
                        };
                        cells.push(Cell {
                            spec,
                            scenario: Scenario { cache, repeat },
                            engine,
                            work,
                        });
                    }
                }
            }
        }
        Plan { sizes, cells }
    }

    /// The run's size classes, in order.
    pub fn sizes(&self) -> &[DatasetSpec] {
        &self.sizes
    }

    /// The cells of one size class, in order.
    pub fn cells_at(&self, spec: DatasetSpec) -> impl Iterator<Item = &Cell> {
        self.cells.iter().filter(move |c| c.spec == spec)
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// One cell's time from the presets: warm-up and measuring of each load, the disk
    /// probes around it, a steady state's prefill and settling (each up to its limit),
    /// the search's steps. Not in it: loading a dataset, a server's cold restart.
    /// How long one client's fetches are measured, warm-up aside: to a precision, at
    /// least the measuring time and at most twice the limit (while a p99 lacks
    /// fetches); else the measuring time, stretched up to twice while --min-fetches is
    /// not reached.
    pub fn measuring(config: &RunConfig) -> Estimate {
        match config.precision_goal() {
            Some(goal) => Estimate::between(goal.min, goal.limit.max(goal.min) * 2),
            None if config.min_fetches > 0 => Estimate::between(config.measure, config.measure * 2),
            None => Estimate::exactly(config.measure),
        }
    }

    pub fn estimate(config: &RunConfig, cell: &Cell) -> Estimate {
        let one_load = Estimate::exactly(config.warmup + config.measure);
        let measuring = Plan::measuring(config);
        let one_client = Estimate::between(
            config.warmup + measuring.least,
            config.warmup + measuring.most,
        );
        let probes = Estimate::exactly(config.disk_probe * 2);
        let prepare = match cell.scenario.cache {
            CacheState::Cold => Estimate::default(),
            CacheState::Steady => Estimate::between(Duration::ZERO, config.steady_limit * 2),
        };
        let search = Estimate::between(one_load.least, one_load.most * config.saturate_steps);
        let work = match &cell.work {
            Work::Latency {
                loads,
                search: then_search,
            } => {
                let mut total = Estimate::default();
                for point in loads {
                    total = total
                        + if point.is_single_closed() {
                            one_client + probes
                        } else {
                            // The load, then the disk's own reads at its queue depth.
                            one_load + probes + Estimate::exactly(config.disk_probe)
                        };
                }
                if *then_search {
                    total = total + search;
                }
                total
            }
            Work::Saturate { clients } => {
                (one_load + search + Estimate::exactly(config.disk_probe))
                    .times(clients.len() as u32)
            }
        };
        let preparations = match &cell.work {
            Work::Latency { loads, .. } => loads.len() as u32,
            Work::Saturate { clients } => clients.len() as u32,
        };
        prepare.times(preparations) + work
    }

    /// The whole plan's time from the presets.
    pub fn total(&self, config: &RunConfig) -> Estimate {
        self.cells.iter().fold(Estimate::default(), |sum, cell| {
            sum + Plan::estimate(config, cell)
        })
    }

    /// The plan as `--dry-run` prints it: one line per cell, then the total and what
    /// it leaves out.
    pub fn describe(&self, config: &RunConfig) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "plan: {} size(s) × {} repeat(s) × {} engine(s) × {} cache state(s) = {} cell(s)",
            self.sizes.len(),
            config.repeat,
            config.engines.len(),
            config.cache.len(),
            self.cells.len()
        );
        let _ = writeln!(
            out,
            "{:>7}  {:>6}  {:<16} {:<7} {:<28} time from the presets",
            "size", "repeat", "engine", "cache", "measures"
        );
        for cell in &self.cells {
            let _ = writeln!(
                out,
                "{:>7}  {:>6}  {:<16} {:<7} {:<28} {}",
                cell.spec.size_label(),
                cell.scenario.repeat,
                cell.engine.name(),
                cell.scenario.cache.name(),
                cell.work.label(),
                Plan::estimate(config, cell).label()
            );
        }
        let _ = writeln!(
            out,
            "total: {} of measuring, from every cell stopping at its minimum to every step running to its limit. Not in it: loading (below), servers' cold restarts (seconds each), the floor's calibration (about 1.5 s per size). A server that does not answer when the run starts is dropped from it.",
            self.total(config).label()
        );
        out
    }
}

impl Work {
    /// `c1`, `c1 c16`, `c1 c16 + search`, `search c1 c4`.
    pub fn label(&self) -> String {
        match self {
            Work::Latency { loads, search } => {
                let loads: Vec<String> = loads.iter().map(LoadPoint::label).collect();
                let mut label = loads.join(" ");
                if *search {
                    label.push_str(" + search");
                }
                label
            }
            Work::Saturate { clients } => {
                let clients: Vec<String> = clients.iter().map(|c| format!("c{c}")).collect();
                format!("search {}", clients.join(" "))
            }
        }
    }
}

/// `45 s`, `3 min 20 s`, `1 h 05 min`: whole seconds, as a person reads a wait.
pub(super) fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The engine list of repeat `repeat` (1-based): each repeat starts one engine
/// later, so no engine is always measured first (on a fresh disk) or last.
pub fn rotated(engines: &[EngineKind], repeat: u32) -> Vec<EngineKind> {
    let mut order = engines.to_vec();
    if !order.is_empty() {
        let by = (repeat as usize - 1) % order.len();
        order.rotate_left(by);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> RunConfig {
        crate::config::resolve_flags(args).unwrap()
    }

    #[test]
    fn each_repeat_starts_one_engine_later() {
        let engines: Vec<EngineKind> = ["floor", "fs", "sqlite"]
            .iter()
            .map(|n| n.parse().unwrap())
            .collect();
        let names = |r| -> Vec<&str> { rotated(&engines, r).iter().map(|e| e.name()).collect() };
        assert_eq!(names(1), ["floor", "fs", "sqlite"]);
        assert_eq!(names(2), ["fs", "sqlite", "floor"]);
        assert_eq!(names(4), ["floor", "fs", "sqlite"]);
    }

    #[test]
    fn the_plan_is_every_size_repeat_engine_and_cache_in_the_run_s_order() {
        let run = config(&[
            "--engines",
            "floor,fs",
            "--sizes",
            "1KiB,64KiB",
            "--repeat",
            "2",
            "--cache",
            "both",
            "--clients",
            "1,4",
            "--saturate-sizes",
            "64KiB",
        ]);
        let plan = Plan::of(&run);
        assert_eq!(plan.cells().len(), 2 * 2 * 2 * 2);
        let first: Vec<String> = plan
            .cells()
            .iter()
            .take(6)
            .map(|c| {
                format!(
                    "{} {} {} {}",
                    c.spec.size,
                    c.scenario.repeat,
                    c.engine.name(),
                    c.scenario.cache.name()
                )
            })
            .collect();
        // Repeat 2 starts one engine later (floor, fs → fs, floor).
        assert_eq!(
            first,
            [
                "1KiB 1 fs cold",
                "1KiB 1 fs steady",
                "1KiB 1 floor cold",
                "1KiB 1 floor steady",
                "1KiB 2 floor cold",
                "1KiB 2 floor steady"
            ]
        );
        assert_eq!(plan.cells_at(plan.sizes()[1]).count(), 8);
        // --saturate-sizes names 64KiB only: its cells search after their loads.
        let labels: Vec<String> = plan.cells().iter().map(|c| c.work.label()).collect();
        assert_eq!(labels[0], "c1 c4");
        assert_eq!(labels[8], "c1 c4 + search");
        let saturate = Plan::of(&RunConfig {
            mode: Mode::Saturate,
            ..run
        });
        assert_eq!(saturate.cells()[0].work.label(), "search c1 c4");
    }

    #[test]
    fn a_cell_s_time_is_its_warm_up_measuring_and_probes_and_a_limit_widens_it() {
        let fixed = config(&[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--warmup",
            "1s",
            "--measure",
            "2s",
            "--disk-probe",
            "500ms",
            "--min-fetches",
            "0",
            "--cache",
            "both",
            "--steady-limit",
            "10s",
        ]);
        let plan = Plan::of(&fixed);
        let cold = Plan::estimate(&fixed, &plan.cells()[0]);
        // Warm-up 1 s + measuring 2 s + a probe before and after.
        assert_eq!(cold, Estimate::exactly(Duration::from_secs(4)));
        // Steady: the prefill and the settling, each up to its limit, come first.
        let steady = Plan::estimate(&fixed, &plan.cells()[1]);
        assert_eq!(steady.least, Duration::from_secs(4));
        assert_eq!(steady.most, Duration::from_secs(24));
        assert_eq!(plan.total(&fixed), cold + steady);
        // To a precision: at least the measuring time, at most twice the limit.
        let precise = config(&[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--warmup",
            "1s",
            "--measure",
            "2s",
            "--disk-probe",
            "0s",
            "--precision",
            "10%",
            "--measure-limit",
            "5s",
        ]);
        let time = Plan::estimate(&precise, &Plan::of(&precise).cells()[0]);
        assert_eq!(time.least, Duration::from_secs(3));
        assert_eq!(time.most, Duration::from_secs(11));
        assert_eq!(time.label(), "3 s – 11 s");
        assert_eq!(format_duration(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(format_duration(Duration::from_secs(3900)), "1 h 05 min");
    }
}
