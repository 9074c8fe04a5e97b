//! Mutated texts for the tests that hold a quick reader to a full parser: a seeded generator
//! and one mutation step (insert, delete or replace a piece), on character boundaries.

/// A small deterministic generator (an LCG's high bits): the same seed, the same texts.
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

/// Mutates `text` one to three times with pieces of `alphabet`.
pub(crate) fn mutate(text: &mut String, alphabet: &[&str], rng: &mut Lcg) {
    for _ in 0..1 + rng.next() % 3 {
        let mut at = rng.next() % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let piece = alphabet[rng.next() % alphabet.len()];
        match rng.next() % 3 {
            0 => text.insert_str(at, piece),
            1 => {
                let mut end = (at + 1 + rng.next() % 3).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            }
            _ => {
                let mut end = (at + 1).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, piece);
            }
        }
    }
}
