//! Times `UriTemplate::matches` on hostile URIs of growing length: a run of `a`s against five
//! adjacent expressions and a literal the URI lacks, which a backtracking matcher cuts every
//! possible way (about n^5 / 120 tries). Linear matching shows as a flat time per byte.
//!
//! `cargo bench -p mcp-server-kit --bench uri_template`

use std::hint::black_box;
use std::time::Instant;

use mcp_server_kit::uri_template::UriTemplate;

fn main() {
    let t = UriTemplate::parse("x://{a}{b}{c}{d}{e}!").expect("a valid template");
    println!("template {t}, URI x://aaa… without the final `!` (no match)");
    println!("{:>10} {:>12} {:>10}", "bytes", "best of 5", "ns/byte");
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let uri = format!("x://{}", "a".repeat(n));
        let best = (0..5)
            .map(|_| {
                let start = Instant::now();
                assert!(black_box(&t).matches(black_box(&uri)).is_none());
                start.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!(
            "{n:>10} {:>10.3} ms {:>10.1}",
            best.as_secs_f64() * 1e3,
            best.as_nanos() as f64 / n as f64
        );
    }
}
