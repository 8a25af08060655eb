//! Which ids the fetches ask for (`--access`): uniform, or skewed the way YCSB's
//! generators skew them, because skew decides the cache hit ratio. Every engine draws
//! the same seeded sequence; a sampler is built once per cell (a zipfian one sums its
//! normalising constant over the rows then) and each draw is arithmetic on one random
//! number: nothing allocated, safe beside the clock.
//!
//! - `zipfian[:theta]`: YCSB's ScrambledZipfianGenerator. A rank is drawn by Gray et
//!   al.'s method ("Quickly generating billion-record synthetic databases", YCSB's
//!   ZipfianGenerator) over the dataset's rows, theta 0.99 by default, and hashed to an
//!   id with FNV-1a 64 modulo the rows, so the popular ids are spread over the file,
//!   not packed at its start. (YCSB draws over 10^10 items with a precomputed constant
//!   before the modulo; over the rows themselves the popularity of each id is exact
//!   and the model below can sum it.)
//! - `hotspot:<hot%>/<reads%>`: YCSB's HotspotIntegerGenerator: that share of the reads
//!   go to that share of the ids, the first ones; the rest to the others.
//! - `latest`: YCSB's SkewedLatestGenerator over a dataset no longer growing: the last
//!   id loaded is the most popular, zipfian (theta 0.99) going back from it.

use std::fmt;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// YCSB's default zipfian constant.
pub const DEFAULT_THETA: f64 = 0.99;

/// A read access distribution over ids 1..=rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Access {
    /// Every id as likely as any other.
    #[default]
    Uniform,
    /// Scrambled zipfian with this exponent, 0 < theta < 1.
    Zipfian { theta: f64 },
    /// `reads` of the fetches go to the first `hot` of the ids (both shares in (0, 1)).
    Hotspot { hot: f64, reads: f64 },
    /// Zipfian (theta 0.99) from the last id back.
    Latest,
}

impl Access {
    /// Parse `uniform`, `zipfian`, `zipfian:<theta>`, `hotspot:<hot%>/<reads%>`, `latest`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (kind, arg) = match text.split_once(':') {
            Some((kind, arg)) => (kind, Some(arg)),
            None => (text, None),
        };
        let number = |s: &str, what: &str| -> Result<f64, String> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{what} {s:?} in --access {text:?} is not a number"))
        };
        match (kind, arg) {
            ("uniform", None) => Ok(Access::Uniform),
            ("latest", None) => Ok(Access::Latest),
            ("zipfian", None) => Ok(Access::Zipfian {
                theta: DEFAULT_THETA,
            }),
            ("zipfian", Some(theta)) => {
                let theta = number(theta, "theta")?;
                if theta > 0.0 && theta < 1.0 {
                    Ok(Access::Zipfian { theta })
                } else {
                    Err(format!(
                        "--access zipfian:{theta}: theta must be between 0 and 1, both excluded (YCSB's default is 0.99; 0 would be uniform, and the generator needs theta < 1)"
                    ))
                }
            }
            ("hotspot", Some(shares)) => {
                let Some((hot, reads)) = shares.split_once('/') else {
                    return Err(format!(
                        "--access {text}: write the hot set and its reads as percentages, hotspot:<hot%>/<reads%> (hotspot:20/80: 80% of the reads go to 20% of the ids)"
                    ));
                };
                let (hot, reads) = (number(hot, "hot share")?, number(reads, "read share")?);
                for (what, pct) in [("hot set", hot), ("share of reads", reads)] {
                    if !(pct > 0.0 && pct < 100.0) {
                        return Err(format!(
                            "--access {text}: the {what} must be a percentage between 0 and 100, both excluded (hotspot:20/80: 80% of the reads go to 20% of the ids)"
                        ));
                    }
                }
                Ok(Access::Hotspot {
                    hot: hot / 100.0,
                    reads: reads / 100.0,
                })
            }
            _ => Err(format!(
                "unknown --access {text:?}: use uniform, zipfian[:theta], hotspot:<hot%>/<reads%> or latest"
            )),
        }
    }

    /// The ids' sampler over a dataset of `rows` blobs.
    pub fn sampler(self, rows: u64) -> Sampler {
        let rows = rows.max(1);
        let shape = match self {
            Access::Uniform => Shape::Uniform,
            Access::Zipfian { theta } => Shape::Scrambled(Zipf::new(rows, theta)),
            // One id has no hot set apart from the rest.
            Access::Hotspot { .. } if rows < 2 => Shape::Uniform,
            Access::Hotspot { hot, reads } => {
                // At least one id on each side, so both draws have somewhere to go.
                let hot_ids = ((rows as f64 * hot) as u64).clamp(1, rows - 1);
                Shape::Hotspot { hot_ids, reads }
            }
            Access::Latest => Shape::Latest(Zipf::new(rows, DEFAULT_THETA)),
        };
        Sampler { rows, shape }
    }
}

