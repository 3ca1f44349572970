//! Kubernetes label selectors (kubefleet-updaterun.md §5).
