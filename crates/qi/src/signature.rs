//! libqi type signatures (`qi/signature.hpp`): a parser into a typed tree, bounded in length,
//! depth and elements, and the printer back to the same text.

use std::fmt;

use crate::{Limits, SignatureError};

/// One type of libqi's type system, as its signature describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    /// `v`: nothing on the wire.
    Void,
    /// `b`: one byte, 0 or 1.
    Bool,
    /// `c`
    Int8,
    /// `C`
    UInt8,
    /// `w`
    Int16,
    /// `W`
    UInt16,
    /// `i`
    Int32,
    /// `I`
    UInt32,
    /// `l`
    Int64,
    /// `L`
    UInt64,
    /// `f`
    Float,
    /// `d`
    Double,
    /// `s`: a `u32` length then bytes.
    String,
    /// `r`: a raw buffer, a `u32` length then bytes.
    Raw,
    /// `m`: a dynamic value, its signature as a string then the value.
    Dynamic,
    /// `o`: an object reference.
    Object,
    /// `X`: unknown, never on the wire.
    Unknown,
    /// `_`: the element type of an empty dynamic container, never on the wire.
    None,
    /// `[T]`: a `u32` count then the elements.
    List(Box<Type>),
    /// `{KV}`: a `u32` count then key, value pairs.
    Map(Box<Type>, Box<Type>),
    /// `(T...)` with an optional `<Name,field,...>` annotation: the members one after another.
    Tuple(TupleType),
    /// `+T`: a bool, then the value when it is true.
    Optional(Box<Type>),
    /// `#T`: variadic arguments, encoded like a list.
    VarArgs(Box<Type>),
    /// `~T`: keyword arguments (libqi-internal, never on the wire).
    KwArgs(Box<Type>),
}

/// A tuple's members and, for a struct, its annotation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TupleType {
    pub members: Vec<Type>,
    /// The text between `<` and `>`: the struct's name then its field names, by commas.
    pub annotation: Option<String>,
}

impl TupleType {
    /// The struct's name, when annotated.
    pub fn name(&self) -> Option<&str> {
        self.annotation.as_deref().map(|text| text.split(',').next().unwrap_or(""))
    }

    /// The field names, when annotated.
    pub fn field_names(&self) -> Vec<&str> {
        self.annotation.as_deref().map(|text| text.split(',').skip(1).collect()).unwrap_or_default()
    }
}

impl Type {
    /// Parse a whole signature with the default [`Limits`].
    pub fn parse(text: &str) -> Result<Type, SignatureError> {
        let limits = Limits::default();
        let mut budget = limits.max_values;
        Self::parse_bytes(text.as_bytes(), &limits, &mut budget)
    }

    /// Parse a whole signature under `limits`, taking one unit of `budget` per element.
    pub fn parse_bytes(text: &[u8], limits: &Limits, budget: &mut usize) -> Result<Type, SignatureError> {
        if text.is_empty() {
            return Err(SignatureError::Empty);
        }
        if text.len() > limits.max_signature_bytes {
            return Err(SignatureError::TooLong { len: text.len(), limit: limits.max_signature_bytes });
        }
        let mut parser = Parser { text, at: 0, limits, budget };
        let ty = parser.element(0)?;
        if parser.at != text.len() {
            return Err(SignatureError::Trailing { at: parser.at });
        }
        Ok(ty)
    }

    /// A tuple without annotation (a method's parameters).
    pub fn tuple(members: Vec<Type>) -> Type {
        Type::Tuple(TupleType { members, annotation: None })
    }

    /// Whether this is `m`.
    pub fn is_dynamic(&self) -> bool {
        matches!(self, Type::Dynamic)
    }
}

struct Parser<'t, 'b> {
    text: &'t [u8],
    at: usize,
    limits: &'t Limits,
    budget: &'b mut usize,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn unexpected(&self) -> SignatureError {
        match self.peek() {
            Some(byte) => SignatureError::Unexpected { at: self.at, found: byte as char },
            None => SignatureError::UnexpectedEnd,
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), SignatureError> {
        if self.peek() != Some(byte) {
            return Err(self.unexpected());
        }
        self.at += 1;
        Ok(())
    }

