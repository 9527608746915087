//! A module's method signatures in libqi's type letters.
//!
//! A Rust method's signature is typed (`MethodInfo::types`, built from its Rust types): each
//! type renders to its letters, nothing is read back from text. A Python method's is the text
//! `inspect.signature` prints, `(key, value=None)`: only how many arguments it takes is read
//! from it, each a dynamic value. A service a qi client hosts keeps its own libqi signatures.
//! A qi client needs one parameter signature per overload: a trailing `Option<T>` or a
//! parameter with a default gives an overload with and one without it, `*args` one per count
//! of arguments. Parameters keep precise letters only where any caller's value converts
//! (strings, bools, numbers and lists of them); everything else is dynamic (`m`), as NAOqi's
//! ALValue parameters are. A return type is precise wherever the Rust type fixes the value's
//! shape.

use naobroker_protocol::{MethodInfo, MethodType, ValueType};

/// Most arguments a method whose signature does not say how many is offered for.
pub(crate) const MAX_ARITY: usize = 8;

/// One way to call a method over qi: its parameter tuple and return type, as signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Overload {
    pub(crate) params: String,
    pub(crate) returns: String,
}

enum Param {
    Required(String),
    Optional(String),
    /// `*args`: any number more.
    Variadic,
}

/// How a service a qi client hosts describes its method to the broker: `qi (mm) -> m`, the
/// method's own libqi signatures.
pub(crate) fn qi_signature(params: &str, returns: &str) -> String {
    format!("{QI_PREFIX}{params} -> {returns}")
}

const QI_PREFIX: &str = "qi ";

/// The overloads of the method `info` describes.
pub(crate) fn overloads(info: &MethodInfo) -> Vec<Overload> {
    if let Some(types) = &info.types {
        return typed_overloads(types);
    }
    let signature = info.signature.as_str();
    if let Some((params, returns)) = signature.strip_prefix(QI_PREFIX).and_then(|qi| qi.split_once(" -> ")) {
        return vec![Overload { params: params.to_owned(), returns: returns.to_owned() }];
    }
    match python_params(signature) {
        Some(params) => expand(&params, "m"),
        None => (0..=MAX_ARITY).map(|arity| dynamic_overload(arity, "m")).collect(),
    }
}

fn typed_overloads(types: &MethodType) -> Vec<Overload> {
    let params: Vec<Param> = types
        .params
        .iter()
        .map(|param| match param {
            ValueType::Optional(inner) => Param::Optional(param_letters(inner)),
            other => Param::Required(param_letters(other)),
        })
        .collect();
    expand(&params, &return_letters(&types.returns))
}

/// One overload per way to leave trailing optional parameters out, or per count of arguments
/// a variadic parameter takes.
fn expand(params: &[Param], returns: &str) -> Vec<Overload> {
    // Only a trailing run of optional parameters may be left out.
    let required = params.iter().rposition(|p| !matches!(p, Param::Optional(_))).map_or(0, |last| last + 1);
    let mut fixed: Vec<String> = Vec::new();
    for param in &params[..required] {
        match param {
            Param::Required(letters) => fixed.push(letters.clone()),
            Param::Optional(_) => fixed.push("m".to_owned()),
            Param::Variadic => {
                let arities = fixed.len()..=MAX_ARITY.max(fixed.len());
                return arities.map(|arity| padded(&fixed, arity, returns)).collect();
            }
        }
    }
    let mut result = vec![tuple(&fixed, returns)];
    for param in &params[required..] {
        if let Param::Optional(letters) = param {
            fixed.push(letters.clone());
            result.push(tuple(&fixed, returns));
        }
    }
    result
}

fn tuple(params: &[String], returns: &str) -> Overload {
    Overload { params: format!("({})", params.concat()), returns: returns.to_owned() }
}

