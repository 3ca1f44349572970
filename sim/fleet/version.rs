//! Kubernetes and node image versions: parsing and ordering.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::text::echo;

/// A Kubernetes version `major.minor.patch` (AKS never uses pre-release suffixes for GA versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubernetesVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl KubernetesVersion {
    pub const fn new(major: u32, minor: u32, patch: u32) -> KubernetesVersion {
        KubernetesVersion { major, minor, patch }
    }

    /// Parses `1.33.2` (an optional leading `v` is accepted, as `kubectl` prints it).
    pub fn parse(text: &str) -> Result<KubernetesVersion, String> {
        let bad = || format!("{} is not a Kubernetes version like \"1.33.2\"", echo(text));
        let body = text.strip_prefix('v').unwrap_or(text);
        // Every generated member's version is parsed: three dot-separated numbers read byte by
        // byte, each at least one digit and within u32.
        let mut numbers = [0u32; 3];
        let mut part = 0;
        let mut digits = 0;
        for b in body.bytes() {
            match b {
                b'0'..=b'9' => {
                    let n = numbers[part].checked_mul(10).and_then(|n| n.checked_add(u32::from(b - b'0')));
                    numbers[part] = n.ok_or_else(bad)?;
                    digits += 1;
                }
                b'.' if digits > 0 && part < 2 => {
                    part += 1;
                    digits = 0;
                }
                _ => return Err(bad()),
            }
        }
        if part != 2 || digits == 0 {
            return Err(bad());
        }
        Ok(KubernetesVersion::new(numbers[0], numbers[1], numbers[2]))
    }

    pub fn minor_version(self) -> MinorVersion {
        MinorVersion { major: self.major, minor: self.minor }
    }

    /// The version's text (as [`Display`](fmt::Display) writes it) made on the stack: a report
    /// writes two per member and run.
    pub fn text(self) -> VersionText {
        let mut text = VersionText { bytes: [0; 32], len: 0 };
        text.number(self.major);
        text.push(b'.');
        text.number(self.minor);
        text.push(b'.');
        text.number(self.patch);
        text
    }
}

/// A [`KubernetesVersion`]'s text: three numbers of at most ten digits and two dots.
#[derive(Clone, Copy, Debug)]
pub struct VersionText {
    bytes: [u8; 32],
    len: usize,
}

impl VersionText {
    fn push(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    /// A number's decimal digits: those of versions (below 100) written directly.
    fn number(&mut self, n: u32) {
        if n < 10 {
            self.push(b'0' + n as u8);
        } else if n < 100 {
            self.push(b'0' + (n / 10) as u8);
            self.push(b'0' + (n % 10) as u8);
        } else {
            let mut digits = [0u8; 10];
            let mut n = n;
            let mut at = digits.len();
            while n > 0 {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
            }
            digits[at..].iter().for_each(|&d| self.push(d));
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("ASCII digits and dots")
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A Kubernetes minor version `major.minor`, as `targetKubernetesVersion` of auto-upgrade profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MinorVersion {
    pub major: u32,
    pub minor: u32,
}

impl MinorVersion {
    pub fn parse(text: &str) -> Result<MinorVersion, String> {
        let bad = || format!("{} is not a Kubernetes minor version like \"1.33\"", echo(text));
        let (major, minor) = text.split_once('.').ok_or_else(bad)?;
        let number = |p: &str| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse::<u32>().map_err(|_| bad())
        };
        Ok(MinorVersion { major: number(major)?, minor: number(minor)? })
    }

    /// How many minors `self` is behind `other` (0 when equal or ahead). Majors count as 100 minors,
    /// which is irrelevant in practice (Kubernetes has stayed on major 1).
    pub fn minors_behind(self, other: MinorVersion) -> u32 {
        let index = |v: MinorVersion| v.major * 100 + v.minor;
        index(other).saturating_sub(index(self))
    }
}

impl fmt::Display for MinorVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A node image version `<gallery>-<definition>-<version>` (aks-models.md §2.5), e.g.
/// `AKSUbuntu-2204gen2containerd-202602.13.5` or `AKSWindows-2022-containerd-20348.3207.250214`.
///
/// The *family* is everything before the last `-` (`AKSUbuntu-2204gen2containerd`); versions are only
/// comparable inside one family, by their dot-separated numeric parts.
///
/// Shared and immutable: clones are a reference count, and comparisons check a precomputed family
/// key before any text, because the scheduler compares images at every examination.
#[derive(Clone, Debug)]
pub struct NodeImageVersion(Arc<ImageInner>);

#[derive(Debug)]
struct ImageInner {
    text: String,
    family_len: usize,
    family_key: u64,
    parts: Vec<u64>,
}

impl PartialEq for NodeImageVersion {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.0.family_key == other.0.family_key && self.0.text == other.0.text)
    }
}

impl Eq for NodeImageVersion {}

impl std::hash::Hash for NodeImageVersion {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.text.hash(state);
    }
}