    fn element(&mut self, depth: usize) -> Result<Type, SignatureError> {
        if depth > self.limits.max_depth {
            return Err(SignatureError::TooDeep { limit: self.limits.max_depth });
        }
        if *self.budget == 0 {
            return Err(SignatureError::TooManyElements { limit: self.limits.max_values });
        }
        *self.budget -= 1;
        let Some(byte) = self.peek() else { return Err(SignatureError::UnexpectedEnd) };
        let simple = match byte {
            b'v' => Some(Type::Void),
            b'b' => Some(Type::Bool),
            b'c' => Some(Type::Int8),
            b'C' => Some(Type::UInt8),
            b'w' => Some(Type::Int16),
            b'W' => Some(Type::UInt16),
            b'i' => Some(Type::Int32),
            b'I' => Some(Type::UInt32),
            b'l' => Some(Type::Int64),
            b'L' => Some(Type::UInt64),
            b'f' => Some(Type::Float),
            b'd' => Some(Type::Double),
            b's' => Some(Type::String),
            b'r' => Some(Type::Raw),
            b'm' => Some(Type::Dynamic),
            b'o' => Some(Type::Object),
            b'X' => Some(Type::Unknown),
            b'_' => Some(Type::None),
            _ => None,
        };
        if let Some(ty) = simple {
            self.at += 1;
            return Ok(ty);
        }
        let inner = |parser: &mut Self| parser.element(depth + 1).map(Box::new);
        match byte {
            b'[' => {
                self.at += 1;
                let element = inner(self)?;
                self.expect(b']')?;
                Ok(Type::List(element))
            }
            b'{' => {
                self.at += 1;
                let key = inner(self)?;
                let value = inner(self)?;
                self.expect(b'}')?;
                Ok(Type::Map(key, value))
            }
            b'+' => {
                self.at += 1;
                Ok(Type::Optional(inner(self)?))
            }
            b'#' => {
                self.at += 1;
                Ok(Type::VarArgs(inner(self)?))
            }
            b'~' => {
                self.at += 1;
                Ok(Type::KwArgs(inner(self)?))
            }
            b'(' => {
                self.at += 1;
                let mut members = Vec::new();
                while self.peek() != Some(b')') {
                    if self.peek().is_none() {
                        return Err(SignatureError::UnexpectedEnd);
                    }
                    members.push(self.element(depth + 1)?);
                }
                self.at += 1;
                let annotation = self.annotation()?;
                Ok(Type::Tuple(TupleType { members, annotation }))
            }
            _ => Err(self.unexpected()),
        }
    }

    /// `<...>` after a tuple, with `<>` nested inside counted as libqi does.
    fn annotation(&mut self) -> Result<Option<String>, SignatureError> {
        if self.peek() != Some(b'<') {
            return Ok(None);
        }
        let start = self.at + 1;
        let mut open = 0usize;
        while let Some(byte) = self.peek() {
            match byte {
                b'<' => open += 1,
                b'>' => {
                    open -= 1;
                    if open == 0 {
                        let text = &self.text[start..self.at];
                        self.at += 1;
                        let text = std::str::from_utf8(text)
                            .map_err(|_| SignatureError::Unexpected { at: start, found: '\u{fffd}' })?;
                        return Ok(Some(text.to_owned()));
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
        Err(SignatureError::UnexpectedEnd)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let simple = match self {
            Type::Void => "v",
            Type::Bool => "b",
            Type::Int8 => "c",
            Type::UInt8 => "C",
            Type::Int16 => "w",
            Type::UInt16 => "W",
            Type::Int32 => "i",
            Type::UInt32 => "I",
            Type::Int64 => "l",
            Type::UInt64 => "L",
            Type::Float => "f",
            Type::Double => "d",
            Type::String => "s",
            Type::Raw => "r",
            Type::Dynamic => "m",
            Type::Object => "o",
            Type::Unknown => "X",
            Type::None => "_",
            Type::List(element) => return write!(f, "[{element}]"),
            Type::Map(key, value) => return write!(f, "{{{key}{value}}}"),
            Type::Optional(inner) => return write!(f, "+{inner}"),
            Type::VarArgs(inner) => return write!(f, "#{inner}"),
            Type::KwArgs(inner) => return write!(f, "~{inner}"),
            Type::Tuple(tuple) => {
                f.write_str("(")?;
                for member in &tuple.members {
                    write!(f, "{member}")?;
                }
                f.write_str(")")?;
                if let Some(annotation) = &tuple.annotation {
                    write!(f, "<{annotation}>")?;
                }
                return Ok(());
            }
        };
        f.write_str(simple)
    }
}

impl std::str::FromStr for Type {
    type Err = SignatureError;

    fn from_str(text: &str) -> Result<Type, SignatureError> {
        Type::parse(text)
    }
}
