//! Members, node pools, versions, label selectors and maintenance windows: plain data and pure
//! functions.

pub mod selector;
pub mod window;
