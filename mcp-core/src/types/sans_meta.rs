//! Reading params without their top-level `_meta`: a server engine has already read the
//! 2026-07-28 envelope into its request context, and building that object into a `Value`
//! tree a second time is most of what typing a small request costs.

use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde::forward_to_deserialize_any;

/// The key left out.
const META: &str = "_meta";

/// Parses `text` as a `T` whose top-level `_meta` (if any) is skipped unread, as if absent.
/// Nested `_meta` keys (inside `arguments`, say) are kept.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = T::deserialize(Top(&mut de))?;
    de.end()?;
    Ok(v)
}

/// The top-level deserializer: maps and structs have their `_meta` skipped; anything else is
/// asked of the inner deserializer as it is, so errors read the same.
struct Top<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Top<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(Skip(v))
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Skip(v))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, Skip(v))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct enum identifier
        ignored_any
    }
}

/// Hands the wrapped visitor a map without `_meta`; any other shape goes to it unchanged.
struct Skip<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Skip<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Entries(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(seq)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<V::Value, E> {
        self.0.visit_bool(b)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<V::Value, E> {
        self.0.visit_i64(n)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<V::Value, E> {
        self.0.visit_u64(n)
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<V::Value, E> {
        self.0.visit_f64(n)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.0.visit_str(s)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.0.visit_borrowed_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.0.visit_string(s)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
}

/// The entries of the top-level object, `_meta` skipped.
struct Entries<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Entries<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            // Borrowed when the key has no escapes (every key in practice): no allocation.
            let Some(key) = self.0.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if key.0 == META {
                self.0.next_value::<IgnoredAny>()?;
                continue;
            }
            let key = de::value::CowStrDeserializer::<A::Error>::new(key.0);
            return seed.deserialize(key).map(Some);
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// An object key as it came: borrowed from the text when it can be.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::types::CallToolRequestParams;

    #[test]
    fn the_top_level_meta_is_skipped_and_everything_else_kept() {
        let text = r#"{"name":"echo","_meta":{"progressToken":1,"x":[1,{"y":2}]},
            "arguments":{"_meta":"kept: not at the top"},"other":true}"#;
        let p: CallToolRequestParams = super::from_str(text).unwrap();
        assert_eq!(p.name, "echo");
        assert_eq!(p.meta, None);
        assert_eq!(p.arguments.unwrap()["_meta"], json!("kept: not at the top"));
        assert_eq!(p.extra["other"], json!(true));
        // A key written with an escape is the same key.
        let p: CallToolRequestParams =
            super::from_str(r#"{"name":"e","_\u006deta":{"a":1}}"#).unwrap();
        assert_eq!(p.meta, None);
        // A plain map loses it too; errors read as without the wrapper.
        let m: serde_json::Map<String, Value> = super::from_str(r#"{"_meta":1,"a":2}"#).unwrap();
        assert_eq!(Value::Object(m), json!({"a": 2}));
        let plain = serde_json::from_str::<CallToolRequestParams>("[1]").unwrap_err();
        let ours = super::from_str::<CallToolRequestParams>("[1]").unwrap_err();
        assert_eq!(plain.to_string(), ours.to_string());
        assert!(super::from_str::<CallToolRequestParams>(r#"{"name":"e"} x"#).is_err());
    }
}
