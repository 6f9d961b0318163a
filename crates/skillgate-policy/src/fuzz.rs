//! Fuzzing entry points.
