//! Typing a tool's arguments from their JSON text while the tool's [`Plan`] checks them: one
//! pass where a check and then a typed read were two. The arguments' deserializer is wrapped
//! so that each top-level member's name is seen as the type reads it, and each member's value
//! is seen as the type takes it (a string, a number, an array...), which is all a plan asks.
//!
//! Like the plan itself it only ever says "valid" or "ask the validator": the typed value is
//! returned only when the type read the text without error and every check passed; anything
//! else (a check failed, a value whose JSON type could not be seen, a required member missing,
//! a repeated one, the type's own refusal) is `None`, and the caller builds the `Value` and
//! asks the full validator, then the type, as it always did, so messages read as before.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    Visitor,
};

use super::{MAX_STEPS, Plan};

/// `T` read from `text` (a JSON object), if the plan surely accepts it.
pub(super) fn typed<T: DeserializeOwned>(plan: &Plan, text: &str) -> Option<T> {
    // One bit per required member.
    if plan.required.len() > 64 {
        return None;
    }
    let st = State {
        plan,
        ok: Cell::new(true),
        seen: Cell::new(0),
        count: Cell::new(0),
        want: Cell::new(None),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Top {
        de: &mut de,
        st: &st,
    })
    .ok()?;
    de.end().ok()?;
    let all_required = st.seen.get().count_ones() as usize == plan.required.len();
    (st.ok.get() && all_required).then_some(value)
}

/// What the read has found so far.
struct State<'p> {
    plan: &'p Plan,
    /// No check has failed, and every value's JSON type was seen.
    ok: Cell<bool>,
    /// Which required members were seen.
    seen: Cell<u64>,
    /// Top-level members seen.
    count: Cell<usize>,
    /// The JSON type the plan wants for the member being read (`None`: any).
    want: Cell<Option<&'p str>>,
}

impl<'p> State<'p> {
    fn fail(&self) {
        self.ok.set(false);
    }

    /// A top-level member's name, as the type reads it.
    fn member(&self, name: &str) {
        let plan = self.plan;
        self.count.set(self.count.get() + 1);
        // The validator counts a check per member: past its budget it must be the one to say.
        if self.count.get() >= MAX_STEPS {
            self.fail();
        }
        match plan.members.iter().find(|(n, _)| n == name) {
            Some((_, ty)) => self.want.set(ty.as_deref()),
            None => {
                if plan.closed {
                    self.fail();
                }
                self.want.set(None);
            }
        }
        if let Some(i) = plan.required.iter().position(|r| r == name) {
            let bit = 1u64 << i;
            if self.seen.get() & bit != 0 {
                // Repeated: a `Value` keeps the last one; not for this quick check.
                self.fail();
            }
            self.seen.set(self.seen.get() | bit);
        }
    }
}

/// Whether a value of JSON type `found` has type `want` (as `validate::is_type` judges a
/// `Value`: `integer` takes `1.0`, an unknown type name takes anything).
fn takes(want: &str, found: &str) -> bool {
    match want {
        "null" | "boolean" | "object" | "array" | "string" | "number" | "integer" => want == found,
        _ => true,
    }
}

/// Forwards each named `deserialize_*` method (with its arguments before the visitor) of a
/// wrapper to the wrapped deserializer, with the visitor passed through the wrapper's method
/// `$wrap`.
macro_rules! forward {
    ($wrap:ident; $($method:ident($($arg:ident: $t:ty),*)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $t,)* v: V) -> Result<V::Value, D::Error> {
                let v = self.$wrap(v);
                self.de.$method($($arg,)* v)
            }
        )*
    };
}

/// [`forward!`] for the `deserialize_*` methods both wrappers pass on alike, and `$more`.
macro_rules! forward_common {
    ($wrap:ident; $($more:tt)*) => {
        forward!($wrap;
            deserialize_unit_struct(name: &'static str),
            deserialize_newtype_struct(name: &'static str),
            deserialize_tuple(len: usize),
            deserialize_tuple_struct(name: &'static str, len: usize),
            deserialize_enum(name: &'static str, variants: &'static [&'static str]),
            deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(),
            deserialize_i64(), deserialize_i128(), deserialize_u8(), deserialize_u16(),
            deserialize_u32(), deserialize_u64(), deserialize_u128(), deserialize_f32(),
            deserialize_f64(), deserialize_char(), deserialize_str(), deserialize_string(),
            deserialize_bytes(), deserialize_byte_buf(), deserialize_option(), deserialize_unit(),
            deserialize_seq(), deserialize_identifier(),
            $($more)*
        );
    };
}

/// The arguments object: its members go through [`Members`]; any other way of reading it
/// cannot be checked.
struct Top<'s, 'p, D> {
    de: D,
    st: &'s State<'p>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Top<'_, '_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Object { v, st: self.st })
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Object { v, st: self.st })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_struct(name, fields, Object { v, st: self.st })
    }

    forward_common!(unchecked; deserialize_ignored_any());
}

impl<D> Top<'_, '_, D> {
    /// Any way of reading the arguments but as an object cannot be checked.
    fn unchecked<V>(&self, v: V) -> V {
        self.st.fail();
        v
    }
}

/// The visitor of the arguments object.
struct Object<'s, 'p, V> {
    v: V,
    st: &'s State<'p>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Object<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(Members { map, st: self.st })
    }
}

/// The members of the arguments object: names to [`Name`], values to [`Checked`].
struct Members<'s, 'p, A> {
    map: A,
    st: &'s State<'p>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<'_, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.map.next_key_seed(Seed {
            seed,
            st: self.st,
            role: Role::Name,
        })
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.st.want.take() {
            // Any value will do: read as the type likes, unwatched.
            None => self.map.next_value_seed(seed),
            Some(ty) => self.map.next_value_seed(Seed {
                seed,
                st: self.st,
                role: Role::Value(ty),
            }),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// What is being read.
#[derive(Clone, Copy)]
enum Role<'p> {
    /// A top-level member's name.
    Name,
    /// A top-level member's value, which must have this JSON type.
    Value(&'p str),
}

/// A member's name or value, read through [`Watched`].
struct Seed<'s, 'p, S> {
    seed: S,
    st: &'s State<'p>,
    role: Role<'p>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, '_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Watched {
            de,
            st: self.st,
            role: self.role,
        })
    }
}

