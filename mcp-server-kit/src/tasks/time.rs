//! Task timestamps (ISO 8601, UTC) and task ids (unguessable), with no dependency.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn iso_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso(d.as_secs(), d.subsec_millis())
}

fn iso(secs: u64, millis: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (eras of 400 years, each
/// 146 097 days, counted from March so the leap day comes last).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Task ids: a keyed hash (SipHash, with the process's random keys) of a counter, 128 bits.
/// Nobody without the keys can predict the next id or find another requester's task from its
/// own, which is what binds a task to whoever holds its id when there is no authorization.
/// With a prefix (the instance's tag), ids are `PREFIX.<hex>`.
pub(crate) struct Ids {
    keys: RandomState,
    next: AtomicU64,
    prefix: Option<String>,
}

impl Ids {
    pub(crate) fn new(prefix: Option<String>) -> Ids {
        Ids {
            keys: RandomState::new(),
            next: AtomicU64::new(0),
            prefix,
        }
    }

    pub(crate) fn fresh(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let half = |tag: u8| {
            let mut h = self.keys.build_hasher();
            h.write_u64(n);
            h.write_u8(tag);
            h.finish()
        };
        match &self.prefix {
            Some(p) => format!("{p}.{:016x}{:016x}", half(0), half(1)),
            None => format!("{:016x}{:016x}", half(0), half(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian_utc() {
        assert_eq!(iso(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(iso(1_798_761_599, 999), "2026-12-31T23:59:59.999Z");
    }

    #[test]
    fn ids_do_not_repeat() {
        let ids = Ids::new(None);
        let a = ids.fresh();
        assert_eq!(a.len(), 32);
        assert_ne!(a, ids.fresh());
        let tagged = Ids::new(Some("node-a".into())).fresh();
        assert!(tagged.starts_with("node-a."), "{tagged}");
        assert_eq!(tagged.len(), "node-a.".len() + 32);
    }
}
