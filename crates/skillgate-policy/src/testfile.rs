//! Test files.