fn padded(fixed: &[String], arity: usize, returns: &str) -> Overload {
    let mut params = fixed.to_vec();
    params.resize(arity, "m".to_owned());
    tuple(&params, returns)
}

fn dynamic_overload(arity: usize, returns: &str) -> Overload {
    Overload { params: format!("({})", "m".repeat(arity)), returns: returns.to_owned() }
}

/// The parameters of a Python signature, `(a, b=1, *rest, **options)`; `None` when the text
/// has no such shape.
fn python_params(signature: &str) -> Option<Vec<Param>> {
    let text = signature.trim().strip_prefix('(')?;
    let close = closing(text)?;
    let rest = text[close + 1..].trim();
    if !rest.is_empty() && !rest.starts_with("->") {
        return None;
    }
    Some(split_top_level(&text[..close]).into_iter().filter_map(python_param).collect())
}

/// Where the bracket that closes the one just before `text` is.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' if depth > 0 => depth -= 1,
            ')' => return Some(at),
            _ => {}
        }
    }
    None
}

/// Comma-separated parts at the top level of brackets, blank ones left out.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().map(str::trim).filter(|part| !part.is_empty()).collect()
}

/// One Python parameter: `name`, `name=default`, `*args`, each a dynamic value. `**kwargs`,
/// `/` and a bare `*` take no positional argument.
fn python_param(text: &str) -> Option<Param> {
    if text.starts_with("**") || text == "/" || text == "*" || text == "self" {
        return None;
    }
    if text.starts_with('*') {
        return Some(Param::Variadic);
    }
    if text.contains('=') {
        return Some(Param::Optional("m".to_owned()));
    }
    Some(Param::Required("m".to_owned()))
}

/// A parameter's letters: precise for what any caller's value converts to, else `m`.
fn param_letters(param: &ValueType) -> String {
    if let Some(letter) = scalar(param) {
        return letter.to_owned();
    }
    match param {
        ValueType::List(item) => scalar(item).map_or_else(|| "m".to_owned(), |letter| format!("[{letter}]")),
        _ => "m".to_owned(),
    }
}

/// A result's letters: precise wherever the Rust type fixes the value's shape.
fn return_letters(result: &ValueType) -> String {
    if let Some(letter) = scalar(result) {
        return letter.to_owned();
    }
    match result {
        ValueType::Void => "v".to_owned(),
        // libqi has no list of void (nor a tuple with one): such a value is dynamic.
        ValueType::List(item) => match return_letters(item).as_str() {
            "v" => "m".to_owned(),
            letters => format!("[{letters}]"),
        },
        ValueType::Tuple(members) => {
            let letters: Vec<String> = members.iter().map(return_letters).collect();
            if letters.iter().any(|letters| letters == "v") {
                return "m".to_owned();
            }
            format!("({})", letters.concat())
        }
        _ => "m".to_owned(),
    }
}

