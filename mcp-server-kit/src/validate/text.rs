//! A [`Plan`] checked against the arguments' JSON text as it is read, with nothing built: no
//! map, no owned keys or strings. A tool call whose arguments pass is then typed straight from
//! the same text, so the arguments are never held as a `Value` tree at all.
//!
//! Like [`Plan::accepts`] it only ever says "valid" or "ask the validator"; anything it is
//! unsure of (a repeated required member, text that does not parse, a budget reached) is the
//! second answer, and the caller then builds the `Value` and asks the full validator.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{MAX_STEPS, Plan};

/// Whether `text` (a JSON object) surely matches the plan.
pub(super) fn accepts(plan: &Plan, text: &str) -> bool {
    // One bit per required member.
    if plan.required.len() > 64 {
        return false;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    matches!(de.deserialize_map(Members(plan)), Ok(true)) && de.end().is_ok()
}

/// Reads the members of the top-level object.
struct Members<'p>(&'p Plan);

impl<'de> Visitor<'de> for Members<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let plan = self.0;
        let mut seen = 0u64;
        let mut count = 0usize;
        while let Some(Key(key)) = map.next_key()? {
            count += 1;
            // The validator counts a check per member: past its budget it must be the one to
            // answer.
            if count >= MAX_STEPS {
                return Ok(false);
            }
            match plan.members.iter().find(|(n, _)| *n == *key) {
                Some((_, Some(ty))) => {
                    if !map.next_value_seed(Is(ty))? {
                        return Ok(false);
                    }
                }
                Some((_, None)) => {
                    map.next_value::<IgnoredAny>()?;
                }
                None if plan.closed => return Ok(false),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if let Some(i) = plan.required.iter().position(|r| *r == *key) {
                let bit = 1u64 << i;
                if seen & bit != 0 {
                    // A duplicate: a `Value` keeps the last one, the typed handler refuses it;
                    // either way it is not for this quick check.
                    return Ok(false);
                }
                seen |= bit;
            }
        }
        Ok(seen.count_ones() as usize == plan.required.len())
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads one member's value and says whether it has JSON type `.0` (as `validate::is_type`
/// judges a `Value`: `integer` takes `1.0`; an unknown type name takes anything).
struct Is<'t>(&'t str);

impl<'de> DeserializeSeed<'de> for Is<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Is<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(self.takes("null"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(self.takes("boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(self.takes("integer") || self.takes("number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(self.takes("integer") || self.takes("number"))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<bool, E> {
        Ok(self.takes("number") || (self.takes("integer") && f.fract() == 0.0))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(self.takes("string"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(self.takes("array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(self.takes("object"))
    }
}

impl Is<'_> {
    /// Whether a value of JSON type `found` has the wanted type.
    fn takes(&self, found: &str) -> bool {
        match self.0 {
            "null" | "boolean" | "object" | "array" | "string" | "number" | "integer" => {
                self.0 == found
            }
            // An unknown type name: ignored rather than refusing everything.
            _ => true,
        }
    }
}
