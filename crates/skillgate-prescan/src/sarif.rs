//! SARIF.
