//! The default region catalog: the Azure public regions of aks-models.md §5, with what the world
//! models need of each: its rollout ring (aks-models.md §2.4), a fixed UTC offset for window
//! templates, and a weight for realistic generated fleets.
//!
//! Member regions are not limited to this list (a sovereign or future region is accepted); a region
//! the catalog does not know rolls out with the last ring and has offset `+00:00`.

/// A broad area, for the `{geography}` placeholder of generators and for readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Geography {
    Americas,
    Europe,
    AsiaPacific,
    MiddleEastAfrica,
}

impl Geography {
    /// A label-value and resource-name friendly spelling.
    pub fn slug(self) -> &'static str {
        match self {
            Geography::Americas => "americas",
            Geography::Europe => "europe",
            Geography::AsiaPacific => "asia-pacific",
            Geography::MiddleEastAfrica => "middle-east-africa",
        }
    }
}

/// One Azure region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// Programmatic name, e.g. `westeurope`.
    pub name: &'static str,
    pub geography: Geography,
    /// Has availability zones (aks-models.md §5).
    pub zones: bool,
    /// Paired region (one-way pairs included), if any (aks-models.md §5).
    pub pair: Option<&'static str>,
    /// Rollout ring of the default rollout model, 0 (canary) to 4 (heavy) (aks-models.md §2.4).
    pub ring: u8,
    /// Standard-time UTC offset of the region's location, in minutes (no daylight saving, like AKS
    /// maintenance windows). ESTIMATE: aks-models.md gives locations only through region names.
    pub utc_offset_minutes: i32,
    /// Share of clusters in a realistic fleet, in percent (aks-models.md §5 ESTIMATE: ~40 % US,
    /// ~30 % Europe, ~20 % Asia Pacific, ~10 % other). Canary regions hold no customer clusters.
    pub weight: f64,
    /// Internal canary region: used by rollout rings only.
    pub canary: bool,
}

const fn r(
    name: &'static str,
    geography: Geography,
    zones: bool,
    pair: Option<&'static str>,
    ring: u8,
    utc_offset_minutes: i32,
    weight: f64,
) -> Region {
    Region { name, geography, zones, pair, ring, utc_offset_minutes, weight, canary: false }
}

use Geography::*;

const H: i32 = 60;

/// Ring names of the default rollout model (aks-models.md §2.4).
pub const RING_NAMES: [&str; 5] = ["canary", "pilot", "early", "medium", "heavy"];

/// The catalog, sorted by name: 47 public regions and the 2 canary regions (aks-models.md §5, §2.4).
pub const CATALOG: [Region; 49] = [
    r("australiacentral", AsiaPacific, false, None, 2, 10 * H, 0.2),
    r("australiaeast", AsiaPacific, true, Some("australiasoutheast"), 2, 10 * H, 3.0),
    r("australiasoutheast", AsiaPacific, false, Some("australiaeast"), 3, 10 * H, 0.6),
    r("austriaeast", Europe, true, None, 3, H, 0.2),
    r("belgiumcentral", Europe, true, None, 3, H, 0.3),
    r("brazilsouth", Americas, true, Some("southcentralus"), 2, -3 * H, 2.0),
    r("canadacentral", Americas, true, Some("canadaeast"), 2, -5 * H, 3.0),
    r("canadaeast", Americas, false, Some("canadacentral"), 3, -5 * H, 0.6),
    r("centralindia", AsiaPacific, true, Some("southindia"), 2, 5 * H + 30, 2.0),
    r("centralus", Americas, true, Some("eastus2"), 4, -6 * H, 6.0),
    Region {
        name: "centraluseuap",
        geography: Americas,
        zones: true,
        pair: None,
        ring: 0,
        utc_offset_minutes: -6 * H,
        weight: 0.0,
        canary: true,
    },
    r("chilecentral", Americas, true, None, 3, -4 * H, 0.3),
    r("eastasia", AsiaPacific, true, Some("southeastasia"), 1, 8 * H, 3.0),
    r("eastus", Americas, true, Some("westus"), 2, -5 * H, 9.0),
    r("eastus2", Americas, true, Some("centralus"), 3, -5 * H, 8.0),
    Region {
        name: "eastus2euap",
        geography: Americas,
        zones: true,
        pair: None,
        ring: 0,
        utc_offset_minutes: -5 * H,
        weight: 0.0,
        canary: true,
    },
    r("francecentral", Europe, true, None, 2, H, 3.0),
    r("germanywestcentral", Europe, true, None, 2, H, 3.0),
    r("indonesiacentral", AsiaPacific, true, None, 3, 7 * H, 0.4),
    r("israelcentral", MiddleEastAfrica, true, None, 3, 2 * H, 0.6),
    r("italynorth", Europe, true, None, 3, H, 0.4),
    r("japaneast", AsiaPacific, true, Some("japanwest"), 3, 9 * H, 3.0),
    r("japanwest", AsiaPacific, true, Some("japaneast"), 2, 9 * H, 0.6),
    r("koreacentral", AsiaPacific, true, Some("koreasouth"), 2, 9 * H, 1.5),
    r("koreasouth", AsiaPacific, false, Some("koreacentral"), 3, 9 * H, 0.3),
    r("malaysiawest", AsiaPacific, true, None, 3, 8 * H, 0.3),
    r("mexicocentral", Americas, true, None, 3, -6 * H, 0.5),
    r("newzealandnorth", AsiaPacific, true, None, 3, 12 * H, 0.4),
    r("northcentralus", Americas, false, Some("southcentralus"), 3, -6 * H, 1.0),
    r("northeurope", Europe, true, Some("westeurope"), 3, 0, 6.0),
    r("norwayeast", Europe, true, None, 2, H, 0.4),
    r("polandcentral", Europe, true, None, 3, H, 0.4),
    r("qatarcentral", MiddleEastAfrica, true, None, 3, 3 * H, 0.5),
    r("southafricanorth", MiddleEastAfrica, true, None, 2, 2 * H, 1.3),
    r("southcentralus", Americas, true, Some("northcentralus"), 4, -6 * H, 5.0),
    r("southeastasia", AsiaPacific, true, Some("eastasia"), 3, 8 * H, 4.0),
    r("southindia", AsiaPacific, false, Some("centralindia"), 3, 5 * H + 30, 0.5),
    r("spaincentral", Europe, true, None, 3, H, 0.3),
    r("swedencentral", Europe, true, None, 3, H, 2.0),
    r("switzerlandnorth", Europe, true, None, 2, H, 0.6),
    r("uaenorth", MiddleEastAfrica, true, None, 2, 4 * H, 1.2),
    r("uksouth", Europe, true, Some("ukwest"), 1, 0, 4.0),
    r("ukwest", Europe, false, Some("uksouth"), 3, 0, 0.4),
    r("westcentralus", Americas, false, Some("westus2"), 1, -7 * H, 1.0),
    r("westeurope", Europe, true, Some("northeurope"), 4, H, 9.0),
    r("westindia", AsiaPacific, false, Some("southindia"), 2, 5 * H + 30, 0.2),
    r("westus", Americas, false, Some("eastus"), 4, -8 * H, 2.0),
    r("westus2", Americas, true, Some("westcentralus"), 4, -8 * H, 6.0),
    r("westus3", Americas, true, Some("eastus"), 3, -7 * H, 2.0),
];

