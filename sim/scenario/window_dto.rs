//! The AKS `maintenanceWindow` JSON shape, its validation, and conversion into a calendar.