impl Access {
    /// How a fetch's id is drawn, in words (the report's first lines).
    pub fn describe(self) -> String {
        match self {
            Access::Uniform => "one random id, every id alike (uniform)".into(),
            Access::Zipfian { theta } => format!(
                "one id drawn from YCSB's scrambled zipfian (theta {theta}): a few ids take most reads, spread over the dataset"
            ),
            Access::Hotspot { hot, reads } => format!(
                "one id drawn from a hotspot: {}% of the reads go to the first {}% of the ids",
                reads * 100.0,
                hot * 100.0
            ),
            Access::Latest => {
                "one id drawn from YCSB's latest: zipfian (theta 0.99) from the last id loaded back"
                    .into()
            }
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Uniform => write!(f, "uniform"),
            Access::Zipfian { theta } => write!(f, "zipfian:{theta}"),
            Access::Hotspot { hot, reads } => {
                write!(f, "hotspot:{}/{}", hot * 100.0, reads * 100.0)
            }
            Access::Latest => write!(f, "latest"),
        }
    }
}

/// Draws ids in 1..=rows with the distribution it was built for.
#[derive(Debug, Clone)]
pub struct Sampler {
    rows: u64,
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    Uniform,
    Scrambled(Zipf),
    Hotspot { hot_ids: u64, reads: f64 },
    Latest(Zipf),
}

impl Sampler {
    /// The next id, from `rng`'s next number(s).
    #[inline]
    pub fn next(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match &self.shape {
            Shape::Uniform => rng.random_range(1..=self.rows),
            Shape::Scrambled(zipf) => scramble(zipf.rank(rng.random()), self.rows),
            Shape::Hotspot { hot_ids, reads } => {
                if rng.random::<f64>() < *reads {
                    rng.random_range(1..=*hot_ids)
                } else {
                    rng.random_range(hot_ids + 1..=self.rows)
                }
            }
            Shape::Latest(zipf) => self.rows - zipf.rank(rng.random()),
        }
    }

    /// Each id's share of the reads (index id - 1), for the cache model.
    pub fn popularity(&self) -> Vec<f64> {
        let n = self.rows as usize;
        match &self.shape {
            Shape::Uniform => vec![1.0 / n as f64; n],
            Shape::Scrambled(zipf) => {
                let mut p = vec![0.0; n];
                for rank in 0..self.rows {
                    p[(scramble(rank, self.rows) - 1) as usize] += zipf.pmf(rank);
                }
                p
            }
            Shape::Hotspot { hot_ids, reads } => {
                let hot = *hot_ids as usize;
                let cold = (n - hot).max(1) as f64;
                (0..n)
                    .map(|i| {
                        if i < hot {
                            reads / hot as f64
                        } else {
                            (1.0 - reads) / cold
                        }
                    })
                    .collect()
            }
            Shape::Latest(zipf) => (0..self.rows).rev().map(|rank| zipf.pmf(rank)).collect(),
        }
    }
}

/// YCSB's ScrambledZipfianGenerator's hash: FNV-1a 64 over the rank's 8 bytes, little
/// end first, modulo the rows; ids from 1.
#[inline]
fn scramble(rank: u64, rows: u64) -> u64 {
    const OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    let mut hash = OFFSET;
    let mut v = rank;
    for _ in 0..8 {
        hash ^= v & 0xff;
        hash = hash.wrapping_mul(PRIME);
        v >>= 8;
    }
    hash % rows + 1
}

