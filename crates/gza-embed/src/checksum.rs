//! The one hash of gza's model files: XXH3 (64-bit), from the maintained `xxhash-rust` crate.
//! Fast (tens of GB/s from memory), so checking the 10 MB int8 copy on every load costs well
//! under a millisecond and fingerprinting the 90 MB weights once costs tens of milliseconds.
//! It detects damage and tells files apart; it is not meant to resist a forger (nothing here
//! is: whoever can write the model folder chooses the weights).

pub use xxhash_rust::xxh3::Xxh3;

/// The XXH3-64 hash of `data` with `seed`.
pub fn xxh3(data: &[u8], seed: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(data, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_values_and_streams_like_one_call() {
        // XXH3-64 of the empty input with seed 0 (the reference implementation's test vector).
        assert_eq!(xxh3(b"", 0), 0x2D06_8005_38D3_94C2);
        let long: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut flipped = long.clone();
        flipped[50_000] ^= 1;
        assert_ne!(xxh3(&long, 0), xxh3(&flipped, 0));
        assert_ne!(xxh3(&long, 0), xxh3(&long, 1));
        let mut h = Xxh3::new();
        for chunk in long.chunks(4096) {
            h.update(chunk);
        }
        assert_eq!(h.digest(), xxh3(&long, 0));
    }
}