fn scalar(value: &ValueType) -> Option<&'static str> {
    Some(match value {
        ValueType::String => "s",
        ValueType::Bool => "b",
        ValueType::Int8 => "c",
        ValueType::UInt8 => "C",
        ValueType::Int16 => "w",
        ValueType::UInt16 => "W",
        ValueType::Int32 => "i",
        ValueType::UInt32 => "I",
        ValueType::Int64 => "l",
        ValueType::UInt64 => "L",
        ValueType::Float32 => "f",
        ValueType::Float64 => "d",
        ValueType::Dynamic => "m",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueType::*;

    fn typed(params: Vec<ValueType>, returns: ValueType) -> MethodInfo {
        let types = MethodType { params, returns };
        MethodInfo {
            name: "m".into(),
            signature: types.to_string(),
            help: std::string::String::new(),
            types: Some(types),
        }
    }

    fn text(signature: &str) -> MethodInfo {
        MethodInfo {
            name: "m".into(),
            signature: signature.into(),
            help: std::string::String::new(),
            types: None,
        }
    }

    fn of(info: MethodInfo) -> Vec<(std::string::String, std::string::String)> {
        overloads(&info).into_iter().map(|o| (o.params, o.returns)).collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(std::string::String, std::string::String)> {
        expected.iter().map(|(p, r)| (p.to_string(), r.to_string())).collect()
    }

    fn list(item: ValueType) -> ValueType {
        List(Box::new(item))
    }

    fn optional(item: ValueType) -> ValueType {
        Optional(Box::new(item))
    }

    #[test]
    fn rust_types_map_to_letters() {
        assert_eq!(of(typed(vec![String, Dynamic], Void)), pairs(&[("(sm)", "v")]));
        assert_eq!(of(typed(vec![String], Dynamic)), pairs(&[("(s)", "m")]));
        assert_eq!(of(typed(vec![], list(String))), pairs(&[("()", "[s]")]));
        assert_eq!(of(typed(vec![UInt64, Int64], Bool)), pairs(&[("(Ll)", "b")]));
        assert_eq!(of(typed(vec![Dynamic], list(list(Float64)))), pairs(&[("(m)", "[[d]]")]));
        assert_eq!(of(typed(vec![list(String)], list(list(String)))), pairs(&[("([s])", "[[s]]")]));
        let pairs_of_values = list(Tuple(vec![String, Dynamic]));
        assert_eq!(of(typed(vec![pairs_of_values.clone()], Void)), pairs(&[("(m)", "v")]));
        assert_eq!(of(typed(vec![], pairs_of_values)), pairs(&[("()", "[(sm)]")]));
        assert_eq!(
            of(typed(vec![Named("HashMap<String, f64>".into())], optional(Int32))),
            pairs(&[("(m)", "m")])
        );
        assert_eq!(of(typed(vec![], Tuple(vec![Bool, Void]))), pairs(&[("()", "m")]));
        assert_eq!(of(typed(vec![], list(Void))), pairs(&[("()", "m")]));
        assert_eq!(of(typed(vec![], list(list(Void)))), pairs(&[("()", "[m]")]));
    }

    #[test]
    fn trailing_options_give_overloads() {
        assert_eq!(of(typed(vec![optional(Int64)], Int32)), pairs(&[("()", "i"), ("(l)", "i")]));
        assert_eq!(
            of(typed(vec![String, String, optional(String), optional(Dynamic)], UInt64)),
            pairs(&[("(ss)", "L"), ("(sss)", "L"), ("(sssm)", "L")])
        );
        assert_eq!(of(typed(vec![optional(String), Bool], Void)), pairs(&[("(mb)", "v")]));
    }

    #[test]
    fn python_signatures_are_dynamic() {
        assert_eq!(of(text("(key, value=None)")), pairs(&[("(m)", "m"), ("(mm)", "m")]));
        assert_eq!(of(text("(a, *rest, **options)")).len(), MAX_ARITY);
        assert_eq!(of(text("(a, *rest)"))[0], ("(m)".to_owned(), "m".to_owned()));
        assert_eq!(of(text("(a: int, b: str = 'x') -> int")), pairs(&[("(m)", "m"), ("(mm)", "m")]));
        assert_eq!(of(text("(a: Dict[str, int], b)")), pairs(&[("(mm)", "m")]));
        assert_eq!(of(text("()")), pairs(&[("()", "m")]));
    }

    #[test]
    fn a_qi_service_keeps_its_own_signatures() {
        assert_eq!(of(text(&qi_signature("(m[s])", "{sm}"))), pairs(&[("(m[s])", "{sm}")]));
    }

    #[test]
    fn an_unreadable_signature_takes_any_count_of_arguments() {
        let all = of(text("whatever"));
        assert_eq!(all.len(), MAX_ARITY + 1);
        assert_eq!(all[0], ("()".to_owned(), "m".to_owned()));
        assert_eq!(all[2], ("(mm)".to_owned(), "m".to_owned()));
    }
}
