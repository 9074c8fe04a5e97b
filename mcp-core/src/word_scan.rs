//! Looking for bytes eight at a time: the text scans on the usual request's path (the quick
//! decoder's strings, the look for `_meta`) test a machine word per step instead of a byte.

/// A word of bytes all equal to one: `ONES * b` repeats `b` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Eight bytes from `chunk` (which must hold eight), lowest byte first.
#[inline]
pub(crate) fn word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_le_bytes(w)
}

/// The high bit of every byte of `x` that is zero, by the borrow trick `(x - 1s) & !x & 0x80s`.
/// The lowest flag is exact; a flag above it may be false (a borrow out of a zero byte), so a
/// caller takes the lowest, or checks each flagged byte itself. No zero byte goes unflagged.
#[inline]
pub(crate) fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The flags of [`zero_bytes`] for the bytes of `x` equal to `byte`.
#[inline]
pub(crate) fn bytes_equal(x: u64, byte: u8) -> u64 {
    zero_bytes(x ^ (ONES * u64::from(byte)))
}

/// The flags of [`zero_bytes`] for the bytes of `x` below `n` (at most 0x80).
#[inline]
pub(crate) fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}

/// The index (0 to 7) of the byte that a flag bit marks.
#[inline]
pub(crate) fn flagged_byte(flags: u64) -> usize {
    (flags.trailing_zeros() / 8) as usize
}