/// A member's name or value: each way of reading it hands the type's visitor to [`Seen`],
/// which notes what the JSON held.
struct Watched<'s, 'p, D> {
    de: D,
    st: &'s State<'p>,
    role: Role<'p>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Watched<'_, '_, D> {
    type Error = D::Error;

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        // A value the type skips must still show its JSON type.
        let v = self.seen(v);
        self.de.deserialize_any(v)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }

    forward_common!(seen;
        deserialize_any(),
        deserialize_map(),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
    );
}

impl<'s, 'p, D> Watched<'s, 'p, D> {
    fn seen<V>(&self, v: V) -> Seen<'s, 'p, V> {
        Seen {
            v,
            st: self.st,
            role: self.role,
        }
    }
}

/// The type's visitor, told what the JSON held: a name is noted as a member, a value's JSON
/// type is held to the plan's.
struct Seen<'s, 'p, V> {
    v: V,
    st: &'s State<'p>,
    role: Role<'p>,
}

impl<V> Seen<'_, '_, V> {
    /// A value of JSON type `found` (for a name: something other than a string).
    fn found(&self, found: &str) {
        match self.role {
            Role::Value(want) if takes(want, found) => {}
            // An integer is a number too.
            Role::Value(want) if found == "integer" && takes(want, "number") => {}
            _ => self.st.fail(),
        }
    }

    fn name(&self, name: &str) {
        match self.role {
            Role::Name => self.st.member(name),
            Role::Value(want) if takes(want, "string") => {}
            Role::Value(_) => self.st.fail(),
        }
    }

    /// A value whose JSON type is not to be seen here.
    fn unseen(&self) {
        self.st.fail();
    }
}

macro_rules! seen_as {
    ($kind:literal: $($method:ident($t:ty)),*) => {
        $(
            fn $method<E: de::Error>(self, x: $t) -> Result<V::Value, E> {
                self.found($kind);
                self.v.$method(x)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Seen<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.expecting(f)
    }

    seen_as!("boolean": visit_bool(bool));
    seen_as!("integer": visit_i8(i8), visit_i16(i16), visit_i32(i32), visit_i64(i64),
        visit_i128(i128), visit_u8(u8), visit_u16(u16), visit_u32(u32), visit_u64(u64),
        visit_u128(u128));

    fn visit_f32<E: de::Error>(self, x: f32) -> Result<V::Value, E> {
        self.visit_f64(f64::from(x))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<V::Value, E> {
        match self.role {
            Role::Value(want) if takes(want, "number") => {}
            Role::Value("integer") if x.fract() == 0.0 => {}
            _ => self.st.fail(),
        }
        self.v.visit_f64(x)
    }

    fn visit_char<E: de::Error>(self, c: char) -> Result<V::Value, E> {
        self.name(c.encode_utf8(&mut [0; 4]));
        self.v.visit_char(c)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.name(s);
        self.v.visit_str(s)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.name(s);
        self.v.visit_borrowed_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.name(&s);
        self.v.visit_string(s)
    }

    // serde_json hands a string's bytes to a type that asks for bytes.
    seen_as!("string": visit_bytes(&[u8]), visit_byte_buf(Vec<u8>));

    fn visit_borrowed_bytes<E: de::Error>(self, b: &'de [u8]) -> Result<V::Value, E> {
        self.found("string");
        self.v.visit_borrowed_bytes(b)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.found("null");
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.found("null");
        self.v.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        // Not null: what it is shows when the inner type reads it.
        self.v.visit_some(Watched {
            de,
            st: self.st,
            role: self.role,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(Watched {
            de,
            st: self.st,
            role: self.role,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.found("array");
        self.v.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.found("object");
        self.v.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        // A string or an object: which, the access does not say.
        self.unseen();
        self.v.visit_enum(data)
    }
}