/// Gray et al.'s zipfian ranks 0..n (rank 0 the most popular), YCSB's ZipfianGenerator.
#[derive(Debug, Clone)]
struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// 1 + 0.5^theta: under it, rank 1.
    second: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Self {
        let zeta = |count: u64| -> f64 { (1..=count).map(|i| (i as f64).powf(-theta)).sum() };
        let zetan = zeta(n);
        let zeta2 = zeta(2.min(n));
        let eta = if n > 2 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
        } else {
            0.0
        };
        Self {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
            second: 1.0 + 0.5f64.powf(theta),
        }
    }

    /// The rank for a uniform `u` in [0, 1).
    #[inline]
    fn rank(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < self.second {
            return 1.min(self.n - 1);
        }
        let rank = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n - 1)
    }

    /// The share of draws `rank` gets from this generator: the zipf law's for ranks 0
    /// and 1, then what Gray's continuous approximation gives (rank 2 drawn 19% more
    /// often than the law says at theta 0.99): the model must count what is drawn.
    fn pmf(&self, rank: u64) -> f64 {
        match rank {
            0 => 1.0 / self.zetan,
            1 => 0.5f64.powf(self.theta) / self.zetan,
            r if r + 1 >= self.n => 1.0 - self.u_from(r),
            r => (self.u_from(r + 1) - self.u_from(r)).max(0.0),
        }
    }

    /// The least u whose draw is rank `r` or more (r >= 2): the approximation inverted.
    fn u_from(&self, r: u64) -> f64 {
        ((r as f64 / self.n as f64).powf(1.0 - self.theta) + self.eta - 1.0) / self.eta
    }
}

