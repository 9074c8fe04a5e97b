//! Tables keyed by request id, with a hash made for them.
//!
//! Every request passes through several such tables (the engine's in-flight table, a server's
//! calls awaiting cancellation, a client's pending requests): with the standard SipHash-1-3,
//! hashing one small id cost about as much as parsing it. [`IdHashing`] hashes 8 bytes at a
//! time with one keyed, folded 64x64->128-bit multiply, and its keys come from the standard
//! library's per-process randomness, so a peer that picks the ids cannot predict where they
//! land. It is not a cryptographic hash: it is meant for tables that hold what one peer sent,
//! which the engine bounds anyway.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};

use crate::jsonrpc::RequestId;

/// A map keyed by request id (or progress token), hashed with [`IdHashing`].
pub type IdMap<V> = HashMap<RequestId, V, IdHashing>;

/// A new, empty [`IdMap`] with fresh random keys.
pub fn id_map<V>() -> IdMap<V> {
    HashMap::with_hasher(IdHashing::new())
}

/// Builds [`IdHasher`]s under two random keys (see the [module](self) docs).
#[derive(Clone)]
pub struct IdHashing {
    k0: u64,
    k1: u64,
}

impl IdHashing {
    /// Fresh random keys, from the standard library's per-process random seed (the one its
    /// `HashMap`s use).
    pub fn new() -> IdHashing {
        let seed = RandomState::new();
        IdHashing {
            k0: seed.hash_one(0x243f_6a88_85a3_08d3_u64),
            // Odd, so the multiply loses no bits of the low word.
            k1: seed.hash_one(0x1319_8a2e_0370_7344_u64) | 1,
        }
    }
}

impl Default for IdHashing {
    fn default() -> Self {
        IdHashing::new()
    }
}

impl std::fmt::Debug for IdHashing {
    // The keys stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdHashing")
    }
}

impl BuildHasher for IdHashing {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher {
            state: self.k0,
            k0: self.k0,
            k1: self.k1,
        }
    }
}

/// The hasher [`IdHashing`] builds.
pub struct IdHasher {
    state: u64,
    k0: u64,
    k1: u64,
}

/// The high and low halves of the 128-bit product, folded into one word.
#[inline]
fn folded(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl IdHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.state = folded(self.state ^ word ^ self.k0, self.k1);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        // The length goes in with the tail, so "a" and "a\0" differ.
        self.mix(u64::from_le_bytes(w) ^ ((bytes.len() as u64) << 56));
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_isize(&mut self, n: isize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        folded(self.state, self.k1.rotate_left(32) | 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_ids_hash_alike_and_the_table_works() {
        let h = IdHashing::new();
        assert_eq!(
            h.hash_one(RequestId::from("abc")),
            h.hash_one(RequestId::String("abc".to_owned()))
        );
        assert_eq!(
            h.hash_one(RequestId::from(7)),
            h.hash_one(RequestId::Number(7))
        );
        let mut m = id_map();
        for i in 0..1000 {
            m.insert(RequestId::from(i), i);
            m.insert(RequestId::from(format!("s{i}")), -i);
        }
        assert_eq!(m.len(), 2000);
        assert_eq!(m.get(&RequestId::from(999)), Some(&999));
        assert_eq!(m.get(&RequestId::from("s999")), Some(&-999));
        assert_eq!(m.get(&RequestId::from("s1000")), None);
    }

    #[test]
    fn keys_differ_between_tables_and_spread_ids() {
        // Two tables do not share keys, so no set of ids collides in every table.
        let (a, b) = (IdHashing::new(), IdHashing::new());
        assert_ne!(
            a.hash_one(RequestId::from(1)),
            b.hash_one(RequestId::from(1))
        );
        // Consecutive ids, strings of every short length and a number and its string all land
        // apart (no collision among a few thousand 64-bit hashes is expected by chance).
        let mut seen = std::collections::HashSet::new();
        for i in 0..2000 {
            assert!(seen.insert(a.hash_one(RequestId::from(i))));
            assert!(seen.insert(a.hash_one(RequestId::from(i.to_string()))));
        }
        for n in 0..40 {
            assert!(seen.insert(a.hash_one(RequestId::from("x".repeat(n)))));
        }
        // And the bucket bits (the low ones) are spread too: 20,000 consecutive ids over 256
        // buckets (78 each on average) leave none empty and none over twice the average. (With
        // uniform hashes the chance of either is far below 1e-12.)
        let mut load = [0u32; 256];
        for i in 0..20_000 {
            load[(a.hash_one(RequestId::from(i)) & 0xff) as usize] += 1;
        }
        assert!(
            load.iter().all(|&n| n > 0 && n < 2 * 20_000 / 256),
            "{load:?}"
        );
    }
}
