//! Load the embedding model and time embedding each argument three times.
//! `cargo run --release --example bench_embed -- MODEL_DIR "a sentence" …`

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("MODEL_DIR"));
    let t = std::time::Instant::now();
    let e = gza::learn::embed::Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    println!("load: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    for text in args {
        for run in 1..=3 {
            let t = std::time::Instant::now();
            let v = e.embed(&text);
            println!(
                "embed #{run} ({} chars): {:.1} ms, |v| = {}",
                text.len(),
                t.elapsed().as_secs_f64() * 1e3,
                v.len()
            );
        }
    }
}
