//! Links the `skillgate` binary with packed relative relocations (`DT_RELR`, glibc 2.36
//! and later; a linker or C library without them ignores the flag). The binary's ~48,000
//! relative relocations then take a few kilobytes instead of 1.1 MB, which every
//! `skillgate run` process would otherwise read at start-up.
fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
}
