//! Scans a file N times (for perf stat).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let code = std::fs::read(&a[1]).unwrap();
    let n: usize = a[2].parse().unwrap();
    let lang = if a[1].ends_with(".py") {
        skillgate_core::Language::Python
    } else {
        skillgate_core::Language::JavaScript
    };
    let sc = skillgate_prescan::PreScanner::new().unwrap();
    for _ in 0..n {
        std::hint::black_box(sc.scan(std::hint::black_box(&code), lang));
    }
}
