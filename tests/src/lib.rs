//! Workspace-level checks.