/// The hit ratio of an LRU cache holding `cache_items` blobs under independent reads
/// with these popularities: Che's approximation. The characteristic time T solves
/// sum(1 - e^(-p T)) = C; the hit ratio is sum(p (1 - e^(-p T))). None when nothing is
/// cached; 1 when everything fits.
pub fn che_hit_ratio(popularity: &[f64], cache_items: f64) -> Option<f64> {
    if cache_items <= 0.0 || popularity.is_empty() {
        return None;
    }
    if cache_items >= popularity.len() as f64 {
        return Some(1.0);
    }
    let occupancy = |t: f64| -> f64 { popularity.iter().map(|&p| 1.0 - (-p * t).exp()).sum() };
    // Occupancy grows with T from 0 to n: bracket C, then bisect (in log space).
    let (mut lo, mut hi) = (1e-9f64, 1.0f64);
    while occupancy(hi) < cache_items {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if occupancy(mid) < cache_items {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo < 1.0 + 1e-9 {
            break;
        }
    }
    let t = (lo * hi).sqrt();
    Some(popularity.iter().map(|&p| p * (1.0 - (-p * t).exp())).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(7)
    }

    #[test]
    fn bad_access_specs_say_what_is_wrong() {
        for (bad, says) in [
            ("zipfian:0", "between 0 and 1"),
            ("zipfian:5", "between 0 and 1"),
            ("zipfian:x", "not a number"),
            ("hotspot:120/10", "hot set must be a percentage"),
            ("hotspot:20/100", "share of reads must be"),
            ("hotspot:20", "hotspot:<hot%>/<reads%>"),
            ("pareto", "unknown --access"),
            ("uniform:3", "unknown --access"),
        ] {
            let err = Access::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert_eq!(
            Access::parse("zipfian"),
            Ok(Access::Zipfian { theta: 0.99 })
        );
        assert_eq!(
            Access::parse("hotspot:20/80"),
            Ok(Access::Hotspot {
                hot: 0.2,
                reads: 0.8
            })
        );
        for text in ["uniform", "zipfian:0.99", "hotspot:20/80", "latest"] {
            assert_eq!(Access::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn every_sampler_stays_in_range_and_is_seeded() {
        for access in [
            "uniform",
            "zipfian",
            "zipfian:0.5",
            "hotspot:10/90",
            "latest",
        ] {
            for rows in [1, 2, 3, 1000] {
                let sampler = Access::parse(access).unwrap().sampler(rows);
                let (mut a, mut b) = (rng(), rng());
                for _ in 0..10_000 {
                    let id = sampler.next(&mut a);
                    assert!((1..=rows).contains(&id), "{access} over {rows}: {id}");
                    assert_eq!(id, sampler.next(&mut b));
                }
                let total: f64 = sampler.popularity().iter().sum();
                assert!((total - 1.0).abs() < 1e-9, "{access} over {rows}: {total}");
            }
        }
    }

    /// The share of draws that went to each id against the popularity the model uses.
    fn drawn_vs_model(access: &str, rows: u64, draws: u64) -> (Vec<f64>, Vec<f64>) {
        let sampler = Access::parse(access).unwrap().sampler(rows);
        let mut seen = vec![0.0; rows as usize];
        let mut r = rng();
        for _ in 0..draws {
            seen[(sampler.next(&mut r) - 1) as usize] += 1.0 / draws as f64;
        }
        (seen, sampler.popularity())
    }

    #[test]
    fn zipfian_draws_follow_its_popularity_and_spread_the_hot_ids() {
        let (seen, model) = drawn_vs_model("zipfian", 10_000, 2_000_000);
        // The most popular ranks are drawn as often as the zipf law says (rank 0 takes
        // 1/zeta(10^4, 0.99), about 10%).
        let mut hottest: Vec<usize> = (0..model.len()).collect();
        hottest.sort_by(|&a, &b| model[b].total_cmp(&model[a]));
        for &i in &hottest[..5] {
            assert!(
                (seen[i] - model[i]).abs() < 0.1 * model[i],
                "id {}: drawn {} model {}",
                i + 1,
                seen[i],
                model[i]
            );
        }
        assert!(model[hottest[0]] > 0.09 && model[hottest[0]] < 0.11);
        // Scrambled: the 100 hottest ids are spread over the file, not packed at its start.
        let mean = hottest[..100].iter().map(|&i| i as f64).sum::<f64>() / 100.0;
        assert!((2_000.0..8_000.0).contains(&mean), "{mean}");
        // The top 1% of ids take most of the reads.
        let top: f64 = hottest[..100].iter().map(|&i| seen[i]).sum();
        assert!(top > 0.5, "{top}");
    }

    #[test]
    fn hotspot_and_latest_put_their_reads_where_they_say() {
        let (seen, _) = drawn_vs_model("hotspot:20/80", 1_000, 200_000);
        let hot: f64 = seen[..200].iter().sum();
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
        let (seen, model) = drawn_vs_model("latest", 1_000, 200_000);
        assert!(seen[999] > 0.1 && model[999] > model[998] && model[998] > model[0]);
        let newest: f64 = seen[900..].iter().sum();
        assert!(newest > 0.6, "{newest}");
    }

    /// An exact LRU cache of `capacity` ids fed by `sampler`: its hit ratio after a
    /// warm-up as long as the measurement.
    fn simulated_lru(sampler: &Sampler, capacity: usize, draws: usize) -> f64 {
        let mut last_use = vec![0usize; sampler.rows as usize + 1];
        let mut cached: std::collections::BTreeMap<usize, u64> = Default::default();
        let mut r = rng();
        let mut hits = 0;
        for clock in 1..=2 * draws {
            let id = sampler.next(&mut r);
            let at = last_use[id as usize];
            let hit = at != 0 && cached.remove(&at).is_some();
            if hit && clock > draws {
                hits += 1;
            }
            cached.insert(clock, id);
            last_use[id as usize] = clock;
            if cached.len() > capacity {
                let (&oldest, &evicted) = cached.iter().next().unwrap();
                cached.remove(&oldest);
                last_use[evicted as usize] = 0;
            }
        }
        hits as f64 / draws as f64
    }

    #[test]
    fn the_che_model_agrees_with_a_simulated_lru_cache() {
        for access in [
            "uniform",
            "zipfian",
            "zipfian:0.6",
            "hotspot:10/90",
            "latest",
        ] {
            let sampler = Access::parse(access).unwrap().sampler(5_000);
            let model = che_hit_ratio(&sampler.popularity(), 1_000.0).unwrap();
            let simulated = simulated_lru(&sampler, 1_000, 200_000);
            assert!(
                (model - simulated).abs() < 0.02,
                "{access}: model {model:.3}, simulated LRU {simulated:.3}"
            );
        }
        let uniform = Access::Uniform.sampler(1_000).popularity();
        assert!((che_hit_ratio(&uniform, 300.0).unwrap() - 0.3).abs() < 1e-6);
        assert_eq!(che_hit_ratio(&uniform, 5_000.0), Some(1.0));
        assert_eq!(che_hit_ratio(&uniform, 0.0), None);
    }
}
