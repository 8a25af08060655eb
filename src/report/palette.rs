//! The report's colours for engines: from the engine's place in the registry, not
//! from its database. Each database gets a family of shades (its first engine the
//! strongest), in `DATABASES` order; the floor is black, every chart's reference.
//! A database added at the end of the registry takes the next family, with nothing to
//! pick; one added between others (redb, beside SQLite) gets a family inserted at its
//! place, so every other engine keeps the colour its charts had.

use plotters::style::RGBColor;

use crate::db::registry::{EngineKind, StoreKind};

/// Shades per database, in registry order, the floor skipped: SQLite's blues, redb's
/// pinks, LMDB's reds, RocksDB's olives, fs's green, then PostgreSQL, MariaDB, MySQL, Dolt, SeaweedFS; then a spare.
const FAMILIES: &[&[(u8, u8, u8)]] = &[
    &[(31, 119, 180), (120, 180, 230), (70, 60, 200)],
    &[(227, 119, 194), (247, 182, 210)],
    &[(214, 39, 40), (255, 152, 150)],
    &[(85, 107, 47), (170, 190, 120)],
    &[(44, 160, 44), (150, 215, 140)],
    &[(128, 60, 170), (190, 150, 220)],
    &[(230, 120, 20), (245, 185, 110)],
    &[(140, 86, 75), (196, 156, 148)],
    &[(23, 160, 175), (140, 215, 225)],
    &[(188, 189, 34), (219, 219, 141)],
    &[(127, 127, 127), (199, 199, 199)],
];

const FLOOR: RGBColor = RGBColor(0, 0, 0);

/// One colour per engine, stable across charts and runs.
pub fn engine_color(engine: EngineKind) -> RGBColor {
    let store = engine.store();
    if store.is_floor() {
        return FLOOR;
    }
    let family = StoreKind::all()
        .filter(|s| !s.is_floor())
        .position(|s| s == store)
        .unwrap_or(0);
    let shades = FAMILIES[family % FAMILIES.len()];
    let place = EngineKind::all()
        .filter(|e| e.store() == store)
        .position(|e| e == engine)
        .unwrap_or(0);
    let (r, g, b) = shades[place % shades.len()];
    RGBColor(r, g, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_black_and_every_other_engine_has_a_colour_of_its_own() {
        assert_eq!(engine_color(EngineKind::floor()), FLOOR);
        let others: Vec<(u8, u8, u8)> = EngineKind::all()
            .filter(|e| *e != EngineKind::floor())
            .map(|e| {
                let RGBColor(r, g, b) = engine_color(e);
                (r, g, b)
            })
            .collect();
        let mut distinct = others.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), others.len(), "{others:?}");
        assert!(!others.contains(&(0, 0, 0)));
    }

    /// The target line and every engine can be told apart: at least 100 apart in RGB
    /// (the target's old red was 16 from LMDB's).
    #[test]
    fn the_target_line_is_no_engines_colour() {
        let RGBColor(tr, tg, tb) = crate::report::charts::TARGET;
        for e in EngineKind::all() {
            let RGBColor(r, g, b) = engine_color(e);
            let d = [(r, tr), (g, tg), (b, tb)]
                .iter()
                .map(|&(a, b)| (a as f64 - b as f64).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(d >= 100.0, "{}: {d:.0} from the target", e.name());
        }
    }

    #[test]
    fn a_database_keeps_the_colours_its_charts_had_before_the_palette() {
        // The colours engines declared themselves until the palette took them over:
        // charts of older runs and of new ones read alike.
        let named = |n: &str| {
            let RGBColor(r, g, b) = engine_color(n.parse().unwrap());
            (r, g, b)
        };
        assert_eq!(named("sqlite"), (31, 119, 180));
        assert_eq!(named("sqlite-blobio"), (70, 60, 200));
        assert_eq!(named("fs"), (44, 160, 44));
        assert_eq!(named("postgres-raw"), (190, 150, 220));
        assert_eq!(named("dolt"), (23, 160, 175));
        assert_eq!(named("seaweedfs"), (188, 189, 34));
        assert_eq!(named("redb"), (227, 119, 194));
        assert_eq!(named("lmdb"), (214, 39, 40));
    }
}
