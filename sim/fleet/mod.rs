//! Members, node pools, versions, label selectors and maintenance windows: plain data and pure
//! functions.

pub mod member;
pub mod selector;
pub mod version;
pub mod window;

pub use member::{Member, MemberId, MemberLabels, NodePool, OsSku, Surge};
pub use version::{KubernetesVersion, MinorVersion, NodeImageVersion};