/// The catalog entry of `name`, if it is a known region.
pub fn find(name: &str) -> Option<&'static Region> {
    CATALOG.binary_search_by(|r| r.name.cmp(name)).ok().map(|i| &CATALOG[i])
}

/// The standard-time UTC offset of a region in minutes; `0` for a region the catalog does not know.
pub fn utc_offset_minutes(name: &str) -> i32 {
    find(name).map_or(0, |r| r.utc_offset_minutes)
}

/// `+HH:mm` / `-HH:mm` as AKS `utcOffset` fields write it.
pub fn format_utc_offset(minutes: i32) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_sorted_and_complete() {
        assert!(CATALOG.windows(2).all(|w| w[0].name < w[1].name), "sorted by name, no duplicates");
        assert_eq!(CATALOG.iter().filter(|r| !r.canary).count(), 47, "aks-models.md §5: 47 public regions");
        for region in &CATALOG {
            if let Some(pair) = region.pair {
                assert!(find(pair).is_some(), "{} pairs with unknown {pair}", region.name);
            }
        }
        let share = |g: Geography| CATALOG.iter().filter(|r| r.geography == g).map(|r| r.weight).sum::<f64>();
        let us: f64 = CATALOG
            .iter()
            .filter(|r| r.name.ends_with("us") || r.name.ends_with("us2") || r.name.ends_with("us3"))
            .map(|r| r.weight)
            .sum();
        assert!((us - 40.0).abs() < 1e-9, "US {us}");
        assert!((share(Europe) - 30.0).abs() < 1e-9);
        assert!((share(AsiaPacific) - 20.0).abs() < 1e-9);
        let total: f64 = CATALOG.iter().map(|r| r.weight).sum();
        assert!((total - 100.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn rings_follow_aks_models_2_4() {
        let ring = |n: u8| {
            let mut names: Vec<&str> = CATALOG.iter().filter(|r| r.ring == n).map(|r| r.name).collect();
            names.sort_unstable();
            names
        };
        assert_eq!(ring(0), ["centraluseuap", "eastus2euap"]);
        assert_eq!(ring(1), ["eastasia", "uksouth", "westcentralus"]);
        assert_eq!(ring(2).len(), 15);
        assert_eq!(ring(3).len(), 24);
        assert_eq!(ring(4), ["centralus", "southcentralus", "westeurope", "westus", "westus2"]);
        // "Pair members in different rings" (aks-models.md §2.4), for the two-way pairs.
        for region in &CATALOG {
            if let Some(pair) = region.pair.and_then(find)
                && pair.pair == Some(region.name)
            {
                assert_ne!(region.ring, pair.ring, "{} and {}", region.name, pair.name);
            }
        }
    }

    #[test]
    fn offsets() {
        assert_eq!(format_utc_offset(utc_offset_minutes("centralindia")), "+05:30");
        assert_eq!(format_utc_offset(utc_offset_minutes("westus2")), "-08:00");
        assert_eq!(format_utc_offset(utc_offset_minutes("nowhere")), "+00:00");
    }
}