impl NodeImageVersion {
    pub fn parse(text: &str) -> Result<NodeImageVersion, String> {
        let bad = || {
            format!(
                "{} is not a node image version like \"AKSUbuntu-2204gen2containerd-202602.13.5\" \
                 (<image family>-<numeric dotted version>)",
                echo(text)
            )
        };
        let (family, version) = text.rsplit_once('-').ok_or_else(bad)?;
        if family.is_empty() || version.is_empty() {
            return Err(bad());
        }
        let parts = version
            .split('.')
            .map(|p| {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    Err(bad())
                } else {
                    p.parse::<u64>().map_err(|_| bad())
                }
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(NodeImageVersion(Arc::new(ImageInner {
            text: text.to_string(),
            family_len: family.len(),
            family_key: crate::engine::rng::name_key(family),
            parts,
        })))
    }

    pub fn family(&self) -> &str {
        &self.0.text[..self.0.family_len]
    }

    pub fn version(&self) -> &str {
        &self.0.text[self.0.family_len + 1..]
    }

    pub fn as_str(&self) -> &str {
        &self.0.text
    }

    /// Whether both are versions of one image family: equal 64-bit FNV-1a keys and lengths of the
    /// family names (a collision between two real image family names is not a practical concern,
    /// and this comparison runs at every examination).
    pub fn same_family(&self, other: &NodeImageVersion) -> bool {
        self.0.family_key == other.0.family_key && self.0.family_len == other.0.family_len
    }

    /// Compares two versions of the same family; `None` across families.
    pub fn compare(&self, other: &NodeImageVersion) -> Option<Ordering> {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Some(Ordering::Equal);
        }
        self.same_family(other).then(|| self.0.parts.cmp(&other.0.parts))
    }

    /// True for Windows image families (`AKSWindows-…`).
    pub fn is_windows(&self) -> bool {
        self.family().starts_with("AKSWindows")
    }
}

impl fmt::Display for NodeImageVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_versions_order_numerically() {
        let v = |s| KubernetesVersion::parse(s).unwrap();
        assert!(v("1.9.0") < v("1.10.0"));
        assert!(v("1.33.10") > v("1.33.9"));
        assert_eq!(v("v1.33.2").to_string(), "1.33.2");
        for bad in
            ["1.33", "1.33.x", "", "1..2", "1.2.3.4", "1.2.", ".1.2", "1.2.4294967296", "+1.2.3", "1.2.3 ", "vv1.2.3"]
        {
            assert!(KubernetesVersion::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(v("01.2.4294967295"), KubernetesVersion::new(1, 2, u32::MAX));
        assert_eq!(MinorVersion::parse("1.28").unwrap().minors_behind(MinorVersion::parse("1.30").unwrap()), 2);
    }

    #[test]
    fn version_text_is_what_display_writes() {
        for (major, minor, patch) in
            [(1, 33, 2), (0, 0, 0), (10, 100, 1000), (u32::MAX, u32::MAX, u32::MAX), (1, 9, 10), (9, 99, 101)]
        {
            let v = KubernetesVersion::new(major, minor, patch);
            assert_eq!(v.text().as_str(), v.to_string());
        }
    }

    #[test]
    fn node_images_are_equal_by_text_not_by_identity() {
        let i = |s| NodeImageVersion::parse(s).unwrap();
        let a = i("AKSUbuntu-2204gen2containerd-202602.13.5");
        assert_eq!(a, a.clone());
        assert_eq!(a, i("AKSUbuntu-2204gen2containerd-202602.13.5"));
        assert_ne!(a, i("AKSUbuntu-2204gen2containerd-202602.13.6"));
        assert_ne!(a, i("AKSUbuntu-2404gen2containerd-202602.13.5"));
    }

    #[test]
    fn node_images_compare_within_a_family() {
        let i = |s| NodeImageVersion::parse(s).unwrap();
        let a = i("AKSUbuntu-2204gen2containerd-202602.13.5");
        assert_eq!(a.family(), "AKSUbuntu-2204gen2containerd");
        assert_eq!(a.version(), "202602.13.5");
        assert_eq!(a.compare(&i("AKSUbuntu-2204gen2containerd-202602.13.10")), Some(Ordering::Less));
        assert_eq!(a.compare(&i("AKSAzureLinux-V3gen2-202602.13.5")), None);
        let w = i("AKSWindows-2022-containerd-20348.3207.250214");
        assert_eq!(w.family(), "AKSWindows-2022-containerd");
        assert!(w.is_windows());
        for bad in [
            "AKSUbuntu",
            "AKSUbuntu-",
            "-1.2",
            "AKSUbuntu-2204-abc",
            "AKSUbuntu-2204-202602.+13",
            "AKSUbuntu-2204-1..2",
        ] {
            assert!(NodeImageVersion::parse(bad).is_err(), "{bad}");
        }
    }
}
