//! AKS maintenance window calendars (SEMANTICS §11 "Window calendar", aks-models.md §1).
