//! The MetaObject a service describes itself with (methods, signals, properties), its
//! members, and their encoding under libqi's annotated struct signatures.

use std::collections::BTreeMap;

use crate::reader::{put_bytes, put_len, put_u32, Reader};
use crate::{DecodeError, EncodeError};

mod standard;

/// A method's parameter, as named in its MetaMethod.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaMethodParameter {
    pub name: String,
    pub description: String,
}

/// A method: its uid (the action of calls to it), its name and signatures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaMethod {
    pub uid: u32,
    pub return_signature: String,
    pub name: String,
    /// The parameters as a tuple signature, `(s)` or `()`.
    pub parameters_signature: String,
    pub description: String,
    pub parameters: Vec<MetaMethodParameter>,
    pub return_description: String,
}

/// A signal: its uid (the action of its `Event` messages), name and arguments' signature.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaSignal {
    pub uid: u32,
    pub name: String,
    pub signature: String,
}

/// A property: uid, name and signature (encoded like a signal).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaProperty {
    pub uid: u32,
    pub name: String,
    pub signature: String,
}

/// What an object offers, keyed by uid (libqi's maps are ordered by uid, and so is the wire).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaObject {
    pub methods: BTreeMap<u32, MetaMethod>,
    pub signals: BTreeMap<u32, MetaSignal>,
    pub properties: BTreeMap<u32, MetaProperty>,
    pub description: String,
}

impl MetaMethod {
    /// A method without descriptions.
    pub fn new(uid: u32, name: &str, parameters_signature: &str, return_signature: &str) -> MetaMethod {
        MetaMethod {
            uid,
            return_signature: return_signature.to_owned(),
            name: name.to_owned(),
            parameters_signature: parameters_signature.to_owned(),
            ..MetaMethod::default()
        }
    }

    pub const SIGNATURE: &'static str = "(Issss[(ss)<MetaMethodParameter,name,description>]s)<MetaMethod,\
        uid,returnSignature,name,parametersSignature,description,parameters,returnDescription>";

    fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        put_u32(out, self.uid);
        for text in [&self.return_signature, &self.name, &self.parameters_signature, &self.description] {
            put_bytes(out, text.as_bytes())?;
        }
        put_len(out, "parameter list", self.parameters.len())?;
        for parameter in &self.parameters {
            put_bytes(out, parameter.name.as_bytes())?;
            put_bytes(out, parameter.description.as_bytes())?;
        }
        put_bytes(out, self.return_description.as_bytes())
    }

    fn decode_from(reader: &mut Reader<'_>) -> Result<MetaMethod, DecodeError> {
        let uid = reader.read_u32()?;
        let return_signature = reader.read_string("return signature")?;
        let name = reader.read_string("method name")?;
        let parameters_signature = reader.read_string("parameters signature")?;
        let description = reader.read_string("method description")?;
        let count = reader.read_count(8)?;
        let mut parameters = Vec::with_capacity((count as usize).min(reader.remaining() / 8));
        for _ in 0..count {
            parameters.push(MetaMethodParameter {
                name: reader.read_string("parameter name")?,
                description: reader.read_string("parameter description")?,
            });
        }
        let return_description = reader.read_string("return description")?;
        Ok(MetaMethod {
            uid,
            return_signature,
            name,
            parameters_signature,
            description,
            parameters,
            return_description,
        })
    }
}

impl MetaSignal {
    pub fn new(uid: u32, name: &str, signature: &str) -> MetaSignal {
        MetaSignal { uid, name: name.to_owned(), signature: signature.to_owned() }
    }

    pub const SIGNATURE: &'static str = "(Iss)<MetaSignal,uid,name,signature>";
}

impl MetaProperty {
    pub fn new(uid: u32, name: &str, signature: &str) -> MetaProperty {
        MetaProperty { uid, name: name.to_owned(), signature: signature.to_owned() }
    }

    pub const SIGNATURE: &'static str = "(Iss)<MetaProperty,uid,name,signature>";
}

/// `(Iss)`: a signal's or a property's uid, name and signature.
fn encode_member(out: &mut Vec<u8>, uid: u32, name: &str, signature: &str) -> Result<(), EncodeError> {
    put_u32(out, uid);
    put_bytes(out, name.as_bytes())?;
    put_bytes(out, signature.as_bytes())
}

fn decode_member(reader: &mut Reader<'_>) -> Result<(u32, String, String), DecodeError> {
    Ok((reader.read_u32()?, reader.read_string("member name")?, reader.read_string("member signature")?))
}

/// `{I T}`: a uid-keyed map, counts checked against the bytes left (`min_entry` bytes each).
fn decode_map<T>(
    reader: &mut Reader<'_>,
    min_entry: usize,
    mut entry: impl FnMut(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<BTreeMap<u32, T>, DecodeError> {
    let count = reader.read_count(min_entry)?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let key = reader.read_u32()?;
        map.insert(key, entry(reader)?);
    }
    Ok(map)
}

impl MetaObject {
    /// libqi's signature of a MetaObject, exactly as libqi 4.0.3 advertises it.
    pub const SIGNATURE: &'static str = "({I(Issss[(ss)<MetaMethodParameter,name,description>]s)\
        <MetaMethod,uid,returnSignature,name,parametersSignature,description,parameters,returnDescription>}\
        {I(Iss)<MetaSignal,uid,name,signature>}{I(Iss)<MetaProperty,uid,name,signature>}s)\
        <MetaObject,methods,signals,properties,description>";

    /// The method named `name` (the first by uid when overloaded).
    pub fn method(&self, name: &str) -> Option<&MetaMethod> {
        self.methods.values().find(|method| method.name == name)
    }

    /// The signal named `name`.
    pub fn signal(&self, name: &str) -> Option<&MetaSignal> {
        self.signals.values().find(|signal| signal.name == name)
    }

    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        put_len(out, "method map", self.methods.len())?;
        for (uid, method) in &self.methods {
            put_u32(out, *uid);
            method.encode(out)?;
        }
        put_len(out, "signal map", self.signals.len())?;
        for (uid, signal) in &self.signals {
            put_u32(out, *uid);
            encode_member(out, signal.uid, &signal.name, &signal.signature)?;
        }
        put_len(out, "property map", self.properties.len())?;
        for (uid, property) in &self.properties {
            put_u32(out, *uid);
            encode_member(out, property.uid, &property.name, &property.signature)?;
        }
        put_bytes(out, self.description.as_bytes())
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode(&mut out)?;
        Ok(out)
    }

    /// Read a MetaObject from `reader`, leaving what follows it.
    pub fn decode_from(reader: &mut Reader<'_>) -> Result<MetaObject, DecodeError> {
        // Key, uid and the 6 lengths of a method with no text and no parameter.
        let methods = decode_map(reader, 32, MetaMethod::decode_from)?;
        let signals = decode_map(reader, 16, |reader| {
            decode_member(reader).map(|(uid, name, signature)| MetaSignal { uid, name, signature })
        })?;
        let properties = decode_map(reader, 16, |reader| {
            decode_member(reader).map(|(uid, name, signature)| MetaProperty { uid, name, signature })
        })?;
        let description = reader.read_string("object description")?;
        Ok(MetaObject { methods, signals, properties, description })
    }

    /// Decode a whole payload (a `metaObject` reply); bytes left after it are refused.
    pub fn decode(bytes: &[u8]) -> Result<MetaObject, DecodeError> {
        let mut reader = Reader::new(bytes);
        let meta = Self::decode_from(&mut reader)?;
        reader.finish()?;
        Ok(meta)
    }
}
