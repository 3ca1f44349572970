//! Azure's shapes in and out: `fleetsim import` (Azure objects → scenario DTOs) and
//! `fleetsim export` (a scenario's strategy → the file `az fleet … create --stages` takes). Both sit
//! above `scenario` and use it only through its DTOs and `scenario::build`.

pub mod export;
pub mod import;
