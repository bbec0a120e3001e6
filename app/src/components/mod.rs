//! Widgets shared by several pages.
pub mod hydration_marker;
